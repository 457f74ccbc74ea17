// The BM1684X timing model (timing/bm1684x/CommandCost.h) on commands built field by field: the cycles its
// formulas give (docs/bm1684x.md, "Timing"), the cube's 8x over fp32 for 16-bit convs at the published peaks,
// a DMA's DDR bytes in whole bursts, and commands it cannot cost named.
#include "isa/bm1684x/HwPreset.h"
#include "isa/bm1684x/MemoryMap.h"
#include "isa/chips/Registry.h"
#include "timing/bm1684x/CommandCost.h"

#include <gtest/gtest.h>

#include <string>

using namespace tpu;
using isa::bm1684x::Command;

namespace {

Command make(const char *mnemonic, std::initializer_list<std::pair<const char *, uint64_t>> fields) {
  auto c = Command::make(*isa::bm1684x::findOp(mnemonic), false);
  EXPECT_TRUE(c.isOk()) << c.message();
  for (auto [name, value] : fields) {
    Status st = c->set(name, value);
    EXPECT_TRUE(st.isOk()) << name << ": " << st.message();
  }
  return *c;
}

// A conv of `prec` (2 fp32, 1 fp16, 0 int8): (1, ic, 16, 16) -> (1, oc, 14, 14), 3x3.
Command conv(unsigned prec, uint64_t ic, uint64_t oc) {
  return make("conv.normal", {{"opd0_prec", prec},
                              {"res0_prec", prec == 0 ? 4 : prec},
                              {"res0_n", 1},
                              {"res0_c", oc},
                              {"res0_h", 14},
                              {"res0_w", 14},
                              {"opd0_c", ic},
                              {"opd0_h", 16},
                              {"opd0_w", 16},
                              {"opd1_h", 3},
                              {"opd1_w", 3},
                              {"res_op_y_str", 1},
                              {"res_op_x_str", 1},
                              {"res0_addr", 0x40000},
                              {"opd1_addr", 0x80000}});
}

timing::bm1684x::CommandCost cost(const Command &c, const isa::HwConfig &hw) {
  auto r = timing::bm1684x::commandCost(c, hw);
  EXPECT_TRUE(r.isOk()) << r.message();
  return r.isOk() ? *r : timing::bm1684x::CommandCost{};
}

} // namespace

TEST(Bm1684xTiming, TheRegistryHandsOutThePreset) {
  isa::HwConfig hw = isa::chipInfo(isa::Chip::BM1684X).hwConfig();
  EXPECT_TRUE(hw.validate().isOk());
  EXPECT_EQ(hw.euBytes, 64u);
  EXPECT_EQ(hw.lmemBytesPerLane, 256u * 1024);
  EXPECT_EQ(hw.lmemBanks, 16u);
  EXPECT_EQ(hw.clockMhz, 1000.0);
  EXPECT_EQ(isa::chipInfo(isa::Chip::BM1684).hwConfig().toJson(), isa::HwConfig().toJson());
  // A config file over the preset keeps what it does not name.
  auto over = isa::HwConfig::fromJson(R"({"ddrBandwidthGBs": 34})", "x.json", hw);
  ASSERT_TRUE(over.isOk()) << over.message();
  EXPECT_EQ(over->ddrBandwidthGBs, 34.0);
  EXPECT_EQ(over->euBytes, 64u);
  EXPECT_FALSE(isa::HwConfig::fromJson(R"({"cubePixels": 4})", "y.json").isOk()); // without icParallelBytes
}

