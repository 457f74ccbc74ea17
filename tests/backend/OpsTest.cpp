// Every op kind, fp32 and int8, compiled alone and run with the semantics
// library; int8 bit-exact with QuantRef, fp32 within 1e-5. Shapes include
// odd channel counts (lane wrap-around past 64), batches that leave a 4N
// group partly empty, and a small-LMEM configuration that forces slices
// along N, C and H (with halo rows for windows).
#include "BackendHarness.h"

using namespace tpu;
using namespace tpu::backend;
using namespace tpu::backend::test;

namespace {

struct Case {
  DType t;
  bool smallLmem;
};
std::string caseName(const testing::TestParamInfo<Case> &i) {
  return std::string(i.param.t == DType::F32 ? "F32" : "Int8") + (i.param.smallLmem ? "_Sliced" : "_Whole");
}

class OpTest : public testing::TestWithParam<Case> {
protected:
  DType t() const { return GetParam().t; }
  bool int8() const { return t() != DType::F32; }
  Options opts() const {
    Options o;
    if (GetParam().smallLmem) o.hw = smallLmem();
    return o;
  }
  DType weightType() const { return int8() ? DType::I8 : DType::F32; }
  DType biasType() const { return int8() ? DType::I16 : DType::F32; }

  // Conv with the given geometry, input (n, ic, h, w).
  void conv(int64_t n, int64_t ic, int64_t h, int64_t w, int64_t oc, WindowParams p, bool bias,
            bool relu) {
    GraphBuilder gb;
    int x = gb.act("x", {n, ic, h, w}, t());
    int64_t oh = windowOutput(h, p.kh, p.strideH, p.dilationH, p.padTop, p.padBottom);
    int64_t ow = windowOutput(w, p.kw, p.strideW, p.dilationW, p.padLeft, p.padRight);
    int y = gb.act("y", {n, oc, oh, ow}, t());
    int wt = gb.weight("w", {oc, ic / p.groups, p.kh, p.kw}, weightType());
    std::vector<int> in{x, wt};
    if (bias) in.push_back(gb.weight("b", {oc}, biasType()));
    Op &o = gb.op(OpKind::Conv, "conv", in, y);
    o.window = p, o.relu = relu, o.rshift = int8() ? 9 : 0;
    gb.g.inputs = {x}, gb.g.outputs = {y};
    auto rep = expectMatchesReference(gb.g, opts());
    if (GetParam().smallLmem) {
      EXPECT_GT(rep.ops.at(0).slices, 1u);
    }
  }
};

WindowParams win(int64_t k, int64_t s, int64_t pad, int64_t dil = 1, int64_t groups = 1) {
  WindowParams p;
  p.kh = p.kw = k, p.strideH = p.strideW = s, p.dilationH = p.dilationW = dil;
  p.padTop = p.padBottom = p.padLeft = p.padRight = pad, p.groups = groups;
  return p;
}

TEST_P(OpTest, Conv3x3Pad1OddChannels) { conv(1, 3, 41, 37, 70, win(3, 1, 1), true, true); }
TEST_P(OpTest, Conv3x3Stride2Batch5) { conv(5, 13, 40, 19, 67, win(3, 2, 1), true, false); }
TEST_P(OpTest, Conv1x1ManyChannels) { conv(2, 130, 21, 21, 129, win(1, 1, 0), false, true); }
TEST_P(OpTest, ConvDilated) { conv(1, 5, 70, 70, 9, win(3, 1, 2, 2), true, false); }
TEST_P(OpTest, ConvGrouped) { conv(3, 12, 30, 31, 18, win(3, 1, 1, 1, 3), true, true); }
TEST_P(OpTest, ConvDepthwise) { conv(2, 70, 36, 33, 70, win(3, 2, 1, 1, 70), true, true); }
TEST_P(OpTest, Conv7x7Stride2) { conv(1, 3, 64, 61, 16, win(7, 2, 3), true, true); }

TEST_P(OpTest, ConvTranspose) {
  struct G { int64_t k, s, pad, outPad; };
  for (G geo : {G{2, 2, 0, 0}, G{3, 2, 1, 1}, G{4, 2, 1, 0}, G{3, 1, 1, 0}}) {
    GraphBuilder gb;
    const int64_t n = 3, ic = 13, ih = 23, iw = 17, oc = 67;
    int64_t oh = (ih - 1) * geo.s - 2 * geo.pad + geo.k + geo.outPad;
    int64_t ow = (iw - 1) * geo.s - 2 * geo.pad + geo.k + geo.outPad;
    int x = gb.act("x", {n, ic, ih, iw}, t()), y = gb.act("y", {n, oc, oh, ow}, t());
    Op &o = gb.op(OpKind::ConvTranspose, "deconv",
                  {x, gb.weight("w", {ic, oc, geo.k, geo.k}, weightType()), gb.weight("b", {oc}, biasType())}, y);
    o.window = win(geo.k, geo.s, geo.pad), o.rshift = int8() ? 8 : 0, o.relu = true;
    gb.g.inputs = {x}, gb.g.outputs = {y};
    SCOPED_TRACE("k" + std::to_string(geo.k) + " s" + std::to_string(geo.s) + " p" + std::to_string(geo.pad));
    auto rep = expectMatchesReference(gb.g, opts());
    if (GetParam().smallLmem && !rep.ops.empty() && geo.s > 1) {
      EXPECT_GT(rep.ops[0].slices, 1u);
    }
  }
}

TEST_P(OpTest, Pools) {
  for (bool isMax : {true, false})
    for (bool ceil : {false, true}) {
      GraphBuilder gb;
      int x = gb.act("x", {5, 67, 22, 20}, t());
      WindowParams p = win(3, 2, 1);
      p.isMax = isMax;
      int64_t oh = windowOutput(22, 3, 2, 1, 1, 1) + (ceil ? 1 : 0);
      int64_t ow = windowOutput(20, 3, 2, 1, 1, 1) + (ceil ? 1 : 0);
      int y = gb.act("y", {5, 67, oh, ow}, t());
      Op &o = gb.op(OpKind::Pool, "pool", {x}, y);
      o.window = p;
      if (!isMax) o.multipliers = {int8() ? 57 : 1}, o.rshift = int8() ? 9 : 0;
      // Ceil mode's last windows cover fewer taps: one multiplier per count.
      if (!isMax && ceil && int8()) o.multipliers = {255, 228, 152, 114, 91, 76, 65, 57, 51};
      gb.g.inputs = {x}, gb.g.outputs = {y};
      SCOPED_TRACE(std::string(isMax ? "max" : "avg") + (ceil ? " ceil" : ""));
      expectMatchesReference(gb.g, opts());
    }
}

// Average windows dividing by the taps they cover (count_include_pad = 0,
// asymmetric pads, ceil mode), a 1-D window (W = 1) and dilated max pooling.
TEST_P(OpTest, PoolsWithPartialWindows) {
  struct G { int64_t h, w, kh, kw, s, top, left, bottom, right, dil; bool isMax, countPad, ceil; };
  for (G geo : {G{22, 20, 3, 3, 2, 1, 1, 1, 1, 1, false, false, false}, G{22, 20, 3, 3, 2, 0, 0, 0, 0, 1, false, false, true},
                G{24, 17, 3, 2, 2, 2, 0, 0, 0, 1, false, true, true}, G{40, 1, 3, 1, 2, 1, 0, 1, 0, 1, false, false, false},
                G{25, 23, 3, 3, 1, 0, 0, 0, 0, 2, true, true, false}, G{30, 1, 2, 1, 1, 0, 0, 0, 0, 1, true, true, false}}) {
    GraphBuilder gb;
    int x = gb.act("x", {5, 67, geo.h, geo.w}, t());
    WindowParams p;
    p.kh = geo.kh, p.kw = geo.kw, p.strideH = geo.s, p.strideW = geo.w > 1 ? geo.s : 1;
    p.dilationH = p.dilationW = geo.dil;
    p.padTop = geo.top, p.padLeft = geo.left, p.padBottom = geo.bottom, p.padRight = geo.right;
    p.isMax = geo.isMax, p.countPad = geo.countPad;
    int64_t oh = windowOutput(geo.h, p.kh, p.strideH, p.dilationH, p.padTop, p.padBottom) + (geo.ceil ? 1 : 0);
    int64_t ow = windowOutput(geo.w, p.kw, p.strideW, p.dilationW, p.padLeft, p.padRight) + (geo.ceil ? 1 : 0);
    int y = gb.act("y", {5, 67, oh, ow}, t());
    Op &o = gb.op(OpKind::Pool, "pool", {x}, y);
    o.window = p;
    if (!geo.isMax && int8()) {
      for (int64_t taps = 1; taps <= p.kh * p.kw; ++taps) o.multipliers.push_back(int32_t(255 / taps));
      o.rshift = 8;
    }
    gb.g.inputs = {x}, gb.g.outputs = {y};
    SCOPED_TRACE("h" + std::to_string(geo.h) + " w" + std::to_string(geo.w) + " k" + std::to_string(geo.kh));
    expectMatchesReference(gb.g, opts());
  }
}

TEST_P(OpTest, GlobalAvgPool) {
  GraphBuilder gb;
  int x = gb.act("x", {3, 100, 7, 9}, t());
  int y = gb.act("y", {3, 100, 1, 1}, t());
  Op &o = gb.op(OpKind::GlobalAvgPool, "gap", {x}, y);
  o.multipliers = {int8() ? 65 : 1}, o.rshift = int8() ? 12 : 0;
  gb.g.inputs = {x}, gb.g.outputs = {y};
  expectMatchesReference(gb.g, opts());
}

TEST_P(OpTest, Binary) {
  for (OpKind k : {OpKind::Add, OpKind::Mul, OpKind::Max})
    for (bool relu : {false, true}) {
      GraphBuilder gb;
      int a = gb.act("a", {6, 70, 9, 11}, t()), b = gb.act("b", {6, 70, 9, 11}, t());
      int y = gb.act("y", {6, 70, 9, 11}, t());
      Op &o = gb.op(k, "bin", {a, b}, y);
      o.relu = relu;
      if (int8()) {
        o.multipliers = k == OpKind::Mul ? std::vector<int32_t>{93} : std::vector<int32_t>{-77, 301};
        o.rshift = k == OpKind::Mul ? 12 : 8;
      }
      gb.g.inputs = {a, b}, gb.g.outputs = {y};
      SCOPED_TRACE(opKindName(k));
      expectMatchesReference(gb.g, opts());
    }
}

TEST(BackendSigmoid, RecipeIsAccurate) {
  for (float x = -30.0f; x <= 30.0f; x += 0.01f)
    EXPECT_NEAR(sigmoidChip(x), 1.0f / (1.0f + std::exp(-x)), 3e-6f) << x;
}

TEST(BackendSigmoid, Fp32WholeSlicedAndGrouped) {
  GraphBuilder gb;
  const DType f = DType::F32;
  int x = gb.act("x", {3, 70, 11, 13}, f), s = gb.act("s", {3, 70, 11, 13}, f);
  int y = gb.act("y", {3, 70, 11, 13}, f);
  Op &scale = gb.op(OpKind::Affine, "spread", {x}, s);
  scale.alpha = 25.0f; // inputs in [-25, 25]: past the clamp too
  gb.op(OpKind::Sigmoid, "sigmoid", {s}, y);
  gb.g.inputs = {x}, gb.g.outputs = {y};
  for (bool small : {false, true})
    for (bool groups : {false, true}) {
      Options o;
      if (small) o.hw = smallLmem();
      o.layerGroups = groups;
      if (groups) o.segmentStarts.assign(1, 0);
      expectMatchesReference(gb.g, o);
    }
}

TEST_P(OpTest, BinaryChannelBroadcast) {
  for (OpKind k : {OpKind::Add, OpKind::Mul, OpKind::Max}) {
    GraphBuilder gb;
    int a = gb.act("a", {5, 70, 9, 11}, t()), b = gb.act("b", {5, 70, 1, 1}, t());
    int y = gb.act("y", {5, 70, 9, 11}, t());
    Op &o = gb.op(k, "se", {a, b}, y);
    if (int8()) {
      o.multipliers = k == OpKind::Mul ? std::vector<int32_t>{57} : std::vector<int32_t>{11, -9};
      o.rshift = k == OpKind::Mul ? 10 : 4;
    }
    gb.g.inputs = {a, b}, gb.g.outputs = {y};
    SCOPED_TRACE(opKindName(k));
    expectMatchesReference(gb.g, opts());
  }
}

TEST_P(OpTest, BinaryPerChannelWeight) {
  for (OpKind k : {OpKind::Add, OpKind::Mul, OpKind::Max}) {
    GraphBuilder gb;
    int a = gb.act("a", {5, 70, 9, 11}, t()), y = gb.act("y", {5, 70, 9, 11}, t());
    int w = gb.weight("scale", {1, 70, 1, 1}, int8() ? DType::I8 : DType::F32);
    Op &o = gb.op(k, "channel_" + std::string(opKindName(k)), {a, w}, y);
    if (int8()) {
      o.multipliers = k == OpKind::Mul ? std::vector<int32_t>{57} : std::vector<int32_t>{11, -9};
      o.rshift = k == OpKind::Mul ? 10 : 4;
    }
    gb.g.inputs = {a}, gb.g.outputs = {y};
    SCOPED_TRACE(opKindName(k));
    expectMatchesReference(gb.g, opts());
    Options grouped = opts();
    grouped.layerGroups = true;
    expectMatchesReference(gb.g, grouped);
  }
}

TEST_P(OpTest, Activations) {
  for (OpKind k : {OpKind::Relu, OpKind::LeakyRelu, OpKind::Clip, OpKind::Affine}) {
    GraphBuilder gb;
    int x = gb.act("x", {5, 65, 13, 7}, t());
    int y = gb.act("y", {5, 65, 13, 7}, t());
    Op &o = gb.op(k, "act", {x}, y);
    if (k == OpKind::LeakyRelu) {
      o.alpha = 0.1f;
      if (int8()) o.multipliers = {13}, o.rshift = 7;
    }
    if (k == OpKind::Affine) {
      o.alpha = 0.1666667f, o.beta = 0.5f, o.relu = true;
      if (int8()) o.multipliers = {43, -1000}, o.rshift = 8;
    }
    if (k == OpKind::Clip) {
      o.clipMin = int8() ? -20.0f : -0.25f;
      o.clipMax = int8() ? 90.0f : 0.5f;
    }
    gb.g.inputs = {x}, gb.g.outputs = {y};
    SCOPED_TRACE(opKindName(k));
    expectMatchesReference(gb.g, opts());
  }
}

// Batch norm: x * scale[c] + bias[c] (int8: int16 scale, int32 bias), with
// and without relu, alone and in a group behind a conv (halo rows).
TEST_P(OpTest, AffinePerChannel) {
  for (bool relu : {false, true}) {
    GraphBuilder gb;
    const int64_t c = 67;
    int x = gb.act("x", {5, c, 13, 9}, t()), y = gb.act("y", {5, c, 13, 9}, t());
    int sc = gb.weight("scale", {c}, int8() ? DType::I16 : DType::F32);
    int bi = gb.weight("bias", {1, c, 1, 1}, int8() ? DType::I32 : DType::F32);
    if (int8()) { // biases of the size a real batch norm has: a few output steps << rshift
      std::uniform_int_distribution<int32_t> d(-40000, 40000);
      for (int64_t i = 0; i < c; ++i) {
        int32_t v = d(gb.rng);
        std::memcpy(&gb.g.tensors[size_t(bi)].data[size_t(4 * i)], &v, 4);
      }
    }
    Op &o = gb.op(OpKind::Affine, "bn", {x, sc, bi}, y);
    o.relu = relu, o.rshift = int8() ? 11 : 0;
    gb.g.inputs = {x}, gb.g.outputs = {y};
    SCOPED_TRACE(relu ? "relu" : "no relu");
    auto rep = expectMatchesReference(gb.g, opts());
    if (GetParam().smallLmem) {
      EXPECT_GT(rep.ops.at(0).slices, 1u);
    }
  }
}

TEST_P(OpTest, AffinePerChannelInAGroupAfterConv) {
  GraphBuilder gb;
  const int64_t c = 70;
  int x = gb.act("x", {3, 5, 21, 13}, t()), h = gb.act("h", {3, c, 21, 13}, t());
  int y = gb.act("y", {3, c, 21, 13}, t());
  Op &cv = gb.op(OpKind::Conv, "conv", {x, gb.weight("w", {c, 5, 3, 3}, weightType())}, h);
  cv.window = win(3, 1, 1), cv.rshift = int8() ? 7 : 0;
  int sc = gb.weight("scale", {c}, int8() ? DType::I16 : DType::F32);
  int bi = gb.weight("bias", {c}, int8() ? DType::I32 : DType::F32);
  if (int8())
    for (int64_t i = 0; i < c; ++i) {
      int32_t v = int32_t(i * 977 - 30000);
      std::memcpy(&gb.g.tensors[size_t(bi)].data[size_t(4 * i)], &v, 4);
    }
  Op &o = gb.op(OpKind::Affine, "bn", {h, sc, bi}, y);
  o.relu = true, o.rshift = int8() ? 12 : 0;
  gb.g.inputs = {x}, gb.g.outputs = {y};
  Options grouped = opts();
  grouped.segmentStarts.assign(1, 0); // one segment: conv and affine
  auto rep = expectMatchesReference(gb.g, grouped);
  ASSERT_EQ(rep.ops.size(), 1u);
  EXPECT_EQ(rep.ops[0].ops, 2u);
}

TEST(BackendAffine, PerChannelWeightsAreValidated) {
  GraphBuilder gb;
  int x = gb.act("x", {1, 8, 4, 4}, DType::I8), y = gb.act("y", {1, 8, 4, 4}, DType::I8);
  gb.op(OpKind::Affine, "bn", {x, gb.weight("scale", {8}, DType::I8), gb.weight("bias", {8}, DType::I32)}, y);
  gb.g.inputs = {x}, gb.g.outputs = {y};
  auto st = gb.g.validate();
  ASSERT_FALSE(st);
  EXPECT_EQ(st.message(), "Affine 'bn': weight 'scale' must be int16");
  Tensor &scale = gb.g.tensors[2];
  scale.dtype = DType::I16, scale.shape = {7}, scale.data.assign(14, 1);
  st = gb.g.validate();
  ASSERT_FALSE(st);
  EXPECT_EQ(st.message(), "Affine 'bn': weight 'scale' must hold one value per channel ([8] or [1, 8, 1, 1])");
}

TEST_P(OpTest, Fc) {
  for (bool bias : {false, true}) {
    GraphBuilder gb;
    int x = gb.act("x", {5, 37, 3, 3}, t());
    int y = gb.act("y", {5, 150}, t());
    std::vector<int> in{x, gb.weight("w", {150, 37 * 9}, weightType())};
    if (bias) in.push_back(gb.weight("b", {150}, biasType()));
    Op &o = gb.op(OpKind::Fc, "fc", in, y);
    o.relu = bias, o.rshift = int8() ? 10 : 0;
    gb.g.inputs = {x}, gb.g.outputs = {y};
    expectMatchesReference(gb.g, opts());
  }
}

// gemm transA: x is (K, M) = (37, 70), read transposed by the mm command
// (K items of M channels: 4N groups of K in int8, M past one lane set).
TEST_P(OpTest, FcTransposedInput) {
  GraphBuilder gb;
  int x = gb.act("x", {37, 70}, t());
  int y = gb.act("y", {70, 150}, t());
  Op &o = gb.op(OpKind::Fc, "fc", {x, gb.weight("w", {150, 37}, weightType()), gb.weight("b", {150}, biasType())}, y);
  o.transposedInput = true, o.rshift = int8() ? 8 : 0;
  gb.g.inputs = {x}, gb.g.outputs = {y};
  expectMatchesReference(gb.g, opts());
}

TEST_P(OpTest, FcTooWideIsAnError) {
  GraphBuilder gb;
  int x = gb.act("x", {3, 5000}, t());
  int y = gb.act("y", {3, 70}, t());
  Op &o = gb.op(OpKind::Fc, "fc", {x, gb.weight("w", {70, 5000}, weightType()), gb.weight("b", {70}, biasType())}, y);
  o.rshift = int8() ? 12 : 0;
  gb.g.inputs = {x}, gb.g.outputs = {y};
  auto m = compileToBmodel(gb.g, opts());
  ASSERT_FALSE(m.isOk());
  EXPECT_EQ(m.message(), "Fc 'fc': K = 5000 exceeds the 4095 rows one matrix command takes (K splitting is not implemented)");
}

TEST_P(OpTest, ConcatUpsampleReshape) {
  GraphBuilder gb;
  int a = gb.act("a", {5, 3, 6, 7}, t()), b = gb.act("b", {5, 70, 6, 7}, t());
  int c = gb.act("c", {5, 73, 6, 7}, t());
  int u = gb.act("u", {5, 73, 12, 21}, t());
  int r = gb.act("r", {5, 73 * 12 * 21}, t());
  gb.op(OpKind::Concat, "cat", {a, b}, c);
  Op &up = gb.op(OpKind::Upsample, "up", {c}, u);
  up.scaleH = 2, up.scaleW = 3;
  gb.op(OpKind::Reshape, "flat", {u}, r);
  gb.g.inputs = {a, b}, gb.g.outputs = {c, r};
  expectMatchesReference(gb.g, opts());
}

// PP-OCR's neck: nearest x2, x4, x8 (and 3x2), odd channels past one lane
// row, a batch that leaves a 4N group partly empty.
TEST_P(OpTest, UpsampleFactors) {
  for (auto [sh, sw] : {std::pair<int64_t, int64_t>{2, 2}, {4, 4}, {8, 8}, {3, 2}}) {
    GraphBuilder gb;
    int x = gb.act("x", {5, 67, 12, 9}, t()), y = gb.act("y", {5, 67, 12 * sh, 9 * sw}, t());
    Op &o = gb.op(OpKind::Upsample, "up", {x}, y);
    o.scaleH = sh, o.scaleW = sw;
    gb.g.inputs = {x}, gb.g.outputs = {y};
    SCOPED_TRACE(std::to_string(sh) + "x" + std::to_string(sw));
    auto rep = expectMatchesReference(gb.g, opts());
    if (GetParam().smallLmem) {
      EXPECT_GT(rep.ops.at(0).slices, 1u);
    }
  }
}

// Resize by tables of any scale (kernels::resizeTaps): bilinear up and down
// in the coordinate modes of the node tests, nearest by non-integer factors
// (the only int8 form). fp32 bit-exact: an int8 model runs it as an fp32
// island whose result is quantized again.
TEST_P(OpTest, ResizeAnyScale) {
  struct G { int64_t h, w, oh, ow; const char *mode, *coord, *nearest; };
  const G cases[] = {{12, 9, 30, 23, "linear", "half_pixel", ""},        {20, 17, 12, 10, "linear", "pytorch_half_pixel", ""},
                     {9, 8, 27, 13, "linear", "align_corners", ""},     {13, 11, 13, 29, "linear", "asymmetric", ""},
                     {10, 7, 25, 7, "nearest", "asymmetric", "floor"},  {16, 15, 9, 31, "nearest", "half_pixel", "round_prefer_ceil"},
                     {8, 8, 19, 19, "nearest", "align_corners", "round_prefer_floor"}};
  for (const G &geo : cases) {
    const bool linear = std::string(geo.mode) == "linear";
    if (int8() && linear) continue; // int8: nearest only
    GraphBuilder gb;
    int x = gb.act("x", {5, 67, geo.h, geo.w}, t()), y = gb.act("y", {5, 67, geo.oh, geo.ow}, t());
    Op &o = gb.op(OpKind::Resize, "resize", {x}, y);
    const auto p = kernels::resizeParams(geo.mode, geo.coord, geo.nearest);
    o.resizeH = kernels::resizeTaps(geo.h, geo.oh, double(geo.oh) / double(geo.h), p);
    o.resizeW = kernels::resizeTaps(geo.w, geo.ow, double(geo.ow) / double(geo.w), p);
    gb.g.inputs = {x}, gb.g.outputs = {y};
    SCOPED_TRACE(std::string(geo.mode) + " " + geo.coord + " " + std::to_string(geo.oh) + "x" + std::to_string(geo.ow));
    auto rep = expectMatchesReference(gb.g, opts(), 1, /*fp32BitExact=*/true);
    if (GetParam().smallLmem) {
      EXPECT_GT(rep.ops.at(0).slices, 1u);
    }
  }
}

// Strided slices on every axis (YOLO's space-to-depth and channel splits
// among them): batches that start and end inside a 4N group, odd steps,
// a box that reaches the input's last element.
TEST_P(OpTest, SliceStrides) {
  struct SliceCase {
    std::array<int64_t, 4> in, start, step, out;
  };
  const SliceCase cases[] = {
      {{1, 8, 16, 16}, {0, 0, 0, 1}, {1, 1, 2, 2}, {1, 8, 8, 8}},     // space-to-depth phase
      {{1, 70, 6, 7}, {0, 35, 0, 0}, {1, 1, 1, 1}, {1, 35, 6, 7}},    // second half of the channels
      {{6, 5, 9, 11}, {1, 1, 2, 3}, {2, 3, 3, 4}, {3, 2, 3, 2}},      // every axis, odd steps
      {{5, 3, 4, 5}, {3, 0, 1, 4}, {1, 2, 1, 1}, {2, 2, 3, 1}},       // items 3, 4 across a 4N group
  };
  for (const auto &sc : cases) {
    GraphBuilder gb;
    int x = gb.act("x", {sc.in[0], sc.in[1], sc.in[2], sc.in[3]}, t());
    int y = gb.act("y", {sc.out[0], sc.out[1], sc.out[2], sc.out[3]}, t());
    Op &o = gb.op(OpKind::Slice, "slice", {x}, y);
    o.sliceStart = sc.start, o.sliceStep = sc.step;
    gb.g.inputs = {x}, gb.g.outputs = {y};
    SCOPED_TRACE("input n " + std::to_string(sc.in[0]) + " c " + std::to_string(sc.in[1]));
    expectMatchesReference(gb.g, opts(), 7, /*fp32BitExact=*/true);
  }
}

TEST(BackendSlice, ReadingPastTheInputIsAnError) {
  GraphBuilder gb;
  int x = gb.act("x", {1, 4, 8, 8}, DType::F32), y = gb.act("y", {1, 4, 8, 3}, DType::F32);
  Op &o = gb.op(OpKind::Slice, "slice", {x}, y);
  o.sliceStart = {0, 0, 0, 2}, o.sliceStep = {1, 1, 1, 3};
  gb.g.inputs = {x}, gb.g.outputs = {y};
  auto st = gb.g.validate();
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.message(), "Slice 'slice': output w = 3 from start 2 step 3 reads past the input's 8");
}

