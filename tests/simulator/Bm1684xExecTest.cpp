// BM1684X commands executed on the data (simulator/semantics/bm1684x): a load, fp32 arithmetic with a
// constant and with a lane-broadcast tensor, a store, checked against the same arithmetic done here; DMA
// broadcast, transpose and lane masks; fp32 conv, pooling and depthwise conv checked bit for bit against
// plain loops over an explicitly padded input, summing in the executor's order; and the commands and forms
// not executed failing by name.
#include "isa/bm1684x/MemoryMap.h"
#include "simulator/semantics/bm1684x/Executor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
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

using Shape = std::array<uint64_t, 4>;

// An n x c x h x w fp32 tensor on the host, packed.
struct Host {
  Shape shape;
  std::vector<float> v;
  explicit Host(Shape s, float fill = 0) : shape(s), v(s[0] * s[1] * s[2] * s[3], fill) {}
  size_t index(uint64_t n, uint64_t c, uint64_t h, uint64_t w) const {
    return ((n * shape[1] + c) * shape[2] + h) * shape[3] + w;
  }
  float &operator()(uint64_t n, uint64_t c, uint64_t h, uint64_t w) { return v[index(n, c, h, w)]; }
  float operator()(uint64_t n, uint64_t c, uint64_t h, uint64_t w) const { return v[index(n, c, h, w)]; }
};

Host randomHost(Shape s, unsigned seed) {
  Host t(s);
  t.v = randomFloats(t.v.size(), seed);
  return t;
}

// Where a test puts a tensor in local memory: channel c in lane (lane0 + c) % 64, row (lane0 + c) / 64 of
// it, from byte `base` of the lane, with element strides (n, row, h, w).
struct Local {
  uint32_t lane0;
  uint64_t base;
  Shape stride;
  uint64_t address() const { return lane0 * kLaneBytes + base; }
  uint8_t *at(Memories &m, uint64_t n, uint64_t c, uint64_t h, uint64_t w) const {
    uint64_t channel = lane0 + c;
    return m.local().lane(uint32_t(channel % kLanes)) + base +
           4 * (n * stride[0] + channel / kLanes * stride[1] + h * stride[2] + w * stride[3]);
  }
  void put(Memories &m, const Host &t) const {
    auto [N, C, H, W] = t.shape;
    for (uint64_t n = 0; n < N; ++n)
      for (uint64_t c = 0; c < C; ++c)
        for (uint64_t h = 0; h < H; ++h)
          for (uint64_t w = 0; w < W; ++w) std::memcpy(at(m, n, c, h, w), &t.v[t.index(n, c, h, w)], 4);
  }
  Host get(Memories &m, Shape shape) const {
    Host t(shape);
    for (uint64_t n = 0; n < shape[0]; ++n)
      for (uint64_t c = 0; c < shape[1]; ++c)
        for (uint64_t h = 0; h < shape[2]; ++h)
          for (uint64_t w = 0; w < shape[3]; ++w) std::memcpy(&t(n, c, h, w), at(m, n, c, h, w), 4);
    return t;
  }
};

// The aligned layout: each channel's h*w padded to 16 fp32 (the 64-byte EU vector).
Local aligned(uint32_t lane0, uint64_t base, Shape s) {
  const uint64_t cs = (s[2] * s[3] + 15) / 16 * 16;
  return {lane0, base, {(lane0 + s[1] + kLanes - 1) / kLanes * cs, cs, s[3], 1}};
}

// A square window: kernel, stride, padding on every side, kernel dilation, zeros inserted between input
// elements, and the value the padding reads as.
struct Window {
  uint64_t kernel = 3, stride = 2, pad = 1, dilation = 1, ins = 0;
  float padValue = 0;
};

