// The timing model's properties: cycles follow work / (lanes x EU), the
// published peak figures come out of the config, DMA cost follows bytes,
// bursts and bandwidth. No magic cycle counts.
#include "timing/GdmaTiming.h"
#include "timing/Schedule.h"
#include "timing/TiuTiming.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace tpu;
using namespace tpu::isa;
using namespace tpu::timing;

namespace {

LocalOperand operand(uint32_t lane, Shape4 s, Prec p) {
  LocalOperand o;
  o.addr = lane * 512 * 1024;
  o.shape = s;
  o.prec = p;
  return o;
}

TiuCommand conv(uint32_t n, uint32_t ic, uint32_t oc, uint32_t oh, uint32_t ow, uint32_t k, Prec p,
                uint32_t lane = 0) {
  Conv c;
  c.input = operand(0, {n, ic, oh + k - 1, ow + k - 1}, p);
  c.weight = operand(0, {ic, oc, k, k}, p);
  c.output = operand(lane, {n, oc, oh, ow}, p == Prec::Fp32 ? Prec::Fp32 : Prec::Int8);
  TiuCommand cmd;
  cmd.op = c;
  return cmd;
}

TiuCommand arith(EuOp eu, Shape4 s, Prec p) {
  Arith a;
  a.eu = eu;
  a.res0 = operand(0, s, p);
  a.opd0 = operand(0, s, p);
  a.opd1 = operand(0, s, p);
  TiuCommand cmd;
  cmd.op = a;
  return cmd;
}

GdmaCommand s2l(uint64_t ddrAddr, std::array<uint32_t, 4> shape, std::array<uint32_t, 4> ddrStride) {
  GdmaCommand g;
  g.direction = GdmaDirection::S2L;
  g.src.addr = ddrAddr;
  g.src.format = GdmaFormat::Fp32;
  g.src.shape = shape;
  g.src.stride = ddrStride;
  g.dst.addr = 0;
  g.dst.format = GdmaFormat::Fp32;
  g.dst.shape = shape;
  uint32_t hw = shape[2] * shape[3];
  g.dst.stride = {((shape[1] + 63) / 64) * ((hw + 31) / 32 * 32), (hw + 31) / 32 * 32, shape[3], 1};
  return g;
}

} // namespace

TEST(TiuTiming, ConvCyclesAreMacsOverLanesTimesEus) {
  HwConfig hw;
  // Shapes that fill every lane, word EU and packed slot: compute cycles are
  // exactly MACs / (lanes x MACs per lane per cycle).
  struct Case { Prec p; uint32_t n; double macsPerLaneCycle; };
  for (Case c : {Case{Prec::Fp32, 2, double(wordEus(hw))},
                 Case{Prec::Int8, 8, double(wordEus(hw)) * 4 * hw.int8ConvChannelsPerCycle}}) {
    for (uint32_t oc : {64u, 128u, 256u})
      for (uint32_t k : {1u, 3u}) {
        TiuCost cost = tiuCost(conv(c.n, 32, oc, 8, 16, k, c.p), hw);
        EXPECT_EQ(cost.macs, uint64_t(c.n) * 32 * oc * 8 * 16 * k * k);
        EXPECT_DOUBLE_EQ(double(cost.computeCycles), double(cost.macs) / (hw.npuLanes * c.macsPerLaneCycle))
            << precName(c.p) << " oc " << oc << " k " << k;
        EXPECT_EQ(cost.startupCycles, hw.tiuStartupCycles);
      }
  }
}

