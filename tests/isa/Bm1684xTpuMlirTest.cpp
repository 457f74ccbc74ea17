// The BM1684X codec and operand views against a compiler nobody here wrote: TPU-MLIR's YOLOv5s command
// buffers for the BM1684X and TPU-MLIR's own disassembly of them (tests/data/bm1684x/README.md): per
// command its mnemonic, id, the id it waits for, and every result and operand (memory, address, shape,
// strides, type, or constant).
#include "isa/bm1684x/Command.h"
#include "isa/bm1684x/Text.h"
#include "memory/bm1684x/Operands.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

using namespace tpu;
using namespace tpu::isa;
using namespace tpu::isa::bm1684x;
using tpu::memory::bm1684x::Operand;
using tpu::memory::bm1684x::Space;

namespace {

std::vector<uint8_t> readBytes(const std::string &name) {
  std::ifstream in(std::string(TPU_TEST_DATA_DIR) + "/bm1684x/" + name, std::ios::binary);
  EXPECT_TRUE(in) << name;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::string> split(const std::string &s, const std::string &sep) {
  std::vector<std::string> out;
  size_t at = 0;
  while (true) {
    size_t next = s.find(sep, at);
    out.push_back(s.substr(at, next - at));
    if (next == std::string::npos) return out;
    at = next + sep.size();
  }
}

// TPU-MLIR's "%R15.2688 memref<32x3x6x6xf32>" or "%C1.4426950216293335 f32" against ours. Constants are
// compared by value (TPU-MLIR prints them through double).
void expectOperand(const Operand &ours, const std::string &want, const std::string &where) {
  size_t blank = want.find(' ');
  std::string name = want.substr(0, blank), type = want.substr(blank + 1);
  if (name.rfind("%C", 0) == 0) {
    ASSERT_EQ(ours.space, Space::Const) << where << ": " << want;
    EXPECT_EQ(ours.typeText(), type) << where;
    double v = std::strtod(name.c_str() + 2, nullptr);
    if (ours.type.prec == 2)
      EXPECT_EQ(float(ours.constValue()), float(v)) << where << ": " << want;
    else
      EXPECT_EQ(ours.constValue(), v) << where << ": " << want;
    return;
  }
  EXPECT_EQ(ours.name() + " " + ours.typeText(), want) << where;
}

} // namespace

TEST(Bm1684xTpuMlir, Yolov5sBuffersReadAsTpuMlirReadsThem) {
  auto tiuBytes = readBytes("yolov5s_1684x.tiu.bin"), dmaBytes = readBytes("yolov5s_1684x.dma.bin");
  auto tiu = decodeBuffer(Engine::Tiu, tiuBytes.data(), tiuBytes.size());
  ASSERT_TRUE(tiu.isOk()) << tiu.message();
  auto dma = decodeBuffer(Engine::Gdma, dmaBytes.data(), dmaBytes.size());
  ASSERT_TRUE(dma.isOk()) << dma.message();
  ASSERT_EQ(tiu->size(), 1945u);
  ASSERT_EQ(dma->size(), 212u);
  EXPECT_EQ(tiu->back().op().mnemonic, "sys.end");
  EXPECT_EQ(dma->back().op().mnemonic, "dma.sys");
  EXPECT_TRUE(programOrder(*tiu, *dma).isOk());

  // TPU-MLIR breaks ties between two ready commands the other way round, so compare engine by engine; its
  // merged order must still be one the cmd_id rule allows.
  std::ifstream in(std::string(TPU_TEST_DATA_DIR) + "/bm1684x/yolov5s_1684x.expected");
  std::string line;
  size_t next[2] = {0, 0}, checked = 0, operandsChecked = 0;
  uint32_t done[2] = {0, 0}; // the last id each engine completed
  std::set<std::string> kinds;
  while (std::getline(in, line)) {
    auto cols = split(line, "\t");
    ASSERT_EQ(cols.size(), 5u) << line;
    const std::string &name = cols[0], &mnemonic = cols[1];
    bool isTiu = name[0] == 'B';
    const auto &queue = isTiu ? *tiu : *dma;
    size_t &i = next[isTiu ? 0 : 1];
    ASSERT_LT(i, queue.size() - 1) << "TPU-MLIR's text has more commands: " << line;
    const Command &c = queue[i++];
    ASSERT_EQ(std::string(isTiu ? "B" : "D") + std::to_string(c.id()), name);
    EXPECT_EQ(c.op().mnemonic, mnemonic) << name;
    EXPECT_EQ(std::to_string(c.waitId()), cols[2]) << name;
    EXPECT_TRUE(syncSatisfied(c.waitId(), done[isTiu ? 1 : 0])) << name;
    done[isTiu ? 0 : 1] = c.id();
    kinds.insert(mnemonic);

    auto ops = memory::bm1684x::operandsOf(c);
    ASSERT_TRUE(ops.isOk()) << name << ": " << ops.message();
    auto results = split(cols[3], "; "), operands = split(cols[4], "; ");
    ASSERT_EQ(ops->results.size(), results.size()) << name << " " << mnemonic;
    ASSERT_EQ(ops->operands.size(), operands.size()) << name << " " << mnemonic;
    for (size_t k = 0; k < results.size(); ++k) expectOperand(ops->results[k], results[k], name + " result");
    for (size_t k = 0; k < operands.size(); ++k)
      expectOperand(ops->operands[k], operands[k], name + " operand " + std::to_string(k));
    operandsChecked += results.size() + operands.size();
    ++checked;
  }
  EXPECT_EQ(next[0], tiu->size() - 1); // all but sys.end
  EXPECT_EQ(next[1], dma->size() - 1); // all but dma.sys
  EXPECT_EQ(checked, 2155u);
  EXPECT_GT(operandsChecked, 5000u);
  EXPECT_GE(kinds.size(), 15u); // conv, max pooling, nine arith kinds, sfu, two transposes/broadcasts, DMA tensor

  // Text and bytes agree both ways on the whole program.
  auto text = disassembleBuffers(tiuBytes, dmaBytes);
  ASSERT_TRUE(text.isOk()) << text.message();
  auto buffers = assembleText(*text, "yolov5s.s");
  ASSERT_TRUE(buffers.isOk()) << buffers.message();
  EXPECT_EQ(buffers->tiu, tiuBytes);
  EXPECT_EQ(buffers->dma, dmaBytes);
}

TEST(Bm1684xOperands, UndescribedTypesAndStrayAddressesAreErrors) {
  auto mm = Command::make(*findOp("mm.normal"), false);
  ASSERT_TRUE(mm.isOk());
  auto ops = memory::bm1684x::operandsOf(*mm);
  ASSERT_FALSE(ops.isOk());
  EXPECT_EQ(ops.message(), "operands of mm.normal are not described yet");

  auto add = Command::make(*findOp("arith.add"), true);
  ASSERT_TRUE(add.isOk());
  ASSERT_TRUE(add->set("tsk_opd_num", 2).isOk());
  ASSERT_TRUE(add->set("opd1_addr", 0x20000000).isOk()); // between L2 and DDR
  ops = memory::bm1684x::operandsOf(*add);
  ASSERT_FALSE(ops.isOk());
  EXPECT_EQ(ops.message(), "arith.add: address 0x20000000 is in no memory");

  ASSERT_TRUE(add->set("opd1_addr", 0).isOk());
  ASSERT_TRUE(add->set("opd0_str", 5).isOk());
  ops = memory::bm1684x::operandsOf(*add);
  ASSERT_FALSE(ops.isOk());
  EXPECT_EQ(ops.message(), "opd0_str = 5 is no tensor layout (0 aligned, 1 compact, 2 offset, 3 strided)");
}

TEST(Bm1684xOperands, LocalViewsFollowTheirLane) {
  // An aligned fp32 tensor of 70 channels starting in lane 3: channels spread over lanes 3..63 and on, so a
  // lane holds two channel rows; the name carries bank, offset and lane.
  auto add = Command::make(*findOp("arith.add"), true);
  ASSERT_TRUE(add.isOk());
  for (auto [field, value] : {std::pair{"res0_n", 2},
                              {"res0_c", 70},
                              {"res0_h", 3},
                              {"res0_w", 7},
                              {"tsk_opd_num", 1},
                              {"res0_prec", 2},
                              {"opd0_prec", 2}})
    ASSERT_TRUE(add->set(field, uint64_t(value)).isOk());
  ASSERT_TRUE(add->set("res0_addr", 3 * 256 * 1024 + 2 * 16384 + 64).isOk());
  auto ops = memory::bm1684x::operandsOf(*add);
  ASSERT_TRUE(ops.isOk()) << ops.message();
  EXPECT_EQ(ops->results[0].name(), "%R2.64.L3");
  EXPECT_EQ(ops->results[0].typeText(), "memref<2x70x3x7xf32, strides: [64, 32, 7, 1]>");
}

TEST(Bm1684xOperands, RequantiseConstantsArePackedAsTpuMlirReadsThem) {
  // rq1 with constant parameters: the multiplier is opd1_addr; opd2_addr holds the int8 shift in its low byte
  // and the int16 zero point above it.
  auto rq = Command::make(*findOp("quant.rq1"), true);
  ASSERT_TRUE(rq.isOk());
  for (auto [field, value] : {std::pair{"res0_n", uint64_t(1)},
                              {"res0_c", 8},
                              {"res0_h", 2},
                              {"res0_w", 2},
                              {"opd0_prec", 4},
                              {"opd0_sign", 1},
                              {"opd2_sign", 1},
                              {"opd1_const", 1},
                              {"opd1_addr", 74565},
                              {"opd2_addr", (0xff85u << 8) | 0xf9u}})
    ASSERT_TRUE(rq->set(field, value).isOk()) << field;
  auto ops = memory::bm1684x::operandsOf(*rq);
  ASSERT_TRUE(ops.isOk()) << ops.message();
  ASSERT_EQ(ops->operands.size(), 4u);
  EXPECT_EQ(ops->results[0].typeText(), "memref<1x8x2x2xsi8, strides: [64, 64, 2, 1]>");
  EXPECT_EQ(ops->operands[0].typeText(), "memref<1x8x2x2xsi32, strides: [16, 16, 2, 1]>");
  EXPECT_EQ(ops->operands[1].name() + " " + ops->operands[1].typeText(), "%C74565 si32");
  EXPECT_EQ(ops->operands[2].name() + " " + ops->operands[2].typeText(), "%C-7 si8");
  EXPECT_EQ(ops->operands[3].name() + " " + ops->operands[3].typeText(), "%C-123 si16");
}
