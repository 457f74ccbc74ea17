// The BM1684X command codec (isa/bm1684x): its tables, every type's round trip through bytes and text,
// fuzzed buffers, rejected text, and TPU-MLIR's own BM1684X command buffers of YOLOv5s decoded against
// TPU-MLIR's disassembly of them (tests/data/bm1684x/README.md).
#include "isa/bm1684x/Command.h"
#include "isa/bm1684x/Layouts.h"
#include "isa/bm1684x/Text.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <sstream>

using namespace tpu;
using namespace tpu::isa;
using namespace tpu::isa::bm1684x;

namespace {

std::vector<uint8_t> readBytes(const std::string &name) {
  std::ifstream in(std::string(TPU_TEST_DATA_DIR) + "/bm1684x/" + name, std::ios::binary);
  EXPECT_TRUE(in) << name;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

uint64_t randomValue(std::mt19937_64 &rng, unsigned width) {
  switch (rng() % 4) {
  case 0:
  case 1:
    return 0;
  case 2:
    return width >= 64 ? ~0ull : (1ull << width) - 1;
  default:
    return width >= 64 ? rng() : rng() & ((1ull << width) - 1);
  }
}

bool implicitName(const OpInfo &op, std::string_view name) {
  bool tiu = op.engine == Engine::Tiu;
  return name == "cmd_short" || name == "cmd_id" || name == "cmd_id_dep" || name == (tiu ? "tsk_typ" : "cmd_type") ||
         (name == (tiu ? "tsk_eu_typ" : "cmd_special_function") && op.sub != kAnySub);
}

// A command of `op` in the given form with random operand fields and ids.
Command randomCommand(std::mt19937_64 &rng, const OpInfo &op, bool isShort) {
  auto c = Command::make(op, isShort, unsigned(rng() % (op.engine == Engine::Tiu ? 32 : 8)));
  EXPECT_TRUE(c.isOk()) << op.mnemonic;
  for (size_t i = 0; i < c->layout().fieldCount; ++i) {
    const FieldInfo &f = c->layout().fields[i];
    bool isId = f.name == "cmd_id" || f.name == "cmd_id_dep";
    if (isId || !implicitName(op, f.name)) EXPECT_TRUE(c->setField(i, randomValue(rng, f.width)).isOk());
  }
  return *c;
}

std::vector<bool> formsOf(const OpInfo &op) {
  if (op.hasTwoForms()) return {false, true};
  return {op.longLayout == nullptr};
}

} // namespace

TEST(Bm1684xLayouts, SelectorFieldsSitWhereSelectionReadsThem) {
  for (const OpInfo *op = opsBegin(); op != opsEnd(); ++op)
    for (bool isShort : formsOf(*op)) {
      const Layout &l = *op->layout(isShort);
      bool tiu = op->engine == Engine::Tiu;
      auto at = [&](std::string_view name, unsigned offset, unsigned width) {
        int i = l.find(name);
        ASSERT_GE(i, 0) << l.sheet << " lacks " << name;
        EXPECT_EQ(l.fields[i].offset, offset) << l.sheet << "." << name;
        EXPECT_EQ(l.fields[i].width, width) << l.sheet << "." << name;
      };
      at(tiu ? "tsk_typ" : "cmd_type", tiu ? 41 : 32, 4);
      at(tiu ? "tsk_eu_typ" : "cmd_special_function", tiu ? 45 : 36, tiu ? 5 : 3);
      if (op->longLayout != op->shortLayout) at("cmd_short", tiu ? 0 : 3, 1);
      if (l.find("cmd_id") >= 0) {
        at("cmd_id", tiu ? 1 : 9, 20);
        at("cmd_id_dep", tiu ? 21 : 64, 20);
      }
    }
}

TEST(Bm1684xLayouts, TypesAndMnemonicsAreUnique) {
  std::set<std::string_view> mnemonics;
  std::set<std::tuple<Engine, unsigned, int>> keys;
  for (const OpInfo *op = opsBegin(); op != opsEnd(); ++op) {
    EXPECT_TRUE(mnemonics.insert(op->mnemonic).second) << op->mnemonic;
    EXPECT_TRUE(keys.insert({op->engine, op->type, op->sub}).second) << op->mnemonic;
    EXPECT_EQ(findOp(op->mnemonic), op);
    if (op->sub != kAnySub) EXPECT_EQ(findOp(op->engine, op->type, unsigned(op->sub)), op);
  }
  // 30 layouts: the long TIU one, 14 short TIU ones, LAR, SYSID and 13 DMA ones.
  EXPECT_EQ(layoutsEnd() - layoutsBegin(), 30);
}

TEST(Bm1684xCommand, EveryTypeAndFormRoundTripsThroughBytesAndText) {
  std::mt19937_64 rng(1684);
  for (const OpInfo *op = opsBegin(); op != opsEnd(); ++op)
    for (bool isShort : formsOf(*op))
      for (int trial = 0; trial < 20; ++trial) {
        Command c = randomCommand(rng, *op, isShort);
        std::vector<uint8_t> bytes = c.encode();
        ASSERT_EQ(bytes.size(), c.layout().bytes());
        auto back = Command::decode(op->engine, bytes.data(), bytes.size());
        ASSERT_TRUE(back.isOk()) << op->mnemonic << ": " << back.message();
        EXPECT_TRUE(*back == c) << op->mnemonic;
        std::string line = disassemble(c);
        auto parsed = assembleLine(line);
        ASSERT_TRUE(parsed.isOk()) << line << ": " << parsed.message();
        EXPECT_EQ(parsed->encode(), bytes) << line;
      }
}

TEST(Bm1684xCommand, FuzzedBuffersDecodeExactlyOrFailWithAReason) {
  std::mt19937_64 rng(35);
  size_t decoded = 0, rejected = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    Engine engine = trial % 2 ? Engine::Gdma : Engine::Tiu;
    std::vector<uint8_t> buf;
    if (trial % 4 < 2) { // random bytes
      buf.resize(16 * (1 + rng() % 24));
      for (auto &b : buf) b = uint8_t(rng());
    } else { // valid commands with one byte garbled
      std::vector<const OpInfo *> ops;
      for (const OpInfo *op = opsBegin(); op != opsEnd(); ++op)
        if (op->engine == engine) ops.push_back(op);
      for (int n = 1 + int(rng() % 6); n > 0; --n) {
        const OpInfo &op = *ops[rng() % ops.size()];
        std::vector<bool> forms = formsOf(op);
        auto bytes = randomCommand(rng, op, forms[rng() % forms.size()]).encode();
        buf.insert(buf.end(), bytes.begin(), bytes.end());
      }
      buf[rng() % buf.size()] = uint8_t(rng());
    }
    auto cmds = decodeBuffer(engine, buf.data(), buf.size());
    if (!cmds) {
      ++rejected;
      EXPECT_NE(cmds.message().find(" at byte "), std::string::npos) << cmds.message();
      continue;
    }
    ++decoded;
    // What decodes re-encodes to the same bytes, through text too.
    std::vector<uint8_t> again;
    for (const Command &c : *cmds) {
      auto bytes = c.encode();
      again.insert(again.end(), bytes.begin(), bytes.end());
      auto parsed = assembleLine(disassemble(c));
      ASSERT_TRUE(parsed.isOk()) << disassemble(c) << ": " << parsed.message();
      EXPECT_EQ(parsed->encode(), bytes);
    }
    ASSERT_LE(again.size(), buf.size());
    EXPECT_TRUE(std::equal(again.begin(), again.end(), buf.begin()));
  }
  EXPECT_GT(decoded, 500u);
  EXPECT_GT(rejected, 500u);
}