void setWindow(Command &c, const Window &w) {
  for (auto [name, value] : std::initializer_list<std::pair<const char *, uint64_t>>{{"opd1_h", w.kernel},
                                                                                     {"opd1_w", w.kernel},
                                                                                     {"res_op_y_str", w.stride},
                                                                                     {"res_op_x_str", w.stride},
                                                                                     {"opd0_up_pad", w.pad},
                                                                                     {"opd0_dn_pad", w.pad},
                                                                                     {"opd0_lf_pad", w.pad},
                                                                                     {"opd0_rt_pad", w.pad},
                                                                                     {"opd1_y_ins0", w.dilation - 1},
                                                                                     {"opd1_x_ins0", w.dilation - 1},
                                                                                     {"opd0_y_ins0", w.ins},
                                                                                     {"opd0_x_ins0", w.ins},
                                                                                     {"opd3_const", 1},
                                                                                     {"opd3_addr", bitsOf(w.padValue)}})
    EXPECT_TRUE(c.set(name, value).isOk()) << name;
}

// The input as the window sees it: dilated by ins + 1 (zeros between elements), then padded.
Host padded(const Host &x, const Window &w) {
  auto [N, C, H, W] = x.shape;
  const uint64_t step = w.ins + 1;
  Host p({N, C, (H - 1) * step + 1 + 2 * w.pad, (W - 1) * step + 1 + 2 * w.pad}, w.padValue);
  for (uint64_t n = 0; n < N; ++n)
    for (uint64_t c = 0; c < C; ++c)
      for (uint64_t h = 0; h < p.shape[2] - 2 * w.pad; ++h)
        for (uint64_t v = 0; v < p.shape[3] - 2 * w.pad; ++v)
          p(n, c, w.pad + h, w.pad + v) = h % step || v % step ? 0.0f : x(n, c, h / step, v / step);
  return p;
}

uint64_t outputExtent(uint64_t in, const Window &w) {
  return ((in - 1) * (w.ins + 1) + 1 + 2 * w.pad - ((w.kernel - 1) * w.dilation + 1)) / w.stride + 1;
}

void expectSameBits(const Host &got, const Host &want) {
  ASSERT_EQ(got.v.size(), want.v.size());
  for (size_t i = 0; i < want.v.size(); ++i) ASSERT_EQ(bitsOf(got.v[i]), bitsOf(want.v[i])) << i;
}

// One conv.normal: its input, weights, bias and old output in local memory, run, compared with the
// reference.
struct ConvCase {
  uint64_t n = 1, ic = 70, oc = 70, h = 9, w = 9;
  Window window;
  uint32_t inLane = 5, weightLane = 3, biasLane = 0, outLane = 7;
  bool stridedInput = false, constBias = false, resAdd = false;
};

