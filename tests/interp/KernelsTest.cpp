// Kernels against naive loops on random shapes, hand-computed cases, and
// bit-identical results for any thread count.
#include "kernels/Kernels.h"
#include "kernels/Compare.h"
#include "support/Parallel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace tpu::kernels;
using tpu::setNumThreads;

namespace {

std::vector<float> randomVector(std::mt19937 &rng, int64_t n) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v) x = dist(rng);
  return v;
}

int64_t pick(std::mt19937 &rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

void expectNear(const std::vector<float> &got, const std::vector<float> &want, float tol = 1e-4f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol * (1.0f + std::fabs(want[i]))) << "at " << i;
}

std::vector<float> naiveConv(const std::vector<float> &in, const std::vector<float> &w,
                             const std::vector<float> &bias, const ConvParams &p) {
  std::vector<float> out(p.n * p.oc * p.oh * p.ow);
  int64_t icg = p.ic / p.groups, ocg = p.oc / p.groups;
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t oc = 0; oc < p.oc; ++oc)
      for (int64_t oy = 0; oy < p.oh; ++oy)
        for (int64_t ox = 0; ox < p.ow; ++ox) {
          double acc = bias.empty() ? 0 : bias[oc];
          int64_t g = oc / ocg;
          for (int64_t ci = 0; ci < icg; ++ci)
            for (int64_t ki = 0; ki < p.kh; ++ki)
              for (int64_t kj = 0; kj < p.kw; ++kj) {
                int64_t y = oy * p.strideH - p.padTop + ki * p.dilationH;
                int64_t x = ox * p.strideW - p.padLeft + kj * p.dilationW;
                if (y < 0 || y >= p.ih || x < 0 || x >= p.iw) continue;
                acc += in[((n * p.ic + g * icg + ci) * p.ih + y) * p.iw + x] *
                       w[((oc * icg + ci) * p.kh + ki) * p.kw + kj];
              }
          out[((n * p.oc + oc) * p.oh + oy) * p.ow + ox] = acc;
        }
  return out;
}

ConvParams randomConv(std::mt19937 &rng, bool oneD) {
  ConvParams p;
  p.groups = pick(rng, 1, 3);
  p.n = pick(rng, 1, 2);
  p.ic = p.groups * pick(rng, 1, 4);
  p.oc = p.groups * pick(rng, 1, 5);
  p.kh = oneD ? 1 : pick(rng, 1, 4);
  p.kw = pick(rng, 1, 4);
  p.ih = oneD ? 1 : pick(rng, p.kh, 12);
  p.iw = pick(rng, p.kw, 12);
  p.strideH = oneD ? 1 : pick(rng, 1, 3);
  p.strideW = pick(rng, 1, 3);
  p.dilationH = oneD ? 1 : pick(rng, 1, 2);
  p.dilationW = pick(rng, 1, 2);
  p.padTop = oneD ? 0 : pick(rng, 0, 2);
  p.padBottom = oneD ? 0 : pick(rng, 0, 2);
  p.padLeft = pick(rng, 0, 2);
  p.padRight = pick(rng, 0, 2);
  p.oh = convOutputSize(p.ih, p.kh, p.strideH, p.dilationH, p.padTop, p.padBottom);
  p.ow = convOutputSize(p.iw, p.kw, p.strideW, p.dilationW, p.padLeft, p.padRight);
  return p;
}

} // namespace

TEST(Gemm, MatchesNaiveOnRandomShapes) {
  std::mt19937 rng(1);
  for (int t = 0; t < 20; ++t) {
    int64_t m = pick(rng, 1, 70), n = pick(rng, 1, 300), k = pick(rng, 0, 300);
    auto a = randomVector(rng, m * k), b = randomVector(rng, k * n);
    std::vector<float> c(m * n, 42.0f), ref(m * n);
    gemm(m, n, k, a.data(), k, b.data(), n, c.data(), n);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t q = 0; q < k; ++q) s += a[i * k + q] * b[q * n + j];
        ref[i * n + j] = s;
      }
    expectNear(c, ref);
  }
}

TEST(Gemm, BitIdenticalForAnyThreadCount) {
  std::mt19937 rng(2);
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{3, 2000, 700}, {97, 513, 301}}) {
    auto a = randomVector(rng, m * k), b = randomVector(rng, k * n);
    std::vector<std::vector<float>> results;
    for (int threads : {1, 2, 3, 8}) {
      setNumThreads(threads);
      std::vector<float> c(m * n);
      gemm(m, n, k, a.data(), k, b.data(), n, c.data(), n);
      results.push_back(c);
    }
    for (size_t i = 1; i < results.size(); ++i) EXPECT_EQ(results[i], results[0]);
  }
  setNumThreads(2);
}

