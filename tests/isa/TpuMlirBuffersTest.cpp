// The BM1684 decoder against a compiler nobody here wrote: TPU-MLIR's YOLOv5s command buffers for the
// BM1684 and the type of each command as TPU-MLIR's disassembler names it (tests/data/bm1684/README.md).
#include "isa/Disassembler.h"
#include "isa/Opcodes.h"
#include "isa/ProgramOrder.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>

using namespace tpu::isa;

namespace {

std::vector<CommandBytes> readCommands(const std::string &name) {
  std::ifstream in(std::string(TPU_TEST_DATA_DIR) + "/bm1684/" + name, std::ios::binary);
  EXPECT_TRUE(in) << name;
  std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  EXPECT_EQ(bytes.size() % kCommandBytes, 0u) << name;
  std::vector<CommandBytes> out(bytes.size() / kCommandBytes);
  for (size_t i = 0; i < out.size(); ++i) std::copy_n(bytes.begin() + i * kCommandBytes, kCommandBytes, out[i].begin());
  return out;
}

// TPU-MLIR's names of the BM1684's TIU task types (python/debugger/opdef_1684.py, the `description`s).
const std::map<TiuTask, std::string> kTpuMlirTaskNames = {
    {TiuTask::Conv, "convolution neuron"},  {TiuTask::Pord, "depthwise or pooling"},
    {TiuTask::MatMul, "matrix multiply"},   {TiuTask::Arith, "tensor arithmetic"},
    {TiuTask::MatMul2, "matrix multiply2"}, {TiuTask::ConvCorr, "convolution correlation"},
    {TiuTask::Lut, "table lookup"},         {TiuTask::MdSum, "md sum"},
    {TiuTask::MdScalar, "md scalar"},       {TiuTask::MdSfu, "md sfu"},
    {TiuTask::MdLinear, "md linear"},
};

} // namespace

TEST(TpuMlirBuffers, Yolov5sBm1684DecodesAsTpuMlirReadsIt) {
  auto tiu = readCommands("yolov5s_1684.tiu.bin"), gdma = readCommands("yolov5s_1684.dma.bin");
  ASSERT_EQ(tiu.size(), 1094u);
  ASSERT_EQ(gdma.size(), 168u);
  for (size_t i = 0; i < tiu.size(); ++i) {
    ASSERT_TRUE(checkTiuCommand(tiu[i]).isOk()) << "TIU " << i << ": " << checkTiuCommand(tiu[i]).message();
    ASSERT_TRUE(disassembleTiu(tiu[i]).isOk());
    EXPECT_EQ(tiuSyncIds(tiu[i]).id, i + 1);
  }
  for (size_t i = 0; i < gdma.size(); ++i) {
    ASSERT_TRUE(checkGdmaCommand(gdma[i]).isOk()) << "GDMA " << i << ": " << checkGdmaCommand(gdma[i]).message();
    EXPECT_EQ(gdmaSyncIds(gdma[i]).id, i + 1);
  }
  // TPU-MLIR's merged order names each command's type, and it is an order the cmd_id rule allows: every
  // command comes after the other engine's command it waits for. (Where both engines may go on, TPU-MLIR
  // puts the TIU first and programOrder() the GDMA: a tie, so the queues are compared one by one.)
  std::ifstream in(std::string(TPU_TEST_DATA_DIR) + "/bm1684/yolov5s_1684.expected");
  std::string want;
  size_t next[2] = {0, 0}, k = 0;
  uint32_t done[2] = {0, 0}; // the last id each engine completed
  while (std::getline(in, want)) {
    bool isTiu = want != "DMA tensor";
    size_t &i = next[isTiu ? 0 : 1];
    ASSERT_LT(i, isTiu ? tiu.size() : gdma.size()) << "TPU-MLIR's text has more commands: " << k;
    SyncIds ids = isTiu ? tiuSyncIds(tiu[i]) : gdmaSyncIds(gdma[i]);
    EXPECT_TRUE(syncSatisfied(ids.waitId, done[isTiu ? 1 : 0])) << "command " << k << " waits for " << ids.waitId;
    done[isTiu ? 0 : 1] = ids.id;
    if (isTiu) {
      auto task = TiuTask(TiuRaw::decode(tiu[i].data())[TiuField::tsk_typ]);
      ASSERT_TRUE(kTpuMlirTaskNames.count(task)) << tiuTaskName(task);
      EXPECT_EQ(kTpuMlirTaskNames.at(task), want) << "TIU " << i;
    } else {
      EXPECT_EQ(GdmaRaw::decode(gdma[i].data())[GdmaField::special_func], 0u) << "GDMA " << i;
    }
    ++i;
    ++k;
  }
  EXPECT_EQ(next[0], tiu.size());
  EXPECT_EQ(next[1], gdma.size());
  EXPECT_TRUE(programOrder(tiu, gdma).isOk());
}
