// BM1684X commands executed on the data (simulator/semantics/bm1684x): a load, fp32 arithmetic with a
// constant and with a lane-broadcast tensor, a store, checked against the same arithmetic done here; DMA
// broadcast, transpose and lane masks; and the commands not executed yet failing by name.
#include "isa/bm1684x/MemoryMap.h"
#include "simulator/semantics/bm1684x/Executor.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

using namespace tpu;
using namespace tpu::isa::bm1684x;
using tpu::sim::bm1684x::Memories;

namespace {

Command make(const char *mnemonic, bool isShort, std::initializer_list<std::pair<const char *, uint64_t>> fields) {
  auto c = Command::make(*findOp(mnemonic), isShort);
  EXPECT_TRUE(c.isOk()) << mnemonic;
  for (auto [name, value] : fields) EXPECT_TRUE(c->set(name, value).isOk()) << mnemonic << "." << name;
  return *c;
}

// A tensor DMA of an n x c x h x w fp32 tensor between DDR (compact, at `ddr` from its start) and local
// memory (aligned rows of 16 fp32 per channel, at `local`), in the given direction.
Command tensorDma(uint32_t id, uint32_t dep, bool toLocal, uint64_t ddr, uint64_t local, uint64_t n, uint64_t c,
                  uint64_t h, uint64_t w) {
  const uint64_t cs = (h * w + 15) / 16 * 16, ns = (c + 63) / 64 * cs;
  const uint64_t ddrAddr = kGlobalStart + ddr, localAddr = kLmemStart + local;
  const uint64_t src = toLocal ? ddrAddr : localAddr, dst = toLocal ? localAddr : ddrAddr;
  std::array<uint64_t, 4> ddrStride{c * h * w, h * w, w, 1}, localStride{ns, cs, w, 1};
  const auto &ss = toLocal ? ddrStride : localStride, &ds = toLocal ? localStride : ddrStride;
  return make("dma.tensor", false,
              {{"cmd_id", id},
               {"cmd_id_dep", dep},
               {"stride_enable", 1},
               {"nchw_copy", 1},
               {"src_data_format", 2},
               {"src_nsize", n},
               {"src_csize", c},
               {"src_hsize", h},
               {"src_wsize", w},
               {"src_nstride", ss[0]},
               {"src_cstride", ss[1]},
               {"src_hstride", ss[2]},
               {"src_wstride", ss[3]},
               {"dst_nstride", ds[0]},
               {"dst_cstride", ds[1]},
               {"dst_hstride", ds[2]},
               {"dst_wstride", ds[3]},
               {"src_start_addr_l32", src & 0xffffffffu},
               {"src_start_addr_h8", src >> 32},
               {"dst_start_addr_l32", dst & 0xffffffffu},
               {"dst_start_addr_h8", dst >> 32},
               {"localmem_mask_l32", 0xffffffffu},
               {"localmem_mask_h32", 0xffffffffu}});
}

// Short fp32 arithmetic on aligned local tensors of shape n x c x h x w.
Command arith(const char *mnemonic, uint32_t id, uint32_t dep, uint64_t res, uint64_t a, uint64_t b, uint64_t n,
              uint64_t c, uint64_t h, uint64_t w, bool bIsConst = false, uint64_t bLayout = 0) {
  return make(mnemonic, true,
              {{"cmd_id", id},
               {"cmd_id_dep", dep},
               {"tsk_opd_num", 2},
               {"res0_prec", 2},
               {"opd0_prec", 2},
               {"opd1_prec", 2},
               {"res0_n", n},
               {"res0_c", c},
               {"res0_h", h},
               {"res0_w", w},
               {"res0_addr", res},
               {"opd0_addr", a},
               {"opd1_addr", b},
               {"opd1_const", bIsConst},
               {"opd1_str", bLayout}});
}

std::vector<float> randomFloats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-4, 4);
  std::vector<float> v(n);
  for (float &x : v) x = d(rng);
  return v;
}

uint32_t bitsOf(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

} // namespace