TEST(Matmul, BroadcastsBatchAndPromotesVectors) {
  std::mt19937 rng(3);
  struct Case { Shape a, b, out; };
  std::vector<Case> cases = {{{2, 1, 3, 4}, {5, 4, 6}, {2, 5, 3, 6}},
                             {{4}, {3, 4, 2}, {3, 2}},
                             {{2, 3, 4}, {4}, {2, 3}},
                             {{4}, {4}, {}},
                             {{7, 5}, {5, 3}, {7, 3}}};
  for (const auto &c : cases) {
    auto shape = matmulShape(c.a, c.b);
    ASSERT_TRUE(shape) << shape.message();
    EXPECT_EQ(*shape, c.out);
    auto a = randomVector(rng, numElements(c.a)), b = randomVector(rng, numElements(c.b));
    std::vector<float> out(numElements(c.out));
    matmul(a.data(), c.a, b.data(), c.b, out.data());
    // Naive: promote, broadcast both to the full batch, multiply.
    Shape a2 = c.a.size() == 1 ? Shape{1, c.a[0]} : c.a, b2 = c.b.size() == 1 ? Shape{c.b[0], 1} : c.b;
    int64_t m = a2[a2.size() - 2], k = a2.back(), n = b2.back();
    Shape batch = *broadcastShape(Shape(a2.begin(), a2.end() - 2), Shape(b2.begin(), b2.end() - 2));
    Shape fa = batch, fb = batch;
    fa.insert(fa.end(), {m, k});
    fb.insert(fb.end(), {k, n});
    std::vector<float> ba(numElements(fa)), bb(numElements(fb));
    broadcastTo(a.data(), a2, ba.data(), fa);
    broadcastTo(b.data(), b2, bb.data(), fb);
    std::vector<float> ref;
    for (int64_t t = 0; t < numElements(batch); ++t)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double s = 0;
          for (int64_t q = 0; q < k; ++q) s += ba[t * m * k + i * k + q] * bb[t * k * n + q * n + j];
          ref.push_back(s);
        }
    expectNear(out, ref);
  }
  auto bad = matmulShape({2, 3}, {4, 5});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.message().find("3 vs 4"), std::string::npos);
  EXPECT_FALSE(matmulShape({2, 2, 3}, {3, 3, 1}));
}

TEST(Conv, Conv2dMatchesNaiveOnRandomShapes) {
  std::mt19937 rng(4);
  for (int t = 0; t < 90; ++t) {
    ConvParams p = randomConv(rng, t % 4 == 3);
    if (t % 3 == 0) { // depthwise: its own direct kernel
      p.groups = p.ic = p.oc = pick(rng, 1, 5);
    }
    if (p.oh <= 0 || p.ow <= 0) continue;
    auto in = randomVector(rng, p.n * p.ic * p.ih * p.iw);
    auto w = randomVector(rng, p.oc * (p.ic / p.groups) * p.kh * p.kw);
    auto bias = t % 2 ? randomVector(rng, p.oc) : std::vector<float>{};
    std::vector<float> out(p.n * p.oc * p.oh * p.ow);
    conv2d(in.data(), w.data(), bias.empty() ? nullptr : bias.data(), out.data(), p);
    expectNear(out, naiveConv(in, w, bias, p));
  }
}