INSTANTIATE_TEST_SUITE_P(Backend, OpTest,
                         testing::Values(Case{DType::F32, false}, Case{DType::I8, false},
                                         Case{DType::F32, true}, Case{DType::I8, true}),
                         caseName);

// int8-only ops, whole and sliced.
class Int8OpTest : public testing::TestWithParam<bool> {
protected:
  Options opts() const {
    Options o;
    if (GetParam()) o.hw = smallLmem();
    return o;
  }
};

TEST_P(Int8OpTest, LutTable) {
  GraphBuilder gb;
  int x = gb.act("x", {3, 71, 10, 9}, DType::I8);
  int tb = gb.weight("table", {256}, DType::I8);
  int y = gb.act("y", {3, 71, 10, 9}, DType::I8);
  gb.op(OpKind::Lut, "sigmoid", {x, tb}, y);
  gb.g.inputs = {x}, gb.g.outputs = {y};
  expectMatchesReference(gb.g, opts());
}

TEST_P(Int8OpTest, SigmoidTableFromKernels) {
  GraphBuilder gb;
  int x = gb.act("x", {2, 9, 5, 5}, DType::I8, 0.05f);
  int y = gb.act("y", {2, 9, 5, 5}, DType::I8, 1.0f / 127);
  Tensor tb;
  tb.name = "sigmoid_table", tb.shape = {256}, tb.dtype = DType::I8;
  tb.data = activationTable(kernels::UnaryKind::Sigmoid, 0, 0, DType::I8, 0.05f, DType::I8, 1.0f / 127);
  EXPECT_EQ(int8_t(tb.data[0]), 64);     // sigmoid(0) = 0.5 -> 63.5 -> 64 (half to even)
  EXPECT_EQ(int8_t(tb.data[127]), 127);  // sigmoid(6.35) = 0.998 -> 127
  EXPECT_EQ(int8_t(tb.data[128]), 0);    // sigmoid(-6.4) = 0.0017 -> 0
  gb.op(OpKind::Lut, "sigmoid", {x, gb.g.addTensor(tb)}, y);
  gb.g.inputs = {x}, gb.g.outputs = {y};
  expectMatchesReference(gb.g, opts());
}