TEST(Bm1684xCommand, RejectedTextSaysWhatAndWhere) {
  auto err = [](const std::string &line) {
    auto c = assembleLine(line);
    EXPECT_FALSE(c.isOk()) << line;
    return c.isOk() ? std::string() : c.message();
  };
  EXPECT_EQ(err("%B1 = arith.frobnicate"), "column 7: unknown BM1684X mnemonic 'arith.frobnicate'");
  EXPECT_EQ(err("%B1 = arith.add res9_c=1"), "column 17: unknown field 'res9_c' of arith.add (LONG_TIU)");
  EXPECT_EQ(err("%B1 = arith.add res0_c=70000"), "column 24: field res0_c = 70000 does not fit in 16 bits");
  EXPECT_EQ(err("%B1 = arith.add tsk_eu_typ=3"), "column 17: field tsk_eu_typ is given by the mnemonic or the %-names");
  EXPECT_EQ(err("%D1 = arith.add"), "column 1: expected a TIU (%B) command name, got '%D1'");
  EXPECT_EQ(err("arith.add res0_c=1"), "column 1: arith.add needs a name: '%B<id> = arith.add ...'");
  EXPECT_EQ(err("%B1 = lar"), "column 1: lar carries no id: write the mnemonic first");
  EXPECT_EQ(err("%D1 = s.dma.tensor"), "column 7: dma.tensor has no separate short form");
  EXPECT_EQ(err("%B2000000 = arith.add"), "column 3: command id 2000000 does not fit in 20 bits");
  EXPECT_EQ(err("%B1 = arith.add deps %B1"), "column 22: expected a GDMA (%D) command name, got '%B1'");
  EXPECT_EQ(err("%B1 = arith.add res0_c=1 res0_c=2"), "column 26: field res0_c given twice");
  auto text = assembleText("%B1 = arith.add\n%B1 = arith.sub\n", "t.s");
  ASSERT_FALSE(text.isOk());
  EXPECT_EQ(text.message(), "t.s: TIU command 1 has id 1 not greater than the previous id 1");
  text = assembleText("# two\n%B1 = arith.add\n%D1 = dma.tensor bogus\n", "t.s");
  ASSERT_FALSE(text.isOk());
  EXPECT_EQ(text.message(), "t.s:3:18: expected name=value, got 'bogus'");
}