TEST(Conv, DepthwisePointwiseAndBigShapes) {
  std::mt19937 rng(5);
  ConvParams dw;
  dw.n = 1; dw.ic = dw.oc = dw.groups = 16; dw.ih = dw.iw = 17; dw.kh = dw.kw = 3;
  dw.strideH = dw.strideW = 2; dw.padTop = dw.padLeft = dw.padBottom = dw.padRight = 1;
  ConvParams pw;
  pw.n = 2; pw.ic = 24; pw.oc = 40; pw.ih = pw.iw = 14;
  ConvParams big;
  big.ic = 64; big.oc = 96; big.ih = big.iw = 28; big.kh = big.kw = 3;
  big.padTop = big.padLeft = big.padBottom = big.padRight = 1;
  for (ConvParams *p : {&dw, &pw, &big}) {
    p->oh = convOutputSize(p->ih, p->kh, p->strideH, p->dilationH, p->padTop, p->padBottom);
    p->ow = convOutputSize(p->iw, p->kw, p->strideW, p->dilationW, p->padLeft, p->padRight);
    auto in = randomVector(rng, p->n * p->ic * p->ih * p->iw);
    auto w = randomVector(rng, p->oc * (p->ic / p->groups) * p->kh * p->kw);
    auto bias = randomVector(rng, p->oc);
    std::vector<std::vector<float>> outs;
    for (int threads : {1, 3}) {
      setNumThreads(threads);
      std::vector<float> out(p->n * p->oc * p->oh * p->ow);
      conv2d(in.data(), w.data(), bias.data(), out.data(), *p);
      outs.push_back(out);
    }
    EXPECT_EQ(outs[0], outs[1]) << "thread count changed the result";
    expectNear(outs[0], naiveConv(in, w, bias, *p), 2e-4f);
  }
  setNumThreads(2);
}

TEST(Conv, ConvTransposeMatchesNaive) {
  std::mt19937 rng(6);
  for (int t = 0; t < 40; ++t) {
    ConvParams p;
    p.groups = pick(rng, 1, 2);
    p.n = pick(rng, 1, 2);
    p.ic = p.groups * pick(rng, 1, 3);
    p.oc = p.groups * pick(rng, 1, 3);
    p.kh = pick(rng, 1, 4); p.kw = pick(rng, 1, 4);
    p.ih = pick(rng, 1, 6); p.iw = pick(rng, 1, 6);
    p.strideH = pick(rng, 1, 3); p.strideW = pick(rng, 1, 3);
    p.dilationH = pick(rng, 1, 2); p.dilationW = pick(rng, 1, 2);
    p.padTop = pick(rng, 0, 1); p.padBottom = pick(rng, 0, 1);
    p.padLeft = pick(rng, 0, 1); p.padRight = pick(rng, 0, 1);
    int64_t outPadH = pick(rng, 0, p.strideH - 1), outPadW = pick(rng, 0, p.strideW - 1);
    p.oh = (p.ih - 1) * p.strideH - p.padTop - p.padBottom + p.dilationH * (p.kh - 1) + 1 + outPadH;
    p.ow = (p.iw - 1) * p.strideW - p.padLeft - p.padRight + p.dilationW * (p.kw - 1) + 1 + outPadW;
    if (p.oh <= 0 || p.ow <= 0) continue;
    int64_t icg = p.ic / p.groups, ocg = p.oc / p.groups;
    auto in = randomVector(rng, p.n * p.ic * p.ih * p.iw);
    auto w = randomVector(rng, p.ic * ocg * p.kh * p.kw);
    auto bias = randomVector(rng, p.oc);
    std::vector<float> out(p.n * p.oc * p.oh * p.ow);
    convTranspose2d(in.data(), w.data(), bias.data(), out.data(), p);
    std::vector<double> ref(out.size());
    for (int64_t n = 0; n < p.n; ++n)
      for (int64_t c = 0; c < p.oc; ++c)
        for (int64_t i = 0; i < p.oh * p.ow; ++i) ref[(n * p.oc + c) * p.oh * p.ow + i] = bias[c];
    for (int64_t n = 0; n < p.n; ++n)
      for (int64_t ci = 0; ci < p.ic; ++ci)
        for (int64_t iy = 0; iy < p.ih; ++iy)
          for (int64_t ix = 0; ix < p.iw; ++ix)
            for (int64_t co = 0; co < ocg; ++co)
              for (int64_t ki = 0; ki < p.kh; ++ki)
                for (int64_t kj = 0; kj < p.kw; ++kj) {
                  int64_t y = iy * p.strideH - p.padTop + ki * p.dilationH;
                  int64_t x = ix * p.strideW - p.padLeft + kj * p.dilationW;
                  if (y < 0 || y >= p.oh || x < 0 || x >= p.ow) continue;
                  int64_t oc = (ci / icg) * ocg + co;
                  ref[((n * p.oc + oc) * p.oh + y) * p.ow + x] +=
                      in[((n * p.ic + ci) * p.ih + iy) * p.iw + ix] *
                      w[((ci * ocg + co) * p.kh + ki) * p.kw + kj];
                }
    expectNear(out, std::vector<float>(ref.begin(), ref.end()));
  }
}