TEST(TiuTiming, ConvCyclesScaleWithEachDimension) {
  HwConfig hw;
  uint64_t base = tiuCost(conv(1, 16, 64, 16, 16, 3, Prec::Fp32), hw).computeCycles;
  EXPECT_EQ(tiuCost(conv(1, 32, 64, 16, 16, 3, Prec::Fp32), hw).computeCycles, 2 * base);  // ic
  EXPECT_EQ(tiuCost(conv(1, 16, 128, 16, 16, 3, Prec::Fp32), hw).computeCycles, 2 * base); // oc
  EXPECT_EQ(tiuCost(conv(1, 16, 64, 16, 32, 3, Prec::Fp32), hw).computeCycles, 2 * base);  // ow
  EXPECT_EQ(tiuCost(conv(2, 16, 64, 16, 16, 3, Prec::Fp32), hw).computeCycles, 2 * base);  // n
  // Fewer output channels than lanes still take a full lane round.
  EXPECT_EQ(tiuCost(conv(1, 16, 10, 16, 16, 3, Prec::Fp32), hw).computeCycles, base);
  // Channels starting at lane 60 spill into a second round.
  EXPECT_EQ(tiuCost(conv(1, 16, 10, 16, 16, 3, Prec::Fp32, 60), hw).computeCycles, 2 * base);
  // A wider EU array is proportionally faster.
  HwConfig wide = hw;
  wide.euBytes *= 2;
  EXPECT_EQ(2 * tiuCost(conv(1, 16, 64, 16, 16, 3, Prec::Fp32), wide).computeCycles, base);
}

TEST(TiuTiming, Int8PacksFourBatchItemsPerWord) {
  HwConfig hw;
  uint64_t b1 = tiuCost(conv(1, 64, 64, 14, 14, 3, Prec::Int8), hw).computeCycles;
  uint64_t b4 = tiuCost(conv(4, 64, 64, 14, 14, 3, Prec::Int8), hw).computeCycles;
  uint64_t b5 = tiuCost(conv(5, 64, 64, 14, 14, 3, Prec::Int8), hw).computeCycles;
  EXPECT_EQ(b1, b4); // batch 1 leaves three quarters of each word empty
  EXPECT_EQ(b5, 2 * b4);
  uint64_t fp32b4 = tiuCost(conv(4, 64, 64, 14, 14, 3, Prec::Fp32), hw).computeCycles;
  EXPECT_EQ(fp32b4, b4 * 4 * hw.int8ConvChannelsPerCycle);
}

TEST(TiuTiming, PeakThroughputMatchesPublishedFigures) {
  HwConfig hw;
  // BM1684.md §1: 2.2 TFLOPS fp32, 17.6 TOPS int8 (2 ops per MAC).
  auto tops = [&](Prec p, uint32_t n) {
    TiuCost c = tiuCost(conv(n, 256, 512, 32, 32, 3, p), hw);
    return 2.0 * double(c.macs) / double(c.computeCycles) * hw.clockMhz * 1e6 / 1e12;
  };
  EXPECT_NEAR(tops(Prec::Fp32, 1), 2.2, 2.2 * 0.05);
  EXPECT_NEAR(tops(Prec::Int8, 4), 17.6, 17.6 * 0.05);
}

TEST(TiuTiming, ElementwiseFollowsElementsAndOperation) {
  HwConfig hw;
  uint64_t add = tiuCost(arith(EuOp::Add, {1, 64, 32, 32}, Prec::Fp32), hw).computeCycles;
  EXPECT_EQ(add, 32u * 32 / wordEus(hw));
  EXPECT_EQ(tiuCost(arith(EuOp::Add, {1, 128, 32, 32}, Prec::Fp32), hw).computeCycles, 2 * add);
  EXPECT_EQ(tiuCost(arith(EuOp::Divide, {1, 64, 32, 32}, Prec::Fp32), hw).computeCycles, add * hw.divideCycles);
  EXPECT_EQ(tiuCost(arith(EuOp::Rsqrt, {1, 64, 32, 32}, Prec::Fp32), hw).computeCycles, add * hw.divideCycles);
  // int8 4N: four batch items per word.
  EXPECT_EQ(tiuCost(arith(EuOp::Add, {4, 64, 32, 32}, Prec::Int8), hw).computeCycles, add);
  EXPECT_EQ(tiuCost(arith(EuOp::Add, {1, 64, 32, 32}, Prec::Int16), hw).computeCycles, add);
  EXPECT_EQ(tiuCost(arith(EuOp::Add, {2, 64, 32, 32}, Prec::Int16), hw).computeCycles, add);
}

