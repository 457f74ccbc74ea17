// executeTiu against naive reference implementations written out here, on
// random shapes with fixed seeds: lane wrap-around (npu_offset + c > 64), odd
// channel counts, int8 with shift/relu, edge padding, every stride mode.
#include "simulator/semantics/TiuExec.h"

#include "arith/IntArith.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>

using namespace tpu;
using namespace tpu::isa;
using namespace tpu::sim;

namespace {

constexpr uint32_t kLaneBytes = 512 * 1024;
constexpr uint32_t kLanes = 64;
constexpr uint32_t kRegionBytes = 64 * 1024; // each operand gets its own bank

// A dense NCHW tensor in the test's own layout, with its LMEM placement
// computed here independently of LocalTensor.
struct TestTensor {
  Shape4 shape;
  Prec prec = Prec::Int8;
  bool isSigned = true;
  StrideMode mode = StrideMode::Aligned;
  Strides4 explicitStrides;
  uint32_t lane = 0, offset = 0;
  std::vector<double> values; // exact for every integer and fp32 value used

  uint32_t bytes() const { return precBytes(prec); }
  uint32_t addr() const { return lane * kLaneBytes + offset; }
  Strides4 strides() const {
    uint32_t cPerLane = (lane + shape.c + kLanes - 1) / kLanes;
    uint32_t eu = 128 / bytes();
    switch (mode) {
    case StrideMode::Aligned: {
      uint32_t cs = (shape.h * shape.w + eu - 1) / eu * eu;
      return {cPerLane * cs, cs, shape.w, 1};
    }
    case StrideMode::Compact: return {cPerLane * shape.h * shape.w, shape.h * shape.w, shape.w, 1};
    case StrideMode::PerChannel: return {0, 1, 0, 0};
    default: return explicitStrides;
    }
  }
  size_t index(uint32_t n, uint32_t c, uint32_t h, uint32_t w) const {
    return ((size_t(n) * shape.c + c) * shape.h + h) * shape.w + w;
  }
  double at(uint32_t n, uint32_t c, uint32_t h, uint32_t w) const { return values[index(n, c, h, w)]; }
  uint8_t *where(LocalMemory &m, uint32_t n, uint32_t c, uint32_t h, uint32_t w) const {
    Strides4 s = strides();
    uint32_t l = (lane + c) % kLanes, ci = (lane + c) / kLanes;
    return m.lane(l) + offset + (size_t(n) * s.n + size_t(ci) * s.c + size_t(h) * s.h + size_t(w) * s.w) * bytes();
  }
  void put(LocalMemory &m) const {
    for (uint32_t n = 0; n < shape.n; ++n)
      for (uint32_t c = 0; c < shape.c; ++c)
        for (uint32_t h = 0; h < shape.h; ++h)
          for (uint32_t w = 0; w < shape.w; ++w) {
            double v = at(n, c, h, w);
            uint8_t *p = where(m, n, c, h, w);
            if (prec == Prec::Fp32) {
              float f = float(v);
              std::memcpy(p, &f, 4);
            } else {
              int64_t i = int64_t(v);
              std::memcpy(p, &i, bytes());
            }
          }
  }
  double get(const LocalMemory &m, uint32_t n, uint32_t c, uint32_t h, uint32_t w) const {
    const uint8_t *p = const_cast<TestTensor *>(this)->where(const_cast<LocalMemory &>(m), n, c, h, w);
    if (prec == Prec::Fp32) {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    uint64_t u = 0;
    std::memcpy(&u, p, bytes());
    unsigned bits = 8 * bytes();
    return double(isSigned ? signExtend(u, bits) : int64_t(u));
  }
  LocalOperand operand() const {
    LocalOperand o;
    o.addr = addr();
    o.shape = shape;
    o.prec = prec;
    o.isSigned = isSigned;
    o.strideMode = mode;
    o.stride = explicitStrides;
    return o;
  }
};

struct Fixture {
  HwConfig cfg;
  LocalMemory mem{cfg};
  std::mt19937_64 rng;
  bool fullInt32 = false; // int32 operands over the whole range (sums overflow int32)
  explicit Fixture(uint64_t seed) : rng(seed) {}