void checkConv(const ConvCase &k) {
  const Window &win = k.window;
  const uint64_t K = win.kernel, oh = outputExtent(k.h, win), ow = outputExtent(k.w, win);
  Host x = randomHost({k.n, k.ic, k.h, k.w}, 10), weight = randomHost({k.oc, k.ic, K, K}, 11);
  Host bias = randomHost({1, k.oc, 1, 1}, 12), old = randomHost({k.n, k.oc, oh, ow}, 13);
  Memories m;
  // A strided input: rows of w + 3, channels 5 and images 7 elements apart beyond what they hold.
  const uint64_t hs = k.w + 3, cs = k.h * hs + 5, rows = (k.inLane + k.ic + kLanes - 1) / kLanes;
  const Local in = k.stridedInput ? Local{k.inLane, 0, {rows * cs + 7, cs, hs, 1}} : aligned(k.inLane, 0, x.shape);
  in.put(m, x);
  // Ic1 weights: output channel oc in lane (lane0 + oc) % 64, its ic*kh*kw packed in row (lane0 + oc) / 64.
  const uint64_t weightBase = 0x4000, row = k.ic * K * K;
  for (uint64_t o = 0; o < k.oc; ++o)
    for (uint64_t i = 0; i < k.ic; ++i)
      for (uint64_t y = 0; y < K; ++y)
        for (uint64_t v = 0; v < K; ++v) {
          const uint64_t lane = k.weightLane + o;
          std::memcpy(m.local().lane(uint32_t(lane % kLanes)) + weightBase +
                          4 * (lane / kLanes * row + i * K * K + y * K + v),
                      &weight(o, i, y, v), 4);
        }
  const Local biasAt{k.biasLane, 0x10000, {0, 1, 0, 0}};
  if (k.constBias)
    std::fill(bias.v.begin(), bias.v.end(), 0.25f);
  else
    biasAt.put(m, bias);
  const Local out = aligned(k.outLane, 0x14000, old.shape);
  out.put(m, old);

  Command c = make("conv.normal", true,
                   {{"res0_prec", 2},
                    {"opd0_prec", 2},
                    {"res0_n", k.n},
                    {"res0_c", k.oc},
                    {"res0_h", oh},
                    {"res0_w", ow},
                    {"opd0_c", k.ic},
                    {"opd0_h", k.h},
                    {"opd0_w", k.w},
                    {"opd0_str", k.stridedInput ? 3 : 0},
                    {"opd0_n_str", in.stride[0]},
                    {"opd0_c_str", in.stride[1]},
                    {"opd0_h_str", in.stride[2]},
                    {"opd0_w_str", in.stride[3]},
                    {"res0_addr", out.address()},
                    {"opd0_addr", in.address()},
                    {"opd1_addr", k.weightLane * kLaneBytes + weightBase},
                    {"opd2_const", k.constBias},
                    {"opd2_addr", k.constBias ? bitsOf(0.25f) : biasAt.address()},
                    {"res_add", k.resAdd}});
  setWindow(c, win);
  auto st = sim::bm1684x::execute(m, c);
  ASSERT_TRUE(st.isOk()) << st.message();

  Host p = padded(x, win), want(old.shape);
  for (uint64_t n = 0; n < k.n; ++n)
    for (uint64_t o = 0; o < k.oc; ++o)
      for (uint64_t y = 0; y < oh; ++y)
        for (uint64_t v = 0; v < ow; ++v) {
          float acc = 0;
          for (uint64_t i = 0; i < k.ic; ++i)
            for (uint64_t ky = 0; ky < K; ++ky)
              for (uint64_t kx = 0; kx < K; ++kx)
                acc += p(n, i, y * win.stride + ky * win.dilation, v * win.stride + kx * win.dilation) *
                       weight(o, i, ky, kx);
          float r = acc + bias(0, o, 0, 0);
          want(n, o, y, v) = k.resAdd ? old(n, o, y, v) + r : r;
        }
  Host got = out.get(m, old.shape);
  expectSameBits(got, want);
}

// A short pooling or depthwise command on aligned tensors: input (n, c, h, w) at `in`, output at `out`.
Command pord(const char *mnemonic, const Window &w, Shape inShape, const Local &in, const Local &out) {
  Command c = make(mnemonic, true,
                   {{"res0_prec", 2},
                    {"opd0_prec", 2},
                    {"res0_n", inShape[0]},
                    {"res0_c", inShape[1]},
                    {"res0_h", outputExtent(inShape[2], w)},
                    {"res0_w", outputExtent(inShape[3], w)},
                    {"opd0_h", inShape[2]},
                    {"opd0_w", inShape[3]},
                    {"res0_addr", out.address()},
                    {"opd0_addr", in.address()}});
  setWindow(c, w);
  return c;
}