// A lookup reads the table at each element's own index: one element per lane
// at a time, lutCyclesPerElement each, no EU parallelism and no 4N packing.
TEST(TiuTiming, LookupsTakeOneElementPerLaneAtATime) {
  HwConfig hw;
  hw.lutCyclesPerElement = 2.5;
  auto lut = [&](Shape4 s, uint32_t lane = 0) {
    Lut l;
    l.output = operand(lane, s, Prec::Int8);
    l.index = operand(lane, s, Prec::Int8);
    l.table = operand(0, {1, 64, 1, 256}, Prec::Int8);
    TiuCommand cmd;
    cmd.op = l;
    return tiuCost(cmd, hw).computeCycles;
  };
  EXPECT_EQ(lut({1, 64, 32, 32}), 32u * 32 * 5 / 2);
  EXPECT_EQ(lut({4, 64, 32, 32}), 4 * lut({1, 64, 32, 32}));   // batch items are not packed
  EXPECT_EQ(lut({1, 128, 32, 32}), 2 * lut({1, 64, 32, 32}));  // two lane rounds
  EXPECT_EQ(lut({1, 8, 32, 32}, 60), 2 * lut({1, 64, 32, 32})); // lanes 60..67 wrap
  EXPECT_EQ(lut({1, 64, 1, 3}), 8u);                             // 7.5 rounded up to whole cycles
}

TEST(TiuTiming, MatMulCyclesFollowItsMacs) {
  HwConfig hw;
  // res[M x N] = left[M x K] * right[K x N], N = c * w columns over lanes.
  auto mm = [&](uint32_t m, uint32_t k, uint32_t c, uint32_t w) {
    MatMul op;
    op.left = operand(0, {m, c, 1, w}, Prec::Fp32);
    op.right = operand(0, {k, c, 1, w}, Prec::Fp32);
    op.output = operand(0, {m, c, 1, w}, Prec::Fp32);
    TiuCommand cmd;
    cmd.op = op;
    return tiuCost(cmd, hw);
  };
  TiuCost base = mm(32, 100, 64, 1);
  EXPECT_EQ(base.macs, 32u * 100 * 64);
  EXPECT_EQ(mm(32, 200, 64, 1).computeCycles, 2 * base.computeCycles); // K
  EXPECT_EQ(mm(64, 100, 64, 1).computeCycles, 2 * base.computeCycles); // M: rows are passes
  EXPECT_EQ(mm(32, 100, 128, 1).computeCycles, 2 * base.computeCycles); // columns beyond the lanes
}

TEST(TiuTiming, GarbageShapesSaturateInsteadOfWrapping) {
  HwConfig hw;
  TiuCommand c = conv(65535, 65535, 65535, 65535, 65535, 1, Prec::Fp32);
  c.as<Conv>()->weight.shape = {65535, 65535, 65535, 65535};
  TiuCost cost = tiuCost(c, hw);
  EXPECT_EQ(cost.computeCycles, UINT64_MAX);
  EXPECT_EQ(cost.cycles(), UINT64_MAX);
  EXPECT_EQ(cost.macs, UINT64_MAX);
}

TEST(TiuTiming, EveryCommandClassHasACost) {
  HwConfig hw;
  TiuCommand cmd;
  for (size_t i = 0; i < std::variant_size_v<TiuOp>; ++i) {
    // Default-constructed operands are 1x1x1x1: one pass, never zero cycles.
    switch (i) {
#define CASE(k) case k: cmd.op.emplace<k>(); break;
      CASE(0) CASE(1) CASE(2) CASE(3) CASE(4) CASE(5) CASE(6) CASE(7) CASE(8) CASE(9) CASE(10)
      CASE(11) CASE(12) CASE(13) CASE(14)
#undef CASE
    }
    TiuCost c = tiuCost(cmd, hw);
    EXPECT_GT(c.computeCycles, 0u) << tiuTaskName(cmd.task());
    EXPECT_EQ(c.cycles(), c.startupCycles + c.computeCycles);
  }
}