TEST(Pool, OutputSizeRoundingRules) {
  EXPECT_EQ(poolOutputSize(3, 2, 2, 1, 0, 0, false), 1);
  EXPECT_EQ(poolOutputSize(3, 2, 2, 1, 0, 0, true), 2);
  // ceil: the last window would start inside the end padding -> dropped.
  EXPECT_EQ(poolOutputSize(3, 1, 2, 1, 1, 1, true), 2);
  EXPECT_EQ(poolOutputSize(112, 3, 2, 1, 1, 1, false), 56);
  EXPECT_EQ(convOutputSize(224, 7, 2, 1, 3, 3), 112);
  EXPECT_EQ(convOutputSize(5, 3, 1, 2, 0, 0), 1);
}

TEST(Pool, HandComputedMaxAndAvg) {
  std::vector<float> in = {1, 2, 3, 4, 5, 6, 7, 8, 9}; // 3x3
  PoolParams p;
  p.ih = p.iw = 3; p.kh = p.kw = 2; p.strideH = p.strideW = 2; p.oh = p.ow = 2; // ceil mode
  std::vector<float> out(4);
  pool2d(PoolKind::Max, in.data(), out.data(), p);
  EXPECT_EQ(out, (std::vector<float>{5, 6, 8, 9}));
  pool2d(PoolKind::Avg, in.data(), out.data(), p);
  EXPECT_EQ(out, (std::vector<float>{3, 4.5, 7.5, 9}));
  // 3x3 window, stride 2, pad 1: the corner window holds 1,2,4,5.
  PoolParams q;
  q.ih = q.iw = 3; q.kh = q.kw = 3; q.strideH = q.strideW = 2;
  q.padTop = q.padLeft = q.padBottom = q.padRight = 1; q.oh = q.ow = 2;
  q.countIncludePad = true;
  pool2d(PoolKind::Avg, in.data(), out.data(), q);
  EXPECT_FLOAT_EQ(out[0], 12.0f / 9);
  EXPECT_FLOAT_EQ(out[3], 28.0f / 9);
  q.countIncludePad = false;
  pool2d(PoolKind::Avg, in.data(), out.data(), q);
  EXPECT_FLOAT_EQ(out[0], 3.0f);
  EXPECT_FLOAT_EQ(out[3], 7.0f);
  // Dilated max pool: window taps 0 and 2.
  PoolParams d;
  d.ih = 1; d.iw = 5; d.kw = 2; d.dilationW = 2; d.ow = 3;
  std::vector<float> row = {5, 1, 2, 9, 0}, o3(3);
  pool2d(PoolKind::Max, row.data(), o3.data(), d);
  EXPECT_EQ(o3, (std::vector<float>{5, 9, 2}));
  std::vector<float> g(2);
  globalPool(PoolKind::Avg, in.data(), g.data(), 1, 9);
  EXPECT_FLOAT_EQ(g[0], 5.0f);
  globalPool(PoolKind::Max, in.data(), g.data(), 1, 9);
  EXPECT_FLOAT_EQ(g[0], 9.0f);
}

TEST(Elementwise, BinaryBroadcastMatchesNaive) {
  std::mt19937 rng(7);
  std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 3, 4}, {2, 3, 4}}, {{2, 3, 4}, {4}},       {{2, 1, 4}, {3, 1}}, {{1}, {5, 2}},
      {{}, {3}},              {{4, 1, 1}, {1, 5, 6}}, {{2, 3, 1, 5}, {3, 7, 1}}};
  for (auto kind : {BinaryKind::Add, BinaryKind::Sub, BinaryKind::Mul, BinaryKind::Div,
                    BinaryKind::Max, BinaryKind::Min, BinaryKind::PRelu}) {
    for (const auto &[sa, sb] : cases) {
      Shape out = *broadcastShape(sa, sb);
      auto a = randomVector(rng, numElements(sa)), b = randomVector(rng, numElements(sb));
      std::vector<float> got(numElements(out)), fa(got.size()), fb(got.size()), ref(got.size());
      binary(kind, a.data(), sa, b.data(), sb, got.data(), out);
      broadcastTo(a.data(), sa, fa.data(), out);
      broadcastTo(b.data(), sb, fb.data(), out);
      // Naive broadcast by explicit index arithmetic for the last case.
      for (size_t i = 0; i < ref.size(); ++i) {
        float x = fa[i], y = fb[i];
        switch (kind) {
        case BinaryKind::Add: ref[i] = x + y; break;
        case BinaryKind::Sub: ref[i] = x - y; break;
        case BinaryKind::Mul: ref[i] = x * y; break;
        case BinaryKind::Div: ref[i] = x / y; break;
        case BinaryKind::Max: ref[i] = std::max(x, y); break;
        case BinaryKind::Min: ref[i] = std::min(x, y); break;
        case BinaryKind::PRelu: ref[i] = x >= 0 ? x : x * y; break;
        default: break;
        }
      }
      EXPECT_EQ(got, ref);
    }
  }
  // broadcastTo itself, by index arithmetic: out[i][j][k] = in[j][0].
  std::vector<float> in = {1, 2, 3}, out(2 * 3 * 4);
  broadcastTo(in.data(), {3, 1}, out.data(), {2, 3, 4});
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) EXPECT_EQ(out[(i * 3 + j) * 4 + k], in[j]);
  auto bad = broadcastShape({2, 3}, {4, 3});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.message().find("2x3 and 4x3"), std::string::npos) << bad.message();
}

