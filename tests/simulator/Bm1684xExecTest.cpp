// BM1684X commands executed on the data (simulator/semantics/bm1684x): a load, fp32 arithmetic with a
// constant and with a lane-broadcast tensor, a store, checked against the same arithmetic done here; DMA
// broadcast, transpose and lane masks; fp32 conv, pooling and depthwise conv checked bit for bit against
// plain loops over an explicitly padded input, summing in the executor's order; fp32 and int32 arithmetic,
// casts, compare-selects and the SFU's Taylor series and rsqrt checked bit for bit against references
// computed here, with their edge cases (wrap vs saturation, shifts by any amount, round modes); fp16 and
// bf16 in every family (arithmetic in every mix of operand and result types, casts, compare-selects, the
// SFU, conv with Ic32 weights and an fp32 bias, pooling, depthwise, DMA of 2-byte elements) checked bit for
// bit against the executor's rule (widen, compute in fp32, round once) written here from support/Float16.h,
// with ties, overflow, subnormals and NaN, and shown to differ from 16-bit steps or double rounding; 8- and
// 16-bit integers (signed and unsigned) in the elementwise family, casts between every pair of integer types
// and from and to floats under each round mode, int8/uint8 conv with Ic64 weights, integer max and average
// pooling and quant.rq1, each checked against plain loops and exact quotients computed here, with
// hand-computed corners (wrap vs saturation, rounding ties under each mode, negative values, uint8 vs int8);
// and the commands and forms not executed failing by name.
#include "arith/IntArith.h"
#include "isa/bm1684x/MemoryMap.h"
#include "simulator/semantics/bm1684x/Executor.h"
#include "support/Float16.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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
// memory (aligned rows of 16 fp32 per channel, at `local`), in the given direction. Of another element
// type with `format` (src_data_format): 1 fp16 and 5 bf16 in aligned rows of 32.
Command tensorDma(uint32_t id, uint32_t dep, bool toLocal, uint64_t ddr, uint64_t local, uint64_t n, uint64_t c,
                  uint64_t h, uint64_t w, unsigned format = 2) {
  const uint64_t perEu = format == 1 || format == 5 ? 32 : 16;
  const uint64_t cs = (h * w + perEu - 1) / perEu * perEu, ns = (c + 63) / 64 * cs;
  const uint64_t ddrAddr = kGlobalStart + ddr, localAddr = kLmemStart + local;
  const uint64_t src = toLocal ? ddrAddr : localAddr, dst = toLocal ? localAddr : ddrAddr;
  std::array<uint64_t, 4> ddrStride{c * h * w, h * w, w, 1}, localStride{ns, cs, w, 1};
  const auto &ss = toLocal ? ddrStride : localStride, &ds = toLocal ? localStride : ddrStride;
  return make("dma.tensor", false,
              {{"cmd_id", id},
               {"cmd_id_dep", dep},
               {"stride_enable", 1},
               {"nchw_copy", 1},
               {"src_data_format", format},
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
// it, from byte `base` of the lane, with element strides (n, row, h, w); elements of `bytes` bytes (4: fp32
// and int32, 2: fp16 and bf16).
struct Local {
  uint32_t lane0;
  uint64_t base;
  Shape stride;
  uint64_t bytes = 4;
  uint64_t address() const { return lane0 * kLaneBytes + base; }
  uint8_t *at(Memories &m, uint64_t n, uint64_t c, uint64_t h, uint64_t w) const {
    uint64_t channel = lane0 + c;
    return m.local().lane(uint32_t(channel % kLanes)) + base +
           bytes * (n * stride[0] + channel / kLanes * stride[1] + h * stride[2] + w * stride[3]);
  }
  void put(Memories &m, const Host &t) const {
    auto [N, C, H, W] = t.shape;
    for (uint64_t n = 0; n < N; ++n)
      for (uint64_t c = 0; c < C; ++c)
        for (uint64_t h = 0; h < H; ++h)
          for (uint64_t w = 0; w < W; ++w) std::memcpy(at(m, n, c, h, w), &t.v[t.index(n, c, h, w)], 4);
  }
  // Elements as their bits (a 16-bit element's in the low half of its word), packed n, c, h, w.
  void putWords(Memories &m, Shape s, const std::vector<uint32_t> &v) const {
    size_t i = 0;
    for (uint64_t n = 0; n < s[0]; ++n)
      for (uint64_t c = 0; c < s[1]; ++c)
        for (uint64_t h = 0; h < s[2]; ++h)
          for (uint64_t w = 0; w < s[3]; ++w) std::memcpy(at(m, n, c, h, w), &v[i++], bytes);
  }
  std::vector<uint32_t> getWords(Memories &m, Shape s) const {
    std::vector<uint32_t> v;
    for (uint64_t n = 0; n < s[0]; ++n)
      for (uint64_t c = 0; c < s[1]; ++c)
        for (uint64_t h = 0; h < s[2]; ++h)
          for (uint64_t w = 0; w < s[3]; ++w) {
            uint32_t x = 0;
            std::memcpy(&x, at(m, n, c, h, w), bytes);
            v.push_back(x);
          }
    return v;
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

// The aligned layout of elements of precision `prec`: 16-bit ones (fp16, bf16) padded to 32 per 64-byte EU
// vector, 32-bit ones to 16.
Local alignedAs(unsigned prec, uint32_t lane0, uint64_t base, Shape s) {
  if (prec != 1 && prec != 5) return aligned(lane0, base, s);
  const uint64_t cs = (s[2] * s[3] + 31) / 32 * 32;
  return {lane0, base, {(lane0 + s[1] + kLanes - 1) / kLanes * cs, cs, s[3], 1}, 2};
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

using Words = std::vector<uint32_t>;
using Fields = std::initializer_list<std::pair<const char *, uint64_t>>;

float floatOf(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
int64_t s32(uint32_t bits) { return int32_t(bits); }
uint32_t clampS32(int64_t v) { return uint32_t(int32_t(std::clamp<int64_t>(v, INT32_MIN, INT32_MAX))); }
uint32_t clampU32(int64_t v) { return uint32_t(std::clamp<int64_t>(v, 0, UINT32_MAX)); }
uint32_t bitsOfInt(int64_t v) { return uint32_t(v); }

// The typed elementwise tests' tensors: 1x70x3x5 (two rows of lanes), aligned, all from lane 5.
const Shape kShape{1, 70, 3, 5};
const Local kA = aligned(5, 0, kShape), kB = aligned(5, 0x1000, kShape), kC = aligned(5, 0x2000, kShape),
            kD = aligned(5, 0x3000, kShape), kOut = aligned(5, 0x4000, kShape);

// A short arith command on kA, kB -> kOut of `shape`: all of precision `prec`, signed as `isSigned`; then
// `extra` fields.
Command typedArith(const char *mnemonic, unsigned prec, bool isSigned, Shape shape, Fields extra = {}) {
  Command c = make(mnemonic, true,
                   {{"tsk_opd_num", 2},
                    {"res0_prec", prec},
                    {"opd0_prec", prec},
                    {"opd1_prec", prec},
                    {"opd0_sign", isSigned},
                    {"opd1_sign", isSigned},
                    {"res0_n", shape[0]},
                    {"res0_c", shape[1]},
                    {"res0_h", shape[2]},
                    {"res0_w", shape[3]},
                    {"res0_addr", kOut.address()},
                    {"opd0_addr", kA.address()},
                    {"opd1_addr", kB.address()}});
  for (auto [name, value] : extra) EXPECT_TRUE(c.set(name, value).isOk()) << mnemonic << "." << name;
  return c;
}

// Runs `c` with a at kA and b at kB (words of `shape`); the words at kOut, or the error.
Result<Words> runOn(const Command &c, Shape shape, const Words &a, const Words &b = {}) {
  Memories m;
  kA.putWords(m, shape, a);
  if (!b.empty()) kB.putWords(m, shape, b);
  TPU_RETURN_IF_ERROR(sim::bm1684x::execute(m, c));
  return kOut.getWords(m, shape);
}

size_t elements(Shape s) { return s[0] * s[1] * s[2] * s[3]; }

// `n` random words: fp32 values in [-4, 4), or int32 over the whole range, or (shift amounts) in [-40, 40].
enum class Data { Fp32, Int32, Shift };
Words randomWords(Data kind, size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  Words v(n);
  if (kind == Data::Fp32) {
    auto f = randomFloats(n, seed);
    for (size_t i = 0; i < n; ++i) v[i] = bitsOf(f[i]);
  } else {
    std::uniform_int_distribution<int32_t> shift(-40, 40);
    for (uint32_t &x : v) x = kind == Data::Shift ? uint32_t(shift(rng)) : uint32_t(rng());
  }
  return v;
}

// One elementwise operation on one type: its reference on a pair of words, and what opd1 holds.
struct TypedCase {
  const char *mnemonic;
  unsigned prec;
  bool isSigned;
  uint32_t (*want)(uint32_t a, uint32_t b);
  Data b = Data::Int32;
};

// Pairs every elementwise test starts with, before the random ones: limits, signs and zeros.
const std::vector<std::pair<uint32_t, uint32_t>> kEdgePairs{
    {0x7fffffffu, 1},
    {0x80000000u, 0xffffffffu},
    {0x80000000u, 1},
    {0xffffffffu, 0xffffffffu},
    {0x80000000u, 0x80000000u},
    {0xffffffffu, 1},
    {0, 1},
    {0x10000u, 0x10000u},
    {bitsOf(0.0f), bitsOf(-0.0f)},
    {bitsOf(-0.0f), bitsOf(0.0f)},
    {bitsOf(1.0f), bitsOf(0.0f)},
    {bitsOf(-3.0f), bitsOf(std::numeric_limits<float>::infinity())}};
const std::vector<std::pair<uint32_t, uint32_t>> kShiftPairs{{0x80000001u, bitsOfInt(-1)},
                                                             {0x80000001u, 31},
                                                             {1, 32},
                                                             {0x80000001u, bitsOfInt(-32)},
                                                             {0x80000001u, bitsOfInt(-31)},
                                                             {bitsOfInt(-5), bitsOfInt(-1)},
                                                             {bitsOfInt(-6), bitsOfInt(-2)},
                                                             {0x40000000u, 1},
                                                             {0xc0000000u, 1},
                                                             {1, 40},
                                                             {0xffffffffu, 40},
                                                             {0, 100},
                                                             {0xffffffffu, bitsOfInt(-40)},
                                                             {7, 0x80000000u},
                                                             {7, 0x7fffffffu},
                                                             {0x80000000u, bitsOfInt(-32)}};

// Rounding arithmetic right shift (half up) and saturating left shift of v by the signed amount s.
int64_t ashiftRef(int64_t v, int64_t s) {
  if (s >= 0) return s >= 32 ? (v > 0 ? INT64_MAX : v < 0 ? INT64_MIN : 0) : v * (int64_t(1) << s);
  const int64_t n = -s;
  return n >= 40 ? 0 : (v + (int64_t(1) << (n - 1))) >> n;
}
uint32_t logicShiftRef(uint32_t a, uint32_t b) {
  const int64_t s = int32_t(b);
  if (s >= 32 || s <= -32) return 0;
  return s >= 0 ? uint32_t(uint64_t(a) << s) : uint32_t(a >> -s);
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
  Command int4Add = arith("arith.add", 1, 0, 0x2000, 0, 0x1000, 1, 4, 1, 4);
  ASSERT_TRUE(int4Add.set("opd0_prec", 6).isOk());
  st = sim::bm1684x::execute(m, int4Add);
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.message(),
            "arith.add: operand %R0 is ui4: fp32, fp16, bf16 or an 8-, 16- or 32-bit integer only so far");
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
  EXPECT_EQ(conv("opd0_prec", 3), "conv.normal: output %R2 is f32: int32 only for an integer conv");
  EXPECT_EQ(conv("opd0_prec", 6), "conv.normal: input %R0 is ui4: 8- or 16-bit integers only");
  EXPECT_EQ(conv("opd0_prec", 0), "conv.normal: output %R2 is f32: int32 only for an integer conv");
  EXPECT_EQ(conv("res0_prec", 4), "conv.normal: output %R2 is ui32: fp32, fp16 or bf16 only so far");
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

TEST(Bm1684xExec, TypedArithmeticMatchesReferenceBitForBit) {
  const TypedCase cases[] = {
      // fp32, IEEE single
      {"arith.add", 2, true, [](uint32_t a, uint32_t b) { return bitsOf(floatOf(a) + floatOf(b)); }, Data::Fp32},
      {"arith.sub", 2, true, [](uint32_t a, uint32_t b) { return bitsOf(floatOf(a) - floatOf(b)); }, Data::Fp32},
      {"arith.mul", 2, true, [](uint32_t a, uint32_t b) { return bitsOf(floatOf(a) * floatOf(b)); }, Data::Fp32},
      {"arith.div", 2, true, [](uint32_t a, uint32_t b) { return bitsOf(floatOf(a) / floatOf(b)); }, Data::Fp32},
      {"arith.max", 2, true, [](uint32_t a, uint32_t b) { return floatOf(a) > floatOf(b) ? a : b; }, Data::Fp32},
      {"arith.min", 2, true, [](uint32_t a, uint32_t b) { return floatOf(a) < floatOf(b) ? a : b; }, Data::Fp32},
      {"arith.copy", 2, true, [](uint32_t a, uint32_t) { return a; }, Data::Fp32},
      // signed int32
      {"arith.add", 4, true, [](uint32_t a, uint32_t b) { return bitsOfInt(s32(a) + s32(b)); }},
      {"arith.sub", 4, true, [](uint32_t a, uint32_t b) { return bitsOfInt(s32(a) - s32(b)); }},
      {"arith.mul", 4, true, [](uint32_t a, uint32_t b) { return bitsOfInt(s32(a) * s32(b)); }},
      {"arith.max", 4, true, [](uint32_t a, uint32_t b) { return s32(a) > s32(b) ? a : b; }},
      {"arith.min", 4, true, [](uint32_t a, uint32_t b) { return s32(a) < s32(b) ? a : b; }},
      {"arith.and", 4, true, [](uint32_t a, uint32_t b) { return a & b; }},
      {"arith.or", 4, true, [](uint32_t a, uint32_t b) { return a | b; }},
      {"arith.xor", 4, true, [](uint32_t a, uint32_t b) { return a ^ b; }},
      {"arith.adds", 4, true, [](uint32_t a, uint32_t b) { return clampS32(s32(a) + s32(b)); }},
      {"arith.subs", 4, true, [](uint32_t a, uint32_t b) { return clampS32(s32(a) - s32(b)); }},
      {"arith.copy", 4, true, [](uint32_t a, uint32_t) { return a; }},
      {"arith.logicShift", 4, true, logicShiftRef, Data::Shift},
      {"arith.ashift", 4, true, [](uint32_t a, uint32_t b) { return clampS32(ashiftRef(s32(a), s32(b))); },
       Data::Shift},
      // unsigned int32
      {"arith.add", 4, false, [](uint32_t a, uint32_t b) { return a + b; }},
      {"arith.mul", 4, false, [](uint32_t a, uint32_t b) { return uint32_t(uint64_t(a) * b); }},
      {"arith.max", 4, false, [](uint32_t a, uint32_t b) { return a > b ? a : b; }},
      {"arith.min", 4, false, [](uint32_t a, uint32_t b) { return a < b ? a : b; }},
      {"arith.adds", 4, false, [](uint32_t a, uint32_t b) { return clampU32(int64_t(a) + b); }},
      {"arith.subs", 4, false, [](uint32_t a, uint32_t b) { return clampU32(int64_t(a) - b); }},
      {"arith.logicShift", 4, false, logicShiftRef, Data::Shift},
      {"arith.ashift", 4, false, [](uint32_t a, uint32_t b) { return clampU32(ashiftRef(a, s32(b))); }, Data::Shift},
  };
  unsigned seed = 100;
  for (const TypedCase &k : cases) {
    const std::string what = std::string(k.mnemonic) + (k.prec == 2 ? " f32" : k.isSigned ? " si32" : " ui32");
    const bool fp = k.b == Data::Fp32;
    Words a = randomWords(fp ? Data::Fp32 : Data::Int32, elements(kShape), seed++);
    Words b = randomWords(k.b, elements(kShape), seed++);
    const auto &edges = k.b == Data::Shift ? kShiftPairs : kEdgePairs;
    for (size_t i = 0; i < edges.size(); ++i) a[i] = edges[i].first, b[i] = edges[i].second;
    const bool unary = std::string(k.mnemonic) == "arith.copy";
    Command c = typedArith(k.mnemonic, k.prec, k.isSigned, kShape, {{"tsk_opd_num", unary ? 1 : 2}});
    auto got = runOn(c, kShape, a, b);
    ASSERT_TRUE(got.isOk()) << what << ": " << got.message();
    for (size_t i = 0; i < a.size(); ++i)
      ASSERT_EQ((*got)[i], k.want(a[i], b[i])) << what << " at " << i << ": " << a[i] << ", " << b[i];
  }
}

// A few pairs, one per channel (1 x n x 1 x 1 from lane 5): the results.
Words runPairs(const char *mnemonic, unsigned prec, bool isSigned,
               const std::vector<std::pair<uint32_t, uint32_t>> &pairs, Fields extra = {}) {
  const Shape shape{1, pairs.size(), 1, 1};
  Words a, b;
  for (auto [x, y] : pairs) a.push_back(x), b.push_back(y);
  auto got = runOn(typedArith(mnemonic, prec, isSigned, shape, extra), shape, a, b);
  EXPECT_TRUE(got.isOk()) << mnemonic << ": " << got.message();
  return got.isOk() ? *got : Words{};
}

TEST(Bm1684xExec, Int32WrapsOrSaturatesAndShiftsByAnyAmount) {
  const uint32_t max = 0x7fffffffu, min = 0x80000000u, umax = 0xffffffffu;
  // INT32_MAX + 1 and INT32_MIN - 1: add and sub wrap, adds and subs saturate.
  EXPECT_EQ(runPairs("arith.add", 4, true, {{max, 1}}), Words{min});
  EXPECT_EQ(runPairs("arith.adds", 4, true, {{max, 1}, {min, umax}}), (Words{max, min}));
  EXPECT_EQ(runPairs("arith.sub", 4, true, {{min, 1}}), Words{max});
  EXPECT_EQ(runPairs("arith.subs", 4, true, {{min, 1}, {max, umax}}), (Words{min, max}));
  EXPECT_EQ(runPairs("arith.mul", 4, true, {{0x10000u, 0x10000u}, {umax, umax}}), (Words{0, 1}));
  // Unsigned: the uint32 range; max and min compare as unsigned.
  EXPECT_EQ(runPairs("arith.adds", 4, false, {{umax, 1}}), Words{umax});
  EXPECT_EQ(runPairs("arith.subs", 4, false, {{0, 1}}), Words{0});
  EXPECT_EQ(runPairs("arith.max", 4, false, {{min, 1}}), Words{min});
  EXPECT_EQ(runPairs("arith.max", 4, true, {{min, 1}}), Words{1});
  // adds with its third operand, the constant right shift 0.
  EXPECT_EQ(runPairs("arith.adds", 4, true, {{max, 1}}, {{"tsk_opd_num", 3}, {"opd2_const", 1}, {"opd2_prec", 0}}),
            Words{max});
  // logicShift: left for s >= 0, logical right for s < 0, 0 from |s| >= 32.
  EXPECT_EQ(runPairs("arith.logicShift", 4, true,
                     {{0x80000001u, bitsOfInt(-1)},
                      {0x80000001u, 31},
                      {0x80000001u, bitsOfInt(-31)},
                      {1, 32},
                      {0x80000001u, bitsOfInt(-32)},
                      {3, bitsOfInt(-40)},
                      {3, 0x80000000u}}),
            (Words{0x40000000u, 0x80000000u, 1, 0, 0, 0, 0}));
  // ashift: right shifts round half up (-2.5 -> -2, -1.5 -> -1, 2.5 -> 3, +-0.875 -> +-1), left shifts
  // saturate; shifting 2^30 left by one just overflows, -2^30 just fits.
  EXPECT_EQ(runPairs("arith.ashift", 4, true,
                     {{bitsOfInt(-5), bitsOfInt(-1)},
                      {bitsOfInt(-6), bitsOfInt(-2)},
                      {5, bitsOfInt(-1)},
                      {7, bitsOfInt(-3)},
                      {bitsOfInt(-7), bitsOfInt(-3)},
                      {0x40000000u, 1},
                      {0xc0000000u, 1},
                      {1, 40},
                      {umax, 40},
                      {0, 100},
                      {umax, bitsOfInt(-40)},
                      {max, bitsOfInt(-32)}}),
            (Words{bitsOfInt(-2), bitsOfInt(-1), 3, 1, bitsOfInt(-1), max, min, max, min, 0, 0, 0}));
}

// arith.cast of a 1 x n x 1 x 1 tensor (one value per channel) from `from` to `to` precision, the result
// signed as `isSigned`, under round mode `mode`.
Result<Words> runCast(unsigned from, unsigned to, bool isSigned, uint64_t mode, const Words &in) {
  const Shape shape{1, in.size(), 1, 1};
  Command c = typedArith("arith.cast", from, true, shape,
                         {{"tsk_opd_num", 1}, {"res0_prec", to}, {"opd2_sign", isSigned}, {"opd2_n_str", mode}});
  return runOn(c, shape, in);
}

TEST(Bm1684xExec, CastRoundsAsItsModeSaysAndSaturates) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x{2.5f, -2.5f, 3.5f, -0.5f, 1.25f, -1.75f, 1e10f, -1e10f, nan, inf, -inf, 2147483520.0f};
  // Per round mode (0 half to even, 1 half away, 2 towards zero, 3 down, 4 up, 5 half up, 6 half down).
  const int64_t M = INT32_MAX, m = INT32_MIN;
  const std::vector<std::vector<int64_t>> want{
      {2, -2, 4, 0, 1, -2, M, m, 0, M, m, 2147483520}, {3, -3, 4, -1, 1, -2, M, m, 0, M, m, 2147483520},
      {2, -2, 3, 0, 1, -1, M, m, 0, M, m, 2147483520}, {2, -3, 3, -1, 1, -2, M, m, 0, M, m, 2147483520},
      {3, -2, 4, 0, 2, -1, M, m, 0, M, m, 2147483520}, {3, -2, 4, 0, 1, -2, M, m, 0, M, m, 2147483520},
      {2, -3, 3, -1, 1, -2, M, m, 0, M, m, 2147483520}};
  Words in;
  for (float f : x) in.push_back(bitsOf(f));
  for (uint64_t mode = 0; mode < want.size(); ++mode) {
    auto got = runCast(2, 4, true, mode, in);
    ASSERT_TRUE(got.isOk()) << got.message();
    for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(s32((*got)[i]), want[mode][i]) << "mode " << mode << ": " << x[i];
  }
  // An unsigned result saturates to the uint32 range.
  auto u = runCast(2, 4, false, 0, {bitsOf(-2.5f), bitsOf(1e10f), bitsOf(3e9f), bitsOf(nan)});
  ASSERT_TRUE(u.isOk()) << u.message();
  EXPECT_EQ(*u, (Words{0, 0xffffffffu, 3000000000u, 0}));

  // int32 -> fp32: to nearest, ties to even.
  auto f = runCast(4, 2, true, 0, {16777217u, 16777219u, 0x7fffffffu, bitsOfInt(-16777217), bitsOfInt(-3)});
  ASSERT_TRUE(f.isOk()) << f.message();
  EXPECT_EQ(*f, (Words{bitsOf(16777216.0f), bitsOf(16777220.0f), bitsOf(2147483648.0f), bitsOf(-16777216.0f),
                       bitsOf(-3.0f)}));
  auto uf = typedArith("arith.cast", 4, false, {1, 1, 1, 1}, {{"tsk_opd_num", 1}, {"res0_prec", 2}});
  auto ufGot = runOn(uf, {1, 1, 1, 1}, {0xffffffffu});
  ASSERT_TRUE(ufGot.isOk()) << ufGot.message();
  EXPECT_EQ(*ufGot, Words{bitsOf(4294967296.0f)});

  // Random values over a 70-channel tensor, half to even against nearbyint.
  Words r = randomWords(Data::Fp32, elements(kShape), 7);
  for (uint32_t &w : r) w = bitsOf(floatOf(w) * 1000.0f);
  Command c = typedArith("arith.cast", 2, true, kShape, {{"tsk_opd_num", 1}, {"res0_prec", 4}, {"opd2_sign", 1}});
  auto got = runOn(c, kShape, r);
  ASSERT_TRUE(got.isOk()) << got.message();
  for (size_t i = 0; i < r.size(); ++i) ASSERT_EQ(s32((*got)[i]), int64_t(std::nearbyint(floatOf(r[i])))) << i;

  // Casts not modelled.
  EXPECT_EQ(runCast(2, 2, true, 0, {0}).message(), "arith.cast: a cast from f32 to f32 is not modelled");
  EXPECT_EQ(runCast(4, 4, true, 0, {0}).message(), "arith.cast: a cast from si32 to si32 is not modelled");
  EXPECT_EQ(runCast(2, 4, true, 7, {0}).message(), "arith.cast: round mode 7 is not modelled");
  EXPECT_EQ(runCast(4, 2, true, 1, {0}).message(), "arith.cast: round mode 1 is not modelled to fp32 (0 only)");
}

TEST(Bm1684xExec, TypedArithmeticRefusesWhatItDoesNotModel) {
  const Shape shape{1, 2, 1, 1};
  auto refused = [&](Command c) {
    auto got = runOn(c, shape, {0, 0}, {0, 0});
    EXPECT_FALSE(got.isOk());
    return got.message();
  };
  // Mixed types: an int32 operand in an fp32 add, a signed with an unsigned one.
  EXPECT_EQ(refused(typedArith("arith.add", 2, true, shape, {{"opd1_prec", 4}, {"opd1_sign", 1}})),
            "arith.add: operand %R0.4096.L5 is si32, the result f32: operands and result of one type only, or all "
            "floats");
  EXPECT_EQ(refused(typedArith("arith.add", 4, true, shape, {{"opd1_sign", 0}})),
            "arith.add: operand %R0.4096.L5 is ui32, the result si32: operands and result of one type only, or all "
            "floats");
  // Bitwise operations, shifts and saturating forms on fp32; div on int32.
  for (const char *op : {"arith.and", "arith.xor", "arith.or", "arith.logicShift", "arith.ashift", "arith.adds"})
    EXPECT_EQ(refused(typedArith(op, 2, true, shape)),
              std::string(op) + ": f32 operands are not modelled (integers only)");
  EXPECT_EQ(refused(typedArith("arith.div", 4, true, shape)),
            "arith.div: si32 operands are not modelled (fp32, fp16 or bf16 only)");
  // adds/subs shift their result right by a third operand: only the constant 0 is modelled.
  EXPECT_EQ(refused(typedArith("arith.adds", 4, true, shape,
                               {{"tsk_opd_num", 3}, {"opd2_const", 1}, {"opd2_prec", 0}, {"opd2_addr", 3}})),
            "arith.adds: a right shift by %C3 is not modelled (the constant 0 only)");
  EXPECT_EQ(refused(typedArith("arith.subs", 4, true, shape, {{"tsk_opd_num", 3}, {"opd2_addr", 0x2000}})),
            "arith.subs: a right shift by %R0.8192 is not modelled (the constant 0 only)");
  EXPECT_EQ(refused(typedArith("arith.add", 4, true, shape, {{"tsk_opd_num", 3}, {"opd2_const", 1}})),
            "arith.add: a third operand (tsk_opd_num = 3) is not modelled");
  // opd2_n_str is a round mode (cast) or an iteration count (div) only.
  EXPECT_EQ(refused(typedArith("arith.add", 2, true, shape, {{"opd2_n_str", 2}})),
            "arith.add: round mode 2 is not modelled");
  EXPECT_EQ(refused(typedArith("arith.mul", 2, true, shape, {{"tsk_opd_num", 1}})),
            "arith.mul: tsk_opd_num = 1 gives too few operands");
  EXPECT_EQ(refused(typedArith("arith.not", 4, true, shape)), "arith.not is not executed yet");
  EXPECT_EQ(refused(typedArith("arith.add", 6, true, shape)),
            "arith.add: result %R1.L5 is si4: fp32, fp16, bf16 or an 8-, 16- or 32-bit integer only so far");
}

TEST(Bm1684xExec, Int32WithConstantAndLaneBroadcastOperands) {
  // adds of a per-channel int32 row (opd1 strided, stride 0 along h and w) and then of a constant.
  Words a = randomWords(Data::Int32, elements(kShape), 40), row(kShape[1]);
  for (size_t i = 0; i < row.size(); ++i) row[i] = i % 2 ? 0x7fffff00u : 0x80000100u;
  Memories m;
  kA.putWords(m, kShape, a);
  const Local rowAt{5, 0x1000, {0, 1, 0, 0}};
  rowAt.putWords(m, {1, kShape[1], 1, 1}, row);
  Command c = typedArith("arith.adds", 4, true, kShape,
                         {{"opd1_str", 3}, {"opd1_n_str", 0}, {"opd1_c_str", 1}, {"opd1_h_str", 0}, {"opd1_w_str", 0}});
  auto st = sim::bm1684x::execute(m, c);
  ASSERT_TRUE(st.isOk()) << st.message();
  Words got = kOut.getWords(m, kShape);
  for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(got[i], clampS32(s32(a[i]) + s32(row[i / 15]))) << i;

  Command k = typedArith("arith.sub", 4, true, kShape, {{"opd0_const", 1}, {"opd0_addr", bitsOfInt(-7)}});
  kB.putWords(m, kShape, a);
  st = sim::bm1684x::execute(m, k);
  ASSERT_TRUE(st.isOk()) << st.message();
  got = kOut.getWords(m, kShape);
  for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(got[i], bitsOfInt(-7 - s32(a[i]))) << i;
}

// A c stride of 0 broadcasts within each lane: every channel reads the word at the same offset of its own
// lane (lanes work in parallel), not lane 0's.
TEST(Bm1684xExec, ChannelStrideZeroReadsEachLanesOwnWord) {
  Words a = randomWords(Data::Int32, elements(kShape), 41), rowPerLane(kShape[1]);
  for (size_t i = 0; i < rowPerLane.size(); ++i) rowPerLane[i] = uint32_t(1000 * i);
  Memories m;
  kA.putWords(m, kShape, a);
  // One word per lane (lanes 5.. for the channels from kA's lane), at offset 0x1000 of each lane.
  const Local rowAt{5, 0x1000, {0, 1, 0, 0}};
  rowAt.putWords(m, {1, kShape[1], 1, 1}, rowPerLane);
  Command c = typedArith("arith.add", 4, true, kShape,
                         {{"opd1_str", 3}, {"opd1_n_str", 0}, {"opd1_c_str", 0}, {"opd1_h_str", 0}, {"opd1_w_str", 0}});
  auto st = sim::bm1684x::execute(m, c);
  ASSERT_TRUE(st.isOk()) << st.message();
  Words got = kOut.getWords(m, kShape);
  // Channel ch lies in lane (5 + ch) % 64 and reads row 0 there: what channel lane - 5 wrote (lanes 0-4 hold
  // only row 1, channels 59-63 read zeros from their row 0).
  for (size_t i = 0; i < a.size(); ++i) {
    const size_t lane = (5 + i / 15 % kShape[1]) % 64;
    const uint32_t word = lane >= 5 ? rowPerLane[lane - 5] : 0;
    ASSERT_EQ(got[i], uint32_t(s32(a[i]) + s32(word))) << i;
  }
}

// A short compare-select on kA, kB, kC, kD -> kOut: compared as (cmpPrec, cmpSigned), selected values of
// valuePrec; then `extra` fields.
Command compareSelect(const char *mnemonic, unsigned cmpPrec, bool cmpSigned, unsigned valuePrec, Fields extra = {}) {
  Command c = make(mnemonic, true,
                   {{"opd0_prec", cmpPrec},
                    {"opd0_sign", cmpSigned},
                    {"opd2_prec", valuePrec},
                    {"res0_n", kShape[0]},
                    {"res0_c", kShape[1]},
                    {"res0_h", kShape[2]},
                    {"res0_w", kShape[3]},
                    {"res0_addr", kOut.address()},
                    {"opd0_addr", kA.address()},
                    {"opd1_addr", kB.address()},
                    {"opd2_addr", kC.address()},
                    {"opd3_addr", kD.address()}});
  for (auto [name, value] : extra) EXPECT_TRUE(c.set(name, value).isOk()) << mnemonic << "." << name;
  return c;
}

TEST(Bm1684xExec, CompareSelectMatchesReference) {
  // Compared values from a small set, so that equal pairs are frequent: fp32 with NaN and both zeros, int32
  // with the sign bit set (signed and unsigned order differ).
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Words floats{bitsOf(-1.0f), bitsOf(0.0f), bitsOf(-0.0f), bitsOf(0.5f), bitsOf(2.0f), bitsOf(nan)};
  const Words ints{0, 1, 0x80000000u, 0xffffffffu, 7};
  auto pick = [](const Words &set, unsigned seed) {
    std::mt19937 rng(seed);
    Words v(elements(kShape));
    for (uint32_t &x : v) x = set[rng() % set.size()];
    return v;
  };
  struct Case {
    const char *mnemonic;
    unsigned cmpPrec;
    bool cmpSigned;
    unsigned valuePrec;
    Fields consts; // operands given as constants
    bool (*holds)(uint32_t a, uint32_t b);
  };
  const Case cases[] = {
      {"cmp.sel_gt", 2, true, 4, {}, [](uint32_t a, uint32_t b) { return floatOf(a) > floatOf(b); }},
      {"cmp.sel_eq", 2, true, 2, {}, [](uint32_t a, uint32_t b) { return floatOf(a) == floatOf(b); }},
      {"cmp.sel_lt", 2, true, 4, {}, [](uint32_t a, uint32_t b) { return floatOf(a) < floatOf(b); }},
      {"cmp.sel_gt", 4, true, 2, {}, [](uint32_t a, uint32_t b) { return s32(a) > s32(b); }},
      {"cmp.sel_lt", 4, false, 4, {}, [](uint32_t a, uint32_t b) { return a < b; }},
      {"cmp.sel_eq", 4, true, 4, {}, [](uint32_t a, uint32_t b) { return a == b; }},
      // opd1 the constant 0.5 and opd3 the constant -7 (int32)
      {"cmp.sel_gt",
       2,
       true,
       4,
       {{"opd1_const", 1}, {"opd1_addr", bitsOf(0.5f)}, {"opd3_const", 1}, {"opd3_addr", bitsOfInt(-7)}},
       [](uint32_t a, uint32_t) { return floatOf(a) > 0.5f; }},
      // opd0 the constant 1 (signed), opd2 the constant 1.5 (fp32)
      {"cmp.sel_lt",
       4,
       true,
       2,
       {{"opd0_const", 1}, {"opd0_addr", 1}, {"opd2_const", 1}, {"opd2_addr", bitsOf(1.5f)}},
       [](uint32_t, uint32_t b) { return 1 < s32(b); }},
  };
  unsigned seed = 200;
  for (const Case &k : cases) {
    const Words &set = k.cmpPrec == 2 ? floats : ints;
    Words a = pick(set, seed++), b = pick(set, seed++);
    Words t = randomWords(k.valuePrec == 2 ? Data::Fp32 : Data::Int32, a.size(), seed++);
    Words f = randomWords(k.valuePrec == 2 ? Data::Fp32 : Data::Int32, a.size(), seed++);
    Command c = compareSelect(k.mnemonic, k.cmpPrec, k.cmpSigned, k.valuePrec, k.consts);
    for (auto [name, value] : k.consts) {
      const std::string field(name);
      if (field == "opd2_addr") std::fill(t.begin(), t.end(), uint32_t(value));
      if (field == "opd3_addr") std::fill(f.begin(), f.end(), uint32_t(value));
    }
    Memories m;
    kA.putWords(m, kShape, a), kB.putWords(m, kShape, b), kC.putWords(m, kShape, t), kD.putWords(m, kShape, f);
    auto st = sim::bm1684x::execute(m, c);
    ASSERT_TRUE(st.isOk()) << k.mnemonic << ": " << st.message();
    Words got = kOut.getWords(m, kShape);
    size_t chosen = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      const bool holds = k.holds(a[i], b[i]);
      chosen += holds;
      ASSERT_EQ(got[i], holds ? t[i] : f[i]) << k.mnemonic << " at " << i;
    }
    EXPECT_GT(chosen, 0u) << k.mnemonic;
    EXPECT_LT(chosen, a.size()) << k.mnemonic;
  }
}

TEST(Bm1684xExec, CompareSelectViewsAndRefusals) {
  // TPU-MLIR's sCMP reading: a strided opd0 has strides 0; gt_and_sel writes the winner (opd0's type) and the
  // choice (opd2's type).
  Command gt = compareSelect("cmp.gt_and_sel", 4, true, 2, {{"opd0_str", 3}, {"res1_addr", 0x5000}});
  auto ops = memory::bm1684x::operandsOf(gt);
  ASSERT_TRUE(ops.isOk()) << ops.message();
  ASSERT_EQ(ops->results.size(), 2u);
  ASSERT_EQ(ops->operands.size(), 4u);
  EXPECT_EQ(ops->results[0].typeText(), "memref<1x70x3x5xsi32, strides: [32, 16, 5, 1]>");
  EXPECT_EQ(ops->results[1].name() + " " + ops->results[1].typeText(),
            "%R1.4096 memref<1x70x3x5xf32, strides: [32, 16, 5, 1]>");
  EXPECT_EQ(ops->operands[0].typeText(), "memref<1x70x3x5xsi32>");
  EXPECT_EQ(ops->operands[1].typeText(), "memref<1x70x3x5xsi32, strides: [32, 16, 5, 1]>");
  EXPECT_EQ(ops->operands[3].typeText(), "memref<1x70x3x5xf32, strides: [32, 16, 5, 1]>");
  Command sel = compareSelect("cmp.sel_eq", 2, false, 4, {{"opd3_const", 1}, {"opd3_addr", 9}});
  ops = memory::bm1684x::operandsOf(sel);
  ASSERT_TRUE(ops.isOk()) << ops.message();
  ASSERT_EQ(ops->results.size(), 1u);
  EXPECT_EQ(ops->results[0].typeText(), "memref<1x70x3x5xi32, strides: [32, 16, 5, 1]>");
  EXPECT_EQ(ops->operands[3].name() + " " + ops->operands[3].typeText(), "%C9 i32");

  Memories m;
  auto st = sim::bm1684x::execute(m, gt);
  EXPECT_EQ(st.message(), "cmp.gt_and_sel is not executed yet");
  st = sim::bm1684x::execute(m, compareSelect("cmp.sel_gt", 6, true, 2));
  EXPECT_EQ(st.message(),
            "cmp.sel_gt: operand %R0.L5 is si4: fp32, fp16, bf16 or an 8-, 16- or 32-bit integer only so far");
  st = sim::bm1684x::execute(m, compareSelect("cmp.sel_gt", 2, true, 6));
  EXPECT_EQ(st.message(),
            "cmp.sel_gt: result %R1.L5 is i4: fp32, fp16, bf16 or an 8-, 16- or 32-bit integer only so far");
}

// A short SFU command on kA -> kOut, fp32; then `extra` fields.
Command sfuCommand(const char *mnemonic, Fields extra = {}) {
  Command c = make(mnemonic, true,
                   {{"res0_prec", 2},
                    {"opd0_prec", 2},
                    {"res0_n", kShape[0]},
                    {"res0_c", kShape[1]},
                    {"res0_h", kShape[2]},
                    {"res0_w", kShape[3]},
                    {"res0_addr", kOut.address()},
                    {"opd0_addr", kA.address()}});
  for (auto [name, value] : extra) EXPECT_TRUE(c.set(name, value).isOk()) << mnemonic << "." << name;
  return c;
}

TEST(Bm1684xExec, TaylorSeriesReadsEachLanesOwnTable) {
  // 7 terms per lane at byte 0x6000 of every lane, different in every lane; the input's 70 channels from
  // lane 5 wrap past lane 63, so channels c and c + 64 share a lane and its table.
  const uint64_t terms = 7, tableBase = 0x6000;
  std::vector<std::vector<float>> tables(kLanes);
  for (uint32_t lane = 0; lane < kLanes; ++lane) tables[lane] = randomFloats(terms, 300 + lane);
  Words x = randomWords(Data::Fp32, elements(kShape), 50);
  for (const char *mnemonic : {"sfu.taylor", "sfu.taylor_4x"}) {
    Memories m;
    kA.putWords(m, kShape, x);
    for (uint32_t lane = 0; lane < kLanes; ++lane)
      std::memcpy(m.local().lane(lane) + tableBase, tables[lane].data(), 4 * terms);
    auto st = sim::bm1684x::execute(m, sfuCommand(mnemonic, {{"opd1_n", terms}, {"opd1_addr", tableBase}}));
    ASSERT_TRUE(st.isOk()) << mnemonic << ": " << st.message();
    Words got = kOut.getWords(m, kShape);
    for (size_t i = 0; i < x.size(); ++i) {
      const uint64_t channel = i / 15;
      const std::vector<float> &k = tables[(5 + channel) % kLanes];
      float v = 0;
      for (size_t t = terms; t-- > 0;) {
        const float product = v * floatOf(x[i]);
        v = product + k[t];
      }
      ASSERT_EQ(got[i], bitsOf(v)) << mnemonic << " at " << i;
    }
  }
}

TEST(Bm1684xExec, RsqrtAndSfuRefusals) {
  Words x = randomWords(Data::Fp32, elements(kShape), 60);
  for (uint32_t &w : x) w = bitsOf(std::fabs(floatOf(w)));
  x[0] = bitsOf(0.0f), x[1] = bitsOf(-1.0f), x[2] = bitsOf(std::numeric_limits<float>::infinity());
  Memories m;
  kA.putWords(m, kShape, x);
  auto st = sim::bm1684x::execute(m, sfuCommand("sfu.rsqrt", {{"opd2_n_str", 2}}));
  ASSERT_TRUE(st.isOk()) << st.message();
  Words got = kOut.getWords(m, kShape);
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(got[i], bitsOf(1.0f / std::sqrt(floatOf(x[i])))) << i;
  EXPECT_EQ(floatOf(got[0]), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(floatOf(got[1])));

  auto ops = memory::bm1684x::operandsOf(sfuCommand("sfu.rsqrt", {{"opd1_n", 4}}));
  ASSERT_TRUE(ops.isOk()) << ops.message();
  EXPECT_EQ(ops->operands.size(), 1u); // the input only: no table

  st = sim::bm1684x::execute(m, sfuCommand("sfu.taylor", {{"opd1_n", 3}, {"opd2_n_str", 1}}));
  EXPECT_EQ(st.message(), "sfu.taylor: opd2_n_str = 1 is not modelled");
  st = sim::bm1684x::execute(m, sfuCommand("sfu.taylor", {{"opd1_n", 3}, {"opd0_prec", 3}}));
  EXPECT_EQ(st.message(), "sfu.taylor: input %R0.L5 is si16: fp32, fp16 or bf16 only so far");
  st = sim::bm1684x::execute(m, sfuCommand("sfu.rsqrt", {{"res0_prec", 4}}));
  EXPECT_EQ(st.message(), "sfu.rsqrt: result %R1.L5 is si32: fp32, fp16 or bf16 only so far");
  st = sim::bm1684x::execute(m, sfuCommand("sfu.normalize"));
  EXPECT_EQ(st.message(), "sfu.normalize is not executed yet");
}

// fp16 and bf16. The rule the executor states (Executor.cpp, its numerics): every fp16/bf16 element an
// operand supplies widened exactly to fp32, the command computed as on fp32, each result rounded once to
// its type. The references below follow it through support/Float16.h; each test also shows the rule at work
// where another one (16-bit steps, double rounding, a truncation or a flush) would give other bits.
namespace {

// A float element's value (fp32, fp16 or bf16 bits by precision code 2, 1, 5) and a value rounded once to
// a type.
float widenAs(unsigned prec, uint32_t bits) {
  return prec == 1 ? f16ToFloat(uint16_t(bits)) : prec == 5 ? bf16ToFloat(uint16_t(bits)) : floatOf(bits);
}
uint32_t roundAs(unsigned prec, float v) { return prec == 1 ? floatToF16(v) : prec == 5 ? floatToBf16(v) : bitsOf(v); }
const char *precName(unsigned prec) { return prec == 1 ? "f16" : prec == 5 ? "bf16" : prec == 2 ? "f32" : "i32"; }
bool is16(unsigned prec) { return prec == 1 || prec == 5; }

// `n` random elements of precision `prec`: values in [-4, 4) rounded to the type.
Words randomOf(unsigned prec, size_t n, unsigned seed) {
  Words v;
  for (float x : randomFloats(n, seed)) v.push_back(roundAs(prec, x));
  return v;
}
// A host tensor's values as elements of `prec` (rounded), and the values such elements hold.
Words wordsOf(unsigned prec, const Host &t) {
  Words v;
  for (float x : t.v) v.push_back(roundAs(prec, x));
  return v;
}
void roundHost(unsigned prec, Host &t) {
  for (float &x : t.v) x = widenAs(prec, roundAs(prec, x));
}

// Runs `c` with a (precision pa) at kA's address and b (pb) at kB's, each aligned for its type; the result
// (po) at kOut's, aligned for its type, whose memory starts as 0xa5 bytes.
Result<Words> runTyped(const Command &c, Shape shape, unsigned pa, const Words &a, unsigned pb, const Words &b,
                       unsigned po) {
  Memories m;
  for (uint32_t lane = 0; lane < kLanes; ++lane) std::memset(m.local().lane(lane) + kOut.base, 0xa5, 0x1000);
  alignedAs(pa, 5, kA.base, shape).putWords(m, shape, a);
  if (!b.empty()) alignedAs(pb, 5, kB.base, shape).putWords(m, shape, b);
  TPU_RETURN_IF_ERROR(sim::bm1684x::execute(m, c));
  const Local out = alignedAs(po, 5, kOut.base, shape);
  // A 16-bit result writes its 2 bytes only: the padding after each channel's h*w keeps its bytes.
  if (is16(po) && shape[2] * shape[3] % 32)
    for (uint64_t n = 0; n < shape[0]; ++n)
      for (uint64_t ch = 0; ch < shape[1]; ++ch) {
        uint16_t pad = 0;
        std::memcpy(&pad, out.at(m, n, ch, 0, 0) + 2 * shape[2] * shape[3], 2);
        if (pad != 0xa5a5) return makeError("padding after channel ", ch, " written");
      }
  return out.getWords(m, shape);
}

// An arith command on kA, kB -> kOut of `shape`: operands of precisions pa and pb, the result of po.
Command floatArith(const char *mnemonic, unsigned pa, unsigned pb, unsigned po, Shape shape) {
  const bool unary = std::string(mnemonic) == "arith.copy" || std::string(mnemonic) == "arith.cast";
  return typedArith(mnemonic, 2, true, shape,
                    {{"opd0_prec", pa}, {"opd1_prec", pb}, {"res0_prec", po}, {"tsk_opd_num", unary ? 1 : 2}});
}

// The rule for one element of an arith float operation.
uint32_t arithRef(const std::string &op, unsigned pa, uint32_t a, unsigned pb, uint32_t b, unsigned po) {
  const float x = widenAs(pa, a), y = widenAs(pb, b);
  auto chosen = [&](uint32_t bits, unsigned p) { return p == po ? bits : roundAs(po, widenAs(p, bits)); };
  if (op == "arith.add") return roundAs(po, x + y);
  if (op == "arith.sub") return roundAs(po, x - y);
  if (op == "arith.mul") return roundAs(po, x * y);
  if (op == "arith.div") return roundAs(po, x / y);
  if (op == "arith.max") return x > y ? chosen(a, pa) : chosen(b, pb);
  if (op == "arith.min") return y > x ? chosen(a, pa) : chosen(b, pb);
  return chosen(a, pa); // copy
}

// A signalling NaN of each float type (its payload survives a copy of one type only).
uint32_t signallingNan(unsigned prec) { return prec == 1 ? 0x7d01u : prec == 5 ? 0x7f81u : 0x7fa00001u; }

const float kInf = std::numeric_limits<float>::infinity(), kNan = std::numeric_limits<float>::quiet_NaN();

} // namespace

TEST(Bm1684xExec, Fp16Bf16ArithmeticInEveryTypeMix) {
  // Corner pairs before the random ones: fp16 ties (2049, 2051), overflow (65520 and beyond) and its edge,
  // subnormal products and their ties; the same for bf16 (257, 259, the largest bf16 plus half its ulp,
  // subnormals); NaN, infinities, signed zeros, a division by zero.
  const std::vector<std::pair<float, float>> corners{{2048, 1},
                                                     {2050, 1},
                                                     {65504, 16},
                                                     {65504, 15},
                                                     {-65504, -16},
                                                     {0x1.8p-12f, 0x1p-12f},
                                                     {0x1p-24f, 0.5f},
                                                     {0x1p-14f, 0.5f},
                                                     {256, 256},
                                                     {256, 1},
                                                     {258, 1},
                                                     {0x1.fep127f, 0x1p119f},
                                                     {0x1.fep127f, 0x1p118f},
                                                     {0x1.02p-126f, 0.5f},
                                                     {kNan, 1},
                                                     {kInf, -kInf},
                                                     {0.0f, -0.0f},
                                                     {-0.0f, 0.0f},
                                                     {1, 0},
                                                     {-3, kInf}};
  struct Mix {
    unsigned a, b, out;
  };
  const Mix mixes[] = {{1, 1, 1}, {5, 5, 5}, {1, 1, 2}, {5, 5, 2}, {2, 2, 1},
                       {2, 2, 5}, {1, 5, 2}, {1, 2, 5}, {5, 1, 1}, {1, 5, 5}};
  unsigned seed = 400;
  for (const char *op : {"arith.add", "arith.sub", "arith.mul", "arith.div", "arith.max", "arith.min", "arith.copy"})
    for (const Mix &mix : mixes) {
      const std::string what =
          std::string(op) + " " + precName(mix.a) + ", " + precName(mix.b) + " -> " + precName(mix.out);
      Words a = randomOf(mix.a, elements(kShape), seed++), b = randomOf(mix.b, elements(kShape), seed++);
      for (size_t i = 0; i < corners.size(); ++i)
        a[i] = roundAs(mix.a, corners[i].first), b[i] = roundAs(mix.b, corners[i].second);
      a[corners.size()] = signallingNan(mix.a);
      auto got = runTyped(floatArith(op, mix.a, mix.b, mix.out, kShape), kShape, mix.a, a, mix.b, b, mix.out);
      ASSERT_TRUE(got.isOk()) << what << ": " << got.message();
      for (size_t i = 0; i < a.size(); ++i)
        ASSERT_EQ((*got)[i], arithRef(op, mix.a, a[i], mix.b, b[i], mix.out))
            << what << " at " << i << ": " << widenAs(mix.a, a[i]) << ", " << widenAs(mix.b, b[i]);
    }
}

// Results by value, where rules differ: ties to even (not away), overflow to infinity (not the largest
// finite), subnormal results kept (not flushed), one rounding from fp32 to the result's type, none when the
// result is fp32.
TEST(Bm1684xExec, Fp16Bf16RoundingCornersByValue) {
  auto run = [](const char *op, unsigned pa, unsigned pb, unsigned po,
                const std::vector<std::pair<float, float>> &pairs) -> Words {
    const Shape shape{1, pairs.size(), 1, 1};
    Words a, b;
    for (auto [x, y] : pairs) {
      a.push_back(roundAs(pa, x)), b.push_back(roundAs(pb, y));
      EXPECT_EQ(bitsOf(widenAs(pa, a.back())), bitsOf(x)) << x << " is not " << precName(pa);
      EXPECT_EQ(bitsOf(widenAs(pb, b.back())), bitsOf(y)) << y << " is not " << precName(pb);
    }
    auto got = runTyped(floatArith(op, pa, pb, po, shape), shape, pa, a, pb, b, po);
    EXPECT_TRUE(got.isOk()) << op << ": " << got.message();
    return got.isOk() ? *got : Words{};
  };
  // fp16: 2049 -> 2048 and 2051 -> 2052 (ties to the even bits), 65520 -> infinity but 65519 -> 65504.
  EXPECT_EQ(run("arith.add", 1, 1, 1, {{2048, 1}, {2050, 1}, {65504, 16}, {65504, 15}, {-65504, -16}}),
            (Words{0x6800, 0x6802, 0x7c00, 0x7bff, 0xfc00}));
  // fp16 subnormal results: 1.5 * 2^-24 -> 2^-23 and 2^-25 -> 0 (ties), 2^-15 exact, -(2^-17 + 2^-27) ->
  // -2^-17; 65536 -> infinity.
  EXPECT_EQ(run("arith.mul", 1, 1, 1,
                {{0x1.8p-12f, 0x1p-12f}, {0x1p-24f, 0.5f}, {0x1p-14f, 0.5f}, {0x1.004p-7f, -0x1p-10f}, {256, 256}}),
            (Words{0x0002, 0x0000, 0x0200, 0x8080, 0x7c00}));
  // fp16 operands, an fp32 result: nothing rounded to fp16 (2049, 65520, 1.5 * 2^-24 as they are).
  EXPECT_EQ(run("arith.add", 1, 1, 2, {{2048, 1}, {65504, 16}}), (Words{bitsOf(2049.0f), bitsOf(65520.0f)}));
  EXPECT_EQ(run("arith.mul", 1, 1, 2, {{0x1.8p-12f, 0x1p-12f}}), Words{bitsOf(0x1.8p-24f)});
  // fp32 operands, an fp16 result: the fp32 sum, rounded once to fp16. 1 + 2^-11 is a tie (to 1), 1 + 2^-11 +
  // 2^-19 is above it; 1 + 2^-11 + 2^-34 is the tie again, the fp32 add having rounded it there.
  EXPECT_EQ(run("arith.add", 2, 2, 1, {{1, 0x1p-11f}, {1, 0x1.004p-11f}, {1, 0x1.8p-10f}, {1, 0x1.000002p-11f}}),
            (Words{0x3c00, 0x3c01, 0x3c02, 0x3c00}));
  // bf16: 257 -> 256, 259 -> 260; the largest bf16 plus half its ulp -> infinity, plus a quarter -> itself;
  // subnormals kept: 2^-127 + 2^-134 -> 2^-127 (a tie), 1.5 * 2^-133 -> 2^-132 (a tie), 2^-134 -> 0.
  EXPECT_EQ(run("arith.add", 5, 5, 5, {{256, 1}, {258, 1}, {0x1.fep127f, 0x1p119f}, {0x1.fep127f, 0x1p118f}}),
            (Words{0x4380, 0x4382, 0x7f80, 0x7f7f}));
  EXPECT_EQ(run("arith.mul", 5, 5, 5, {{0x1.02p-126f, 0.5f}, {0x1.8p-126f, 0x1p-7f}, {0x1p-126f, 0x1p-8f}}),
            (Words{0x0040, 0x0002, 0x0000}));
  // Mixed operands: fp16 2048 + bf16 1 -> fp32 2049; fp16 65504 * fp32 2 -> bf16 131072.
  EXPECT_EQ(run("arith.add", 1, 5, 2, {{2048, 1}}), Words{bitsOf(2049.0f)});
  EXPECT_EQ(run("arith.mul", 1, 2, 5, {{65504, 2}}), Words{0x4800});
  // NaN: inf - inf in fp16 is a NaN; max and copy keep a signalling NaN's bits within one type.
  Words nan = run("arith.add", 1, 1, 1, {{kInf, -kInf}});
  ASSERT_EQ(nan.size(), 1u);
  EXPECT_TRUE(std::isnan(widenAs(1, nan[0])));
  auto got = runTyped(floatArith("arith.copy", 1, 1, 1, {1, 1, 1, 1}), {1, 1, 1, 1}, 1, {0x7d01}, 1, {}, 1);
  ASSERT_TRUE(got.isOk()) << got.message();
  EXPECT_EQ(*got, Words{0x7d01});
  got = runTyped(floatArith("arith.copy", 1, 1, 2, {1, 1, 1, 1}), {1, 1, 1, 1}, 1, {0x7d01}, 1, {}, 2);
  ASSERT_TRUE(got.isOk()) << got.message();
  EXPECT_EQ(*got, Words{0x7fa02000u}); // widened exactly, payload and all
}

namespace {

// arith.cast of a 1 x n x 1 x 1 tensor from `from` to `to` precision (the result signed as `isSigned`), round
// mode `mode`, the tensors aligned for their types.
Result<Words> castAs(unsigned from, unsigned to, bool isSigned, uint64_t mode, const Words &in, bool fromSigned = true,
                     Shape shape = {}) {
  if (shape[0] == 0) shape = {1, in.size(), 1, 1};
  Command c = typedArith("arith.cast", from, fromSigned, shape,
                         {{"tsk_opd_num", 1}, {"res0_prec", to}, {"opd2_sign", isSigned}, {"opd2_n_str", mode}});
  return runTyped(c, shape, from, in, from, {}, to);
}

// The fp16 (prec 1) or bf16 (5) nearest to the integer v, ties to the even bits, overflow to infinity:
// found by exact comparison with the neighbouring values, a reference independent of the executor's way.
uint32_t nearest16(unsigned prec, int64_t v) {
  const uint32_t sign = v < 0 ? 0x8000u : 0, inf = prec == 1 ? 0x7c00u : 0x7f80u;
  const double mag = std::fabs(double(v));
  // The largest finite pattern whose value is at most |v| (patterns of one sign are in value order).
  uint32_t lo = 0;
  for (uint32_t step = 0x4000; step; step >>= 1)
    if (lo + step < inf && double(widenAs(prec, lo + step)) <= mag) lo += step;
  const double below = widenAs(prec, lo);
  if (below == mag) return sign | lo;
  // Above it: the next pattern's value, or (past the largest finite) where the next would be, 2^16 for
  // fp16 and 2^128 for bf16 (overflow rounds as if the exponent went on).
  const double above = lo + 1 < inf ? double(widenAs(prec, lo + 1)) : prec == 1 ? 65536.0 : std::ldexp(1.0, 128);
  const double down = mag - below, up = above - mag;
  const bool roundUp = up < down || (up == down && (lo & 1));
  return sign | (roundUp ? lo + 1 : lo);
}

} // namespace

TEST(Bm1684xExec, Fp16Bf16CastsRoundOnce) {
  // Every fp16 and every bf16 pattern: widened exactly to fp32, and rounded once from there to the other type.
  const Shape all{1, 64, 32, 32};
  Words patterns(elements(all));
  for (size_t i = 0; i < patterns.size(); ++i) patterns[i] = uint32_t(i);
  for (auto [from, to] : {std::pair{1u, 2u}, {5u, 2u}, {1u, 5u}, {5u, 1u}}) {
    auto got = castAs(from, to, true, 0, patterns, true, all);
    ASSERT_TRUE(got.isOk()) << precName(from) << " -> " << precName(to) << ": " << got.message();
    for (size_t i = 0; i < patterns.size(); ++i)
      ASSERT_EQ((*got)[i], roundAs(to, widenAs(from, patterns[i])))
          << precName(from) << " -> " << precName(to) << " of " << std::hex << patterns[i];
  }
  // fp32 -> fp16 / bf16: ties to even, the overflow edge, subnormals, NaN.
  const Words f32{bitsOf(0x1.002p0f), bitsOf(0x1.006p0f),  bitsOf(65519.99f), bitsOf(65520.0f),   bitsOf(0x1.8p-24f),
                  bitsOf(-0x1p-25f),  bitsOf(0x1.7fp-25f), bitsOf(kNan),      bitsOf(-kInf),      bitsOf(0x1.01p0f),
                  bitsOf(0x1.03p0f),  bitsOf(3.4e38f),     bitsOf(0x1p-133f), bitsOf(0x1.8p-133f)};
  auto h = castAs(2, 1, true, 0, f32);
  ASSERT_TRUE(h.isOk()) << h.message();
  EXPECT_EQ(Words(h->begin(), h->begin() + 9),
            (Words{0x3c00, 0x3c02, 0x7bff, 0x7c00, 0x0002, 0x8000, 0x0001, 0x7e00, 0xfc00}));
  auto bf = castAs(2, 5, true, 0, f32);
  ASSERT_TRUE(bf.isOk()) << bf.message();
  EXPECT_EQ(Words(bf->begin() + 9, bf->end()), (Words{0x3f80, 0x3f82, 0x7f80, 0x0001, 0x0002}));
  for (size_t i = 0; i < f32.size(); ++i) {
    EXPECT_EQ((*h)[i], roundAs(1, floatOf(f32[i]))) << i;
    EXPECT_EQ((*bf)[i], roundAs(5, floatOf(f32[i]))) << i;
  }

  // fp16 / bf16 -> int32 in each round mode: as fp32 casts of the widened values (every pattern; bf16's
  // large ones saturate).
  for (unsigned from : {1u, 5u})
    for (uint64_t mode = 0; mode <= 6; ++mode)
      for (bool isSigned : {true, false}) {
        auto got = castAs(from, 4, isSigned, mode, patterns, true, all);
        ASSERT_TRUE(got.isOk()) << got.message();
        Words widened;
        for (uint32_t p : patterns) widened.push_back(bitsOf(widenAs(from, p)));
        auto want = castAs(2, 4, isSigned, mode, widened, true, all);
        ASSERT_TRUE(want.isOk()) << want.message();
        ASSERT_EQ(*got, *want) << precName(from) << " mode " << mode << (isSigned ? " signed" : " unsigned");
      }
  auto modes = castAs(1, 4, true, 0, {roundAs(1, 2.5f), roundAs(1, -2.5f), roundAs(1, 3.5f), roundAs(1, 65504.0f)});
  ASSERT_TRUE(modes.isOk()) << modes.message();
  EXPECT_EQ(*modes, (Words{2, bitsOfInt(-2), 4, 65504}));

  // int32 -> fp16 / bf16: once from the exact integer. 2049 -> 2048, 2051 -> 2052, 65519 -> 65504, 65520 ->
  // infinity; 257 -> 256, 259 -> 260; 2^24 + 2^16 + 1 -> 2^24 + 2^17 in bf16, where int -> fp32 -> bf16 gives
  // 2^24 (fp32 rounds it to the tie 2^24 + 2^16, bf16 the tie to even).
  const int64_t m = INT32_MIN, M = INT32_MAX, trap = (1 << 24) + (1 << 16) + 1;
  std::vector<int64_t> ints{0,    1,    -1,         2049,      2051, 65504, 65519, 65520,    -65520,
                            4097, 4098, 257,        259,       -259, trap,  -trap, trap - 1, (1 << 24) + 1,
                            M,    m,    1000000007, -123456789};
  std::mt19937 rng(77);
  // Near-ties of bf16 above 2^24, where a double rounding goes wrong half the time: a bf16 value's tie with
  // its successor, and the integers just around it.
  for (int i = 0; i < 200; ++i) {
    const int e = 24 + int(rng() % 7), mant = 128 + int(rng() % 128);
    const int64_t tie = (int64_t(mant) << (e - 7)) + (int64_t(1) << (e - 8));
    for (int64_t d : {-1, 0, 1}) ints.push_back(rng() % 2 ? tie + d : -(tie + d));
  }
  for (int i = 0; i < 200; ++i) ints.push_back(int32_t(rng()));
  Words in;
  for (int64_t v : ints) in.push_back(uint32_t(int32_t(v)));
  for (unsigned to : {1u, 5u}) {
    auto got = castAs(4, to, true, 0, in);
    ASSERT_TRUE(got.isOk()) << got.message();
    size_t doubleRoundingDiffers = 0;
    for (size_t i = 0; i < ints.size(); ++i) {
      ASSERT_EQ((*got)[i], nearest16(to, ints[i])) << "int32 -> " << precName(to) << " of " << ints[i];
      doubleRoundingDiffers += roundAs(to, float(ints[i])) != (*got)[i];
    }
    if (to == 5) {
      EXPECT_GT(doubleRoundingDiffers, 0u);
    }
  }
  auto named = castAs(4, 1, true, 0, {2049, 2051, 65519, 65520, bitsOfInt(-65520)});
  ASSERT_TRUE(named.isOk()) << named.message();
  EXPECT_EQ(*named, (Words{0x6800, 0x6802, 0x7bff, 0x7c00, 0xfc00}));
  named = castAs(4, 5, true, 0, {257, 259, uint32_t(trap), bitsOfInt(-trap)});
  ASSERT_TRUE(named.isOk()) << named.message();
  EXPECT_EQ(*named, (Words{0x4380, 0x4382, 0x4b81, 0xcb81}));
  EXPECT_NE(roundAs(5, float(trap)), 0x4b81u); // the double rounding the executor avoids
  // uint32 -> bf16 / fp16: 2^32 - 1 -> 2^32, 70000 -> infinity.
  named = castAs(4, 5, true, 0, {0xffffffffu}, false);
  ASSERT_TRUE(named.isOk()) << named.message();
  EXPECT_EQ(*named, Words{0x4f80});
  named = castAs(4, 1, true, 0, {70000}, false);
  ASSERT_TRUE(named.isOk()) << named.message();
  EXPECT_EQ(*named, Words{0x7c00});

  // Not modelled: a cast to its own type, a round mode other than 0 to a float.
  EXPECT_EQ(castAs(1, 1, true, 0, {0}).message(), "arith.cast: a cast from f16 to f16 is not modelled");
  EXPECT_EQ(castAs(2, 5, true, 1, {0}).message(), "arith.cast: round mode 1 is not modelled to bf16 (0 only)");
  EXPECT_EQ(castAs(4, 1, true, 2, {0}).message(), "arith.cast: round mode 2 is not modelled to fp16 (0 only)");
}

TEST(Bm1684xExec, Fp16Bf16ArithmeticRefusals) {
  const Shape shape{1, 2, 1, 1};
  auto refused = [&](Command c) {
    auto got = runTyped(c, shape, 2, {0, 0}, 2, {0, 0}, 2);
    EXPECT_FALSE(got.isOk());
    return got.message();
  };
  EXPECT_EQ(refused(floatArith("arith.add", 1, 4, 1, shape)),
            "arith.add: operand %R0.4096.L5 is si32, the result f16: operands and result of one type only, or all "
            "floats");
  EXPECT_EQ(refused(floatArith("arith.add", 1, 1, 4, shape)),
            "arith.add: operand %R0.L5 is f16, the result si32: operands and result of one type only, or all floats");
  EXPECT_EQ(refused(floatArith("arith.and", 1, 1, 1, shape)),
            "arith.and: f16 operands are not modelled (integers only)");
  EXPECT_EQ(refused(floatArith("arith.adds", 5, 5, 5, shape)),
            "arith.adds: bf16 operands are not modelled (integers only)");
  EXPECT_EQ(refused(floatArith("arith.add", 1, 3, 1, shape)),
            "arith.add: operand %R0.4096.L5 is si16, the result f16: operands and result of one type only, or all "
            "floats");
}

TEST(Bm1684xExec, Fp16Bf16CompareSelect) {
  // Compared values from a small set (equal pairs frequent): both zeros, NaNs quiet and signalling, a
  // subnormal; the selected values' bits copied, NaN payloads and all.
  const std::vector<float> set{-1.0f, 0.0f, -0.0f, 0.5f, 2.0f, kNan, 0x1p-24f};
  auto pick = [&](unsigned prec, unsigned seed) {
    std::mt19937 rng(seed);
    Words v(elements(kShape));
    for (uint32_t &x : v) x = rng() % 9 == 0 ? signallingNan(prec) : roundAs(prec, set[rng() % set.size()]);
    return v;
  };
  struct Case {
    const char *mnemonic;
    unsigned cmpPrec, valuePrec;
    Fields consts;
    bool (*holds)(float a, float b);
  };
  const Case cases[] = {
      {"cmp.sel_gt", 1, 1, {}, [](float a, float b) { return a > b; }},
      {"cmp.sel_eq", 5, 4, {}, [](float a, float b) { return a == b; }},
      {"cmp.sel_lt", 2, 5, {}, [](float a, float b) { return a < b; }},
      {"cmp.sel_eq", 1, 2, {}, [](float a, float b) { return a == b; }},
      // opd1 the fp16 constant 0.5 in the low 16 bits (the high ones ignored), opd3 the bf16 constant -7.
      {"cmp.sel_gt",
       1,
       5,
       {{"opd1_const", 1}, {"opd1_addr", 0xdead3800u}, {"opd3_const", 1}, {"opd3_addr", 0xc0e0}},
       [](float a, float) { return a > 0.5f; }},
  };
  unsigned seed = 500;
  for (const Case &k : cases) {
    Words a = pick(k.cmpPrec, seed++), b = pick(k.cmpPrec, seed++);
    Words t = is16(k.valuePrec) || k.valuePrec == 2 ? randomOf(k.valuePrec, a.size(), seed++)
                                                    : randomWords(Data::Int32, a.size(), seed++);
    Words f = randomWords(Data::Int32, a.size(), seed++);
    if (is16(k.valuePrec))
      for (uint32_t &x : f) x &= 0xffff;
    t[0] = signallingNan(k.valuePrec), t[1] = 0xffffffffu >> (is16(k.valuePrec) ? 16 : 0);
    for (auto [name, value] : k.consts)
      if (std::string(name) == "opd3_addr") std::fill(f.begin(), f.end(), uint32_t(value));
    Command c = compareSelect(k.mnemonic, k.cmpPrec, true, k.valuePrec, k.consts);
    Memories m;
    alignedAs(k.cmpPrec, 5, kA.base, kShape).putWords(m, kShape, a);
    alignedAs(k.cmpPrec, 5, kB.base, kShape).putWords(m, kShape, b);
    alignedAs(k.valuePrec, 5, kC.base, kShape).putWords(m, kShape, t);
    alignedAs(k.valuePrec, 5, kD.base, kShape).putWords(m, kShape, f);
    auto st = sim::bm1684x::execute(m, c);
    ASSERT_TRUE(st.isOk()) << k.mnemonic << ": " << st.message();
    Words got = alignedAs(k.valuePrec, 5, kOut.base, kShape).getWords(m, kShape);
    size_t chosen = 0, zerosEqual = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      const float x = widenAs(k.cmpPrec, a[i]), y = widenAs(k.cmpPrec, b[i]);
      const bool holds = k.holds(x, y);
      chosen += holds;
      zerosEqual += holds && x == 0 && a[i] != b[i];
      ASSERT_EQ(got[i], holds ? t[i] : f[i]) << k.mnemonic << " at " << i << ": " << x << ", " << y;
    }
    EXPECT_GT(chosen, 0u) << k.mnemonic;
    EXPECT_LT(chosen, a.size()) << k.mnemonic;
    if (std::string(k.mnemonic) == "cmp.sel_eq") {
      EXPECT_GT(zerosEqual, 0u) << "-0 equals +0";
    }
  }
}

namespace {

// An SFU command on kA -> kOut: input of precision `in`, result of `out`.
Command sfuTyped(const char *mnemonic, unsigned in, unsigned out, Fields extra = {}) {
  Command c = sfuCommand(mnemonic, extra);
  EXPECT_TRUE(c.set("opd0_prec", in).isOk());
  EXPECT_TRUE(c.set("res0_prec", out).isOk());
  return c;
}

} // namespace

TEST(Bm1684xExec, Fp16Bf16TaylorSeriesAndRsqrt) {
  // Taylor: 7 coefficients per lane of the input's type (2 bytes each for fp16 and bf16), Horner in fp32,
  // the result rounded once. Evaluated in 16-bit steps (each product and sum rounded) it would differ.
  const uint64_t terms = 7, tableBase = 0x6000;
  for (auto [in, out] : {std::pair{1u, 1u}, {5u, 5u}, {1u, 2u}, {5u, 1u}}) {
    std::vector<Words> tables(kLanes);
    for (uint32_t lane = 0; lane < kLanes; ++lane) tables[lane] = randomOf(in, terms, 600 + lane);
    Words x = randomOf(in, elements(kShape), 60 + in);
    Memories m;
    alignedAs(in, 5, kA.base, kShape).putWords(m, kShape, x);
    for (uint32_t lane = 0; lane < kLanes; ++lane)
      for (uint64_t t = 0; t < terms; ++t)
        std::memcpy(m.local().lane(lane) + tableBase + (is16(in) ? 2 : 4) * t, &tables[lane][t], is16(in) ? 2 : 4);
    auto st = sim::bm1684x::execute(m, sfuTyped("sfu.taylor", in, out, {{"opd1_n", terms}, {"opd1_addr", tableBase}}));
    ASSERT_TRUE(st.isOk()) << st.message();
    Words got = alignedAs(out, 5, kOut.base, kShape).getWords(m, kShape);
    size_t steps16Differ = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const Words &k = tables[(5 + i / 15) % kLanes];
      const float v = widenAs(in, x[i]);
      float acc = 0, acc16 = 0;
      for (size_t t = terms; t-- > 0;) {
        const float product = acc * v;
        acc = product + widenAs(in, k[t]);
        const float product16 = widenAs(in, roundAs(in, acc16 * v));
        acc16 = widenAs(in, roundAs(in, product16 + widenAs(in, k[t])));
      }
      ASSERT_EQ(got[i], roundAs(out, acc)) << precName(in) << " -> " << precName(out) << " at " << i;
      steps16Differ += roundAs(out, acc16) != got[i];
    }
    EXPECT_GT(steps16Differ, 0u) << precName(in) << " -> " << precName(out);
  }

  // rsqrt: 1 / sqrt(x) in fp32 (two roundings), then once to the result's type; a 16-bit sqrt first would
  // differ. 0 -> infinity, -1 -> NaN, infinity -> 0, the least fp16 subnormal 2^-24 -> 4096.
  for (auto [in, out] : {std::pair{1u, 1u}, {5u, 5u}, {1u, 2u}, {2u, 1u}}) {
    Words x = randomOf(in, elements(kShape), 70 + in);
    for (uint32_t &w : x) w = roundAs(in, std::fabs(widenAs(in, w)) * 16);
    x[0] = roundAs(in, 0.0f), x[1] = roundAs(in, -1.0f), x[2] = roundAs(in, kInf), x[3] = roundAs(in, 0x1p-24f);
    auto got = runTyped(sfuTyped("sfu.rsqrt", in, out), kShape, in, x, in, {}, out);
    ASSERT_TRUE(got.isOk()) << got.message();
    size_t sqrt16Differs = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const float root = std::sqrt(widenAs(in, x[i]));
      ASSERT_EQ((*got)[i], roundAs(out, 1.0f / root)) << precName(in) << " -> " << precName(out) << " at " << i;
      sqrt16Differs += roundAs(out, 1.0f / widenAs(in, roundAs(in, root))) != (*got)[i];
    }
    EXPECT_EQ(widenAs(out, (*got)[0]), kInf);
    EXPECT_TRUE(std::isnan(widenAs(out, (*got)[1])));
    EXPECT_EQ(widenAs(out, (*got)[2]), 0.0f);
    EXPECT_EQ(widenAs(out, (*got)[3]), 4096.0f);
    if (is16(in)) {
      EXPECT_GT(sqrt16Differs, 0u) << precName(in) << " -> " << precName(out);
    }
  }
}

namespace {

// One conv.normal on 16-bit floats (or fp32 input with a 16-bit output): input of precision `prec` (aligned
// rows of 32), weights of it in the Ic32 layout (Ic1 for fp32), a bias of fp32 in memory or as a constant,
// the output of `outPrec`.
struct Conv16Case {
  unsigned prec = 1, outPrec = 1;
  uint64_t n = 1, ic = 70, oc = 70, h = 9, w = 9;
  Window window;
  uint32_t inLane = 5, weightLane = 3, biasLane = 0, outLane = 7;
  bool constBias = false, resAdd = false;
};

void checkConv16(const Conv16Case &k) {
  const Window &win = k.window;
  const uint64_t K = win.kernel, oh = outputExtent(k.h, win), ow = outputExtent(k.w, win);
  Host x = randomHost({k.n, k.ic, k.h, k.w}, 10), weight = randomHost({k.oc, k.ic, K, K}, 11);
  Host bias = randomHost({1, k.oc, 1, 1}, 12), old = randomHost({k.n, k.oc, oh, ow}, 13);
  roundHost(k.prec, x), roundHost(k.prec, weight), roundHost(k.outPrec, old);
  Memories m;
  const Local in = alignedAs(k.prec, k.inLane, 0, x.shape);
  in.putWords(m, x.shape, wordsOf(k.prec, x));
  // Ic32: output channel o in lane (lane0 + o) % 64, row (lane0 + o) / 64 of ceil(ic / 32) groups of 32 input
  // channels, each group kh * kw runs of its 32 (TPU-MLIR's weight reorder). The group's unused slots hold
  // NaN: read, they would show.
  const uint64_t weightBase = 0x4000, bytes = is16(k.prec) ? 2 : 4, group = is16(k.prec) ? 32 : 1;
  const uint64_t groups = (k.ic + group - 1) / group, row = groups * group * K * K;
  const uint32_t nan = roundAs(k.prec, kNan);
  for (uint32_t lane = 0; lane < kLanes; ++lane)
    for (uint64_t e = 0; e < 2 * row; ++e) std::memcpy(m.local().lane(lane) + weightBase + bytes * e, &nan, bytes);
  for (uint64_t o = 0; o < k.oc; ++o)
    for (uint64_t i = 0; i < k.ic; ++i)
      for (uint64_t y = 0; y < K; ++y)
        for (uint64_t v = 0; v < K; ++v) {
          const uint64_t lane = k.weightLane + o;
          const uint64_t at = lane / kLanes * row + i / group * group * K * K + (y * K + v) * group + i % group;
          const uint32_t bits = roundAs(k.prec, weight(o, i, y, v));
          std::memcpy(m.local().lane(uint32_t(lane % kLanes)) + weightBase + bytes * at, &bits, bytes);
        }
  const Local biasAt{k.biasLane, 0x10000, {0, 1, 0, 0}};
  if (k.constBias)
    std::fill(bias.v.begin(), bias.v.end(), 0.1f); // fp32, not a 16-bit value
  else
    biasAt.put(m, bias);
  const Local out = alignedAs(k.outPrec, k.outLane, 0x14000, old.shape);
  out.putWords(m, old.shape, wordsOf(k.outPrec, old));

  Command c = make("conv.normal", true,
                   {{"res0_prec", k.outPrec},
                    {"opd0_prec", k.prec},
                    {"res0_n", k.n},
                    {"res0_c", k.oc},
                    {"res0_h", oh},
                    {"res0_w", ow},
                    {"opd0_c", k.ic},
                    {"opd0_h", k.h},
                    {"opd0_w", k.w},
                    {"res0_addr", out.address()},
                    {"opd0_addr", in.address()},
                    {"opd1_addr", k.weightLane * kLaneBytes + weightBase},
                    {"opd2_const", k.constBias},
                    {"opd2_addr", k.constBias ? bitsOf(0.1f) : biasAt.address()},
                    {"res_add", k.resAdd}});
  setWindow(c, win);
  ASSERT_TRUE(c.set("opd3_addr", roundAs(k.prec, win.padValue)).isOk()); // the pad value of the input's type
  auto st = sim::bm1684x::execute(m, c);
  ASSERT_TRUE(st.isOk()) << st.message();

  Host p = padded(x, win);
  Words want;
  size_t steps16Differ = 0;
  const Words got = out.getWords(m, old.shape);
  for (uint64_t n = 0; n < k.n; ++n)
    for (uint64_t o = 0; o < k.oc; ++o)
      for (uint64_t y = 0; y < oh; ++y)
        for (uint64_t v = 0; v < ow; ++v) {
          float acc = 0, acc16 = 0;
          for (uint64_t i = 0; i < k.ic; ++i)
            for (uint64_t ky = 0; ky < K; ++ky)
              for (uint64_t kx = 0; kx < K; ++kx) {
                const float product = p(n, i, y * win.stride + ky * win.dilation, v * win.stride + kx * win.dilation) *
                                      weight(o, i, ky, kx);
                acc += product;
                acc16 = widenAs(1, roundAs(1, acc16 + product)); // an fp16 accumulator, for contrast
              }
          float r = acc + bias(0, o, 0, 0);
          if (k.resAdd) r = old(n, o, y, v) + r;
          want.push_back(roundAs(k.outPrec, r));
          float r16 = acc16 + bias(0, o, 0, 0);
          if (k.resAdd) r16 = old(n, o, y, v) + r16;
          steps16Differ += roundAs(k.outPrec, r16) != want.back();
        }
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_EQ(got[i], want[i]) << precName(k.prec) << " -> " << precName(k.outPrec) << " at " << i << ": "
                               << widenAs(k.outPrec, got[i]) << " for " << widenAs(k.outPrec, want[i]);
  EXPECT_GT(steps16Differ, 0u);
}

} // namespace

TEST(Bm1684xExec, Fp16ConvIc32WeightsFp32Bias) {
  // 70 input channels (three groups of 32, the last partly used) and 70 output channels crossing lanes; an
  // fp32 bias in memory; the output fp16.
  checkConv16(Conv16Case{});
}

TEST(Bm1684xExec, Bf16ConvDilatedWithResAddAndConstantBias) {
  Conv16Case k;
  k.prec = 5, k.outPrec = 5, k.n = 2, k.ic = 40, k.oc = 66, k.window.dilation = 2, k.window.padValue = -0.5f;
  k.inLane = 60, k.constBias = true, k.resAdd = true;
  checkConv16(k);
}

TEST(Bm1684xExec, Fp16ConvToFp32AndFp32ConvToBf16) {
  Conv16Case k;
  k.outPrec = 2, k.window.ins = 1, k.window.stride = 1, k.h = 5, k.w = 4, k.ic = 33, k.oc = 5;
  checkConv16(k); // fp16 in, fp32 out: rounded nowhere
  Conv16Case f;
  f.prec = 2, f.outPrec = 5, f.ic = 20, f.oc = 9;
  checkConv16(f); // fp32 in (Ic1 weights), bf16 out
  Conv16Case b;
  b.prec = 5, b.outPrec = 2, b.ic = 65, b.oc = 3;
  checkConv16(b);
}

namespace {

// A pooling or depthwise command of input precision `prec` and output precision `outPrec`, its pad value of
// the input's type.
Command pordTyped(const char *mnemonic, unsigned prec, unsigned outPrec, const Window &w, Shape inShape,
                  const Local &in, const Local &out) {
  Command c = pord(mnemonic, w, inShape, in, out);
  EXPECT_TRUE(c.set("opd0_prec", prec).isOk());
  EXPECT_TRUE(c.set("res0_prec", outPrec).isOk());
  EXPECT_TRUE(c.set("opd3_addr", roundAs(prec, w.padValue)).isOk());
  return c;
}

} // namespace

TEST(Bm1684xExec, Fp16Bf16MaxAndAvgPooling) {
  const Shape shape{2, 70, 9, 9};
  Window w;
  w.padValue = -1.5f;
  const Shape outShape{2, 70, outputExtent(9, w), outputExtent(9, w)};
  for (auto [prec, outPrec] : {std::pair{1u, 1u}, {5u, 5u}, {1u, 2u}, {5u, 1u}}) {
    const std::string what = std::string(precName(prec)) + " -> " + precName(outPrec);
    Host x = randomHost(shape, 20 + prec);
    for (float &v : x.v) v *= 300; // sums beyond 2048, where fp16's steps are 2
    roundHost(prec, x);
    // The multiplier of opd0_prec: 1/9 rounded to it (fp16 0x2c72), in the low 16 bits of opd1_addr.
    const uint32_t ninthBits = roundAs(prec, 1.0f / 9);
    const float ninth = widenAs(prec, ninthBits);
    Host p = padded(x, w);
    Words wantMax, wantAvg;
    size_t steps16Differ = 0;
    forEachWindow(p, outShape, w, [&](uint64_t, uint64_t, uint64_t, uint64_t, const std::vector<float> &taps) {
      float mx = -kInf, sum = 0, sum16 = 0;
      for (float t : taps) mx = t > mx ? t : mx, sum += t, sum16 = widenAs(prec, roundAs(prec, sum16 + t));
      wantMax.push_back(roundAs(outPrec, mx));
      wantAvg.push_back(roundAs(outPrec, sum * ninth));
      steps16Differ += roundAs(outPrec, sum16 * ninth) != wantAvg.back();
    });
    Memories m;
    const Local in = alignedAs(prec, 10, 0, shape), out = alignedAs(outPrec, 20, 0x8000, outShape);
    in.putWords(m, shape, wordsOf(prec, x));
    auto st = sim::bm1684x::execute(m, pordTyped("pord.maxpooling", prec, outPrec, w, shape, in, out));
    ASSERT_TRUE(st.isOk()) << what << ": " << st.message();
    EXPECT_EQ(out.getWords(m, outShape), wantMax) << what;

    Command avg = pordTyped("pord.avgpooling", prec, outPrec, w, shape, in, out);
    ASSERT_TRUE(avg.set("opd1_const", 1).isOk());
    ASSERT_TRUE(avg.set("opd1_addr", ninthBits).isOk());
    st = sim::bm1684x::execute(m, avg);
    ASSERT_TRUE(st.isOk()) << what << ": " << st.message();
    EXPECT_EQ(out.getWords(m, outShape), wantAvg) << what;
    EXPECT_GT(steps16Differ, 0u) << what;
  }
}

TEST(Bm1684xExec, Fp16Bf16DepthwiseAndRelu) {
  const Shape shape{1, 70, 9, 9};
  Window w;
  w.dilation = 2, w.padValue = 0.25f;
  const Shape outShape{1, 70, outputExtent(9, w), outputExtent(9, w)};
  struct Case {
    const char *mnemonic;
    unsigned prec, outPrec;
  };
  for (const Case &k : {Case{"pord.depthwiserelu", 1, 1}, Case{"pord.depthwise", 5, 5}, Case{"pord.depthwise", 1, 2},
                        Case{"pord.depthwiserelu", 5, 2}}) {
    const std::string what = std::string(k.mnemonic) + " " + precName(k.prec) + " -> " + precName(k.outPrec);
    Host x = randomHost(shape, 30), weight = randomHost({1, 70, 3, 3}, 31), bias = randomHost({1, 70, 1, 1}, 32);
    for (float &v : x.v) v *= 100;
    roundHost(k.prec, x), roundHost(k.prec, weight), roundHost(k.prec, bias);
    // Compact weights (3x3 packed per channel) and one bias per channel, both of the input's type.
    const Local in = alignedAs(k.prec, 33, 0, shape), out = alignedAs(k.outPrec, 1, 0x8000, outShape);
    const uint64_t bytes = is16(k.prec) ? 2 : 4;
    const Local weightAt{2, 0x4000, {0, 9, 3, 1}, bytes}, biasAt{40, 0x6000, {0, 1, 0, 0}, bytes};
    Memories m;
    in.putWords(m, shape, wordsOf(k.prec, x));
    weightAt.putWords(m, weight.shape, wordsOf(k.prec, weight));
    biasAt.putWords(m, bias.shape, wordsOf(k.prec, bias));
    Command c = pordTyped(k.mnemonic, k.prec, k.outPrec, w, shape, in, out);
    ASSERT_TRUE(c.set("opd1_addr", weightAt.address()).isOk());
    ASSERT_TRUE(c.set("opd2_addr", biasAt.address()).isOk());
    auto st = sim::bm1684x::execute(m, c);
    ASSERT_TRUE(st.isOk()) << what << ": " << st.message();

    const bool relu = std::string(k.mnemonic) == "pord.depthwiserelu";
    Host p = padded(x, w);
    Words want;
    size_t clamped = 0, steps16Differ = 0;
    forEachWindow(p, outShape, w, [&](uint64_t, uint64_t ch, uint64_t, uint64_t, const std::vector<float> &taps) {
      float acc = 0, acc16 = 0;
      for (size_t i = 0; i < taps.size(); ++i) {
        const float product = taps[i] * weight.v[ch * 9 + i];
        acc += product;
        acc16 = widenAs(k.prec, roundAs(k.prec, acc16 + product));
      }
      float r = acc + bias(0, ch, 0, 0), r16 = acc16 + bias(0, ch, 0, 0);
      clamped += relu && r <= 0;
      if (relu) r = r > 0 ? r : 0.0f, r16 = r16 > 0 ? r16 : 0.0f;
      want.push_back(roundAs(k.outPrec, r));
      steps16Differ += roundAs(k.outPrec, r16) != want.back();
    });
    if (relu) {
      EXPECT_GT(clamped, 0u) << what;
    }
    EXPECT_GT(steps16Differ, 0u) << what;
    EXPECT_EQ(out.getWords(m, outShape), want) << what;
  }
}

TEST(Bm1684xExec, Fp16Bf16DmaLoadComputeStoreAndFill) {
  // x and y (1x70x3x5 fp16, compact in DDR) loaded into aligned rows of 32 fp16, x + 0.75 (an fp16 constant)
  // then max with y, stored back compact; a bf16 tensor through the same path unchanged.
  const uint64_t n = 1, c = 70, h = 3, w = 5, count = n * c * h * w;
  std::vector<uint16_t> x(count), y(count), z(count);
  {
    Words xs = randomOf(1, count, 81), ys = randomOf(1, count, 82), zs = randomOf(5, count, 83);
    for (size_t i = 0; i < count; ++i) x[i] = uint16_t(xs[i]), y[i] = uint16_t(ys[i]), z[i] = uint16_t(zs[i]);
  }
  Memories m;
  ASSERT_TRUE(m.global().write(kGlobalStart, x.data(), count * 2).isOk());
  ASSERT_TRUE(m.global().write(kGlobalStart + 0x10000, y.data(), count * 2).isOk());
  ASSERT_TRUE(m.global().write(kGlobalStart + 0x30000, z.data(), count * 2).isOk());
  const uint64_t X = 0x0, Y = 0x1000, T = 0x2000, R = 0x3000, Z = 0x5000; // local addresses (lane 0)
  std::vector<Command> dma{tensorDma(1, 0, true, 0, X, n, c, h, w, 1), tensorDma(2, 0, true, 0x10000, Y, n, c, h, w, 1),
                           tensorDma(3, 2, false, 0x20000, R, n, c, h, w, 1),
                           tensorDma(4, 0, true, 0x30000, Z, n, c, h, w, 5),
                           tensorDma(5, 0, false, 0x40000, Z, n, c, h, w, 5)};
  Command add = arith("arith.add", 1, 2, T, X, 0x3a00, n, c, h, w, /*bIsConst=*/true); // 0.75 in fp16
  Command mx = arith("arith.max", 2, 2, R, T, Y, n, c, h, w);
  for (Command *k : {&add, &mx})
    for (const char *f : {"res0_prec", "opd0_prec", "opd1_prec"}) ASSERT_TRUE(k->set(f, 1).isOk());
  auto st = sim::bm1684x::run(m, {add, mx}, dma);
  ASSERT_TRUE(st.isOk()) << st.message();
  std::vector<uint16_t> got(count), back(count);
  ASSERT_TRUE(m.global().read(kGlobalStart + 0x20000, got.data(), count * 2).isOk());
  ASSERT_TRUE(m.global().read(kGlobalStart + 0x40000, back.data(), count * 2).isOk());
  for (size_t i = 0; i < count; ++i) {
    const uint32_t sum = roundAs(1, widenAs(1, x[i]) + 0.75f);
    ASSERT_EQ(got[i], widenAs(1, sum) > widenAs(1, y[i]) ? sum : y[i]) << i;
  }
  EXPECT_EQ(back, z);
  // In local memory, each channel's 15 fp16 in a row of 32 (64 bytes): channel 1 of x is lane 1's row 0.
  uint16_t first = 0;
  std::memcpy(&first, m.local().lane(1) + X, 2);
  EXPECT_EQ(first, x[15]);
  std::memcpy(&first, m.local().lane(1) + Z, 2);
  EXPECT_EQ(first, z[15]);

  // A constant fill of fp16 -1 (the low 16 bits of constant_value) into every other element of a row: the
  // elements between keep their bytes.
  for (uint32_t lane = 0; lane < 4; ++lane) std::memset(m.local().lane(lane) + 0x8000, 0x55, 64);
  auto fill = make("dma.tensor", false,
                   {{"stride_enable", 1},
                    {"fill_constant_en", 1},
                    {"src_data_format", 1},
                    {"constant_value", 0x1234bc00u},
                    {"dst_nsize", 1},
                    {"dst_csize", 4},
                    {"dst_hsize", 2},
                    {"dst_wsize", 3},
                    {"dst_nstride", 64},
                    {"dst_cstride", 64},
                    {"dst_hstride", 6},
                    {"dst_wstride", 2},
                    {"dst_start_addr_l32", (kLmemStart + 0x8000) & 0xffffffffu},
                    {"dst_start_addr_h8", (kLmemStart + 0x8000) >> 32},
                    {"localmem_mask_l32", 0xffffffffu},
                    {"localmem_mask_h32", 0xffffffffu}});
  st = sim::bm1684x::execute(m, fill);
  ASSERT_TRUE(st.isOk()) << st.message();
  for (uint32_t lane = 0; lane < 4; ++lane)
    for (uint64_t e = 0; e < 12; ++e) {
      uint16_t v = 0;
      std::memcpy(&v, m.local().lane(lane) + 0x8000 + 2 * e, 2);
      EXPECT_EQ(v, e % 2 == 0 ? 0xbc00 : 0x5555) << "lane " << lane << " element " << e;
    }
}

// Integers of 8, 16 and 32 bits (precision codes 0, 3, 4; signed or unsigned). The executor's rule (Executor.cpp,
// its numerics): values exact, sums and products in int64, results wrapped (add, sub, mul) or saturated once to
// the result's type, divisions by powers of two rounded by the command's round mode. The references below compute
// each result here from the values: plain loops, std:: rounding functions on the exact quotient, hand-computed
// corners.
namespace {

// An integer type: its precision code and sign; its width, range, and an element's value from its bits.
struct IntType {
  unsigned prec;
  bool isSigned;
  unsigned bits() const { return prec == 0 ? 8 : prec == 3 ? 16 : 32; }
  int64_t lo() const { return isSigned ? -(int64_t(1) << (bits() - 1)) : 0; }
  int64_t hi() const { return isSigned ? (int64_t(1) << (bits() - 1)) - 1 : (int64_t(1) << bits()) - 1; }
  uint64_t mask() const { return (uint64_t(1) << bits()) - 1; }
  int64_t value(uint32_t w) const {
    const uint64_t v = w & mask();
    return isSigned && (v >> (bits() - 1)) ? int64_t(v) - int64_t(uint64_t(1) << bits()) : int64_t(v);
  }
  uint32_t wrap(int64_t v) const { return uint32_t(uint64_t(v) & mask()); }
  uint32_t clamp(int64_t v) const { return wrap(std::clamp(v, lo(), hi())); }
  std::string name() const { return (isSigned ? "si" : "ui") + std::to_string(bits()); }
};
const IntType kS8{0, true}, kU8{0, false}, kS16{3, true}, kU16{3, false}, kS32{4, true}, kU32{4, false};
const IntType kIntTypes[] = {kS8, kU8, kS16, kU16, kS32, kU32};

// The aligned layout of `bytes`-wide elements: each channel's h*w padded to the 64-byte EU vector.
Local alignedBytes(uint64_t bytes, uint32_t lane0, uint64_t base, Shape s) {
  const uint64_t perEu = 64 / bytes, cs = (s[2] * s[3] + perEu - 1) / perEu * perEu;
  return {lane0, base, {(lane0 + s[1] + kLanes - 1) / kLanes * cs, cs, s[3], 1}, bytes};
}

// Runs an arith command whose a, b and result views are at kA's, kB's and kOut's addresses, aligned for their
// types' widths (aBytes for a and b); the result's elements (zero-extended words).
Result<Words> runIntArith(const Command &c, Shape shape, uint64_t aBytes, const Words &a, const Words &b,
                          uint64_t outBytes) {
  Memories m;
  alignedBytes(aBytes, 5, 0, shape).putWords(m, shape, a);
  if (!b.empty()) alignedBytes(aBytes, 5, 0x1000, shape).putWords(m, shape, b);
  TPU_RETURN_IF_ERROR(sim::bm1684x::execute(m, c));
  return alignedBytes(outBytes, 5, 0x4000, shape).getWords(m, shape);
}

// Random elements of type t, the first ones its corners: every pair of lo, lo + 1, -1, 0, 1, hi - 1, hi
// (those in range) when `pairs`, so that a and b made with pairs = true and false meet all of them.
Words intWords(const IntType &t, size_t n, unsigned seed, bool second) {
  std::mt19937 rng(seed);
  std::vector<int64_t> corners;
  for (int64_t v : {t.lo(), t.lo() + 1, int64_t(-1), int64_t(0), int64_t(1), t.hi() - 1, t.hi()})
    if (v >= t.lo() && v <= t.hi()) corners.push_back(v);
  Words w(n);
  for (size_t i = 0; i < n; ++i) w[i] = t.wrap(int64_t(rng()));
  for (size_t i = 0; i < corners.size() * corners.size(); ++i)
    w[i] = t.wrap(second ? corners[i % corners.size()] : corners[i / corners.size()]);
  return w;
}

// The shift amounts: opd1's value at its type's width, mostly within +-(width + 2).
Words shiftWords(const IntType &t, size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  const int span = int(t.bits()) + 2;
  std::uniform_int_distribution<int> d(-span, span);
  Words w(n);
  for (size_t i = 0; i < n; ++i) w[i] = t.wrap(i % 7 == 0 ? int64_t(rng()) : d(rng));
  return w;
}

// Rounding half up of v / 2^n and the saturating v * 2^s, computed in long double (exact for these values).
int64_t halfUpShift(int64_t v, int64_t s) {
  if (s >= 0) { // saturated to int64 (the callers saturate further)
    const long double r = std::ldexp((long double)v, int(std::min<int64_t>(s, 200)));
    return r >= 0x1p62L ? int64_t(1) << 62 : r <= -0x1p62L ? -(int64_t(1) << 62) : int64_t(r);
  }
  return int64_t(std::floor(std::ldexp((long double)v, int(s)) + 0.5L));
}

} // namespace

TEST(Bm1684xExec, Int8Int16ElementwiseWrapSaturateAndShiftAtTheirWidth) {
  struct Op {
    const char *mnemonic;
    uint32_t (*want)(const IntType &t, uint32_t a, uint32_t b);
    bool shift = false;
  };
  const Op ops[] = {
      {"arith.add", [](const IntType &t, uint32_t a, uint32_t b) { return t.wrap(t.value(a) + t.value(b)); }},
      {"arith.sub", [](const IntType &t, uint32_t a, uint32_t b) { return t.wrap(t.value(a) - t.value(b)); }},
      {"arith.mul", [](const IntType &t, uint32_t a, uint32_t b) { return t.wrap(t.value(a) * t.value(b)); }},
      {"arith.adds", [](const IntType &t, uint32_t a, uint32_t b) { return t.clamp(t.value(a) + t.value(b)); }},
      {"arith.subs", [](const IntType &t, uint32_t a, uint32_t b) { return t.clamp(t.value(a) - t.value(b)); }},
      {"arith.max", [](const IntType &t, uint32_t a, uint32_t b) { return t.value(a) > t.value(b) ? a : b; }},
      {"arith.min", [](const IntType &t, uint32_t a, uint32_t b) { return t.value(a) < t.value(b) ? a : b; }},
      {"arith.and", [](const IntType &, uint32_t a, uint32_t b) { return a & b; }},
      {"arith.or", [](const IntType &, uint32_t a, uint32_t b) { return a | b; }},
      {"arith.xor", [](const IntType &, uint32_t a, uint32_t b) { return a ^ b; }},
      {"arith.copy", [](const IntType &, uint32_t a, uint32_t) { return a; }},
      {"arith.ashift",
       [](const IntType &t, uint32_t a, uint32_t b) {
         const int64_t s = IntType{t.prec, true}.value(b); // the amount: signed at the width
         return t.clamp(halfUpShift(t.value(a), s));
       },
       true},
      {"arith.logicShift",
       [](const IntType &t, uint32_t a, uint32_t b) {
         const int64_t s = IntType{t.prec, true}.value(b), w = t.bits();
         if (s >= w || s <= -w) return 0u;
         return s >= 0 ? t.wrap(int64_t(uint64_t(a) << s)) : uint32_t(a >> -s);
       },
       true},
  };
  unsigned seed = 500;
  for (const IntType &t : {kS8, kU8, kS16, kU16})
    for (const Op &op : ops) {
      const std::string what = std::string(op.mnemonic) + " " + t.name();
      const Words a = intWords(t, elements(kShape), seed++, false);
      const Words b = op.shift ? shiftWords(t, elements(kShape), seed++) : intWords(t, elements(kShape), seed++, true);
      const bool unary = std::string(op.mnemonic) == "arith.copy";
      Command c = typedArith(op.mnemonic, t.prec, t.isSigned, kShape, {{"tsk_opd_num", unary ? 1 : 2}});
      auto got = runIntArith(c, kShape, t.bits() / 8, a, b, t.bits() / 8);
      ASSERT_TRUE(got.isOk()) << what << ": " << got.message();
      for (size_t i = 0; i < a.size(); ++i)
        ASSERT_EQ((*got)[i], op.want(t, a[i], b[i]))
            << what << " at " << i << ": " << t.value(a[i]) << ", " << t.value(b[i]);
    }
}

TEST(Bm1684xExec, Int8CornersByValue) {
  // One pair per channel, hand-computed: wrap vs saturation at 8 bits, uint8 vs int8 comparisons, shifts at the
  // type's width (a uint8 amount 0xff is -1), right shifts rounding half up.
  auto run = [](const char *mnemonic, const IntType &t, const std::vector<std::pair<int64_t, int64_t>> &pairs) {
    const Shape shape{1, pairs.size(), 1, 1};
    Words a, b;
    for (auto [x, y] : pairs) a.push_back(t.wrap(x)), b.push_back(t.wrap(y));
    auto got = runIntArith(typedArith(mnemonic, t.prec, t.isSigned, shape), shape, t.bits() / 8, a, b, t.bits() / 8);
    EXPECT_TRUE(got.isOk()) << mnemonic << ": " << got.message();
    std::vector<int64_t> values;
    if (got.isOk())
      for (uint32_t w : *got) values.push_back(t.value(w));
    return values;
  };
  using V = std::vector<int64_t>;
  EXPECT_EQ(run("arith.add", kS8, {{127, 1}, {-128, -1}, {100, 100}}), (V{-128, 127, -56}));
  EXPECT_EQ(run("arith.adds", kS8, {{127, 1}, {-128, -1}, {100, 100}, {-100, 27}}), (V{127, -128, 127, -73}));
  EXPECT_EQ(run("arith.adds", kU8, {{255, 1}, {200, 100}, {3, 4}}), (V{255, 255, 7}));
  EXPECT_EQ(run("arith.subs", kU8, {{0, 1}, {3, 200}, {200, 3}}), (V{0, 0, 197}));
  EXPECT_EQ(run("arith.sub", kU8, {{0, 1}, {3, 200}}), (V{255, 59}));
  EXPECT_EQ(run("arith.mul", kS8, {{16, 16}, {-128, -1}, {-3, 5}}), (V{0, -128, -15}));
  EXPECT_EQ(run("arith.subs", kS16, {{-32768, 1}, {32767, -1}, {-5, 7}}), (V{-32768, 32767, -12}));
  EXPECT_EQ(run("arith.max", kS8, {{-1, 1}, {-128, 127}}), (V{1, 127}));
  EXPECT_EQ(run("arith.max", kU8, {{255, 1}, {128, 127}}), (V{255, 128})); // the same bits, unsigned
  EXPECT_EQ(run("arith.min", kU8, {{255, 1}, {128, 127}}), (V{1, 127}));
  // ashift: -5 >> 1 = -2.5 -> -2, 5 >> 1 -> 3, -7 >> 3 = -0.875 -> -1; 64 << 1 saturates to 127, -64 << 1 fits;
  // shifting by 8 or more: 0 or saturation.
  EXPECT_EQ(run("arith.ashift", kS8, {{-5, -1}, {5, -1}, {-7, -3}, {64, 1}, {-64, 1}, {-65, 1}, {-1, -8}, {1, 8}}),
            (V{-2, 3, -1, 127, -128, -128, 0, 127}));
  // uint8: the amount 0xff is -1: 255 >> 1 = 127.5 -> 128; 0x80 = -128 shifts everything out.
  EXPECT_EQ(run("arith.ashift", kU8, {{255, 0xff}, {3, 0xfe}, {200, 1}, {200, 0x80}}), (V{128, 1, 255, 0}));
  // logicShift at 8 bits: zeros in, bits beyond the width lost, |amount| >= 8 gives 0.
  EXPECT_EQ(run("arith.logicShift", kS8, {{-1, -1}, {-1, 1}, {-128, -7}, {1, 7}, {1, 8}, {-1, -8}}),
            (V{127, -2, 1, -128, 0, 0}));
  EXPECT_EQ(run("arith.logicShift", kU16, {{0xffff, 0xffff}, {0x8001, 1}}), (V{0x7fff, 2}));
}

// arith.cast of one value per channel from type `from` to `to` (precision codes; an integer's sign from its
// IntType, a float's ignored), round mode `mode`; the result words.
Result<Words> runIntCast(unsigned fromPrec, bool fromSigned, unsigned toPrec, bool toSigned, uint64_t mode,
                         const Words &in) {
  const Shape shape{1, in.size(), 1, 1};
  auto bytesOf = [](unsigned prec) -> uint64_t { return prec == 0 ? 1 : prec == 1 || prec == 3 || prec == 5 ? 2 : 4; };
  Command c = typedArith("arith.cast", fromPrec, fromSigned, shape,
                         {{"tsk_opd_num", 1}, {"res0_prec", toPrec}, {"opd2_sign", toSigned}, {"opd2_n_str", mode}});
  return runIntArith(c, shape, bytesOf(fromPrec), in, {}, bytesOf(toPrec));
}

TEST(Bm1684xExec, IntegerCastsSaturateAndRoundByMode) {
  // Integer -> integer, every ordered pair of distinct types: the value saturated to the result's range, whatever
  // the round mode (nothing rounds).
  for (const IntType &from : kIntTypes)
    for (const IntType &to : kIntTypes) {
      if (from.prec == to.prec && from.isSigned == to.isSigned) continue;
      const Words in = intWords(from, 64, 700 + from.prec * 2 + from.isSigned, false);
      auto got = runIntCast(from.prec, from.isSigned, to.prec, to.isSigned, 3, in);
      ASSERT_TRUE(got.isOk()) << from.name() << " -> " << to.name() << ": " << got.message();
      for (size_t i = 0; i < in.size(); ++i)
        ASSERT_EQ((*got)[i], to.clamp(from.value(in[i])))
            << from.name() << " -> " << to.name() << ": " << from.value(in[i]);
    }
  // Hand-computed: int8 -1 -> uint8 0, uint8 255 -> int8 127, int32 -200 -> int8 -128, uint16 65535 -> int16
  // 32767, int16 -5 -> uint32 0, uint32 0xffffffff -> int32 INT32_MAX.
  EXPECT_EQ(*runIntCast(0, true, 0, false, 0, {0xff}), Words{0});
  EXPECT_EQ(*runIntCast(0, false, 0, true, 0, {0xff}), Words{0x7f});
  EXPECT_EQ(*runIntCast(4, true, 0, true, 0, {bitsOfInt(-200)}), Words{0x80});
  EXPECT_EQ(*runIntCast(3, false, 3, true, 0, {0xffff}), Words{0x7fff});
  EXPECT_EQ(*runIntCast(3, true, 4, false, 0, {0xfffb}), Words{0});
  EXPECT_EQ(*runIntCast(4, false, 4, true, 0, {0xffffffffu}), Words{0x7fffffffu});

  // fp32 -> int8 and uint8 under each round mode (0 half to even, 1 half away, 2 towards zero, 3 down, 4 up,
  // 5 half up, 6 half down), then saturated; NaN -> 0.
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x{2.5f, -2.5f, -0.5f, 126.5f, 127.5f, -128.5f, -129.0f, 1000.0f, nan, -inf};
  const std::vector<std::vector<int64_t>> wantS8{
      {2, -2, 0, 126, 127, -128, -128, 127, 0, -128}, {3, -3, -1, 127, 127, -128, -128, 127, 0, -128},
      {2, -2, 0, 126, 127, -128, -128, 127, 0, -128}, {2, -3, -1, 126, 127, -128, -128, 127, 0, -128},
      {3, -2, 0, 127, 127, -128, -128, 127, 0, -128}, {3, -2, 0, 127, 127, -128, -128, 127, 0, -128},
      {2, -3, -1, 126, 127, -128, -128, 127, 0, -128}};
  const std::vector<float> ux{2.5f, -2.5f, 0.5f, 254.5f, 255.5f, 1000.0f, nan, inf};
  const std::vector<std::vector<int64_t>> wantU8{{2, 0, 0, 254, 255, 255, 0, 255}, {3, 0, 1, 255, 255, 255, 0, 255},
                                                 {2, 0, 0, 254, 255, 255, 0, 255}, {2, 0, 0, 254, 255, 255, 0, 255},
                                                 {3, 0, 1, 255, 255, 255, 0, 255}, {3, 0, 1, 255, 255, 255, 0, 255},
                                                 {2, 0, 0, 254, 255, 255, 0, 255}};
  for (uint64_t mode = 0; mode < 7; ++mode) {
    Words in, uin;
    for (float f : x) in.push_back(bitsOf(f));
    for (float f : ux) uin.push_back(bitsOf(f));
    auto s = runIntCast(2, true, 0, true, mode, in);
    auto u = runIntCast(2, true, 0, false, mode, uin);
    ASSERT_TRUE(s.isOk() && u.isOk()) << s.message() << u.message();
    for (size_t i = 0; i < x.size(); ++i)
      EXPECT_EQ(kS8.value((*s)[i]), wantS8[mode][i]) << "mode " << mode << ": " << x[i];
    for (size_t i = 0; i < ux.size(); ++i)
      EXPECT_EQ(kU8.value((*u)[i]), wantU8[mode][i]) << "mode " << mode << ": " << ux[i];
  }
  // fp16 -> int16: 32767.5 is not an fp16; 65504 saturates, -2.5 half away -> -3.
  auto h = runIntCast(1, true, 3, true, 1, {floatToF16(65504.0f), floatToF16(-2.5f), floatToF16(-70000.0f)});
  ASSERT_TRUE(h.isOk()) << h.message();
  EXPECT_EQ(*h, (Words{0x7fff, 0xfffd, 0x8000}));

  // Integer -> float: exact, then rounded once: uint16 65535 overflows fp16 (65520 and above), 65519 is 65504;
  // int16 257 is a bf16 tie between 256 and 258 (to even: 256); int8 -128 is exact in all three.
  auto f16 = runIntCast(3, false, 1, true, 0, {65535, 65519, 2049});
  ASSERT_TRUE(f16.isOk()) << f16.message();
  EXPECT_EQ(*f16, (Words{0x7c00, 0x7bff, floatToF16(2048.0f)}));
  auto bf = runIntCast(3, true, 5, true, 0, {257, 0xfeff /* -257 */, 259});
  ASSERT_TRUE(bf.isOk()) << bf.message();
  EXPECT_EQ(*bf, (Words{floatToBf16(256.0f), floatToBf16(-256.0f), floatToBf16(260.0f)}));
  auto f32 = runIntCast(0, true, 2, true, 0, {0x80, 0x7f});
  ASSERT_TRUE(f32.isOk()) << f32.message();
  EXPECT_EQ(*f32, (Words{bitsOf(-128.0f), bitsOf(127.0f)}));
  auto u8f = runIntCast(0, false, 2, true, 0, {0x80, 0xff});
  ASSERT_TRUE(u8f.isOk()) << u8f.message();
  EXPECT_EQ(*u8f, (Words{bitsOf(128.0f), bitsOf(255.0f)}));

  // Refused: one type to itself, a round mode past 6, a round mode other than 0 to a float.
  EXPECT_EQ(runIntCast(0, true, 0, true, 0, {0}).message(), "arith.cast: a cast from si8 to si8 is not modelled");
  EXPECT_EQ(runIntCast(0, true, 3, true, 7, {0}).message(), "arith.cast: round mode 7 is not modelled");
  EXPECT_EQ(runIntCast(0, true, 1, true, 2, {0}).message(),
            "arith.cast: round mode 2 is not modelled to fp16 (0 only)");
  // Operands of different integer types outside cast: refused by name.
  const Shape one{1, 1, 1, 1};
  EXPECT_EQ(runIntArith(typedArith("arith.add", 0, true, one, {{"opd1_sign", 0}}), one, 1, {0}, {0}, 1).message(),
            "arith.add: operand %R0.4096.L5 is ui8, the result si8: operands and result of one type only, or all "
            "floats");
  EXPECT_EQ(runIntArith(typedArith("arith.max", 0, true, one, {{"res0_prec", 3}}), one, 1, {0}, {0}, 2).message(),
            "arith.max: operand %R0.L5 is si8, the result si16: operands and result of one type only, or all "
            "floats");
}

namespace {

// Random integers of type t in a host tensor (exact in its floats), and the int32 words of an int32 host.
Host randomIntHost(Shape s, const IntType &t, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> d(t.lo(), t.hi());
  Host h(s);
  for (float &v : h.v) v = float(d(rng));
  return h;
}
Words intWordsOf(const IntType &t, const Host &h) {
  Words w;
  for (float v : h.v) w.push_back(t.wrap(int64_t(v)));
  return w;
}

// One 8-bit conv.normal: input of type `in`, weights of `weight` in the Ic64 layout, the pad value of the input's
// type, an int32 output (res_add: added to old values, some near the int32 limits).
struct ConvInt8Case {
  IntType in = kS8, weight = kS8;
  uint64_t n = 1, ic = 70, oc = 70, h = 9, w = 9;
  Window window;
  uint32_t inLane = 5, weightLane = 3, outLane = 7;
  bool resAdd = false;
};

void checkConvInt8(const ConvInt8Case &k) {
  const Window &win = k.window;
  const uint64_t K = win.kernel, oh = outputExtent(k.h, win), ow = outputExtent(k.w, win);
  Host x = randomIntHost({k.n, k.ic, k.h, k.w}, k.in, 60), weight = randomIntHost({k.oc, k.ic, K, K}, k.weight, 61);
  Host old({k.n, k.oc, oh, ow});
  std::mt19937 rng(62);
  Words oldWords;
  for (size_t i = 0; i < old.v.size(); ++i) {
    const int64_t near = i % 3 == 0 ? INT32_MAX - 1000 : i % 3 == 1 ? INT32_MIN + 1000 : int64_t(rng() % 2001) - 1000;
    oldWords.push_back(uint32_t(near));
  }
  Memories m;
  const uint64_t bytes = k.in.bits() / 8, g = 64 / bytes; // Ic64 (8-bit) or Ic32 (16-bit)
  const Local in = alignedBytes(bytes, k.inLane, 0, x.shape);
  in.putWords(m, x.shape, intWordsOf(k.in, x));
  // Ic64 / Ic32: output channel o in lane (lane0 + o) % 64, row (lane0 + o) / 64 of ceil(ic / g) groups of g
  // input channels, each group kh * kw runs of its g. The unused slots hold 0x7f bytes: read, they would show.
  const uint64_t weightBase = 0x4000, groups = (k.ic + g - 1) / g, row = groups * g * K * K;
  for (uint32_t lane = 0; lane < kLanes; ++lane) std::memset(m.local().lane(lane) + weightBase, 0x7f, 2 * row * bytes);
  for (uint64_t o = 0; o < k.oc; ++o)
    for (uint64_t i = 0; i < k.ic; ++i)
      for (uint64_t y = 0; y < K; ++y)
        for (uint64_t v = 0; v < K; ++v) {
          const uint64_t lane = k.weightLane + o;
          const uint32_t bits = k.weight.wrap(int64_t(weight(o, i, y, v)));
          const uint64_t at = weightBase + (lane / kLanes * row + i / g * g * K * K + (y * K + v) * g + i % g) * bytes;
          std::memcpy(m.local().lane(uint32_t(lane % kLanes)) + at, &bits, bytes);
        }
  const Local out = aligned(k.outLane, 0x14000, old.shape);
  out.putWords(m, old.shape, oldWords);

  Command c = make("conv.normal", true,
                   {{"res0_prec", 4},
                    {"opd0_prec", k.in.prec},
                    {"opd0_sign", k.in.isSigned},
                    {"opd1_sign", k.weight.isSigned},
                    {"res0_n", k.n},
                    {"res0_c", k.oc},
                    {"res0_h", oh},
                    {"res0_w", ow},
                    {"opd0_c", k.ic},
                    {"opd0_h", k.h},
                    {"opd0_w", k.w},
                    {"res0_addr", out.address()},
                    {"opd0_addr", in.address()},
                    {"opd1_addr", k.weightLane * kLaneBytes + weightBase},
                    {"opd2_const", 1},
                    {"opd2_addr", 0},
                    {"res_add", k.resAdd}});
  setWindow(c, win);
  // The pad value: a constant of the input's type, its low 8 (16) bits (the bits above are not read).
  ASSERT_TRUE(c.set("opd3_addr", (0xabcd0000u << (bytes == 1 ? 0 : 8)) | k.in.wrap(int64_t(win.padValue))).isOk());
  auto st = sim::bm1684x::execute(m, c);
  ASSERT_TRUE(st.isOk()) << st.message();

  Host p = padded(x, win);
  Words want;
  size_t saturatedCount = 0;
  for (uint64_t n = 0; n < k.n; ++n)
    for (uint64_t o = 0; o < k.oc; ++o)
      for (uint64_t y = 0; y < oh; ++y)
        for (uint64_t v = 0; v < ow; ++v) {
          int64_t acc = 0;
          for (uint64_t i = 0; i < k.ic; ++i)
            for (uint64_t ky = 0; ky < K; ++ky)
              for (uint64_t kx = 0; kx < K; ++kx)
                acc += int64_t(p(n, i, y * win.stride + ky * win.dilation, v * win.stride + kx * win.dilation)) *
                       int64_t(weight(o, i, ky, kx));
          if (k.resAdd) acc += int32_t(oldWords[want.size()]);
          saturatedCount += acc > INT32_MAX || acc < INT32_MIN;
          want.push_back(kS32.clamp(acc));
        }
  EXPECT_EQ(out.getWords(m, old.shape), want);
  if (k.resAdd) {
    EXPECT_GT(saturatedCount, 0u);
  }
}

} // namespace

TEST(Bm1684xExec, Int8ConvIc64WeightsExactInt32Sums) {
  // int8 x int8, 70 input channels (two groups of 64, the second partly used) and 70 output channels crossing
  // lanes, the padding -3.
  ConvInt8Case k;
  k.window.padValue = -3;
  checkConvInt8(k);
}

TEST(Bm1684xExec, Uint8ConvDilatedWithResAddSaturating) {
  // uint8 input (pad 200, read as uint8) with int8 weights, dilation 2, two images; res_add onto old outputs near
  // the int32 limits: saturated once, both ways.
  ConvInt8Case k;
  k.in = kU8, k.n = 2, k.window.dilation = 2, k.window.padValue = 200, k.resAdd = true, k.inLane = 60;
  checkConvInt8(k);
  // uint8 x uint8 with inserted zeros (deconvolution), stride 1, pad 255.
  ConvInt8Case d;
  d.in = kU8, d.weight = kU8, d.ic = 130, d.oc = 5, d.h = 5, d.w = 4, d.window.ins = 1, d.window.stride = 1;
  d.window.padValue = 255;
  checkConvInt8(d);
}

TEST(Bm1684xExec, Int16ConvIc32WeightsExactInt32Sums) {
  // int16 input (another conv's accumulator, near its limits) x int16 weights in Ic32, 70 input channels
  // (three groups of 32), strided, the padding -30000; sums beyond int32 saturate.
  ConvInt8Case k;
  k.in = kS16, k.weight = kS16, k.window.stride = 2, k.window.padValue = -30000;
  checkConvInt8(k);
}

TEST(Bm1684xExec, Int8ConvRefusals) {
  Memories m;
  auto conv = [&](Fields extra) {
    Command c = make("conv.normal", true,
                     {{"res0_prec", 4},
                      {"opd0_prec", 0},
                      {"opd0_sign", 1},
                      {"opd1_sign", 1},
                      {"res0_n", 1},
                      {"res0_c", 4},
                      {"res0_h", 5},
                      {"res0_w", 5},
                      {"opd0_c", 4},
                      {"opd0_h", 9},
                      {"opd0_w", 9},
                      {"res0_addr", 0x8000},
                      {"opd1_addr", 0x4000},
                      {"opd2_const", 1}});
    setWindow(c, Window{});
    EXPECT_TRUE(c.set("opd3_addr", 0).isOk());
    for (auto [name, value] : extra) EXPECT_TRUE(c.set(name, value).isOk()) << name;
    auto st = sim::bm1684x::execute(m, c);
    return st.message();
  };
  EXPECT_EQ(conv({}), "");
  EXPECT_EQ(conv({{"res0_prec", 0}}), "conv.normal: output %R2 is si8: int32 only for an integer conv");
  EXPECT_EQ(conv({{"res0_prec", 2}}), "conv.normal: output %R2 is f32: int32 only for an integer conv");
  EXPECT_EQ(conv({{"opd2_addr", 3}}),
            "conv.normal: a kernel zero point (opd2_const = 1, opd2_addr = 3) is not modelled (the constant 0 only)");
  EXPECT_EQ(conv({{"opd2_const", 0}, {"opd2_addr", 0x10000}}),
            "conv.normal: a kernel zero point (opd2_const = 0, opd2_addr = 65536) is not modelled (the constant 0 "
            "only)");
  EXPECT_EQ(conv({{"opd3_const", 0}}), "conv.normal: a pad value in memory (opd3_const = 0) is not modelled");
  Command longConv = Command::make(*findOp("conv.normal"), false).value();
  for (auto [f, v] : {std::pair{"res0_prec", 4}, {"opd0_prec", 0}, {"opd2_const", 1}, {"relu", 1}})
    ASSERT_TRUE(longConv.set(f, v).isOk());
  EXPECT_EQ(sim::bm1684x::execute(m, longConv).message(), "conv.normal: relu = 1 is not modelled");
}

namespace {

// v / 2^n rounded by round mode `mode`, from the exact quotient (long double holds it): 0 half to even, 1 half
// away from zero, 2 towards zero, 3 down, 4 up, 5 half up, 6 half down.
int64_t roundedQuotient(int64_t v, int64_t n, unsigned mode) {
  const long double x = std::ldexp((long double)v, int(-n));
  switch (mode) {
  case 0:
    return int64_t(std::nearbyint(x)); // the default rounding: to nearest, ties to even
  case 1:
    return int64_t(std::round(x));
  case 2:
    return int64_t(std::trunc(x));
  case 3:
    return int64_t(std::floor(x));
  case 4:
    return int64_t(std::ceil(x));
  case 5:
    return int64_t(std::floor(x + 0.5L));
  default:
    return int64_t(std::ceil(x - 0.5L));
  }
}

// A pooling command on integers: input of type `in` at `inAt`, output of precision outPrec (signed as the input)
// at `outAt`, the pad value of the input's type.
Command pordInt(const char *mnemonic, const IntType &in, unsigned outPrec, const Window &w, Shape inShape,
                const Local &inAt, const Local &outAt) {
  Command c = pord(mnemonic, w, inShape, inAt, outAt);
  for (auto [name, value] :
       std::initializer_list<std::pair<const char *, uint64_t>>{{"opd0_prec", in.prec},
                                                                {"res0_prec", outPrec},
                                                                {"opd0_sign", in.isSigned},
                                                                {"opd3_addr", in.wrap(int64_t(w.padValue))}})
    EXPECT_TRUE(c.set(name, value).isOk()) << name;
  return c;
}

} // namespace

TEST(Bm1684xExec, IntegerMaxPoolingKeepsTheInputsType) {
  const Shape shape{2, 70, 9, 9};
  for (auto [t, pad] : {std::pair{kS8, -5.0f}, {kU8, 200.0f}, {kS16, -30000.0f}, {kU16, 0.0f}}) {
    Window w;
    w.padValue = pad; // counts among the taps
    const Shape outShape{2, 70, outputExtent(9, w), outputExtent(9, w)};
    const Host x = randomIntHost(shape, t, 90 + t.prec);
    Words want;
    size_t padWins = 0;
    forEachWindow(padded(x, w), outShape, w,
                  [&](uint64_t, uint64_t, uint64_t, uint64_t, const std::vector<float> &taps) {
                    const float mx = *std::max_element(taps.begin(), taps.end());
                    padWins += mx == pad;
                    want.push_back(t.wrap(int64_t(mx)));
                  });
    const uint64_t bytes = t.bits() / 8;
    const Local in = alignedBytes(bytes, 10, 0, shape), out = alignedBytes(bytes, 20, 0x8000, outShape);
    Memories m;
    in.putWords(m, shape, intWordsOf(t, x));
    auto st = sim::bm1684x::execute(m, pordInt("pord.maxpooling", t, t.prec, w, shape, in, out));
    ASSERT_TRUE(st.isOk()) << t.name() << ": " << st.message();
    EXPECT_EQ(out.getWords(m, outShape), want) << t.name();
    if (pad > 100) {
      EXPECT_GT(padWins, 0u) << t.name();
    }
  }
  // The result of another type than the input's: refused.
  Memories m;
  const Local in = alignedBytes(1, 0, 0, {1, 4, 9, 9}), out = alignedBytes(1, 0, 0x8000, {1, 4, 5, 5});
  auto st = sim::bm1684x::execute(m, pordInt("pord.maxpooling", kS8, 4, Window{}, {1, 4, 9, 9}, in, out));
  EXPECT_EQ(st.message(), "pord.maxpooling: output %R2 is si32, the input si8: max pooling keeps the input's type");
}

TEST(Bm1684xExec, Int8AvgPoolingMultipliesShiftsRoundsAndSaturates) {
  const Shape shape{1, 70, 9, 9};
  Window w;
  struct Case {
    IntType in;
    float pad;
    int64_t multiplier; // opd1_addr's low 8 bits, signed when opd1_sign
    unsigned shift;     // res1_addr
    unsigned outPrec;   // signed as the input
  };
  for (const Case &k : {Case{kS8, -7, -7, 5, 0}, Case{kU8, 250, 200, 10, 0}, Case{kU8, 3, 255, 3, 3},
                        Case{kS8, 100, 127, 0, 4}, Case{kS8, 0, 1, 3, 0}}) {
    w.padValue = k.pad;
    const IntType out{k.outPrec, k.in.isSigned};
    const Shape outShape{1, 70, outputExtent(9, w), outputExtent(9, w)};
    const Host x = randomIntHost(shape, k.in, 95);
    const Local in = alignedBytes(1, 10, 0, shape), outAt = alignedBytes(out.bits() / 8, 20, 0x8000, outShape);
    for (unsigned mode = 0; mode < 7; ++mode) {
      const std::string what = k.in.name() + " x " + std::to_string(k.multiplier) + " >> " + std::to_string(k.shift) +
                               " -> " + out.name() + ", mode " + std::to_string(mode);
      Words want;
      size_t clamped = 0, ties = 0;
      forEachWindow(
          padded(x, w), outShape, w, [&](uint64_t, uint64_t, uint64_t, uint64_t, const std::vector<float> &taps) {
            int64_t sum = 0;
            for (float t : taps) sum += int64_t(t);
            const int64_t r = roundedQuotient(sum * k.multiplier, k.shift, mode);
            clamped += r < out.lo() || r > out.hi();
            ties += k.shift && (sum * k.multiplier) % (int64_t(1) << k.shift) == (int64_t(1) << (k.shift - 1));
            want.push_back(out.clamp(r));
          });
      Memories m;
      in.putWords(m, shape, intWordsOf(k.in, x));
      Command c = pordInt("pord.avgpooling", k.in, k.outPrec, w, shape, in, outAt);
      for (auto [name, value] : std::initializer_list<std::pair<const char *, uint64_t>>{
               {"opd1_const", 1},
               {"opd1_sign", k.multiplier < 0 || k.in.isSigned},
               {"opd1_addr", 0x1200u | uint64_t(k.multiplier & 0xff)}, // bits above the low 8 are not read
               {"res1_addr", k.shift},
               {"opd2_n_str", mode}})
        ASSERT_TRUE(c.set(name, value).isOk()) << name;
      auto st = sim::bm1684x::execute(m, c);
      ASSERT_TRUE(st.isOk()) << what << ": " << st.message();
      EXPECT_EQ(outAt.getWords(m, outShape), want) << what;
      if (k.outPrec == 0 && k.multiplier != 1) {
        EXPECT_GT(clamped, 0u) << what;
      }
      if (k.shift == 3 && k.multiplier == 1) {
        EXPECT_GT(ties, 0u) << what; // sums of 9 int8 taps / 8: ties do occur
      }
    }
  }
  // Refused: a left shift (res1_addr's low byte negative as int8), bits above the low byte, a round mode past 6, a
  // multiplier in memory, an int16 average, an int4 input.
  Memories m;
  const Local in = alignedBytes(1, 0, 0, {1, 4, 9, 9}), out = alignedBytes(1, 0, 0x8000, {1, 4, 5, 5});
  auto avg = [&](Fields extra, const IntType &t = kS8) {
    Command c = pordInt("pord.avgpooling", t, t.prec, Window{}, {1, 4, 9, 9}, in, out);
    EXPECT_TRUE(c.set("opd1_const", 1).isOk());
    for (auto [name, value] : extra) EXPECT_TRUE(c.set(name, value).isOk()) << name;
    return sim::bm1684x::execute(m, c).message();
  };
  EXPECT_EQ(avg({}), "");
  EXPECT_EQ(avg({{"res1_addr", 0xfd}}), "pord.avgpooling: a negative shift (res1_addr's low byte: -3) is not modelled");
  EXPECT_EQ(avg({{"res1_addr", 0x105}}), "pord.avgpooling: res1_addr = 261: bits above its low byte are not modelled");
  EXPECT_EQ(avg({{"opd2_n_str", 7}}), "pord.avgpooling: round mode 7 is not modelled");
  EXPECT_EQ(avg({{"opd1_const", 0}}),
            "pord.avgpooling: an average's multiplier in memory (opd1_const = 0) is not modelled");
  EXPECT_EQ(avg({}, kS16), "pord.avgpooling: input %R0 is si16: 8-bit only for avg");
  EXPECT_EQ(avg({{"opd0_prec", 6}}), "pord.avgpooling: input %R0 is si4: an 8-, 16- or 32-bit integer only so far");
}

namespace {

// A quant.rq1 over (1, c, 3, 5) from lane 5: input of type `in` at 0, the result of `out` at 0x4000, each aligned
// for its width; parameters as `extra` says.
Command requant(const IntType &in, const IntType &out, uint64_t c, Fields extra) {
  Command cmd = make("quant.rq1", true,
                     {{"opd0_prec", in.prec},
                      {"opd0_sign", in.isSigned},
                      {"res0_prec", out.prec},
                      {"opd2_sign", out.isSigned},
                      {"res0_n", 1},
                      {"res0_c", c},
                      {"res0_h", 3},
                      {"res0_w", 5},
                      {"res0_addr", 5 * kLaneBytes + 0x4000},
                      {"opd0_addr", 5 * kLaneBytes}});
  for (auto [name, value] : extra) EXPECT_TRUE(cmd.set(name, value).isOk()) << name;
  return cmd;
}

// Runs it on `x`, with per-channel parameter words (multiplier, shift, zero point) at 0x8000 of each channel's
// lane, 64 bytes per lane row (the aligned layout of (1, c, 1, 1) int32); the result words.
Result<Words> runRequant(const Command &c, const IntType &in, const IntType &out, const Words &x,
                         const std::vector<std::array<int32_t, 3>> &params = {}) {
  const Shape shape{1, c.get("res0_c"), 3, 5};
  Memories m;
  alignedBytes(in.bits() / 8, 5, 0, shape).putWords(m, shape, x);
  for (uint64_t ch = 0; ch < params.size(); ++ch) {
    const uint64_t lane = 5 + ch;
    std::memcpy(m.local().lane(uint32_t(lane % kLanes)) + 0x8000 + 64 * (lane / kLanes), params[ch].data(), 12);
  }
  TPU_RETURN_IF_ERROR(sim::bm1684x::execute(m, c));
  return alignedBytes(out.bits() / 8, 5, 0x4000, shape).getWords(m, shape);
}

} // namespace

TEST(Bm1684xExec, Requant1TiesByRoundModeByHand) {
  // x * 1 / 2 for x = 5, -5, 3, -3, 7, -7: 2.5, -2.5, 1.5, -1.5, 3.5, -3.5 under each mode; the shift -1 in
  // opd2_addr's low byte, the zero point 0 above it.
  const std::vector<std::vector<int64_t>> want{{2, -2, 2, -2, 4, -4}, {3, -3, 2, -2, 4, -4}, {2, -2, 1, -1, 3, -3},
                                               {2, -3, 1, -2, 3, -4}, {3, -2, 2, -1, 4, -3}, {3, -2, 2, -1, 4, -3},
                                               {2, -3, 1, -2, 3, -4}};
  const std::vector<int64_t> xs{5, -5, 3, -3, 7, -7};
  Words x(6 * 15);
  for (size_t i = 0; i < x.size(); ++i) x[i] = kS8.wrap(xs[i / 15]);
  for (unsigned mode = 0; mode < 7; ++mode) {
    Command c = requant(kS8, kS8, 6, {{"opd1_const", 1}, {"opd1_addr", 1}, {"opd2_addr", 0xff}, {"opd2_n_str", mode}});
    auto got = runRequant(c, kS8, kS8, x);
    ASSERT_TRUE(got.isOk()) << got.message();
    for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(kS8.value((*got)[i]), want[mode][i / 15]) << "mode " << mode;
  }
}

TEST(Bm1684xExec, Requant1ConstantAndPerChannelParameters) {
  // Constant form: int32 input times 1234567, shift -20, zero point -3 (bits 8..23 of opd2_addr), into int8,
  // uint8 (zero point +100) and int16, every round mode; the reference from the exact quotient.
  std::mt19937 rng(120);
  const Shape shape{1, 70, 3, 5};
  Words x(elements(shape));
  for (size_t i = 0; i < x.size(); ++i) x[i] = uint32_t(int32_t(rng()) >> (i % 20)); // magnitudes of all sizes
  x[0] = 0x80000000u, x[1] = 0x7fffffffu, x[2] = 0, x[3] = 1u << 19, x[4] = bitsOfInt(-(1 << 19));
  for (auto [out, zp] : {std::pair{kS8, -3}, {kU8, 100}, {kS16, -3}, {kS32, -3}})
    for (unsigned mode = 0; mode < 7; ++mode) {
      const uint64_t packed = (uint64_t(uint16_t(zp)) << 8) | 0xec; // shift -20
      Command c = requant(kS32, out, 70,
                          {{"opd1_const", 1}, {"opd1_addr", 1234567}, {"opd2_addr", packed}, {"opd2_n_str", mode}});
      auto got = runRequant(c, kS32, out, x);
      ASSERT_TRUE(got.isOk()) << got.message();
      size_t clamped = 0;
      for (size_t i = 0; i < x.size(); ++i) {
        const int64_t r = zp + roundedQuotient(int64_t(s32(x[i])) * 1234567, 20, mode);
        clamped += r < out.lo() || r > out.hi();
        ASSERT_EQ((*got)[i], out.clamp(r)) << out.name() << " mode " << mode << " at " << i << ": " << s32(x[i]);
      }
      EXPECT_GT(clamped, 0u) << out.name();
    }

  // Memory form, one (multiplier, shift, zero point) per channel: uint8 and int16 inputs, shifts right by up to
  // 40, left by up to 3 (saturating), zero points within int16; the result int8 or uint16.
  std::vector<std::array<int32_t, 3>> params(70);
  for (size_t ch = 0; ch < params.size(); ++ch)
    params[ch] = {int32_t(rng() % 200000) - 100000, int32_t(ch % 44) - 40, int32_t(rng() % 600) - 300};
  params[0] = {-1, 0, 0}; // -x: uint8 255 -> -255, saturated
  for (auto [in, out] : {std::pair{kU8, kS8}, {kS16, kU16}, {kS16, kS8}})
    for (unsigned mode : {0u, 1u, 5u}) {
      const Words xi = intWords(in, elements(shape), 130 + in.prec, false);
      Command c = requant(in, out, 70, {{"opd1_addr", 5 * kLaneBytes + 0x8000}, {"opd2_n_str", mode}});
      auto got = runRequant(c, in, out, xi, params);
      ASSERT_TRUE(got.isOk()) << got.message();
      for (size_t i = 0; i < xi.size(); ++i) {
        const auto &p = params[i / 15];
        const int64_t v = in.value(xi[i]) * p[0];
        const int64_t scaled = p[1] >= 0 ? v * (int64_t(1) << p[1]) : roundedQuotient(v, -p[1], mode);
        ASSERT_EQ((*got)[i], out.clamp(p[2] + scaled))
            << in.name() << " -> " << out.name() << " mode " << mode << " at " << i << ": " << in.value(xi[i]);
      }
    }
}

TEST(Bm1684xExec, Requant1HalfUpIsRoundingRightShift) {
  // Mode 5 with the multiplier 1 is arith/IntArith.h's roundingRightShift (the BM1684 model's), for every shift
  // 0..40 over int32 values of every size.
  const Shape shape{1, 41, 3, 5};
  std::vector<std::array<int32_t, 3>> params(41);
  for (size_t ch = 0; ch < params.size(); ++ch) params[ch] = {1, -int32_t(ch), 0};
  std::mt19937 rng(140);
  Words x(elements(shape));
  for (size_t i = 0; i < x.size(); ++i) x[i] = uint32_t(int32_t(rng()) >> (i % 31));
  Command c = requant(kS32, kS32, 41, {{"opd1_addr", 5 * kLaneBytes + 0x8000}, {"opd2_n_str", 5}});
  auto got = runRequant(c, kS32, kS32, x, params);
  ASSERT_TRUE(got.isOk()) << got.message();
  for (size_t i = 0; i < x.size(); ++i)
    ASSERT_EQ(s32((*got)[i]), sim::roundingRightShift(s32(x[i]), unsigned(i / 15))) << i;
}

TEST(Bm1684xExec, Requant1Refusals) {
  const Words x(15, 0);
  auto refused = [&](const IntType &in, const IntType &out, Fields extra,
                     const std::vector<std::array<int32_t, 3>> &params = {}) {
    auto got = runRequant(requant(in, out, 1, extra), in, out, x, params);
    EXPECT_FALSE(got.isOk());
    return got.message();
  };
  EXPECT_EQ(refused(kS8, kS8, {{"opd1_const", 1}, {"opd2_n_str", 7}}), "quant.rq1: round mode 7 is not modelled");
  EXPECT_EQ(refused(kS8, kS8, {{"opd1_addr", 5 * kLaneBytes + 0x8000}}, {{1, 200, 0}}),
            "quant.rq1: channel 0: shift 200 or zero point 0 outside int8 / int16 is not modelled");
  EXPECT_EQ(refused(kS8, kS8, {{"opd1_addr", 5 * kLaneBytes + 0x8000}}, {{1, 0, 40000}}),
            "quant.rq1: channel 0: shift 0 or zero point 40000 outside int8 / int16 is not modelled");
  EXPECT_EQ(refused(kS8, kS8, {{"opd1_const", 1}, {"opd0_prec", 2}}),
            "quant.rq1: input %R0.L5 is f32: an 8-, 16- or 32-bit integer only so far");
  EXPECT_EQ(refused(kS8, kS8, {{"opd1_const", 1}, {"res0_prec", 1}}),
            "quant.rq1: result %R1.L5 is f16: an 8-, 16- or 32-bit integer only so far");
  Memories m;
  EXPECT_EQ(sim::bm1684x::execute(m, make("quant.rq0", true, {})).message(), "quant.rq0 is not executed yet");
  EXPECT_EQ(sim::bm1684x::execute(m, make("quant.dq1", true, {})).message(), "quant.dq1 is not executed yet");
}

TEST(Bm1684xExec, Int8CompareSelect) {
  // sel_gt on int8 compared values (-1 > 1 is false for int8, true for uint8), selecting int16 values.
  for (const IntType &t : {kS8, kU8}) {
    const Shape shape{1, 2, 1, 1};
    Command c = compareSelect("cmp.sel_gt", 0, t.isSigned, 3);
    for (auto [name, value] : std::initializer_list<std::pair<const char *, uint64_t>>{{"res0_c", 2},
                                                                                       {"res0_h", 1},
                                                                                       {"res0_w", 1},
                                                                                       {"opd2_const", 1},
                                                                                       {"opd2_addr", 0x8000},
                                                                                       {"opd3_const", 1},
                                                                                       {"opd3_addr", 0x1234}})
      ASSERT_TRUE(c.set(name, value).isOk()) << name;
    Memories m;
    alignedBytes(1, 5, 0, shape).putWords(m, shape, {0xff, 3});
    alignedBytes(1, 5, 0x1000, shape).putWords(m, shape, {1, 0xfd});
    auto st = sim::bm1684x::execute(m, c);
    ASSERT_TRUE(st.isOk()) << st.message();
    const Words want = t.isSigned ? Words{0x1234, 0x8000} : Words{0x8000, 0x1234}; // 3 > -3, 3 < 253
    EXPECT_EQ(alignedBytes(2, 5, 0x4000, shape).getWords(m, shape), want) << t.name();
  }
}

// 8-bit depthwise (+ relu): per channel the exact sum of taps times int8 weights plus the int32 bias, into
// int32; relu clamps at 0; a narrower result or a shift is refused.
TEST(Bm1684xExec, Int8DepthwiseExactInt32SumsWithBias) {
  const Shape shape{1, 70, 9, 9};
  for (const IntType &t : {kS8, kU8})
    for (const char *mnemonic : {"pord.depthwise", "pord.depthwiserelu"}) {
      const std::string what = std::string(mnemonic) + " " + t.name();
      Window w;
      w.dilation = 2, w.padValue = t.isSigned ? -3.0f : 7.0f;
      const Shape outShape{1, 70, outputExtent(9, w), outputExtent(9, w)};
      const Host x = randomIntHost(shape, t, 140 + t.isSigned), weight = randomIntHost({1, 70, 3, 3}, kS8, 142);
      Host bias = randomIntHost({1, 70, 1, 1}, kS16, 143);
      for (float &v : bias.v) v *= 1000; // beyond int16: the bias is int32
      const Local in = alignedBytes(1, 0, 0, shape), out = alignedBytes(4, 0, 0x8000, outShape);
      const Local weightAt{0, 0x4000, {0, 9, 3, 1}, 1}, biasAt{0, 0x6000, {0, 1, 0, 0}, 4};
      Memories m;
      in.putWords(m, shape, intWordsOf(t, x));
      weightAt.putWords(m, weight.shape, intWordsOf(kS8, weight));
      biasAt.putWords(m, bias.shape, intWordsOf(kS32, bias));
      Command c = pordInt(mnemonic, t, 4, w, shape, in, out);
      for (auto [name, value] : std::initializer_list<std::pair<const char *, uint64_t>>{
               {"opd1_addr", weightAt.address()}, {"opd2_addr", biasAt.address()}, {"opd1_sign", 1}, {"opd2_sign", 1}})
        ASSERT_TRUE(c.set(name, value).isOk()) << name;
      auto st = sim::bm1684x::execute(m, c);
      ASSERT_TRUE(st.isOk()) << what << ": " << st.message();
      const bool relu = std::string(mnemonic) == "pord.depthwiserelu";
      Words want;
      size_t clamped = 0;
      forEachWindow(padded(x, w), outShape, w,
                    [&](uint64_t, uint64_t ch, uint64_t, uint64_t, const std::vector<float> &taps) {
                      int64_t acc = int64_t(bias(0, ch, 0, 0));
                      for (size_t i = 0; i < taps.size(); ++i) acc += int64_t(taps[i]) * int64_t(weight.v[ch * 9 + i]);
                      clamped += relu && acc < 0;
                      want.push_back(kS32.wrap(relu ? std::max<int64_t>(acc, 0) : acc));
                    });
      if (relu) {
        EXPECT_GT(clamped, 0u) << what;
      }
      EXPECT_EQ(out.getWords(m, outShape), want) << what;
    }
  // An 8-bit result, or a shift: refused by name.
  Memories m;
  const Shape small{1, 4, 5, 5};
  const Local in = alignedBytes(1, 0, 0, small), out8 = alignedBytes(1, 0, 0x8000, small);
  Command narrow = pordInt("pord.depthwise", kS8, 0, Window{}, small, in, out8);
  EXPECT_EQ(sim::bm1684x::execute(m, narrow).message(),
            "pord.depthwise: output %R2 is si8: int32 only for an 8-bit depthwise");
  Command shifted = pordInt("pord.depthwise", kS8, 4, Window{}, small, in, alignedBytes(4, 0, 0x8000, small));
  ASSERT_TRUE(shifted.set("res1_addr", 3).isOk());
  EXPECT_EQ(sim::bm1684x::execute(m, shifted).message(), "pord.depthwise: a shift (res1_addr = 3) is not modelled");
}

// sg.pe_s_gather_d1coor, the per-lane table lookup: res0[n][c][0][w] = opd0[0][c][0][opd1[n][c][0][w]], each
// lane reading its own channel's table, the index unsigned of opd1_prec, the table's bits copied.
namespace {

// A gather of a (1, c, 1, entries) table of `prec` at `table` by a (n, c, 1, w) index of `indexPrec` at
// `index` into (n, c, 1, w) at `result`, all aligned; then `extra` fields.
Command gather(unsigned prec, unsigned indexPrec, Shape out, uint64_t entries, const Local &table, const Local &index,
               const Local &result, Fields extra = {}, const char *mnemonic = "sg.pe_s_gather_d1coor") {
  Command c = make(mnemonic, true,
                   {{"res0_n", out[0]},
                    {"res0_c", out[1]},
                    {"res0_h", 1},
                    {"res0_w", out[3]},
                    {"opd0_h", 1},
                    {"opd0_w", entries},
                    {"opd1_w", out[3]},
                    {"res0_prec", prec},
                    {"opd0_prec", prec},
                    {"opd1_prec", indexPrec},
                    {"res0_addr", result.address()},
                    {"opd0_addr", table.address()},
                    {"opd1_addr", index.address()}});
  for (auto [name, value] : extra) EXPECT_TRUE(c.set(name, value).isOk()) << name;
  return c;
}

uint64_t bytesOfPrec(unsigned prec) { return prec == 0 ? 1 : prec == 2 || prec == 4 ? 4 : 2; }

} // namespace

TEST(Bm1684xExec, GatherLooksUpEachLanesOwnTable) {
  // (table precision, index precision, entries, n, w): an int8 table of 256 entries indexed by uint8 over
  // 0..255 (each (n, c) row a permutation of them); int16 and fp16 tables by uint16 and uint8 indices; fp32
  // and int32 tables by uint32 indices. 70 channels from lane 5: the views cross from lane 63 to lane 0.
  struct Case {
    unsigned prec, indexPrec;
    uint64_t entries, n, w;
  };
  for (const Case &k : {Case{0, 0, 256, 2, 256}, Case{3, 3, 300, 2, 40}, Case{1, 0, 200, 1, 33}, Case{2, 4, 70, 2, 17},
                        Case{4, 3, 1000, 1, 24}}) {
    const std::string what = "prec " + std::to_string(k.prec) + " index " + std::to_string(k.indexPrec);
    const uint64_t bytes = bytesOfPrec(k.prec), indexBytes = bytesOfPrec(k.indexPrec), C = 70;
    const Shape tableShape{1, C, 1, k.entries}, shape{k.n, C, 1, k.w};
    const Local table = alignedBytes(bytes, 5, 0, tableShape), index = alignedBytes(indexBytes, 5, 0x2000, shape),
                out = alignedBytes(bytes, 5, 0x6000, shape);
    std::mt19937 rng(500 + k.prec);
    const uint32_t mask = bytes == 4 ? ~0u : (1u << (8 * bytes)) - 1;
    Words t(elements(tableShape)), idx(elements(shape));
    for (uint32_t &v : t) v = rng() & mask;
    for (uint64_t n = 0; n < k.n; ++n)
      for (uint64_t c = 0; c < C; ++c) {
        uint32_t *row = &idx[(n * C + c) * k.w];
        if (k.entries == k.w) { // a permutation: every entry read
          for (uint64_t w = 0; w < k.w; ++w) row[w] = uint32_t(w);
          std::shuffle(row, row + k.w, rng);
        } else {
          for (uint64_t w = 0; w < k.w; ++w) row[w] = uint32_t(rng() % k.entries);
          row[0] = uint32_t(k.entries - 1), row[1] = 0;
        }
      }
    Memories m;
    table.putWords(m, tableShape, t);
    index.putWords(m, shape, idx);
    auto st = sim::bm1684x::execute(m, gather(k.prec, k.indexPrec, shape, k.entries, table, index, out));
    ASSERT_TRUE(st.isOk()) << what << ": " << st.message();
    Words want;
    for (uint64_t n = 0; n < k.n; ++n)
      for (uint64_t c = 0; c < C; ++c)
        for (uint64_t w = 0; w < k.w; ++w) want.push_back(t[c * k.entries + idx[(n * C + c) * k.w + w]]);
    EXPECT_EQ(out.getWords(m, shape), want) << what;
  }
}

TEST(Bm1684xExec, GatherViewsAndRefusals) {
  const Shape shape{2, 70, 1, 256}, tableShape{1, 70, 1, 256};
  const Local table = alignedBytes(1, 5, 0, tableShape), index = alignedBytes(1, 5, 0x2000, shape),
              out = alignedBytes(1, 5, 0x6000, shape);
  // The views: the table and the result signless, the index unsigned, at opd1_addr; pe_s_gather_hzd reads
  // alike (described, not executed); the other gathers are not described.
  Command g = gather(0, 0, shape, 256, table, index, out);
  auto ops = memory::bm1684x::operandsOf(g);
  ASSERT_TRUE(ops.isOk()) << ops.message();
  ASSERT_EQ(ops->results.size(), 1u);
  ASSERT_EQ(ops->operands.size(), 2u);
  EXPECT_EQ(ops->results[0].name() + " " + ops->results[0].typeText(),
            "%R1.8192.L5 memref<2x70x1x256xi8, strides: [512, 256, 256, 1]>");
  EXPECT_EQ(ops->operands[0].name() + " " + ops->operands[0].typeText(),
            "%R0.L5 memref<1x70x1x256xi8, strides: [512, 256, 256, 1]>");
  EXPECT_EQ(ops->operands[1].name() + " " + ops->operands[1].typeText(),
            "%R0.8192.L5 memref<2x70x1x256xui8, strides: [512, 256, 256, 1]>");
  Command hzd = gather(0, 0, shape, 256, table, index, out, {}, "sg.pe_s_gather_hzd");
  auto hzdOps = memory::bm1684x::operandsOf(hzd);
  ASSERT_TRUE(hzdOps.isOk()) << hzdOps.message();
  EXPECT_EQ(hzdOps->operands[1].typeText(), ops->operands[1].typeText());
  Memories m;
  EXPECT_EQ(sim::bm1684x::execute(m, hzd).message(), "sg.pe_s_gather_hzd is not executed yet");
  EXPECT_EQ(memory::bm1684x::operandsOf(make("sg.pl_gather_d1coor", true, {})).message(),
            "operands of sg.pl_gather_d1coor are not described yet");

  // Refusals, each named.
  Words idx(elements(shape));
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = uint32_t(i % 256);
  index.putWords(m, shape, idx);
  auto refused = [&](Fields extra, uint64_t entries = 256) {
    return sim::bm1684x::execute(m, gather(0, 0, shape, entries, table, index, out, extra)).message();
  };
  EXPECT_EQ(refused({}, 200), "sg.pe_s_gather_d1coor: index 200 at (0, 0, 0, 200) is outside the table's "
                              "opd0_w = 200 entries");
  EXPECT_EQ(refused({{"res0_h", 2}}), "sg.pe_s_gather_d1coor: res0_h = 2 is not modelled (1 only)");
  EXPECT_EQ(refused({{"opd0_h", 3}}), "sg.pe_s_gather_d1coor: opd0_h = 3 is not modelled (1 only)");
  EXPECT_EQ(refused({{"opd1_w", 128}}), "sg.pe_s_gather_d1coor: opd1_w = 128 differs from res0_w = 256: not modelled");
  EXPECT_EQ(refused({{"res0_prec", 3}}), "sg.pe_s_gather_d1coor: result %R1.8192.L5 is i16, the table i8: a gather "
                                         "copies the table's elements (one precision)");
  EXPECT_EQ(refused({{"opd1_prec", 1}}), "sg.pe_s_gather_d1coor: index %R0.8192.L5 is f16: an 8-, 16- or 32-bit "
                                         "integer only");
  EXPECT_EQ(refused({{"res0_prec", 6}, {"opd0_prec", 6}}), "sg.pe_s_gather_d1coor: i4 elements are not modelled");
  EXPECT_EQ(refused({{"opd0_str", 1}}), "opd0_str = 1 is not described (0: the table aligned)");
  EXPECT_EQ(refused({{"opd2_const", 1}, {"opd2_addr", 7}}),
            "sg.pe_s_gather_d1coor: opd2_const = 1, opd3_const = 0: filling out-of-range positions with a constant "
            "is not modelled");
  EXPECT_EQ(refused({{"opd3_const", 1}}), "sg.pe_s_gather_d1coor: opd2_const = 0, opd3_const = 1: filling "
                                          "out-of-range positions with a constant is not modelled");
}