TEST(GdmaTiming, ShortRowsWasteTheRestOfTheBurst) {
  HwConfig hw;
  hw.ddrBurstBytes = 64; // the rule, at a round burst size
  EXPECT_EQ(ddrChannelBytes(10, 64, 64), 640u);
  EXPECT_EQ(ddrChannelBytes(10, 16, 64), 640u);
  EXPECT_EQ(ddrChannelBytes(10, 65, 64), 1280u);
  uint64_t base = hw.globalMemBase;
  // 64 channels of 8x8 fp32: contiguous, versus rows of 4 elements (16 B) with gaps.
  auto contiguous = gdmaCost(s2l(base, {1, 64, 8, 8}, {4096, 64, 8, 1}), hw);
  auto strided = gdmaCost(s2l(base, {1, 64, 8, 4}, {8192, 128, 16, 1}), hw);
  ASSERT_TRUE(contiguous) << contiguous.message();
  ASSERT_TRUE(strided) << strided.message();
  EXPECT_EQ(contiguous->payloadBytes, 64u * 64 * 4);
  EXPECT_EQ(strided->payloadBytes, contiguous->payloadBytes / 2);
  EXPECT_DOUBLE_EQ(contiguous->burstEfficiency, 1.0);
  EXPECT_DOUBLE_EQ(strided->burstEfficiency, 0.25);
  // Half the payload, yet twice the DDR time.
  double bpc = ddrBytesPerCycle(hw);
  EXPECT_GT(strided->dataCycles(bpc), contiguous->dataCycles(bpc));
}

TEST(GdmaTiming, MoreBandwidthNeverCostsMoreCycles) {
  HwConfig hw;
  auto c = gdmaCost(s2l(hw.globalMemBase, {2, 100, 7, 9}, {6300, 63, 9, 1}), hw);
  ASSERT_TRUE(c) << c.message();
  double prev = 1e300;
  for (double bpc : {1.0, 2.0, 8.0, 58.0, 1000.0}) {
    EXPECT_LE(c->cycles(bpc), prev);
    prev = c->cycles(bpc);
  }
  // Once DDR is fast enough the LMEM port is the floor.
  EXPECT_DOUBLE_EQ(c->dataCycles(1e9), c->lmemCycles);
  // The start-up counts GDMA cycles (575 MHz), the latency ns.
  EXPECT_DOUBLE_EQ(c->latencyCycles, hw.gdmaStartupCycles * 550.0 / 575.0 + hw.ddrLatencyNs * hw.cyclesPerNs());
  auto alone = gdmaCycles(s2l(hw.globalMemBase, {2, 100, 7, 9}, {6300, 63, 9, 1}), hw);
  ASSERT_TRUE(alone);
  EXPECT_DOUBLE_EQ(*alone, c->cycles(ddrBytesPerCycle(hw)));
}

TEST(GdmaTiming, LocalToLocalUsesNoDdr) {
  HwConfig hw;
  GdmaCommand g = s2l(0, {1, 64, 8, 8}, {64, 64, 8, 1});
  g.direction = GdmaDirection::L2L;
  g.src.addr = 0x10000;
  g.src.stride = g.dst.stride;
  auto c = gdmaCost(g, hw);
  ASSERT_TRUE(c) << c.message();
  EXPECT_EQ(c->ddrBytes, 0u);
  EXPECT_DOUBLE_EQ(c->latencyCycles, hw.gdmaStartupCycles * 550.0 / 575.0);
  // 64 channels of 8x8 fp32: 64 elements per lane through each lane's port,
  // each at least gdmaLmemMinElementBytes wide there.
  EXPECT_DOUBLE_EQ(c->lmemCycles,
                   64 * std::max(4.0, hw.gdmaLmemMinElementBytes) / hw.gdmaLmemBytesPerLanePerCycle * 550.0 / 575.0);
}