TEST(Bm1684xCommand, TruncatedAndUnknownCommandsAreNamed) {
  std::vector<uint8_t> buf(16, 0);
  auto cmds = decodeBuffer(Engine::Tiu, buf.data(), buf.size()); // zeros: a long conv, 128 bytes
  ASSERT_FALSE(cmds.isOk());
  EXPECT_EQ(cmds.message(), "TIU command 0 at byte 0: TIU command conv.normal truncated: 16 bytes left of its 128");
  setBits(buf.data(), 41, 4, 8); // tsk_typ 8: none
  cmds = decodeBuffer(Engine::Tiu, buf.data(), buf.size());
  ASSERT_FALSE(cmds.isOk());
  EXPECT_EQ(cmds.message(), "TIU command 0 at byte 0: unknown TIU command type tsk_typ=8 tsk_eu_typ=0");
  std::vector<uint8_t> dma(16, 0);
  setBits(dma.data(), 3, 1, 1); // a short DMA tensor does not exist
  cmds = decodeBuffer(Engine::Gdma, dma.data(), dma.size());
  ASSERT_FALSE(cmds.isOk());
  EXPECT_EQ(cmds.message(), "DMA command 0 at byte 0: DMA command dma.tensor has no short form");
}

// TPU-MLIR's regression buffers of YOLOv5s for the BM1684X and its disassembly of them (mnemonic, id, the
// id waited for and the result's shape per command, in TPU-MLIR's merged order; its text leaves out the two
// sys commands that end the buffers).
TEST(Bm1684xCommand, TpuMlirYolov5sBuffersDecodeAsTpuMlirReadsThem) {
  auto tiuBytes = readBytes("yolov5s_1684x.tiu.bin"), dmaBytes = readBytes("yolov5s_1684x.dma.bin");
  auto tiu = decodeBuffer(Engine::Tiu, tiuBytes.data(), tiuBytes.size());
  ASSERT_TRUE(tiu.isOk()) << tiu.message();
  auto dma = decodeBuffer(Engine::Gdma, dmaBytes.data(), dmaBytes.size());
  ASSERT_TRUE(dma.isOk()) << dma.message();
  ASSERT_EQ(tiu->size(), 1945u);
  ASSERT_EQ(dma->size(), 212u);
  EXPECT_EQ(tiu->back().op().mnemonic, "sys.end");
  EXPECT_EQ(dma->back().op().mnemonic, "dma.sys");

  // TPU-MLIR breaks ties between two ready commands the other way round, so compare engine by engine; its
  // merged order must still be one the cmd_id rule allows.
  std::ifstream in(std::string(TPU_TEST_DATA_DIR) + "/bm1684x/yolov5s_1684x.expected");
  std::string line;
  size_t next[2] = {0, 0}, checked = 0, shapesChecked = 0;
  uint32_t done[2] = {0, 0}; // the last id each engine completed
  std::set<std::string> kinds;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string name, mnemonic, shape;
    uint32_t wait;
    fields >> name >> mnemonic >> wait >> shape;
    bool isTiu = name[0] == 'B';
    const auto &queue = isTiu ? *tiu : *dma;
    size_t &i = next[isTiu ? 0 : 1];
    ASSERT_LT(i, queue.size() - 1) << "TPU-MLIR's text has more commands: " << line;
    const Command &c = queue[i++];
    EXPECT_EQ(std::string(isTiu ? "B" : "D") + std::to_string(c.id()), name);
    EXPECT_EQ(c.op().mnemonic, mnemonic) << name;
    EXPECT_EQ(c.waitId(), wait) << name;
    EXPECT_TRUE(syncSatisfied(c.waitId(), done[isTiu ? 1 : 0])) << name;
    done[isTiu ? 0 : 1] = c.id();
    kinds.insert(mnemonic);
    // TIU results: res0_n x res0_c x res0_h x res0_w.
    if (isTiu && shape != "-") {
      std::string dims = std::to_string(c.get("res0_n")) + "x" + std::to_string(c.get("res0_c")) + "x" +
                         std::to_string(c.get("res0_h")) + "x" + std::to_string(c.get("res0_w"));
      EXPECT_EQ(dims, shape) << name << " " << mnemonic;
      ++shapesChecked;
    }
    ++checked;
  }
  EXPECT_EQ(next[0], tiu->size() - 1); // all but sys.end
  EXPECT_EQ(next[1], dma->size() - 1); // all but dma.sys
  EXPECT_EQ(checked, 2155u);
  EXPECT_EQ(shapesChecked, 1944u); // every TIU command but sys.end
  EXPECT_GE(kinds.size(), 12u);    // conv, pooling, eight arith kinds, sfu, broadcast, DMA tensor

  // Text and bytes agree both ways on the whole program.
  auto text = disassembleBuffers(tiuBytes, dmaBytes);
  ASSERT_TRUE(text.isOk()) << text.message();
  auto buffers = assembleText(*text, "yolov5s.s");
  ASSERT_TRUE(buffers.isOk()) << buffers.message();
  EXPECT_EQ(buffers->tiu, tiuBytes);
  EXPECT_EQ(buffers->dma, dmaBytes);
}