  int64_t randInt(int64_t lo, int64_t hi) { return lo + int64_t(rng() % uint64_t(hi - lo + 1)); }
  bool coin() { return rng() & 1; }
  double randValue(Prec p, bool isSigned) {
    if (p == Prec::Fp32) return double(float(randInt(-2000, 2000)) / 64.0f);
    IntRange r = intRange(p, isSigned);
    if (p == Prec::Int32 && !fullInt32) r = isSigned ? IntRange{-100000, 100000} : IntRange{0, 200000};
    return double(randInt(r.lo, r.hi));
  }
  // Places a tensor in bank `region` of a random lane, with a random mode.
  TestTensor tensor(Shape4 shape, Prec p, bool isSigned, unsigned region, bool fill = true) {
    TestTensor t;
    t.shape = shape;
    t.prec = p;
    t.isSigned = isSigned;
    t.lane = uint32_t(randInt(0, kLanes - 1));
    t.offset = region * kRegionBytes + uint32_t(randInt(0, 15)) * 4;
    unsigned m = unsigned(rng() % 3);
    t.mode = m == 0 ? StrideMode::Aligned : m == 1 ? StrideMode::Compact : StrideMode::Explicit;
    if (t.mode == StrideMode::Explicit) { // padded rows and channels
      uint32_t ws = 1, hs = shape.w + uint32_t(randInt(0, 2)), cs = hs * shape.h + uint32_t(randInt(0, 5));
      t.explicitStrides = {cs * ((t.lane + shape.c + kLanes - 1) / kLanes), cs, hs, ws};
    }
    if (fill) {
      t.values.resize(shape.count());
      for (double &v : t.values) v = randValue(p, isSigned);
    } else {
      t.values.assign(shape.count(), 0.0);
    }
    return t;
  }
  TestTensor perChannel(uint32_t c, Prec p, bool isSigned, unsigned region) {
    TestTensor t = tensor({1, c, 1, 1}, p, isSigned, region);
    t.mode = StrideMode::PerChannel;
    return t;
  }
  void checkOutput(const TestTensor &out, const std::vector<double> &expect, const std::string &what) {
    size_t bad = 0;
    for (uint32_t n = 0; n < out.shape.n; ++n)
      for (uint32_t c = 0; c < out.shape.c; ++c)
        for (uint32_t h = 0; h < out.shape.h; ++h)
          for (uint32_t w = 0; w < out.shape.w; ++w) {
            double got = out.get(mem, n, c, h, w), want = expect[out.index(n, c, h, w)];
            if (!(got == want || (std::isnan(got) && std::isnan(want))) && bad++ < 5)
              ADD_FAILURE() << what << " at (" << n << "," << c << "," << h << "," << w << "): got " << got
                            << " want " << want;
          }
    EXPECT_EQ(bad, 0u) << what;
  }
  void run(const TiuOp &op) {
    TiuCommand cmd;
    cmd.op = op;
    // The command must survive encoding to 128 bytes and back.
    auto bytes = encodeBytes(cmd);
    ASSERT_TRUE(bytes.isOk()) << bytes.message();
    auto back = decodeTiu(bytes->data());
    ASSERT_TRUE(back.isOk()) << back.message();
    Status st = executeTiu(cfg, mem, *back);
    ASSERT_TRUE(st.isOk()) << st.message();
  }
};

// Final write-back the reference shares with the chip (IntArith is tested on its own).
double writeBack(double acc, const TestTensor &out, unsigned rshift, bool relu) {
  if (out.prec == Prec::Fp32) {
    float f = float(acc);
    return relu && f < 0 ? 0.0 : f;
  }
  return double(requantize(int64_t(acc), rshift, relu, out.prec, out.isSigned));
}

// ---- conv / depthwise / pooling -------------------------------------------------

struct WindowCase {
  uint32_t kh, kw, padT, padB, padL, padR, sh, sw, dh, dw, insH, insW;
  bool rotate;
  uint32_t outH(uint32_t ih) const { return uint32_t(((ih - 1) * (insH + 1) + 1 + padT + padB - ((kh - 1) * dh + 1)) / sh + 1); }
  uint32_t outW(uint32_t iw) const { return uint32_t(((iw - 1) * (insW + 1) + 1 + padL + padR - ((kw - 1) * dw + 1)) / sw + 1); }
  bool fits(uint32_t ih, uint32_t iw) const {
    return (ih - 1) * (insH + 1) + 1 + padT + padB >= (kh - 1) * dh + 1 &&
           (iw - 1) * (insW + 1) + 1 + padL + padR >= (kw - 1) * dw + 1;
  }
  // Input value under kernel tap (ky, kx) of output (oy, ox); nullopt in padding,
  // 0 on an inserted zero.
  std::optional<double> tap(const TestTensor &in, uint32_t n, uint32_t c, uint32_t oy, uint32_t ox, uint32_t ky,
                            uint32_t kx) const {
    int64_t y = int64_t(oy) * sh + int64_t(ky) * dh - padT, x = int64_t(ox) * sw + int64_t(kx) * dw - padL;
    int64_t yMax = int64_t(in.shape.h - 1) * (insH + 1), xMax = int64_t(in.shape.w - 1) * (insW + 1);
    if (y < 0 || x < 0 || y > yMax || x > xMax) return std::nullopt;
    if (y % (insH + 1) || x % (insW + 1)) return 0.0;
    return in.at(n, c, uint32_t(y / (insH + 1)), uint32_t(x / (insW + 1)));
  }
};

WindowCase randomWindow(Fixture &f) {
  WindowCase w;
  w.kh = uint32_t(f.randInt(1, 4)), w.kw = uint32_t(f.randInt(1, 4));
  w.padT = uint32_t(f.randInt(0, 3)), w.padB = uint32_t(f.randInt(0, 3));
  w.padL = uint32_t(f.randInt(0, 3)), w.padR = uint32_t(f.randInt(0, 3));
  w.sh = uint32_t(f.randInt(1, 3)), w.sw = uint32_t(f.randInt(1, 3));
  w.dh = uint32_t(f.randInt(1, 2)), w.dw = uint32_t(f.randInt(1, 2));
  w.insH = f.rng() % 4 == 0 ? 1 : 0, w.insW = f.rng() % 4 == 0 ? 1 : 0;
  w.rotate = f.coin();
  return w;
}

template <class S> void setWindow(S &s, const WindowCase &w) {
  s.padTop = w.padT, s.padBottom = w.padB, s.padLeft = w.padL, s.padRight = w.padR;
  s.strideH = w.sh, s.strideW = w.sw, s.kernelInsH = w.dh - 1, s.kernelInsW = w.dw - 1;
  s.inputInsH = w.insH, s.inputInsW = w.insW, s.kernelRotate = w.rotate;
}

bool convCase(Fixture &f, bool fp32, int iter) {
  WindowCase wc = randomWindow(f);
  uint32_t n = uint32_t(f.randInt(1, 2)), ic = uint32_t(f.randInt(1, 9)), oc = uint32_t(f.randInt(1, 70));
  if (iter % 3 == 0) oc = (oc + 3) / 4 * 4; // every channel in blocks of four (the int8 byte-plane path)
  uint32_t ih = uint32_t(f.randInt(1, 9)), iw = uint32_t(f.randInt(1, 9));
  if (!wc.fits(ih, iw)) return false;
  uint32_t oh = wc.outH(ih), ow = wc.outW(iw);
  // int16 inputs or kernels take the int64 accumulation path, int8 ones int32.
  Prec ip = fp32 ? Prec::Fp32 : (iter % 4 == 3 ? Prec::Int16 : Prec::Int8), bp = fp32 ? Prec::Fp32 : Prec::Int16;
  Prec wp = fp32 ? Prec::Fp32 : (iter % 4 == 2 ? Prec::Int16 : Prec::Int8);
  Prec op = fp32 ? Prec::Fp32 : (f.coin() ? Prec::Int8 : Prec::Int16);
  TestTensor in = f.tensor({n, ic, ih, iw}, ip, f.coin(), 0);
  TestTensor wt = f.tensor({ic, oc, wc.kh, wc.kw}, wp, true, 1);
  TestTensor bias = f.perChannel(oc, bp, true, 2);
  TestTensor out = f.tensor({n, oc, oh, ow}, op, f.coin(), 3);
  bool hasBias = f.coin(), relu = f.coin(), resAdd = f.coin();
  unsigned rshift = fp32 ? 0 : unsigned(f.randInt(0, 9));
  for (const TestTensor *t : {&in, &wt, &bias, &out}) t->put(f.mem);

  std::vector<double> expect(out.values.size());
  for (uint32_t b = 0; b < n; ++b)
    for (uint32_t o = 0; o < oc; ++o)
      for (uint32_t y = 0; y < oh; ++y)
        for (uint32_t x = 0; x < ow; ++x) {
          double acc = 0;
          float facc = 0.0f;
          for (uint32_t i = 0; i < ic; ++i)
            for (uint32_t ky = 0; ky < wc.kh; ++ky)
              for (uint32_t kx = 0; kx < wc.kw; ++kx) {
                double v = wc.tap(in, b, i, y, x, ky, kx).value_or(0.0);
                double k = wc.rotate ? wt.at(i, o, wc.kh - 1 - ky, wc.kw - 1 - kx) : wt.at(i, o, ky, kx);
                acc += v * k;
                facc += float(k) * float(v);
              }
          if (fp32) {
            if (hasBias) facc += float(bias.at(0, o, 0, 0));
            if (resAdd) facc += float(out.at(b, o, y, x));
            acc = facc;
          } else {
            if (hasBias) acc += bias.at(0, o, 0, 0);
            if (resAdd) acc += out.at(b, o, y, x);
          }
          expect[out.index(b, o, y, x)] = writeBack(acc, out, rshift, relu);
        }

  Conv conv;
  conv.input = in.operand(), conv.weight = wt.operand(), conv.output = out.operand();
  conv.bias = bias.operand(), conv.hasBias = hasBias;
  setWindow(conv, wc);
  conv.rshift = rshift, conv.relu = relu, conv.resAdd = resAdd;
  f.run(conv);
  f.checkOutput(out, expect, std::string(fp32 ? "fp32" : "int8") + " conv case " + std::to_string(iter));
  return true;
}

// Every int8 conv kernel the host can run (bytes with AVX-512 VNNI, 16-bit
// pairs with AVX2, scalar) against the same reference cases.
TEST(TiuExec, ConvInt8MatchesReference) {
  const HostIsa best = hostIsa();
  for (HostIsa isa : {HostIsa::Scalar, HostIsa::Avx2, HostIsa::Avx512Vnni}) {
    if (isa > best) continue;
    SCOPED_TRACE("host isa level " + std::to_string(int(isa)));
    limitHostIsa(isa);
    Fixture f(101);
    int ran = 0;
    for (int i = 0; i < 120; ++i) ran += convCase(f, false, i);
    EXPECT_GT(ran, 80);
  }
  limitHostIsa(HostIsa::Avx512Vnni);
}

TEST(TiuExec, ConvFp32MatchesReference) {
  Fixture f(202);
  int ran = 0;
  for (int i = 0; i < 80; ++i) ran += convCase(f, true, i);
  EXPECT_GT(ran, 50);
}

bool pordCase(Fixture &f, Pord::Kind kind, bool fp32, int iter) {
  WindowCase wc = randomWindow(f);
  if (kind != Pord::Kind::Depthwise) wc.rotate = false;
  uint32_t n = uint32_t(f.randInt(1, 2)), c = uint32_t(f.randInt(1, 75));
  uint32_t ih = uint32_t(f.randInt(1, 10)), iw = uint32_t(f.randInt(1, 10));
  if (!wc.fits(ih, iw)) return false;
  uint32_t oh = wc.outH(ih), ow = wc.outW(iw);
  Prec ip = fp32 ? Prec::Fp32 : Prec::Int8;
  TestTensor in = f.tensor({n, c, ih, iw}, ip, f.coin(), 0);
  TestTensor kern = f.tensor({1, c, wc.kh, wc.kw}, ip, true, 1);
  TestTensor bias = f.perChannel(c, fp32 ? Prec::Fp32 : Prec::Int16, true, 2);
  TestTensor out = f.tensor({n, c, oh, ow}, fp32 ? Prec::Fp32 : Prec::Int8, f.coin(), 3);
  bool hasBias = kind == Pord::Kind::Depthwise && f.coin(), relu = f.coin();
  unsigned rshift = fp32 || kind == Pord::Kind::MaxPool ? 0 : unsigned(f.randInt(0, 8));
  double avgConst = fp32 ? 1.0 / double(wc.kh * wc.kw) : double(f.randInt(1, 100));
  for (const TestTensor *t : {&in, &kern, &bias, &out}) t->put(f.mem);

  std::vector<double> expect(out.values.size());
  for (uint32_t b = 0; b < n; ++b)
    for (uint32_t ch = 0; ch < c; ++ch)
      for (uint32_t y = 0; y < oh; ++y)
        for (uint32_t x = 0; x < ow; ++x) {
          double acc = 0;
          float facc = 0.0f;
          double mx = -1e300;
          bool any = false;
          for (uint32_t ky = 0; ky < wc.kh; ++ky)
            for (uint32_t kx = 0; kx < wc.kw; ++kx) {
              auto v = wc.tap(in, b, ch, y, x, ky, kx);
              if (v) mx = std::max(mx, *v), any = true;
              double k = kind == Pord::Kind::AvgPool ? double(float(avgConst))
                         : wc.rotate                  ? kern.at(0, ch, wc.kh - 1 - ky, wc.kw - 1 - kx)
                                                      : kern.at(0, ch, ky, kx);
              acc += v.value_or(0.0) * k;
              facc += float(k) * float(v.value_or(0.0));
            }
          double r;
          if (kind == Pord::Kind::MaxPool) {
            r = any ? mx : (fp32 ? double(std::numeric_limits<float>::lowest()) : -1e18);
          } else if (fp32) {
            if (hasBias) facc += float(bias.at(0, ch, 0, 0));
            r = facc;
          } else {
            r = acc + (hasBias ? bias.at(0, ch, 0, 0) : 0.0);
          }
          expect[out.index(b, ch, y, x)] = writeBack(r, out, rshift, relu);
        }

  Pord p;
  p.eu = kind == Pord::Kind::MaxPool ? EuOp::Max : EuOp::Mac;
  p.input = in.operand(), p.kernel = kern.operand(), p.output = out.operand();
  if (kind == Pord::Kind::AvgPool) {
    p.kernel.isConst = true;
    p.kernel.constValue = fp32 ? floatBits(float(avgConst)) : uint32_t(avgConst);
  }
  p.bias = bias.operand(), p.hasBias = hasBias;
  setWindow(p, wc);
  p.rshift = rshift, p.relu = relu;
  EXPECT_EQ(p.kind(), kind);
  f.run(p);
  f.checkOutput(out, expect, "pord case " + std::to_string(iter));
  return true;
}

void pordCases(uint64_t seed, Pord::Kind kind) {
  Fixture f(seed);
  int ran = 0;
  for (int i = 0; i < 80; ++i) ran += pordCase(f, kind, i % 3 == 0, i);
  EXPECT_GT(ran, 50);
}

TEST(TiuExec, DepthwiseMatchesReference) {
  pordCases(303, Pord::Kind::Depthwise);
}

TEST(TiuExec, AvgPoolMatchesReference) {
  pordCases(404, Pord::Kind::AvgPool);
}

TEST(TiuExec, MaxPoolMatchesReference) {
  pordCases(505, Pord::Kind::MaxPool);
}

// ---- matrix products -------------------------------------------------------------

void matMulCase(Fixture &f, bool fp32, int iter) {
  uint32_t M = uint32_t(f.randInt(1, 12)), K = uint32_t(f.randInt(1, 40));
  uint32_t ow = uint32_t(f.randInt(1, 8)), oc = uint32_t(f.randInt(1, 70)), N = oc * ow;
  bool trans = f.coin();
  uint32_t lw = uint32_t(f.randInt(1, 8));
  uint32_t lrows = trans ? K : M, lcols = trans ? M : K;
  uint32_t lc = (lcols + lw - 1) / lw;
  Prec ip = fp32 ? Prec::Fp32 : Prec::Int8;
  TestTensor left = f.tensor({lrows, lc, 1, lw}, ip, f.coin(), 0);
  TestTensor right = f.tensor({K, oc, 1, ow}, ip, f.coin(), 1);
  TestTensor bias = f.tensor({1, oc, 1, ow}, fp32 ? Prec::Fp32 : Prec::Int16, true, 2);
  TestTensor out = f.tensor({M, oc, 1, ow}, fp32 ? Prec::Fp32 : (f.coin() ? Prec::Int8 : Prec::Int32), true, 3);
  bool hasBias = f.coin(), relu = f.coin(), mac = f.coin();
  unsigned rshift = fp32 ? 0 : unsigned(f.randInt(0, 8));
  for (const TestTensor *t : {&left, &right, &bias, &out}) t->put(f.mem);
  auto L = [&](uint32_t m, uint32_t k) {
    return trans ? left.at(k, m / lw, 0, m % lw) : left.at(m, k / lw, 0, k % lw);
  };
  std::vector<double> expect(out.values.size());
  for (uint32_t m = 0; m < M; ++m)
    for (uint32_t j = 0; j < N; ++j) {
      double acc = 0;
      float facc = 0.0f;
      for (uint32_t k = 0; k < K; ++k) {
        acc += L(m, k) * right.at(k, j / ow, 0, j % ow);
        facc += float(L(m, k)) * float(right.at(k, j / ow, 0, j % ow));
      }
      double b = hasBias ? bias.at(0, j / ow, 0, j % ow) : 0.0, old = mac ? out.at(m, j / ow, 0, j % ow) : 0.0;
      if (fp32) {
        if (hasBias) facc += float(b);
        if (mac) facc += float(old);
        acc = facc;
      } else {
        acc += b + old;
      }
      expect[out.index(m, j / ow, 0, j % ow)] = writeBack(acc, out, rshift, relu);
    }
  MatMul mm;
  mm.eu = mac ? EuOp::Mac : EuOp::Mul;
  mm.left = left.operand(), mm.right = right.operand(), mm.bias = bias.operand(), mm.output = out.operand();
  mm.hasBias = hasBias, mm.leftTranspose = trans, mm.rshift = rshift, mm.relu = relu;
  f.run(mm);
  f.checkOutput(out, expect, "mm case " + std::to_string(iter));
}

TEST(TiuExec, MatMulMatchesReference) {
  Fixture f(606);
  for (int i = 0; i < 100; ++i) matMulCase(f, i % 2 == 0, i);
}

TEST(TiuExec, MatMul2MatchesReference) {
  Fixture f(707);
  for (int iter = 0; iter < 60; ++iter) {
    bool fp32 = iter % 2;
    uint32_t B = uint32_t(f.randInt(1, 3)), M = uint32_t(f.randInt(1, 70)), K = uint32_t(f.randInt(1, 20)),
             N = uint32_t(f.randInt(1, 20));
    Prec ip = fp32 ? Prec::Fp32 : Prec::Int8;
    TestTensor left = f.tensor({B, M, 1, K}, ip, f.coin(), 0);
    TestTensor right = f.tensor({B, K, 1, N}, ip, f.coin(), 1);
    TestTensor out = f.tensor({B, M, 1, N}, fp32 ? Prec::Fp32 : Prec::Int16, true, 2);
    bool relu = f.coin(), resAdd = f.coin();
    unsigned rshift = fp32 ? 0 : unsigned(f.randInt(0, 6));
    for (const TestTensor *t : {&left, &right, &out}) t->put(f.mem);
    std::vector<double> expect(out.values.size());
    for (uint32_t b = 0; b < B; ++b)
      for (uint32_t m = 0; m < M; ++m)
        for (uint32_t j = 0; j < N; ++j) {
          double acc = 0;
          float facc = 0.0f;
          for (uint32_t k = 0; k < K; ++k) {
            acc += left.at(b, m, 0, k) * right.at(b, k, 0, j);
            facc += float(left.at(b, m, 0, k)) * float(right.at(b, k, 0, j));
          }
          if (resAdd) acc += out.at(b, m, 0, j), facc += float(out.at(b, m, 0, j));
          expect[out.index(b, m, 0, j)] = writeBack(fp32 ? double(facc) : acc, out, rshift, relu);
        }
    MatMul2 mm;
    mm.left = left.operand(), mm.right = right.operand(), mm.output = out.operand();
    mm.rshift = rshift, mm.relu = relu, mm.resAdd = resAdd;
    f.run(mm);
    f.checkOutput(out, expect, "mm2 case " + std::to_string(iter));
  }
}

// ---- element-wise ----------------------------------------------------------------

// The reference meaning of each eu op (docs/isa.md); c and d are opd2/opd3.
double refIntOp(EuOp e, int64_t a, int64_t b, int64_t c, int64_t d, int64_t old) {
  switch (e) {
  case EuOp::Mul: return double(a * b);
  case EuOp::Mac: return double(a * b + old);
  case EuOp::Add: return double(a + b);
  case EuOp::Sub: return double(a - b);
  case EuOp::Max: return double(std::max(a, b));
  case EuOp::Min: return double(std::min(a, b));
  case EuOp::SelectGt: return double(a > b ? c : d);
  case EuOp::SelectEq: return double(a == b ? c : d);
  case EuOp::AddTree: return double(a + b + c);
  case EuOp::Copy: return double(a);
  case EuOp::SquareSum: return double((a + b) * (a + b));
  case EuOp::SquareDiff: return double((a - b) * (a - b));
  case EuOp::Cmp: return a > b ? 1 : 0;
  case EuOp::Select: return double(a != 0 ? b : c);
  case EuOp::CmpSelect: return double(std::max(a, b));
  case EuOp::Shift: return double(b >= 0 ? a * (int64_t(1) << b) : roundingRightShift(a, unsigned(-b)));
  default: ADD_FAILURE() << "no reference for " << euOpName(e); return 0;
  }
}
float refFloatOp(EuOp e, float a, float b, float c, float d, float old) {
  switch (e) {
  case EuOp::Mul: return a * b;
  case EuOp::Mac: return a * b + old;
  case EuOp::Add: return a + b;
  case EuOp::Sub: return a - b;
  case EuOp::Max: return std::max(a, b);
  case EuOp::Min: return std::min(a, b);
  case EuOp::SelectGt: return a > b ? c : d;
  case EuOp::SelectEq: return a == b ? c : d;
  case EuOp::Divide: return a / b;
  case EuOp::Rsqrt: return 1.0f / std::sqrt(a);
  case EuOp::AddTree: return a + b + c;
  case EuOp::Copy: return a;
  case EuOp::SquareSum: return (a + b) * (a + b);
  case EuOp::SquareDiff: return (a - b) * (a - b);
  case EuOp::Cmp: return a > b ? 1.0f : 0.0f;
  case EuOp::Select: return a != 0.0f ? b : c;
  case EuOp::CmpSelect: return std::max(a, b);
  default: ADD_FAILURE() << "no reference for " << euOpName(e); return 0;
  }
}

void arithCase(Fixture &f, EuOp eu, bool fp32, int iter) {
  Shape4 S{uint32_t(f.randInt(1, 2)), uint32_t(f.randInt(1, 70)), uint32_t(f.randInt(1, 6)), uint32_t(f.randInt(1, 9))};
  Prec ip = fp32 ? Prec::Fp32 : (f.coin() ? Prec::Int8 : Prec::Int16);
  Prec rp = fp32 ? Prec::Fp32 : (f.coin() ? Prec::Int8 : Prec::Int32);
  TestTensor a = f.tensor(S, ip, f.coin(), 0), b = f.tensor(S, ip, f.coin(), 1);
  TestTensor c = f.tensor(S, ip, f.coin(), 2), d = f.tensor(S, ip, c.isSigned, 3);
  TestTensor out = f.tensor(S, rp, f.coin(), 4), out1 = out;
  out1.offset = 5 * kRegionBytes;
  d.prec = c.prec, d.mode = c.mode, d.explicitStrides = c.explicitStrides, d.lane = c.lane; // opd3 shares opd2's format
  if (eu == EuOp::Shift) {
    b.isSigned = true;
    for (double &v : b.values) v = double(f.randInt(-8, 4));
    b.prec = Prec::Int8;
  }
  if (eu == EuOp::Divide || eu == EuOp::Rsqrt)
    for (double &v : (eu == EuOp::Divide ? b : a).values) v = std::abs(v) + 0.5;
  if (eu == EuOp::SelectEq) // make equality happen
    b.isSigned = a.isSigned;
  if (eu == EuOp::SelectEq)
    for (size_t i = 0; i < a.values.size(); i += 2) b.values[i] = a.values[i];
  bool constB = eu != EuOp::Shift && f.rng() % 4 == 0;
  double constVal = constB ? b.values[0] : 0.0;
  if (constB) std::fill(b.values.begin(), b.values.end(), constVal);
  bool relu = f.coin();
  unsigned rshift = fp32 ? 0 : unsigned(f.randInt(0, 4));
  for (const TestTensor *t : {&a, &b, &c, &d, &out}) t->put(f.mem);

  std::vector<double> expect(out.values.size()), expect1(out.values.size());
  for (size_t i = 0; i < expect.size(); ++i) {
    double r;
    if (fp32) {
      float av = float(a.values[i]), bv = float(b.values[i]), cv = float(c.values[i]), dv = float(d.values[i]);
      r = refFloatOp(eu, av, bv, cv, dv, float(out.values[i]));
      expect1[i] = av > bv ? cv : dv;
    } else {
      auto av = int64_t(a.values[i]), bv = int64_t(b.values[i]), cv = int64_t(c.values[i]), dv = int64_t(d.values[i]);
      r = refIntOp(eu, av, bv, cv, dv, int64_t(out.values[i]));
      expect1[i] = double(saturate(av > bv ? cv : dv, out.prec, out.isSigned));
    }
    expect[i] = writeBack(r, out, rshift, relu);
  }
  Arith ar;
  ar.eu = eu;
  ar.res0 = out.operand(), ar.opd0 = a.operand(), ar.opd1 = b.operand(), ar.opd2 = c.operand();
  if (constB) {
    ar.opd1.isConst = true;
    ar.opd1.constValue = fp32 ? floatBits(float(constVal)) : uint32_t(int64_t(constVal));
  }
  ar.opd3Addr = d.addr();
  ar.res1Addr = out1.addr();
  ar.relu = relu, ar.rshift = rshift;
  f.run(ar);
  std::string what = std::string("ar.") + std::string(euOpName(eu)) + (fp32 ? " fp32" : " int") + " case " +
                     std::to_string(iter);
  f.checkOutput(out, expect, what);
  if (eu == EuOp::CmpSelect) f.checkOutput(out1, expect1, what + " res1");
}

TEST(TiuExec, ArithIntegerOpsMatchReference) {
  Fixture f(808);
  const EuOp ops[] = {EuOp::Mul, EuOp::Mac, EuOp::Add, EuOp::Sub, EuOp::Max, EuOp::Min, EuOp::Shift,
                      EuOp::SelectGt, EuOp::SelectEq, EuOp::AddTree, EuOp::Copy, EuOp::SquareSum,
                      EuOp::SquareDiff, EuOp::Cmp, EuOp::Select, EuOp::CmpSelect};
  int i = 0;
  for (EuOp e : ops)
    for (int k = 0; k < 6; ++k) arithCase(f, e, false, i++);
}

// int32 operands anywhere in their range: the 32-bit fast paths must see the
// overflow and fall back to 64 bits (results saturate like the reference).
TEST(TiuExec, ArithIntegerOpsOnFullRangeInt32MatchReference) {
  Fixture f(809);
  f.fullInt32 = true;
  const EuOp ops[] = {EuOp::Mul, EuOp::Mac, EuOp::Add, EuOp::Sub, EuOp::Max, EuOp::Min, EuOp::Copy};
  int i = 0;
  for (EuOp e : ops)
    for (int k = 0; k < 12; ++k) arithCase(f, e, false, i++);
}

TEST(TiuExec, ArithFp32OpsMatchReference) {
  Fixture f(909);
  const EuOp ops[] = {EuOp::Mul, EuOp::Mac, EuOp::Add, EuOp::Sub, EuOp::Max, EuOp::Min, EuOp::SelectGt,
                      EuOp::SelectEq, EuOp::Divide, EuOp::Rsqrt, EuOp::AddTree, EuOp::Copy,
                      EuOp::SquareSum, EuOp::SquareDiff, EuOp::Cmp, EuOp::Select, EuOp::CmpSelect};
  int i = 0;
  for (EuOp e : ops)
    for (int k = 0; k < 5; ++k) arithCase(f, e, true, i++);
}


// Remaining integer/fp32 eu ops whose reference is not a plain formula of (a, b).
TEST(TiuExec, ArithBitwiseConversionAndNormalizeOps) {
  Fixture f(1001);
  for (int iter = 0; iter < 30; ++iter) {
    Shape4 S{1, uint32_t(f.randInt(1, 70)), uint32_t(f.randInt(1, 4)), uint32_t(f.randInt(1, 9))};
    // and/or/xor wrap to the result width.
    TestTensor a = f.tensor(S, Prec::Int8, true, 0), b = f.tensor(S, Prec::Int8, false, 1);
    TestTensor out = f.tensor(S, Prec::Int8, false, 2);
    a.put(f.mem), b.put(f.mem);
    for (EuOp e : {EuOp::And, EuOp::Or, EuOp::Xor}) {
      Arith ar;
      ar.eu = e, ar.res0 = out.operand(), ar.opd0 = a.operand(), ar.opd1 = b.operand();
      f.run(ar);
      std::vector<double> expect(out.values.size());
      for (size_t i = 0; i < expect.size(); ++i) {
        int64_t x = int64_t(a.values[i]), y = int64_t(b.values[i]);
        int64_t r = e == EuOp::And ? (x & y) : e == EuOp::Or ? (x | y) : (x ^ y);
        expect[i] = double(r & 0xff);
      }
      f.checkOutput(out, expect, std::string("ar.") + std::string(euOpName(e)));
    }
    // Logical shift of a's raw 8 bits.
    TestTensor sh = f.tensor(S, Prec::Int8, true, 3);
    for (double &v : sh.values) v = double(f.randInt(-7, 7));
    sh.put(f.mem);
    Arith ls;
    ls.eu = EuOp::Shift, ls.logicalShift = true;
    ls.res0 = out.operand(), ls.opd0 = a.operand(), ls.opd1 = sh.operand();
    f.run(ls);
    std::vector<double> expect(out.values.size());
    for (size_t i = 0; i < expect.size(); ++i) {
      uint64_t bits = uint64_t(int64_t(a.values[i])) & 0xff;
      int64_t s = int64_t(sh.values[i]);
      expect[i] = double((s >= 0 ? bits << s : bits >> -s) & 0xff);
    }
    f.checkOutput(out, expect, "ar.shift logical");
    // int_normalize: redundant sign bits of an int16.
    TestTensor i16 = f.tensor(S, Prec::Int16, true, 4);
    i16.put(f.mem);
    TestTensor o16 = f.tensor(S, Prec::Int16, true, 5);
    Arith nz;
    nz.eu = EuOp::IntNormalize, nz.res0 = o16.operand(), nz.opd0 = i16.operand();
    f.run(nz);
    for (size_t i = 0; i < expect.size(); ++i) {
      int64_t v = int64_t(i16.values[i]);
      int r = 0;
      while (r < 15 && v * (int64_t(1) << (r + 1)) >= -32768 && v * (int64_t(1) << (r + 1)) <= 32767) ++r;
      expect[i] = r;
    }
    f.checkOutput(o16, expect, "ar.int_normalize");
  }
}

TEST(TiuExec, Fp32ConversionsTaylorAndNormalize) {
  Fixture f(1102);
  for (int iter = 0; iter < 20; ++iter) {
    Shape4 S{uint32_t(f.randInt(1, 2)), uint32_t(f.randInt(1, 70)), uint32_t(f.randInt(1, 4)),
             uint32_t(f.randInt(1, 9))};
    TestTensor x = f.tensor(S, Prec::Fp32, true, 0);
    for (double &v : x.values) v = double(float(f.randInt(-4000, 4000)) / 16.0f); // many .5 ties
    x.put(f.mem);
    TestTensor out = f.tensor(S, Prec::Int8, f.coin(), 1);
    Arith cvt;
    cvt.eu = EuOp::Fp32ToInt, cvt.res0 = out.operand(), cvt.opd0 = x.operand();
    f.run(cvt);
    std::vector<double> expect(out.values.size());
    for (size_t i = 0; i < expect.size(); ++i) {
      double r = std::nearbyint(x.values[i]); // ties to even
      IntRange rg = intRange(Prec::Int8, out.isSigned);
      expect[i] = std::clamp(r, double(rg.lo), double(rg.hi));
    }
    f.checkOutput(out, expect, "ar.fp32_to_int");

    // int8 -> fp32 copy is exact.
    TestTensor q = f.tensor(S, Prec::Int8, true, 2);
    q.put(f.mem);
    TestTensor fo = f.tensor(S, Prec::Fp32, true, 3);
    Arith cp;
    cp.eu = EuOp::Copy, cp.res0 = fo.operand(), cp.opd0 = q.operand();
    f.run(cp);
    f.checkOutput(fo, q.values, "ar.copy int8->fp32");

    // fp32_normalize: floor(log2|a|) as an integer.
    TestTensor e = f.tensor(S, Prec::Int16, true, 4);
    Arith nz;
    nz.eu = EuOp::Fp32Normalize, nz.res0 = e.operand(), nz.opd0 = x.operand();
    f.run(nz);
    for (size_t i = 0; i < expect.size(); ++i)
      expect[i] = x.values[i] == 0 ? 0 : std::floor(std::log2(std::abs(x.values[i])));
    f.checkOutput(e, expect, "ar.fp32_normalize");

    // taylor: per-channel coefficient table, Horner from the highest term.
    uint32_t terms = uint32_t(f.randInt(1, 6));
    TestTensor coef = f.tensor({1, S.c, 1, terms}, Prec::Fp32, true, 5);
    for (uint32_t c = 0; c < S.c; ++c)
      for (uint32_t t = 0; t < terms; ++t) coef.values[coef.index(0, c, 0, t)] = 1.0 / double(1 + t);
    coef.put(f.mem);
    TestTensor small = f.tensor(S, Prec::Fp32, true, 6);
    small.put(f.mem);
    TestTensor fo2 = f.tensor(S, Prec::Fp32, true, 7);
    Arith ty;
    ty.eu = EuOp::Taylor, ty.res0 = fo2.operand(), ty.opd0 = small.operand(), ty.opd1 = coef.operand();
    f.run(ty);
    for (uint32_t n = 0; n < S.n; ++n)
      for (uint32_t c = 0; c < S.c; ++c)
        for (uint32_t h = 0; h < S.h; ++h)
          for (uint32_t w = 0; w < S.w; ++w) {
            float xv = float(small.at(n, c, h, w)), r = 0.0f;
            for (uint32_t t = terms; t-- > 0;) r = r * xv + float(coef.at(0, c, 0, t));
            expect[fo2.index(n, c, h, w)] = r;
          }
    f.checkOutput(fo2, expect, "ar.taylor");
  }
}

TEST(TiuExec, MdClassesMatchReference) {
  Fixture f(1203);
  for (int iter = 0; iter < 30; ++iter) {
    bool fp32 = iter % 2;
    Prec p = fp32 ? Prec::Fp32 : Prec::Int8;
    Shape4 S{uint32_t(f.randInt(1, 2)), uint32_t(f.randInt(1, 70)), uint32_t(f.randInt(1, 6)),
             uint32_t(f.randInt(1, 9))};
    TestTensor a = f.tensor(S, p, true, 0);
    TestTensor scale = f.perChannel(S.c, p, true, 1), shift = f.perChannel(S.c, fp32 ? p : Prec::Int16, true, 2);
    TestTensor out = f.tensor(S, fp32 ? p : Prec::Int16, true, 3);
    unsigned rshift = fp32 ? 0 : unsigned(f.randInt(0, 5));
    bool relu = f.coin();
    for (const TestTensor *t : {&a, &scale, &shift}) t->put(f.mem);
    if (!fp32) shift.prec = Prec::Int16;

    // md_linear mac: per-channel scale and bias (batch norm).
    MdLinear lin;
    lin.res0 = out.operand(), lin.opd0 = a.operand(), lin.opd1 = scale.operand(), lin.opd2 = shift.operand();
    lin.opd1.strideMode = StrideMode::PerChannel, lin.opd1.shape = S; // opd1 is addressed with res0's shape
    lin.rshift = rshift, lin.relu = relu;
    if (!fp32) {
      // opd1 and opd2 must share the integer domain; int8 * int8 + int16.
      f.run(lin);
      std::vector<double> expect(out.values.size());
      for (uint32_t n = 0; n < S.n; ++n)
        for (uint32_t c = 0; c < S.c; ++c)
          for (uint32_t h = 0; h < S.h; ++h)
            for (uint32_t w = 0; w < S.w; ++w)
              expect[out.index(n, c, h, w)] =
                  writeBack(a.at(n, c, h, w) * scale.at(0, c, 0, 0) + shift.at(0, c, 0, 0), out, rshift, relu);
      f.checkOutput(out, expect, "md_linear.mac");
    } else {
      f.run(lin);
      std::vector<double> expect(out.values.size());
      for (uint32_t n = 0; n < S.n; ++n)
        for (uint32_t c = 0; c < S.c; ++c)
          for (uint32_t h = 0; h < S.h; ++h)
            for (uint32_t w = 0; w < S.w; ++w)
              expect[out.index(n, c, h, w)] = writeBack(
                  float(a.at(n, c, h, w)) * float(scale.at(0, c, 0, 0)) + float(shift.at(0, c, 0, 0)), out, 0, relu);
      f.checkOutput(out, expect, "md_linear.mac fp32");
    }

    // md_scalar: constant opd1.
    MdScalar sc;
    sc.eu = EuOp::Sub;
    sc.res0 = out.operand(), sc.opd0 = a.operand();
    sc.opd1.isConst = true, sc.opd1.prec = p;
    double k = fp32 ? 1.75 : double(f.randInt(-100, 100));
    sc.opd1.constValue = fp32 ? floatBits(float(k)) : uint32_t(int32_t(k));
    f.run(sc);
    std::vector<double> expect(out.values.size());
    for (size_t i = 0; i < expect.size(); ++i)
      expect[i] = fp32 ? double(float(a.values[i]) - float(k)) : writeBack(a.values[i] - k, out, 0, false);
    f.checkOutput(out, expect, "md_scalar.sub");

    // md_sum over w, over h and w.
    for (bool both : {false, true}) {
      Shape4 R{S.n, S.c, both ? 1u : S.h, 1};
      TestTensor sum = f.tensor(R, fp32 ? Prec::Fp32 : Prec::Int32, true, 4);
      MdSum ms;
      ms.output = sum.operand(), ms.input = a.operand(), ms.rshift = rshift, ms.relu = relu;
      f.run(ms);
      std::vector<double> want(sum.values.size());
      for (uint32_t n = 0; n < R.n; ++n)
        for (uint32_t c = 0; c < R.c; ++c)
          for (uint32_t oh = 0; oh < R.h; ++oh) {
            double acc = 0;
            float facc = 0.0f;
            for (uint32_t h = both ? 0 : oh; h < (both ? S.h : oh + 1); ++h)
              for (uint32_t w = 0; w < S.w; ++w) acc += a.at(n, c, h, w), facc += float(a.at(n, c, h, w));
            want[sum.index(n, c, oh, 0)] = writeBack(fp32 ? double(facc) : acc, sum, rshift, relu);
          }
      f.checkOutput(sum, want, both ? "md_sum hw" : "md_sum w");
    }

    // md_cmp cmp_select: one argmax step with index constants.
    TestTensor b = f.tensor(S, p, true, 5);
    b.put(f.mem);
    TestTensor mx = f.tensor(S, p, true, 6), idx = mx;
    idx.offset = 7 * kRegionBytes;
    MdCmp cmp;
    cmp.eu = EuOp::CmpSelect;
    cmp.res0 = mx.operand(), cmp.opd0 = a.operand(), cmp.opd1 = b.operand();
    cmp.opd2.isConst = true, cmp.opd2.prec = p, cmp.opd2.constValue = fp32 ? floatBits(1.0f) : 1;
    cmp.opd3Const = true, cmp.opd3Addr = fp32 ? floatBits(2.0f) : 2;
    cmp.res1Addr = idx.addr();
    f.run(cmp);
    std::vector<double> wantMax(mx.values.size()), wantIdx(mx.values.size());
    for (size_t i = 0; i < wantMax.size(); ++i) {
      wantMax[i] = std::max(a.values[i], b.values[i]);
      wantIdx[i] = a.values[i] > b.values[i] ? 1 : 2;
    }
    f.checkOutput(mx, wantMax, "md_cmp.cmp_select res0");
    f.checkOutput(idx, wantIdx, "md_cmp.cmp_select res1");
  }
}

TEST(TiuExec, VecCorrLutAndLma) {
  Fixture f(1304);
  for (int iter = 0; iter < 20; ++iter) {
    // vc: outer product.
    Shape4 S{1, uint32_t(f.randInt(1, 70)), 1, uint32_t(f.randInt(1, 20))};
    TestTensor col = f.tensor({1, S.c, 1, 1}, Prec::Int8, true, 0), row = f.tensor({1, 1, 1, S.w}, Prec::Int8, true, 1);
    TestTensor out = f.tensor(S, Prec::Int16, true, 2);
    col.put(f.mem), row.put(f.mem);
    VecCorr vc;
    vc.eu = EuOp::Mul, vc.res0 = out.operand(), vc.opd0 = col.operand(), vc.opd1 = row.operand();
    f.run(vc);
    std::vector<double> expect(out.values.size());
    for (uint32_t c = 0; c < S.c; ++c)
      for (uint32_t w = 0; w < S.w; ++w) expect[out.index(0, c, 0, w)] = col.at(0, c, 0, 0) * row.at(0, 0, 0, w);
    f.checkOutput(out, expect, "vc.mul");

    // lut: int8 indices, a 256-entry table per channel.
    Shape4 L{uint32_t(f.randInt(1, 2)), uint32_t(f.randInt(1, 70)), uint32_t(f.randInt(1, 5)), uint32_t(f.randInt(1, 9))};
    TestTensor index = f.tensor(L, Prec::Int8, f.coin(), 3);
    TestTensor table = f.tensor({1, L.c, 1, 256}, Prec::Int8, true, 4);
    TestTensor lo = f.tensor(L, Prec::Int8, true, 5);
    index.put(f.mem), table.put(f.mem);
    Lut lut;
    lut.output = lo.operand(), lut.index = index.operand(), lut.table = table.operand();
    f.run(lut);
    std::vector<double> want(lo.values.size());
    for (uint32_t n = 0; n < L.n; ++n)
      for (uint32_t c = 0; c < L.c; ++c)
        for (uint32_t h = 0; h < L.h; ++h)
          for (uint32_t w = 0; w < L.w; ++w)
            want[lo.index(n, c, h, w)] = table.at(0, c, 0, uint32_t(int64_t(index.at(n, c, h, w)) & 0xff));
    f.checkOutput(lo, want, "lut");

    // lma: reshape (n, c, h, w) -> (1, n*c, h*w, 1)-like with conversion int8 -> int16.
    TestTensor src = f.tensor(L, Prec::Int8, true, 6);
    src.put(f.mem);
    TestTensor dst = f.tensor({1, L.n * L.c, L.h * L.w, 1}, Prec::Int16, true, 7);
    Lma lma;
    lma.output = dst.operand(), lma.input = src.operand();
    f.run(lma);
    f.checkOutput(dst, src.values, "lma");
  }
}

TEST(TiuExec, MdSfuRunsTheArithOps) {
  Fixture f(1708);
  for (int iter = 0; iter < 10; ++iter) {
    Shape4 S{1, uint32_t(f.randInt(1, 70)), uint32_t(f.randInt(1, 4)), uint32_t(f.randInt(1, 9))};
    TestTensor x = f.tensor(S, Prec::Fp32, true, 0);
    for (double &v : x.values) v = std::abs(v) + 0.25;
    x.put(f.mem);
    TestTensor out = f.tensor(S, Prec::Fp32, true, 1);
    MdSfu sfu;
    sfu.eu = EuOp::Rsqrt, sfu.res0 = out.operand(), sfu.opd0 = x.operand();
    f.run(sfu);
    std::vector<double> expect(out.values.size());
    for (size_t i = 0; i < expect.size(); ++i) expect[i] = 1.0f / std::sqrt(float(x.values[i]));
    f.checkOutput(out, expect, "md_sfu.rsqrt");
  }
}

// Every error names the field and leaves local memory untouched.
TEST(TiuExec, BadCommandsAreRejectedNamingTheField) {
  Fixture f(1405);
  TestTensor in = f.tensor({1, 3, 8, 8}, Prec::Int8, true, 0);
  TestTensor wt = f.tensor({3, 4, 3, 3}, Prec::Int8, true, 1);
  TestTensor out = f.tensor({1, 4, 6, 6}, Prec::Int8, true, 2);
  in.put(f.mem), wt.put(f.mem);
  Conv good;
  good.input = in.operand(), good.weight = wt.operand(), good.output = out.operand();
  std::vector<uint8_t> before(f.mem.lane(0), f.mem.lane(0) + f.mem.totalBytes());
  auto expectError = [&](const TiuOp &op, const std::string &fragment) {
    TiuCommand cmd;
    cmd.op = op;
    cmd.cmdIdTpu = 42;
    Status st = executeTiu(f.cfg, f.mem, cmd);
    ASSERT_FALSE(st.isOk()) << "expected: " << fragment;
    EXPECT_NE(st.message().find(fragment), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("cmd_id_tpu 42"), std::string::npos) << st.message();
    EXPECT_TRUE(std::equal(before.begin(), before.end(), f.mem.lane(0))) << "memory changed: " << fragment;
  };
  Conv c = good;
  c.output.shape.h = 5;
  expectError(c, "res0_h = 5 but the window gives 6");
  c = good, c.strideW = 0;
  expectError(c, "res_op_x_str = 0");
  c = good, c.weight.shape.n = 2;
  expectError(c, "opd1_n = 2");
  c = good, c.output.addr = 63 * kLaneBytes + kLaneBytes - 16; // runs off the lane end
  expectError(c, "res0: local tensor");
  c = good, c.input.addr = 1u << 31; // beyond 64 lanes
  expectError(c, "opd0: address 0x80000000 is beyond local memory");
  c = good, c.output.prec = Prec::Int32, c.output.addr += 2;
  expectError(c, "res0: address");
  c = good, c.output.prec = Prec::Fp32;
  expectError(c, "mixes fp32 and integer");
  c = good, c.input.prec = Prec::Int32, c.weight.prec = Prec::Int32;
  expectError(c, "opt_opd0_prec = int32: conv multiplies int8, int16 or fp32 inputs");
  c = good, c.input.shape.c = 0;
  expectError(c, "opd0: shape (1, 0, 8, 8) has a zero dimension");
  Conv ex = good;
  ex.input.strideMode = StrideMode::Explicit;
  ex.input.stride = {0, 0, 1u << 20, 1};
  expectError(ex, "opd0: local tensor");

  Arith ar;
  ar.eu = EuOp::Divide;
  ar.res0 = out.operand(), ar.opd0 = out.operand(), ar.opd1 = out.operand();
  expectError(ar, "ar.divide needs fp32 inputs");
  ar.eu = EuOp::And, ar.res0.prec = ar.opd0.prec = ar.opd1.prec = Prec::Fp32;
  expectError(ar, "ar.and needs integer inputs");
  MdScalar ms;
  ms.res0 = out.operand(), ms.opd0 = out.operand(), ms.opd1 = out.operand();
  expectError(ms, "opt_opd1_const = 0");
  MatMul mm;
  mm.left = in.operand(), mm.right = wt.operand(), mm.output = out.operand();
  expectError(mm, "opd0_h = 8");
  expectError(ConvCorr{}, "does not execute cc");
  expectError(Decompress{}, "does not execute decompress");
  Pord mp;
  mp.eu = EuOp::Max, mp.input = in.operand(), mp.output = out.operand(), mp.hasBias = true;
  mp.kernel.shape = {1, 3, 3, 3};
  mp.output.shape.c = 3;
  expectError(mp, "max pooling takes no bias");
}

TEST(TiuExec, LaneWrapAroundPlacesChannelsInTheNextRow) {
  // 70 channels from lane 60: channels 0..3 in lanes 60..63, 4..67 one c_stride deeper in
  // lanes 0..63, 68..69 two deep in lanes 0..1.
  Fixture f(1506);
  TestTensor a = f.tensor({1, 70, 2, 3}, Prec::Int8, true, 0);
  a.lane = 60, a.mode = StrideMode::Aligned;
  a.put(f.mem);
  TestTensor out = a;
  out.offset = kRegionBytes;
  Arith cp;
  cp.eu = EuOp::Copy, cp.res0 = out.operand(), cp.opd0 = a.operand();
  f.run(cp);
  f.checkOutput(out, a.values, "copy");
  // Channel 5 element (0, 5, 1, 2): lane 1, row 1 (c_stride 128), offset h*3 + w = 5.
  int8_t v;
  std::memcpy(&v, f.mem.lane(1) + out.offset + 128 + 5, 1);
  EXPECT_EQ(double(v), a.at(0, 5, 1, 2));
  std::memcpy(&v, f.mem.lane(1) + out.offset + 2 * 128 + 0, 1); // channel 69, element (0,0)
  EXPECT_EQ(double(v), a.at(0, 69, 0, 0));
}


// Random valid-looking command words either execute or are rejected with a
// message; never a crash, an out-of-bounds access or a hang.
TEST(TiuExec, RandomCommandWordsRunOrFailCleanly) {
  Fixture f(1607);
  const TiuField small[] = {TiuField::res0_n, TiuField::res0_c, TiuField::res0_h, TiuField::res0_w,
                            TiuField::opd0_n, TiuField::opd0_c, TiuField::opd0_h, TiuField::opd0_w,
                            TiuField::opd1_n, TiuField::opd1_c, TiuField::opd1_h, TiuField::opd1_w,
                            TiuField::opt_right_shift};
  const TiuField addrs[] = {TiuField::res0_addr, TiuField::opd0_addr, TiuField::opd1_addr,
                            TiuField::opd2_addr, TiuField::opd3_addr, TiuField::res1_addr};
  const TiuField strides[] = {TiuField::res0_n_str, TiuField::res0_c_str, TiuField::res0_h_str,
                              TiuField::res0_w_str, TiuField::opd0_n_str, TiuField::opd0_c_str,
                              TiuField::opd0_h_str, TiuField::opd0_w_str, TiuField::opd1_n_str,
                              TiuField::opd1_c_str, TiuField::opd1_h_str, TiuField::opd1_w_str,
                              TiuField::opd2_n_str, TiuField::opd2_c_str, TiuField::opd2_h_str,
                              TiuField::opd2_w_str};
  int ran = 0, rejected = 0;
  for (int i = 0; i < 4000; ++i) {
    CommandBytes bytes;
    for (auto &b : bytes) b = uint8_t(f.rng());
    TiuRaw raw = TiuRaw::decode(bytes.data());
    // Mostly valid codes and plausible sizes, so that execution is reached.
    unsigned task = unsigned(f.rng() % kTiuTaskCount), eu;
    do eu = unsigned(f.rng() % kEuOpCount); while (!isValidTiuOp(task, eu));
    raw.set(TiuField::tsk_typ, task), raw.set(TiuField::tsk_eu_typ, eu);
    const Prec precs[] = {Prec::Int8, Prec::Fp32, Prec::Int16, Prec::Int32};
    for (TiuField p :
         {TiuField::opt_res0_prec, TiuField::opt_opd0_prec, TiuField::opt_opd1_prec, TiuField::opt_opd2_prec})
      if (f.rng() % 8) raw.set(p, unsigned(precs[f.rng() % 4]));
    for (TiuField p :
         {TiuField::short_res0_str, TiuField::short_opd0_str, TiuField::short_opd1_str, TiuField::short_opd2_str})
      if (f.rng() % 8) raw.set(p, f.rng() % 4);
    if (f.rng() % 8) raw.set(TiuField::tsk_opd_num, 2 + f.rng() % 2);
    for (TiuField s : small)
      if (f.rng() % 8) raw.set(s, 1 + f.rng() % 9);
    for (TiuField a : addrs)
      if (f.rng() % 8) raw.set(a, uint32_t(f.rng() % 64) * kLaneBytes + uint32_t(f.rng() % 8192) * 4);
    for (TiuField s : strides)
      if (f.rng() % 8) raw.set(s, f.rng() % 64);
    for (TiuField p : {TiuField::opd0_up_pad, TiuField::opd0_dn_pad, TiuField::opd0_lf_pad,
                       TiuField::opd0_rt_pad, TiuField::opd0_x_ins0, TiuField::opd0_y_ins0,
                       TiuField::opd1_x_ins0, TiuField::opd1_y_ins0})
      if (f.rng() % 4) raw.set(p, f.rng() % 3);
    auto cmd = decodeTiu(raw);
    if (!cmd.isOk()) {
      EXPECT_FALSE(cmd.message().empty());
      ++rejected;
      continue;
    }
    Status st = executeTiu(f.cfg, f.mem, *cmd);
    if (st.isOk()) {
      ++ran;
    } else {
      ++rejected;
      EXPECT_FALSE(st.message().empty());
    }
  }
  EXPECT_GT(ran, 200);
  EXPECT_GT(rejected, 200);
}

} // namespace