TEST(Elementwise, UnaryValues) {
  std::vector<float> x = {-3.0f, -0.5f, 0.0f, 0.5f, 4.0f}, y(5);
  unary(UnaryKind::Relu, x.data(), y.data(), 5);
  EXPECT_EQ(y, (std::vector<float>{0, 0, 0, 0.5f, 4}));
  unary(UnaryKind::LeakyRelu, x.data(), y.data(), 5, 0.1f);
  EXPECT_FLOAT_EQ(y[0], -0.3f);
  unary(UnaryKind::Clip, x.data(), y.data(), 5, 0.0f, 0.5f);
  EXPECT_EQ(y, (std::vector<float>{0, 0, 0, 0.5f, 0.5f}));
  unary(UnaryKind::HardSwish, x.data(), y.data(), 5);
  EXPECT_FLOAT_EQ(y[0], 0.0f);
  EXPECT_FLOAT_EQ(y[3], 0.5f * (0.5f / 6 + 0.5f));
  EXPECT_FLOAT_EQ(y[4], 4.0f);
  unary(UnaryKind::HardSigmoid, x.data(), y.data(), 5, 0.2f, 0.5f);
  EXPECT_FLOAT_EQ(y[1], 0.4f);
  unary(UnaryKind::Sigmoid, x.data(), y.data(), 5);
  EXPECT_FLOAT_EQ(y[2], 0.5f);
  unary(UnaryKind::SiLU, x.data(), y.data(), 5);
  EXPECT_NEAR(y[4], 4.0f / (1 + std::exp(-4.0f)), 1e-6);
  unary(UnaryKind::Gelu, x.data(), y.data(), 5);
  EXPECT_NEAR(y[3], 0.345731f, 1e-5);
  unary(UnaryKind::Elu, x.data(), y.data(), 5, 1.0f);
  EXPECT_NEAR(y[0], std::exp(-3.0f) - 1, 1e-6);
}

TEST(Normalize, SoftmaxMatchesNaive) {
  std::mt19937 rng(8);
  Shape shape = {2, 5, 3};
  auto in = randomVector(rng, 30);
  for (int64_t axis = 0; axis < 3; ++axis) {
    for (bool log : {false, true}) {
      std::vector<float> out(30), ref(30);
      softmax(in.data(), out.data(), shape, axis, log);
      auto st = stridesOf(shape);
      for (int64_t i = 0; i < 30; ++i) {
        int64_t pos = (i / st[axis]) % shape[axis];
        int64_t base = i - pos * st[axis];
        double s = 0;
        for (int64_t k = 0; k < shape[axis]; ++k) s += std::exp(in[base + k * st[axis]]);
        ref[i] = log ? in[i] - std::log(s) : std::exp(in[i]) / s;
      }
      expectNear(out, ref, 1e-5f);
    }
  }
}