TEST(Bm1684xExec, LoadComputeStoreMatchesFp32Arithmetic) {
  // x (1x70x3x5, 70 channels: two rows of lanes) + 0.75, then max with y, stored back to DDR.
  const uint64_t n = 1, c = 70, h = 3, w = 5, count = n * c * h * w;
  auto x = randomFloats(count, 1), y = randomFloats(count, 2);
  Memories m;
  ASSERT_TRUE(m.global().write(kGlobalStart, x.data(), count * 4).isOk());
  ASSERT_TRUE(m.global().write(kGlobalStart + 0x10000, y.data(), count * 4).isOk());
  const uint64_t X = 0x0, Y = 0x1000, T = 0x2000, R = 0x3000; // local addresses (lane 0)
  std::vector<Command> dma{tensorDma(1, 0, true, 0, X, n, c, h, w), tensorDma(2, 0, true, 0x10000, Y, n, c, h, w),
                           tensorDma(3, 2, false, 0x20000, R, n, c, h, w)};
  std::vector<Command> tiu{arith("arith.add", 1, 2, T, X, bitsOf(0.75f), n, c, h, w, /*bIsConst=*/true),
                           arith("arith.max", 2, 2, R, T, Y, n, c, h, w)};
  auto st = sim::bm1684x::run(m, tiu, dma);
  ASSERT_TRUE(st.isOk()) << st.message();
  std::vector<float> got(count);
  ASSERT_TRUE(m.global().read(kGlobalStart + 0x20000, got.data(), count * 4).isOk());
  for (size_t i = 0; i < count; ++i) {
    float want = x[i] + 0.75f;
    want = want > y[i] ? want : y[i];
    ASSERT_EQ(bitsOf(got[i]), bitsOf(want)) << i;
  }
}

TEST(Bm1684xExec, BroadcastTransposeAndLaneMask) {
  Memories m;
  auto row = randomFloats(8, 3);
  ASSERT_TRUE(m.global().write(kGlobalStart, row.data(), 32).isOk());
  // One 1x1x1x8 row broadcast to 6 channels (lanes 0..5), lane 2 masked off.
  Command bc = tensorDma(1, 0, true, 0, 0, 1, 1, 1, 8);
  auto bcast = Command::make(*findOp("dma.tensor.broadcast"), false);
  ASSERT_TRUE(bcast.isOk());
  for (size_t i = 0; i < bc.layout().fieldCount; ++i)
    if (bc.layout().fields[i].name != "cmd_special_function") ASSERT_TRUE(bcast->setField(i, bc.value(i)).isOk());
  ASSERT_TRUE(bcast->set("dst_csize", 6).isOk());
  ASSERT_TRUE(bcast->set("localmem_mask_l32", 0xffffffffu & ~4u).isOk());
  ASSERT_TRUE(sim::bm1684x::execute(m, *bcast).isOk());
  for (uint32_t lane = 0; lane < 6; ++lane) {
    float v;
    std::memcpy(&v, m.local().lane(lane) + 4 * 3, 4);
    EXPECT_EQ(bitsOf(v), lane == 2 ? 0u : bitsOf(row[3])) << lane;
  }
  // n <-> c transpose, DDR to DDR: a 2x3x1x1 tensor becomes 3x2x1x1.
  std::vector<float> t{1, 2, 3, 4, 5, 6};
  ASSERT_TRUE(m.global().write(kGlobalStart + 0x100, t.data(), 24).isOk());
  auto tr = make("dma.tensor.transpose", false,
                 {{"stride_enable", 1},
                  {"src_data_format", 2},
                  {"src_nsize", 2},
                  {"src_csize", 3},
                  {"src_hsize", 1},
                  {"src_wsize", 1},
                  {"src_nstride", 3},
                  {"src_cstride", 1},
                  {"src_hstride", 1},
                  {"src_wstride", 1},
                  {"dst_nstride", 2},
                  {"dst_cstride", 1},
                  {"dst_hstride", 1},
                  {"dst_wstride", 1},
                  {"src_start_addr_l32", 0x100},
                  {"src_start_addr_h8", 1},
                  {"dst_start_addr_l32", 0x200},
                  {"dst_start_addr_h8", 1}});
  auto st = sim::bm1684x::execute(m, tr);
  ASSERT_TRUE(st.isOk()) << st.message();
  std::vector<float> out(6);
  ASSERT_TRUE(m.global().read(kGlobalStart + 0x200, out.data(), 24).isOk());
  EXPECT_EQ(out, (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

TEST(Bm1684xExec, WhatIsNotExecutedFailsByName) {
  Memories m;
  Command conv = make("conv.normal", true, {{"cmd_id", 1}});
  auto st = sim::bm1684x::run(m, {conv}, {});
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.message(), "TIU command 0 (%B1): conv.normal is not executed yet");
  Command int8Add = arith("arith.add", 1, 0, 0x2000, 0, 0x1000, 1, 4, 1, 4);
  ASSERT_TRUE(int8Add.set("opd0_prec", 0).isOk());
  st = sim::bm1684x::execute(m, int8Add);
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.message(), "arith.add: %R0 is ui8: fp32 only so far");
  Command stray = tensorDma(1, 0, false, kGlobalEnd - kGlobalStart - 256, 0, 1, 64, 1, 64); // past DDR's end
  st = sim::bm1684x::execute(m, stray);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("global memory access"), std::string::npos) << st.message();
}