TEST(Bm1684xTiming, ConvOnTheEuVectorOrTheCube) {
  const isa::HwConfig hw = isa::bm1684x::hwConfig();
  // fp32: 2 lane rounds (100 channels) x ceil(196 / 16) passes x 64 input channels x 9 taps.
  auto f32 = cost(conv(2, 64, 100), hw);
  EXPECT_EQ(f32.dataCycles, 2.0 * 13 * 64 * 9);
  EXPECT_EQ(f32.latencyCycles, double(hw.tiuStartupCycles));
  EXPECT_EQ(f32.macs, 196ull * 100 * 64 * 9);
  // fp16: the cube, 4 positions x 32 channels per cycle: 2 x ceil(196 / 4) x 2 x 9.
  EXPECT_EQ(cost(conv(1, 64, 100), hw).dataCycles, 2.0 * 49 * 2 * 9);
  // int8: 64 channels per cycle.
  EXPECT_EQ(cost(conv(0, 64, 100), hw).dataCycles, 2.0 * 49 * 1 * 9);
  // At full occupancy the ratios are the published peaks': FP32 2, FP16 16, INT8 32 T(FL)OPS.
  const double full32 = cost(conv(2, 128, 128), hw).dataCycles, full16 = cost(conv(1, 128, 128), hw).dataCycles;
  EXPECT_NEAR(full32 / full16, 8.0, 0.7); // 13 passes of 16 against 49 of 4 positions
}

TEST(Bm1684xTiming, ElementwiseAndPooling) {
  const isa::HwConfig hw = isa::bm1684x::hwConfig();
  // An arith.add of `prec` (2 fp32, 1 fp16) over (1, c, h, w), its result from byte `at` of local memory.
  auto add = [](uint64_t prec, uint64_t c, uint64_t h, uint64_t w, uint64_t at = 0) {
    return make("arith.add", {{"tsk_opd_num", 2},
                              {"res0_prec", prec},
                              {"opd0_prec", prec},
                              {"opd1_prec", prec},
                              {"res0_n", 1},
                              {"res0_c", c},
                              {"res0_h", h},
                              {"res0_w", w},
                              {"res0_addr", at}});
  };
  // 130 channels from lane 0: 3 lane rounds; 7 x 9 fp32 elements: ceil(63 / 16) = 4 passes.
  EXPECT_EQ(cost(add(2, 130, 7, 9), hw).dataCycles, 3.0 * 4);
  // The same in fp16: 32 per pass.
  EXPECT_EQ(cost(add(1, 130, 7, 9), hw).dataCycles, 3.0 * 2);
  // Starting in lane 63, 2 channels take two rounds.
  Command late = add(2, 2, 1, 1, 63 * isa::bm1684x::kLaneBytes);
  EXPECT_EQ(cost(late, hw).dataCycles, 2.0);
  // Max pooling 3x3 over a (1, 64, 8, 8) fp32 output: 1 round x 4 passes x 9 taps.
  Command pool = make("pord.maxpooling", {{"res0_prec", 2},
                                          {"opd0_prec", 2},
                                          {"res0_n", 1},
                                          {"res0_c", 64},
                                          {"res0_h", 8},
                                          {"res0_w", 8},
                                          {"opd0_h", 10},
                                          {"opd0_w", 10},
                                          {"opd1_h", 3},
                                          {"opd1_w", 3},
                                          {"res_op_y_str", 1},
                                          {"res_op_x_str", 1}});
  EXPECT_EQ(cost(pool, hw).dataCycles, 4.0 * 9);
}

TEST(Bm1684xTiming, Int8PoolingAndRequantisation) {
  const isa::HwConfig hw = isa::bm1684x::hwConfig();
  // int8 max pooling 3x3 over a (1, 64, 8, 8) output: 64 int8 per pass, 1 round x 1 pass x 9 taps.
  Command pool = make("pord.maxpooling", {{"res0_prec", 0},
                                          {"opd0_prec", 0},
                                          {"opd0_sign", 1},
                                          {"res0_n", 1},
                                          {"res0_c", 64},
                                          {"res0_h", 8},
                                          {"res0_w", 8},
                                          {"opd0_h", 10},
                                          {"opd0_w", 10},
                                          {"opd1_h", 3},
                                          {"opd1_w", 3},
                                          {"res_op_y_str", 1},
                                          {"res_op_x_str", 1}});
  EXPECT_EQ(cost(pool, hw).dataCycles, 1.0 * 9);
  // quant.rq1 int32 -> int8 over (1, 64, 8, 8), constant and per-channel parameters: passes of the widest
  // element (int32: 16 per pass), 1 round x 4 passes.
  for (uint64_t isConst : {1, 0}) {
    Command rq = make("quant.rq1", {{"opd0_prec", 4},
                                    {"res0_prec", 0},
                                    {"opd1_const", isConst},
                                    {"res0_n", 1},
                                    {"res0_c", 64},
                                    {"res0_h", 8},
                                    {"res0_w", 8},
                                    {"opd1_addr", 0x8000}});
    EXPECT_EQ(cost(rq, hw).dataCycles, 4.0) << isConst;
  }
}