TEST(Normalize, ReduceMatchesNaive) {
  std::mt19937 rng(9);
  Shape shape = {3, 4, 5};
  auto in = randomVector(rng, 60);
  std::vector<std::vector<int64_t>> axesCases = {{0}, {1}, {2}, {0, 2}, {1, 2}, {0, 1, 2}};
  for (auto kind : {ReduceKind::Sum, ReduceKind::Mean, ReduceKind::Max, ReduceKind::Min,
                    ReduceKind::Prod, ReduceKind::L1, ReduceKind::L2, ReduceKind::SumSquare,
                    ReduceKind::LogSumExp}) {
    for (const auto &axes : axesCases) {
      Shape kept = shape;
      for (int64_t a : axes) kept[a] = 1;
      int64_t outN = numElements(kept);
      std::vector<float> out(outN);
      reduce(kind, in.data(), shape, axes, out.data());
      std::vector<std::vector<double>> groups(outN);
      auto ks = stridesOf(kept);
      for (int64_t i = 0; i < 3; ++i)
        for (int64_t j = 0; j < 4; ++j)
          for (int64_t k = 0; k < 5; ++k) {
            int64_t idx[3] = {i, j, k}, o = 0;
            for (int d = 0; d < 3; ++d) o += (kept[d] == 1 ? 0 : idx[d]) * ks[d];
            groups[o].push_back(in[(i * 4 + j) * 5 + k]);
          }
      std::vector<float> ref(outN);
      for (int64_t o = 0; o < outN; ++o) {
        double r = kind == ReduceKind::Max ? -1e30 : kind == ReduceKind::Min ? 1e30 : kind == ReduceKind::Prod ? 1 : 0;
        for (double v : groups[o]) {
          switch (kind) {
          case ReduceKind::Max: r = std::max(r, v); break;
          case ReduceKind::Min: r = std::min(r, v); break;
          case ReduceKind::Prod: r *= v; break;
          case ReduceKind::L1: r += std::fabs(v); break;
          case ReduceKind::L2:
          case ReduceKind::SumSquare: r += v * v; break;
          case ReduceKind::LogSumExp: r += std::exp(v); break;
          default: r += v;
          }
        }
        if (kind == ReduceKind::Mean) r /= groups[o].size();
        if (kind == ReduceKind::L2) r = std::sqrt(r);
        if (kind == ReduceKind::LogSumExp) r = std::log(r);
        ref[o] = r;
      }
      expectNear(out, ref, 1e-5f);
    }
  }
}

TEST(Normalize, LayerNormAndBatchNorm) {
  std::mt19937 rng(10);
  Shape shape = {2, 3, 8};
  auto in = randomVector(rng, 48), scale = randomVector(rng, 24), bias = randomVector(rng, 24);
  std::vector<float> out(48), ref(48);
  layerNorm(in.data(), out.data(), shape, 1, scale.data(), bias.data(), 1e-5f);
  for (int b = 0; b < 2; ++b) {
    double m = 0, v = 0;
    for (int i = 0; i < 24; ++i) m += in[b * 24 + i];
    m /= 24;
    for (int i = 0; i < 24; ++i) v += (in[b * 24 + i] - m) * (in[b * 24 + i] - m);
    v /= 24;
    for (int i = 0; i < 24; ++i) ref[b * 24 + i] = (in[b * 24 + i] - m) / std::sqrt(v + 1e-5) * scale[i] + bias[i];
  }
  expectNear(out, ref, 1e-5f);
  auto mean = randomVector(rng, 3), var = randomVector(rng, 3);
  for (float &v : var) v = std::fabs(v) + 0.1f;
  batchNorm(in.data(), out.data(), shape, scale.data(), bias.data(), mean.data(), var.data(), 1e-5f);
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 3; ++c)
      for (int i = 0; i < 8; ++i) {
        int64_t at = (n * 3 + c) * 8 + i;
        ref[at] = (in[at] - mean[c]) / std::sqrt(var[c] + 1e-5f) * scale[c] + bias[c];
      }
  expectNear(out, ref, 1e-5f);
}

TEST(DataMovement, TransposeMatchesNaive) {
  std::mt19937 rng(11);
  Shape shape = {2, 3, 4, 5};
  auto in = randomVector(rng, 120);
  std::vector<int64_t> perm = {2, 0, 3, 1};
  std::vector<float> out(120);
  transpose(in.data(), shape, perm, out.data());
  Shape os = {4, 2, 5, 3};
  auto is = stridesOf(shape), ost = stridesOf(os);
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c)
        for (int d = 0; d < 5; ++d)
          EXPECT_EQ(out[c * ost[0] + a * ost[1] + d * ost[2] + b * ost[3]],
                    in[a * is[0] + b * is[1] + c * is[2] + d * is[3]]);
}