TEST_P(Int8OpTest, CastsAndRequant) {
  GraphBuilder gb;
  int x = gb.act("x", {5, 66, 5, 8}, DType::F32);
  int q = gb.act("q", {5, 66, 5, 8}, DType::I8, 0.0125f);
  int r = gb.act("r", {5, 66, 5, 8}, DType::I8, 0.02f);
  int f = gb.act("f", {5, 66, 5, 8}, DType::F32);
  gb.op(OpKind::Cast, "quant", {x}, q);
  Op &rq = gb.op(OpKind::Requant, "requant", {q}, r);
  rq.multipliers = {161}, rq.rshift = 8, rq.relu = true;
  gb.op(OpKind::Cast, "dequant", {r}, f);
  gb.g.inputs = {x}, gb.g.outputs = {q, f};
  expectMatchesReference(gb.g, opts());
}

TEST_P(Int8OpTest, Uint8Activations) {
  GraphBuilder gb;
  int x = gb.act("x", {2, 9, 12, 12}, DType::U8);
  int y = gb.act("y", {2, 9, 6, 6}, DType::U8);
  Op &o = gb.op(OpKind::Pool, "maxpool", {x}, y);
  o.window = win(2, 2, 0), o.window.isMax = true;
  gb.g.inputs = {x}, gb.g.outputs = {y};
  expectMatchesReference(gb.g, opts());
}

INSTANTIATE_TEST_SUITE_P(Backend, Int8OpTest, testing::Bool());

} // namespace