// The LMEM side is per lane: the same bytes in 4 channels take 16 x the port
// time of 64 channels (4 lanes work instead of 64).
TEST(GdmaTiming, FewChannelsUseFewLanePorts) {
  HwConfig hw;
  auto wide = gdmaCost(s2l(hw.globalMemBase, {1, 64, 8, 8}, {4096, 64, 8, 1}), hw);
  auto narrow = gdmaCost(s2l(hw.globalMemBase, {1, 4, 32, 32}, {4096, 1024, 32, 1}), hw);
  ASSERT_TRUE(wide && narrow);
  EXPECT_EQ(wide->payloadBytes, narrow->payloadBytes);
  EXPECT_DOUBLE_EQ(narrow->lmemCycles, 16 * wide->lmemCycles);
}

// An element takes at least gdmaLmemMinElementBytes of the LMEM side: with
// 4, int8 elements cost what fp32 ones do there (and 4 x their own bytes),
// fp32 is unaffected; with 1 each element costs its bytes.
TEST(GdmaTiming, LmemSideChargesAtLeastMinElementBytesPerElement) {
  HwConfig hw;
  hw.gdmaLmemMinElementBytes = 4;
  GdmaCommand f32 = s2l(hw.globalMemBase, {1, 64, 8, 8}, {4096, 64, 8, 1});
  GdmaCommand i8 = f32;
  i8.src.format = i8.dst.format = GdmaFormat::Int8;
  i8.dst.stride = {64, 64, 8, 1};
  auto a = gdmaCost(f32, hw), b = gdmaCost(i8, hw);
  ASSERT_TRUE(a && b) << a.message() << b.message();
  EXPECT_DOUBLE_EQ(b->lmemCycles, a->lmemCycles);
  EXPECT_DOUBLE_EQ(a->lmemCycles, 256.0 / hw.gdmaLmemBytesPerLanePerCycle * 550.0 / 575.0);
  hw.gdmaLmemMinElementBytes = 1;
  auto c = gdmaCost(i8, hw), d = gdmaCost(f32, hw);
  ASSERT_TRUE(c && d);
  EXPECT_DOUBLE_EQ(c->lmemCycles, a->lmemCycles / 4);
  EXPECT_DOUBLE_EQ(d->lmemCycles, a->lmemCycles);
}

// A command that names a new dependency on the other engine pays syncCycles;
// one that waits for the same id as the command before it does not.
TEST(Schedule, SyncCostOnlyForANewDependency) {
  HwConfig hw;
  hw.syncCycles = 30;
  EXPECT_EQ(syncCost(0, 0, hw), 0.0);
  EXPECT_EQ(syncCost(3, 2, hw), 30.0);
  EXPECT_EQ(syncCost(3, 3, hw), 0.0);
  // GDMA 1 (100 cycles), then TIU 1 waits for it: 100 + 30 + 50.
  std::vector<isa::OrderedCommand> order{{isa::Engine::Gdma, 0}, {isa::Engine::Tiu, 0}};
  EXPECT_EQ(scheduleCycles(order, {{1, syncCost(1, 0, hw) + 50}}, {{0, 100}}), 180.0);
}

TEST(GdmaTiming, InvalidCommandIsAnError) {
  HwConfig hw;
  auto c = gdmaCost(s2l(0x10, {1, 1, 1, 4}, {4, 4, 4, 1}), hw); // below the DDR base
  ASSERT_FALSE(c);
  EXPECT_NE(c.message().find("src"), std::string::npos) << c.message();
}

// Operands that start in the same LMEM bank contend for its port: compute
// x (1 + bankConflictFactor); in different banks (64 KiB apart) they do not.
TEST(TiuTiming, BankConflictSlowsSharedBankOperands) {
  HwConfig hw;
  hw.bankConflictFactor = 0.5;
  TiuCommand shared = arith(EuOp::Add, {1, 64, 32, 32}, Prec::Fp32);
  TiuCommand apart = shared;
  std::get<Arith>(apart.op).opd0.addr = 64 * 1024, std::get<Arith>(apart.op).opd1.addr = 128 * 1024;
  const uint64_t base = tiuCost(apart, hw).computeCycles;
  EXPECT_EQ(tiuCost(shared, hw).computeCycles, base * 3 / 2);
  hw.bankConflictFactor = 0;
  EXPECT_EQ(tiuCost(shared, hw).computeCycles, base);
}