TEST(DataMovement, ConcatSplitSlicePad) {
  std::vector<float> a = {1, 2, 3, 4}, b = {5, 6}, out(6);
  concat({a.data(), b.data()}, {{2, 2}, {2, 1}}, 1, out.data());
  EXPECT_EQ(out, (std::vector<float>{1, 2, 5, 3, 4, 6}));
  std::vector<float> p0(4), p1(2);
  split(out.data(), {2, 3}, 1, {2, 1}, {p0.data(), p1.data()});
  EXPECT_EQ(p0, a);
  EXPECT_EQ(p1, b);
  // x[1:, ::-2] of a 3x5 matrix 0..14.
  std::vector<float> m(15), s(6);
  for (int i = 0; i < 15; ++i) m[i] = i;
  slice(m.data(), {3, 5}, {1, 4}, {1, -2}, s.data(), {2, 3});
  EXPECT_EQ(s, (std::vector<float>{9, 7, 5, 14, 12, 10}));
  // numpy.pad([1,2,3], (2,3), mode): reflect, edge, constant; negative pad crops.
  std::vector<float> v = {1, 2, 3}, r(8);
  pad(v.data(), {3}, {2}, {3}, PadMode::Reflect, 0, r.data());
  EXPECT_EQ(r, (std::vector<float>{3, 2, 1, 2, 3, 2, 1, 2}));
  pad(v.data(), {3}, {2}, {3}, PadMode::Edge, 0, r.data());
  EXPECT_EQ(r, (std::vector<float>{1, 1, 1, 2, 3, 3, 3, 3}));
  pad(v.data(), {3}, {2}, {3}, PadMode::Constant, 7, r.data());
  EXPECT_EQ(r, (std::vector<float>{7, 7, 1, 2, 3, 7, 7, 7}));
  std::vector<float> c(3);
  pad(m.data(), {3, 5}, {0, -1}, {-2, -1}, PadMode::Constant, 0, c.data());
  EXPECT_EQ(c, (std::vector<float>{1, 2, 3}));
  std::vector<float> c2(2 * 6);
  pad(a.data(), {2, 2}, {0, 2}, {0, 2}, PadMode::Constant, 0, c2.data());
  EXPECT_EQ(c2, (std::vector<float>{0, 0, 1, 2, 0, 0, 0, 0, 3, 4, 0, 0}));
}