// Calls fn(n, c, oh, ow, taps) for every output position, taps being the padded input under the window in
// (kh, kw) order.
template <typename Fn> void forEachWindow(const Host &p, Shape out, const Window &w, Fn &&fn) {
  std::vector<float> taps;
  for (uint64_t n = 0; n < out[0]; ++n)
    for (uint64_t c = 0; c < out[1]; ++c)
      for (uint64_t y = 0; y < out[2]; ++y)
        for (uint64_t v = 0; v < out[3]; ++v) {
          taps.clear();
          for (uint64_t ky = 0; ky < w.kernel; ++ky)
            for (uint64_t kx = 0; kx < w.kernel; ++kx)
              taps.push_back(p(n, c, y * w.stride + ky * w.dilation, v * w.stride + kx * w.dilation));
          fn(n, c, y, v, taps);
        }
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
    if (bc.layout().fields[i].name != "cmd_special_function") {
      ASSERT_TRUE(bcast->setField(i, bc.value(i)).isOk());
    }
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
  Command mm = make("mm.normal", true, {{"cmd_id", 1}});
  auto st = sim::bm1684x::run(m, {mm}, {});
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.message(), "TIU command 0 (%B1): mm.normal is not executed yet");
  Command int8Add = arith("arith.add", 1, 0, 0x2000, 0, 0x1000, 1, 4, 1, 4);
  ASSERT_TRUE(int8Add.set("opd0_prec", 0).isOk());
  st = sim::bm1684x::execute(m, int8Add);
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.message(), "arith.add: operand %R0 is ui8: fp32 only so far");
  Command stray = tensorDma(1, 0, false, kGlobalEnd - kGlobalStart - 256, 0, 1, 64, 1, 64); // past DDR's end
  st = sim::bm1684x::execute(m, stray);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("global memory access"), std::string::npos) << st.message();
}

TEST(Bm1684xExec, ConvCrossesLanesWithBias) {
  // 70 input and 70 output channels from lanes 5, 3 and 7: both wrap past lane 63.
  checkConv(ConvCase{});
}

TEST(Bm1684xExec, ConvDilatedStridedInputWithResAdd) {
  ConvCase k;
  k.n = 2, k.window.dilation = 2, k.window.padValue = -0.5f;
  k.inLane = 60, k.stridedInput = true, k.constBias = true, k.resAdd = true;
  checkConv(k);
}

TEST(Bm1684xExec, ConvWithInsertedZeros) {
  // Deconvolution: one zero between input elements, stride 1.
  ConvCase k;
  k.ic = 6, k.oc = 5, k.h = 5, k.w = 4, k.window.ins = 1, k.window.stride = 1, k.window.padValue = 0.5f;
  checkConv(k);
}

TEST(Bm1684xExec, MaxAndAvgPooling3x3Stride2Padded) {
  const Shape shape{2, 70, 9, 9};
  Host x = randomHost(shape, 20);
  Window w;
  w.padValue = -1.5f; // counts in both, unlike a -inf pad
  const Shape outShape{2, 70, outputExtent(9, w), outputExtent(9, w)};
  const Local in = aligned(10, 0, shape), out = aligned(20, 0x8000, outShape);
  const float ninth = 1.0f / 9;
  Host p = padded(x, w), wantMax(outShape), wantAvg(outShape);
  forEachWindow(p, outShape, w, [&](uint64_t n, uint64_t c, uint64_t y, uint64_t v, const std::vector<float> &taps) {
    float mx = -std::numeric_limits<float>::infinity(), sum = 0;
    for (float t : taps) mx = t > mx ? t : mx, sum += t;
    wantMax(n, c, y, v) = mx;
    wantAvg(n, c, y, v) = sum * ninth;
  });

  Memories m;
  in.put(m, x);
  auto st = sim::bm1684x::execute(m, pord("pord.maxpooling", w, shape, in, out));
  ASSERT_TRUE(st.isOk()) << st.message();
  Host got = out.get(m, outShape);
  expectSameBits(got, wantMax);

  Command avg = pord("pord.avgpooling", w, shape, in, out);
  ASSERT_TRUE(avg.set("opd1_const", 1).isOk());
  ASSERT_TRUE(avg.set("opd1_addr", bitsOf(ninth)).isOk());
  st = sim::bm1684x::execute(m, avg);
  ASSERT_TRUE(st.isOk()) << st.message();
  got = out.get(m, outShape);
  expectSameBits(got, wantAvg);
}