TEST(Bm1684xTiming, DmaMovesWholeBursts) {
  const isa::HwConfig hw = isa::bm1684x::hwConfig();
  // DDR (1, 8, 4, 10) fp32, compact, into local memory: one run of 1280 bytes.
  auto load = [&](uint64_t wStride) {
    return make("dma.tensor", {{"stride_enable", 1},
                               {"nchw_copy", 1},
                               {"src_data_format", 2},
                               {"src_nsize", 1},
                               {"src_csize", 8},
                               {"src_hsize", 4},
                               {"src_wsize", 10},
                               {"dst_nsize", 1},
                               {"dst_csize", 8},
                               {"dst_hsize", 4},
                               {"dst_wsize", 10},
                               {"src_nstride", 320 * wStride},
                               {"src_cstride", 40 * wStride},
                               {"src_hstride", 10 * wStride},
                               {"src_wstride", wStride},
                               {"dst_nstride", 64},
                               {"dst_cstride", 64},
                               {"dst_hstride", 10},
                               {"dst_wstride", 1},
                               {"src_start_addr_h8", 1},
                               {"src_start_addr_l32", 0},
                               {"dst_start_addr_l32", isa::bm1684x::kLmemStart},
                               {"localmem_mask_l32", 0xffffffffu},
                               {"localmem_mask_h32", 0xffffffffu}});
  };
  auto dense = cost(load(1), hw);
  EXPECT_EQ(dense.payloadBytes, 1280u);
  EXPECT_EQ(dense.ddrBytes, 1280u); // 20 bursts of 64
  EXPECT_EQ(dense.latencyCycles, hw.gdmaStartupCycles + hw.ddrLatencyNs);
  // Every other element: 320 runs of 4 bytes, each a whole burst.
  auto strided = cost(load(2), hw);
  EXPECT_EQ(strided.payloadBytes, 1280u);
  EXPECT_EQ(strided.ddrBytes, 320u * 64);
}

TEST(Bm1684xTiming, UncostedCommandsAreNamed) {
  const isa::HwConfig hw = isa::bm1684x::hwConfig();
  auto mm = timing::bm1684x::commandCost(make("mm2.nn", {}), hw);
  ASSERT_FALSE(mm.isOk());
  EXPECT_NE(mm.message().find("no timing for mm2.nn"), std::string::npos) << mm.message();
  auto end = timing::bm1684x::commandCost(make("sys.end", {}), hw);
  ASSERT_TRUE(end.isOk());
  EXPECT_EQ(end->latencyCycles + end->dataCycles, 0.0);
}

TEST(Bm1684xTiming, GatherIsPricedAsElementwiseOverItsResult) {
  const isa::HwConfig hw = isa::bm1684x::hwConfig();
  // sg.pe_s_gather_d1coor, an int8 table of 256 entries by uint8 indices into (2, 70, 1, w): one result
  // element per lane per EU slot, as arithmetic: 2 lane rounds x ceil(2 * w / 64) passes.
  auto gather = [](uint64_t w) {
    return make("sg.pe_s_gather_d1coor", {{"res0_n", 2},
                                          {"res0_c", 70},
                                          {"res0_h", 1},
                                          {"res0_w", w},
                                          {"opd0_h", 1},
                                          {"opd0_w", 256},
                                          {"opd1_w", w},
                                          {"opd0_addr", 0x10000},
                                          {"opd1_addr", 0x20000},
                                          {"res0_addr", 0x30000}});
  };
  auto narrow = cost(gather(64), hw), wide = cost(gather(256), hw);
  EXPECT_EQ(narrow.dataCycles, 2.0 * 2);
  EXPECT_EQ(wide.dataCycles, 2.0 * 8);
  EXPECT_EQ(wide.latencyCycles, narrow.latencyCycles);
}