TEST(Resize, CoordinateModes) {
  std::vector<float> v = {0, 4}, out(4);
  ResizeParams lin{ResizeMode::Linear, CoordMode::HalfPixel, NearestMode::RoundPreferFloor};
  resize(v.data(), {2}, out.data(), {4}, {2.0}, lin);
  EXPECT_EQ(out, (std::vector<float>{0, 1, 3, 4}));
  lin.coord = CoordMode::AlignCorners;
  std::vector<float> w = {0, 3};
  resize(w.data(), {2}, out.data(), {4}, {2.0}, lin);
  EXPECT_EQ(out, (std::vector<float>{0, 1, 2, 3}));
  lin.coord = CoordMode::Asymmetric;
  resize(v.data(), {2}, out.data(), {4}, {2.0}, lin);
  EXPECT_EQ(out, (std::vector<float>{0, 2, 4, 4}));
  ResizeParams nn{ResizeMode::Nearest, CoordMode::Asymmetric, NearestMode::Floor};
  std::vector<float> img = {1, 2, 3, 4}, up(16);
  resize(img.data(), {1, 1, 2, 2}, up.data(), {1, 1, 4, 4}, {1, 1, 2, 2}, nn);
  EXPECT_EQ(up, (std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
  // Downsample 4 -> 3 with half_pixel + round_prefer_ceil: coords 0.1667, 1.5, 2.83.
  std::vector<float> four = {10, 20, 30, 40}, three(3);
  nn.coord = CoordMode::HalfPixel;
  nn.nearest = NearestMode::RoundPreferCeil;
  resize(four.data(), {4}, three.data(), {3}, {0.75}, nn);
  EXPECT_EQ(three, (std::vector<float>{10, 30, 40}));
  nn.nearest = NearestMode::RoundPreferFloor;
  resize(four.data(), {4}, three.data(), {3}, {0.75}, nn);
  EXPECT_EQ(three, (std::vector<float>{10, 20, 40}));
  // Bilinear 2-D equals separable 1-D interpolation of the corners.
  std::vector<float> bl(9);
  ResizeParams ac{ResizeMode::Linear, CoordMode::AlignCorners, NearestMode::Floor};
  resize(img.data(), {2, 2}, bl.data(), {3, 3}, {1.5, 1.5}, ac);
  EXPECT_EQ(bl, (std::vector<float>{1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4}));
  // align_corners with a scale: the resized length is in * scale = 2.4, so
  // output 1 samples 3 / 1.4 = 2.142857 (ONNX resize_downsample_scales_linear_align_corners).
  std::vector<float> row = {1, 2, 3, 4}, two(2);
  resize(row.data(), {4}, two.data(), {2}, {0.6}, ac);
  EXPECT_FLOAT_EQ(two[0], 1.0f);
  EXPECT_NEAR(two[1], 3.142857f, 1e-5);
}

TEST(Compare, Metrics) {
  std::vector<float> a = {1, 2, 3, 4}, b = a;
  CompareStats same = compareTensors(a.data(), b.data(), 4);
  EXPECT_DOUBLE_EQ(same.cosine, 1.0);
  EXPECT_DOUBLE_EQ(same.euclidean, 1.0);
  EXPECT_TRUE(std::isinf(same.sqnrDb));
  EXPECT_EQ(same.maxAbsDiff, 0.0);
  std::vector<float> c = {1, 2, 3, 5};
  CompareStats d = compareTensors(a.data(), c.data(), 4);
  EXPECT_NEAR(d.cosine, 34.0 / (std::sqrt(30.0) * std::sqrt(39.0)), 1e-12);
  double mid = std::sqrt(1 + 4 + 9 + 4.5 * 4.5);
  EXPECT_NEAR(d.euclidean, 1 - 1.0 / mid, 1e-12);
  // var(a) = 1.25, diff = {0,0,0,-1}: var = 0.1875.
  EXPECT_NEAR(d.sqnrDb, 10 * std::log10(1.25 / 0.1875), 1e-9);
  EXPECT_EQ(d.maxAbsDiff, 1.0);
  std::vector<float> neg = {-1, -2, -3, -4};
  EXPECT_NEAR(compareTensors(a.data(), neg.data(), 4).cosine, -1.0, 1e-12);
  std::vector<float> z = {0, 0, 0, 0};
  EXPECT_EQ(compareTensors(a.data(), z.data(), 4).cosine, 0.0);
  EXPECT_EQ(compareTensors(z.data(), z.data(), 4).cosine, 1.0);
  std::vector<float> nan = {1, 2, NAN, 4};
  CompareStats n = compareTensors(a.data(), nan.data(), 4);
  EXPECT_EQ(n.nanMismatch, 1);
  EXPECT_LE(n.cosine, 0.0);
}

TEST(Kernels, ArgReduceGatherTileCompare) {
  std::vector<float> m = {3, 1, 3, 0, 5, 5}; // 2x3
  std::vector<float> out(3);
  argReduce(true, m.data(), {2, 3}, 1, false, out.data());
  EXPECT_EQ(std::vector<float>(out.begin(), out.begin() + 2), (std::vector<float>{0, 1}));
  argReduce(true, m.data(), {2, 3}, 1, true, out.data());
  EXPECT_EQ(std::vector<float>(out.begin(), out.begin() + 2), (std::vector<float>{2, 2}));
  argReduce(false, m.data(), {2, 3}, 0, false, out.data());
  EXPECT_EQ(out, (std::vector<float>{1, 0, 0}));
  // take(m, [2, 0, 2], axis=1)
  std::vector<float> g(6);
  gather(m.data(), {2, 3}, 1, {2, 0, 2}, g.data());
  EXPECT_EQ(g, (std::vector<float>{3, 3, 3, 5, 0, 5}));
  gather(m.data(), {2, 3}, 0, {1}, g.data());
  EXPECT_EQ(std::vector<float>(g.begin(), g.begin() + 3), (std::vector<float>{0, 5, 5}));
  std::vector<float> t(12), v = {1, 2};
  tile(v.data(), {1, 2}, {2, 3}, t.data());
  EXPECT_EQ(std::vector<float>(t.begin(), t.begin() + 12),
            (std::vector<float>{1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2}));
  std::vector<float> a = {1, 2, 3}, b = {2}, c(3);
  binary(BinaryKind::Equal, a.data(), {3}, b.data(), {1}, c.data(), {3});
  EXPECT_EQ(c, (std::vector<float>{0, 1, 0}));
  binary(BinaryKind::Less, a.data(), {3}, b.data(), {1}, c.data(), {3});
  EXPECT_EQ(c, (std::vector<float>{1, 0, 0}));
  binary(BinaryKind::Greater, a.data(), {3}, b.data(), {1}, c.data(), {3});
  EXPECT_EQ(c, (std::vector<float>{0, 0, 1}));
}