TEST(Bm1684xExec, DepthwiseReluCrossesLanes) {
  const Shape shape{1, 70, 9, 9};
  Host x = randomHost(shape, 30), weight = randomHost({1, 70, 3, 3}, 31), bias = randomHost({1, 70, 1, 1}, 32);
  Window w;
  w.dilation = 2;
  const Shape outShape{1, 70, outputExtent(9, w), outputExtent(9, w)};
  // Compact weights (3x3 packed per channel) and one bias per channel, from lanes 2 and 40.
  const Local in = aligned(33, 0, shape), out = aligned(1, 0x8000, outShape);
  const Local weightAt{2, 0x4000, {0, 9, 3, 1}}, biasAt{40, 0x6000, {0, 1, 0, 0}};
  Memories m;
  in.put(m, x);
  weightAt.put(m, weight);
  biasAt.put(m, bias);
  Command c = pord("pord.depthwiserelu", w, shape, in, out);
  ASSERT_TRUE(c.set("opd1_addr", weightAt.address()).isOk());
  ASSERT_TRUE(c.set("opd2_addr", biasAt.address()).isOk());
  auto st = sim::bm1684x::execute(m, c);
  ASSERT_TRUE(st.isOk()) << st.message();

  Host p = padded(x, w), want(outShape);
  size_t clamped = 0;
  forEachWindow(p, outShape, w, [&](uint64_t n, uint64_t ch, uint64_t y, uint64_t v, const std::vector<float> &taps) {
    float acc = 0;
    for (size_t i = 0; i < taps.size(); ++i) acc += taps[i] * weight.v[ch * 9 + i];
    float r = acc + bias(0, ch, 0, 0);
    clamped += r <= 0;
    want(n, ch, y, v) = r > 0 ? r : 0.0f;
  });
  EXPECT_GT(clamped, 0u);
  Host got = out.get(m, outShape);
  expectSameBits(got, want);
}

TEST(Bm1684xExec, RefusedWindowFormsFailByName) {
  Memories m;
  const Local in = aligned(0, 0, {1, 4, 9, 9}), out = aligned(0, 0x8000, {1, 4, 5, 5});
  auto conv = [&](const char *field, uint64_t value) {
    Command c = make("conv.normal", true,
                     {{"res0_prec", 2},
                      {"opd0_prec", 2},
                      {"res0_n", 1},
                      {"res0_c", 4},
                      {"res0_h", 5},
                      {"res0_w", 5},
                      {"opd0_c", 4},
                      {"opd0_h", 9},
                      {"opd0_w", 9},
                      {"res0_addr", out.address()},
                      {"opd1_addr", 0x4000},
                      {"opd2_const", 1}});
    setWindow(c, Window{});
    EXPECT_TRUE(c.set(field, value).isOk()) << field;
    auto st = sim::bm1684x::execute(m, c);
    EXPECT_FALSE(st.isOk()) << field;
    return st.message();
  };
  EXPECT_EQ(conv("opd0_prec", 1), "conv.normal: input %R0 is f16: fp32 only so far");
  EXPECT_EQ(conv("pad_mode", 1), "conv.normal: pad_mode = 1 is not modelled");
  EXPECT_EQ(conv("kernel_rotate", 1), "conv.normal: kernel_rotate = 1 is not modelled");
  EXPECT_EQ(conv("opd3_const", 0), "conv.normal: a pad value in memory (opd3_const = 0) is not modelled");
  EXPECT_EQ(conv("res_op_x_str", 0), "conv.normal: res_op_x_str = 0 is no stride");
  EXPECT_EQ(conv("res0_h", 4), "conv.normal: output height 4 is not (padded input 11 - kernel 3) / stride 2 + 1 = 5");

  Command avg = pord("pord.avgpooling", Window{}, {1, 4, 9, 9}, in, out);
  auto st = sim::bm1684x::execute(m, avg);
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.message(), "pord.avgpooling: an average's multiplier in memory (opd1_const = 0) is not modelled");
  Command longMax = Command::make(*findOp("pord.maxpooling"), false).value();
  for (const char *f : {"res0_prec", "opd0_prec"}) ASSERT_TRUE(longMax.set(f, 2).isOk());
  ASSERT_TRUE(longMax.set("relu", 1).isOk());
  st = sim::bm1684x::execute(m, longMax);
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.message(), "pord.maxpooling: relu = 1 is not modelled");
}
