// Every op kind, fp32 and int8, compiled alone and run with the semantics
// library; int8 bit-exact with QuantRef, fp32 within 1e-5. Shapes include
// odd channel counts (lane wrap-around past 64), batches that leave a 4N
// group partly empty, and a small-LMEM configuration that forces slices
// along N, C and H (with halo rows for windows).
#include "BackendHarness.h"
#include "arith/IntArith.h"
#include "compiler/Backend/FloatKernels.h"
#include "compiler/Backend/Ops/Activation.h"
#include "compiler/Backend/Ops/Affine.h"
#include "compiler/Backend/Ops/Fc.h"
#include "compiler/Backend/Ops/Move.h"
#include "compiler/Backend/Ops/Reduce.h"
#include "compiler/Backend/Ops/Resize.h"
#include "compiler/Backend/Ops/Slice.h"
#include "compiler/Backend/Ops/Unary.h"
#include "compiler/Backend/Ops/Upsample.h"
#include "compiler/Backend/Ops/Window.h"

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
    o.params<WindowParams>() = p, o.relu = relu, o.rshift = int8() ? 9 : 0;
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
// Windows the command fields cannot hold (pads above 15, dilation above 16,
// stride above 15) run as groups of kernel taps summed into one result.
TEST_P(OpTest, ConvDilationBeyondTheField) { conv(1, 20, 21, 21, 67, win(3, 1, 17, 17), true, true); }
TEST_P(OpTest, ConvPadsBeyondTheField) { conv(2, 5, 30, 27, 9, win(3, 2, 17, 1), true, false); }
TEST_P(OpTest, ConvStrideBeyondTheField) { conv(1, 6, 70, 71, 8, win(4, 17, 0), true, true); }
TEST_P(OpTest, ConvDepthwiseDilationBeyondTheField) { conv(2, 70, 21, 22, 70, win(3, 1, 18, 18, 70), true, true); }
TEST_P(OpTest, ConvGroupedDilationBeyondTheField) { conv(3, 12, 20, 21, 18, win(3, 1, 18, 18, 3), false, true); }
// DeepLabV3's ASPP at 520x520 (a 33x33 map): dilation 24 (every tap reads
// part of the input) and 36 (the outer taps never do: one 1x1 conv). The
// small local memory takes the same on a 20x20 map (dilation 17 and 24).
TEST_P(OpTest, ConvAspp) {
  const bool small = GetParam().smallLmem;
  const int64_t side = small ? 20 : 33, partly = small ? 17 : 24, never = small ? 24 : 36;
  conv(1, 40, side, side, 70, win(3, 1, partly, partly), true, true);
  conv(1, 40, side, side, 70, win(3, 1, never, never), true, false);
}
TEST_P(OpTest, Conv7x7Stride2) { conv(1, 3, 64, 61, 16, win(7, 2, 3), true, true); }

TEST_P(OpTest, ConvTranspose) {
  struct G {
    int64_t k, s, pad, outPad, groups = 1, dil = 1, ic = 13, oc = 67;
  };
  for (G geo : {G{2, 2, 0, 0}, G{3, 2, 1, 1}, G{4, 2, 1, 0}, G{3, 1, 1, 0},
                G{4, 2, 1, 0, 3, 1, 12, 18},   // grouped
                G{4, 2, 1, 0, 70, 1, 70, 70},  // depthwise (CenterNet's IDA upsampling)
                G{3, 2, 1, 1, 1, 2},           // dilated
                G{3, 3, 0, 2},                 // output padding past the last window (bias only)
                G{2, 3, 0, 1}}) {              // kernel shorter than the stride (bias-only rows)
    GraphBuilder gb;
    const int64_t n = 3, ih = 23, iw = 17;
    int64_t oh = (ih - 1) * geo.s - 2 * geo.pad + (geo.k - 1) * geo.dil + 1 + geo.outPad;
    int64_t ow = (iw - 1) * geo.s - 2 * geo.pad + (geo.k - 1) * geo.dil + 1 + geo.outPad;
    int x = gb.act("x", {n, geo.ic, ih, iw}, t()), y = gb.act("y", {n, geo.oc, oh, ow}, t());
    Op &o = gb.op(OpKind::ConvTranspose, "deconv",
                  {x, gb.weight("w", {geo.ic, geo.oc / geo.groups, geo.k, geo.k}, weightType()),
                   gb.weight("b", {geo.oc}, biasType())},
                  y);
    o.params<WindowParams>() = win(geo.k, geo.s, geo.pad, geo.dil, geo.groups);
    o.rshift = int8() ? 8 : 0, o.relu = true;
    gb.g.inputs = {x}, gb.g.outputs = {y};
    SCOPED_TRACE("k" + std::to_string(geo.k) + " s" + std::to_string(geo.s) + " p" + std::to_string(geo.pad) +
                 " g" + std::to_string(geo.groups) + " d" + std::to_string(geo.dil) + " op" +
                 std::to_string(geo.outPad));
    auto rep = expectMatchesReference(gb.g, opts());
    if (GetParam().smallLmem && !rep.ops.empty() && geo.s > 1) {
      EXPECT_GT(rep.ops[0].slices, 1u);
    }
  }
}

// Slices of one or two output rows of a stride-4 1x1 transposed conv: most
// hold no input row and are the bias alone.
TEST_P(OpTest, ConvTransposeRowsWithoutInput) {
  GraphBuilder gb;
  const int64_t ic = 3, oc = 5, ih = 6, iw = 900, s = 4;
  int x = gb.act("x", {1, ic, ih, iw}, t()), y = gb.act("y", {1, oc, (ih - 1) * s + 1 + 2, (iw - 1) * s + 1}, t());
  Op &o = gb.op(OpKind::ConvTranspose, "deconv",
                {x, gb.weight("w", {ic, oc, 1, 1}, weightType()), gb.weight("b", {oc}, biasType())}, y);
  o.params<WindowParams>() = win(1, s, 0), o.params<WindowParams>().strideW = s, o.rshift = int8() ? 5 : 0;
  gb.g.inputs = {x}, gb.g.outputs = {y};
  Options opt = opts();
  opt.hw = smallLmem(int8() ? 8 * 1024 : 32 * 1024); // int8 at batch 1 is 1N: a quarter of fp32's bytes
  auto rep = expectMatchesReference(gb.g, opt);
  ASSERT_FALSE(rep.ops.empty());
  EXPECT_LE(rep.ops[0].hSlice, 2);
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
      o.params<WindowParams>() = p;
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
    o.params<WindowParams>() = p;
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
  scale.params<AffineParams>().alpha = 25.0f; // inputs in [-25, 25]: past the clamp too
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
      o.params<LeakyReluParams>().alpha = 0.1f;
      if (int8()) o.multipliers = {13}, o.rshift = 7;
    }
    if (k == OpKind::Affine) {
      o.params<AffineParams>() = {0.1666667f, 0.5f}, o.relu = true;
      if (int8()) o.multipliers = {43, -1000}, o.rshift = 8;
    }
    if (k == OpKind::Clip) {
      o.params<ClipParams>().min = int8() ? -20.0f : -0.25f;
      o.params<ClipParams>().max = int8() ? 90.0f : 0.5f;
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
  cv.params<WindowParams>() = win(3, 1, 1), cv.rshift = int8() ? 7 : 0;
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
  o.params<FcParams>().transposedInput = true, o.rshift = int8() ? 8 : 0;
  gb.g.inputs = {x}, gb.g.outputs = {y};
  expectMatchesReference(gb.g, opts());
}

// A Linear over an NHWC tensor: x (N, H, W, K), output (N, H, W, n_out), the
// rows its leading dims (int8: each batch item's rows apart in its 4N group;
// 3 items leave one slot of the group empty).
TEST_P(OpTest, FcOverLeadingDims) {
  for (int64_t n : {1, 3}) {
    GraphBuilder gb;
    int x = gb.act("x", {n, 14, 60, 37}, t());
    int y = gb.act("y", {n, 14, 60, 70}, t());
    Op &o = gb.op(OpKind::Fc, "fc", {x, gb.weight("w", {70, 37}, weightType()), gb.weight("b", {70}, biasType())}, y);
    o.relu = true, o.rshift = int8() ? 9 : 0;
    gb.g.inputs = {x}, gb.g.outputs = {y};
    SCOPED_TRACE("batch " + std::to_string(n));
    auto rep = expectMatchesReference(gb.g, opts());
    if (GetParam().smallLmem && !rep.ops.empty() && (n > 1 || !int8())) {
      EXPECT_GT(rep.ops[0].slices, 1u);
    }
  }
}

// Rows longer than the 4095 one mm command takes (VGG's 25088) run as
// chunks that accumulate: fp32 bit-exact with the reference's chunked sums,
// int8 through an int32 buffer; whole and sliced over the output columns.
TEST(BackendFc, WideRowsInChunks) {
  for (DType t : {DType::F32, DType::I8})
    for (bool small : {false, true}) {
      GraphBuilder gb;
      const bool int8 = t != DType::F32;
      int x = gb.act("x", {3, 9000}, t), y = gb.act("y", {3, 130}, t);
      Op &o = gb.op(OpKind::Fc, "fc",
                    {x, gb.weight("w", {130, 9000}, int8 ? DType::I8 : DType::F32),
                     gb.weight("b", {130}, int8 ? DType::I16 : DType::F32)}, y);
      o.rshift = int8 ? 13 : 0, o.relu = true;
      gb.g.inputs = {x}, gb.g.outputs = {y};
      Options opt;
      if (small) opt.hw = smallLmem(int8 ? 16 * 1024 : 64 * 1024); // the weights of 64 columns at a time
      SCOPED_TRACE(std::string(int8 ? "int8" : "fp32") + (small ? " sliced" : ""));
      auto rep = expectMatchesReference(gb.g, opt, 7, /*fp32BitExact=*/true);
      EXPECT_EQ(rep.ops.at(0).tiuCommands, rep.ops.at(0).slices * (int8 ? 4u : 3u)); // 3 chunks (+ requant)
      if (small) {
        EXPECT_GT(rep.ops.at(0).slices, 1u);
      }
    }
}

// A lane's W output columns load as one run of W x K weights, which one GDMA
// w extent (at most 65535) must hold: int8 K = 17000 over 256 columns would
// take W = 4 (one lane round) without that limit, and now takes W = 2.
TEST(BackendFc, LaneColumnsWithinOneLoadRun) {
  GraphBuilder gb;
  int x = gb.act("x", {1, 17000}, DType::I8), y = gb.act("y", {1, 256}, DType::I8);
  Op &o = gb.op(OpKind::Fc, "fc", {x, gb.weight("w", {256, 17000}, DType::I8), gb.weight("b", {256}, DType::I16)}, y);
  o.rshift = 14;
  gb.g.inputs = {x}, gb.g.outputs = {y};
  expectMatchesReference(gb.g, Options{}, 11);
}

TEST_P(OpTest, FcTransposedTooWideIsAnError) {
  GraphBuilder gb;
  int x = gb.act("x", {5000, 3}, t());
  int y = gb.act("y", {3, 70}, t());
  Op &o = gb.op(OpKind::Fc, "fc", {x, gb.weight("w", {70, 5000}, weightType()), gb.weight("b", {70}, biasType())}, y);
  o.rshift = int8() ? 12 : 0, o.params<FcParams>().transposedInput = true;
  gb.g.inputs = {x}, gb.g.outputs = {y};
  auto m = compileToBmodel(gb.g, opts());
  ASSERT_FALSE(m.isOk());
  EXPECT_EQ(m.message(), "Fc 'fc': K = 5000 exceeds the 4095 rows one matrix command takes with a transposed input "
                         "(K splitting is not implemented)");
}

TEST_P(OpTest, ConcatUpsampleReshape) {
  GraphBuilder gb;
  int a = gb.act("a", {5, 3, 6, 7}, t()), b = gb.act("b", {5, 70, 6, 7}, t());
  int c = gb.act("c", {5, 73, 6, 7}, t());
  int u = gb.act("u", {5, 73, 12, 21}, t());
  int r = gb.act("r", {5, 73 * 12 * 21}, t());
  gb.op(OpKind::Concat, "cat", {a, b}, c);
  Op &up = gb.op(OpKind::Upsample, "up", {c}, u);
  up.params<UpsampleParams>() = {2, 3};
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
    o.params<UpsampleParams>() = {sh, sw};
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
  uint64_t sliced = 0; // cases cut into slices (small LMEM: the cost model picks one slice where it fits)
  for (const G &geo : cases) {
    const bool linear = std::string(geo.mode) == "linear";
    if (int8() && linear) continue; // int8: nearest only
    GraphBuilder gb;
    int x = gb.act("x", {5, 67, geo.h, geo.w}, t()), y = gb.act("y", {5, 67, geo.oh, geo.ow}, t());
    Op &o = gb.op(OpKind::Resize, "resize", {x}, y);
    const auto p = kernels::resizeParams(geo.mode, geo.coord, geo.nearest);
    o.params<ResizeParams>().h = kernels::resizeTaps(geo.h, geo.oh, double(geo.oh) / double(geo.h), p);
    o.params<ResizeParams>().w = kernels::resizeTaps(geo.w, geo.ow, double(geo.ow) / double(geo.w), p);
    gb.g.inputs = {x}, gb.g.outputs = {y};
    SCOPED_TRACE(std::string(geo.mode) + " " + geo.coord + " " + std::to_string(geo.oh) + "x" + std::to_string(geo.ow));
    auto rep = expectMatchesReference(gb.g, opts(), 1, /*fp32BitExact=*/true);
    sliced += rep.ops.at(0).slices > 1;
  }
  if (GetParam().smallLmem) {
    EXPECT_GT(sliced, 0u) << "no case ran sliced";
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
    o.params<SliceParams>() = {sc.start, sc.step};
    gb.g.inputs = {x}, gb.g.outputs = {y};
    SCOPED_TRACE("input n " + std::to_string(sc.in[0]) + " c " + std::to_string(sc.in[1]));
    expectMatchesReference(gb.g, opts(), 7, /*fp32BitExact=*/true);
  }
}

TEST(BackendSlice, ReadingPastTheInputIsAnError) {
  GraphBuilder gb;
  int x = gb.act("x", {1, 4, 8, 8}, DType::F32), y = gb.act("y", {1, 4, 8, 3}, DType::F32);
  Op &o = gb.op(OpKind::Slice, "slice", {x}, y);
  o.params<SliceParams>() = {{0, 0, 0, 2}, {1, 1, 1, 3}};
  gb.g.inputs = {x}, gb.g.outputs = {y};
  auto st = gb.g.validate();
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.message(), "Slice 'slice': output w = 3 from start 2 step 3 reads past the input's 8");
}

// Move boxes: NHWC -> NCHW (batch 2, and 1: int8 as words), a 4-D permute,
// a concat along the batch, constant pads (batch 2: a whole fill; 1: fill
// runs of the border), a reversed broadcast read (negative and zero
// strides) and a rank-6 output; batches of 5 and 6 put int8 items of one box
// into different 4N groups.
TEST_P(OpTest, MoveBoxes) {
  struct MoveCase {
    const char *what;
    std::vector<std::vector<int64_t>> ins;
    std::vector<int64_t> out;
    std::vector<MovePiece> pieces;
    bool fills;
  };
  const MoveCase cases[] = {
      {"NHWC to NCHW (fp32: a cw transpose)", {{2, 5, 6, 3}}, {2, 3, 5, 6}, {{0, {1, 2, 3, 30}, 0, 0, {0, 90, 1, 3}, {0, 90, 30, 1}}}, false},
      {"one item NHWC to NCHW (int8: as words)", {{1, 5, 6, 3}}, {1, 3, 5, 6}, {{0, {1, 1, 3, 30}, 0, 0, {0, 0, 1, 3}, {0, 0, 30, 1}}}, false},
      {"permute (2, 0, 3, 1)", {{5, 3, 4, 6}}, {4, 5, 6, 3}, {{0, {4, 5, 6, 3}, 0, 0, {6, 72, 1, 24}, {90, 18, 3, 1}}}, false},
      {"concat along n",
       {{3, 2, 3, 5}, {2, 2, 3, 5}},
       {5, 2, 3, 5},
       {{0, {3, 2, 3, 5}, 0, 0, {30, 15, 5, 1}, {30, 15, 5, 1}}, {1, {2, 2, 3, 5}, 0, 90, {30, 15, 5, 1}, {30, 15, 5, 1}}},
       false},
      {"pad h 1/1, w 2/2", {{2, 3, 4, 5}}, {2, 3, 6, 9}, {{0, {2, 3, 4, 5}, 0, 11, {60, 20, 5, 1}, {162, 54, 9, 1}}}, true},
      {"one item pad (fill runs of the border)", {{1, 3, 4, 5}}, {1, 3, 6, 9}, {{0, {1, 3, 4, 5}, 0, 11, {0, 20, 5, 1}, {0, 54, 9, 1}}}, true},
      {"reversed w, broadcast c", {{6, 1, 4, 7}}, {6, 3, 4, 7}, {{0, {6, 3, 4, 7}, 6, 0, {28, 0, 7, -1}, {84, 28, 7, 1}}}, false},
      {"rank 6", {{2, 3, 4, 5}}, {2, 5, 1, 4, 1, 3}, {{0, {2, 5, 4, 3}, 0, 0, {60, 1, 5, 20}, {60, 12, 3, 1}}}, false},
  };
  for (const auto &mc : cases) {
    GraphBuilder gb;
    std::vector<int> ins;
    for (size_t i = 0; i < mc.ins.size(); ++i) ins.push_back(gb.act("x" + std::to_string(i), mc.ins[i], t()));
    int y = gb.act("y", mc.out, t());
    Op &o = gb.op(OpKind::Move, "move", ins, y);
    o.params<MoveParams>() = {mc.pieces, mc.fills, int8() ? -3.0f : -1.5f};
    gb.g.inputs = ins, gb.g.outputs = {y};
    SCOPED_TRACE(mc.what);
    expectMatchesReference(gb.g, opts(), 7, /*fp32BitExact=*/true);
  }
}

// Int8 permutes across 4N items, both sides 4N with the leading dim as the
// item. Cut at item and group bounds, each is one command: an attention
// permute (rows, heads, dims) -> (heads, dims, rows) (20 x 3 when cut per
// item) and a transpose of [80, 2100] (a detector's classes x boxes; one per
// element, past a layer's 65535 GDMA ids, when cut per item). A transpose of
// [6, 10] (6 and 10 items: last groups of two) moves the whole groups in
// one command each way and cuts the rest per item: 4, not 60.
TEST(BackendMove, Int8PermuteAcrossItemsCutsAtGroupBounds) {
  struct PermuteCase {
    const char *what;
    std::vector<int64_t> in, out;
    MovePiece piece;
    size_t commands;
  };
  const PermuteCase cases[] = {
      {"attention (20, 3, 8) -> (3, 8, 20)",
       {20, 3, 8},
       {3, 8, 20},
       {0, {1, 1, 24, 20}, 0, 0, {0, 0, 1, 24}, {0, 0, 20, 1}},
       1},
      {"transpose [80, 2100]", {80, 2100}, {2100, 80}, {0, {1, 1, 2100, 80}, 0, 0, {0, 0, 1, 2100}, {0, 0, 80, 1}}, 1},
      {"transpose [6, 10]", {6, 10}, {10, 6}, {0, {1, 1, 10, 6}, 0, 0, {0, 0, 1, 10}, {0, 0, 6, 1}}, 4},
  };
  for (const auto &pc : cases) {
    SCOPED_TRACE(pc.what);
    GraphBuilder gb;
    int x = gb.act("x", pc.in, DType::I8), y = gb.act("y", pc.out, DType::I8);
    gb.op(OpKind::Move, "move", {x}, y).params<MoveParams>().pieces = {pc.piece};
    gb.g.inputs = {x}, gb.g.outputs = {y};
    auto rep = expectMatchesReference(gb.g, Options{}, 5);
    EXPECT_EQ(rep.ops.at(0).gdmaCommands, pc.commands);
  }
}

// An int8 move of every item of a 4N tensor copies 32-bit words (the four
// items' bytes of one element position), so it costs what the fp32 move of
// the same shape does: a transpose of h and w (a strided read) and a
// channel concat, at 8 items (two groups) and 6 (a partial last group,
// whose padding bytes travel with the word), each matching the reference.
// Before, each such command moved single bytes 4 apart.
TEST(BackendMove, Int8MovesOfAllItemsCopyWords) {
  for (int64_t n : {8, 6}) {
    double cycles[2] = {};
    for (DType t : {DType::F32, DType::I8}) {
      GraphBuilder gb;
      int x = gb.act("x", {n, 3, 16, 20}, t), z = gb.act("z", {n, 2, 20, 16}, t), y = gb.act("y", {n, 5, 20, 16}, t);
      const int64_t e = 3 * 16 * 20, ey = 5 * 20 * 16;
      gb.op(OpKind::Move, "move", {x, z}, y).params<MoveParams>().pieces = {
          {0, {n, 3, 20, 16}, 0, 0, {e, 320, 1, 20}, {ey, 320, 16, 1}},
          {1, {n, 2, 20, 16}, 0, 3 * 320, {2 * 320, 320, 16, 1}, {ey, 320, 16, 1}}};
      gb.g.inputs = {x, z}, gb.g.outputs = {y};
      SCOPED_TRACE(std::string(dtypeName(t)) + " n " + std::to_string(n));
      auto rep = expectMatchesReference(gb.g, Options{}, 5, /*fp32BitExact=*/true);
      EXPECT_EQ(rep.ops.at(0).gdmaCommands, 2u);
      cycles[t == DType::I8] = rep.ops.at(0).cycles;
    }
    EXPECT_LE(cycles[1], cycles[0] * 1.05) << "n " << n;
  }
}

TEST(BackendMove, BoxesOutsideTheTensorsOrGapsAreErrors) {
  auto check = [](MovePiece piece, const char *message) {
    GraphBuilder gb;
    int x = gb.act("x", {1, 2, 3, 4}, DType::F32), y = gb.act("y", {1, 2, 3, 4}, DType::F32);
    gb.op(OpKind::Move, "move", {x}, y).params<MoveParams>().pieces = {piece};
    gb.g.inputs = {x}, gb.g.outputs = {y};
    auto st = gb.g.validate();
    ASSERT_FALSE(st.isOk());
    EXPECT_EQ(st.message(), message);
  };
  check({0, {1, 1, 1, 24}, 1, 0, {0, 0, 0, 1}, {0, 0, 0, 1}}, "Move 'move': piece 0 reads elements [1, 24] of 24");
  check({0, {1, 1, 1, 24}, 0, 0, {0, 0, 0, 1}, {0, 0, 0, -1}}, "Move 'move': piece 0 writes elements [-23, 0] of 24");
  check({0, {1, 1, 1, 23}, 0, 0, {0, 0, 0, 1}, {0, 0, 0, 1}},
        "Move 'move': output element 23 is written by no piece and not filled");
}

// Reductions over every kind of axis set (kept dims brought to n and c, the
// reduced ones to h and w), each mode, bit-exact with the reference in fp32
// too (the reference sums, folds and negates in the commands' order).
TEST_P(OpTest, ReduceAnyAxes) {
  struct ReduceCase {
    std::vector<int64_t> in;
    std::array<bool, 4> axes;
    std::vector<int64_t> out;
  };
  const ReduceCase cases[] = {
      {{1, 100, 7, 9}, {false, false, true, true}, {1, 100}},       // spatial mean (lanes wrap past 64)
      {{3, 70, 5, 6}, {false, true, false, false}, {3, 1, 5, 6}},   // channels: kept n and h*w
      {{3, 4, 5, 6}, {true, false, true, false}, {1, 4, 1, 6}},     // n and h: two kept, two reduced
      {{6, 3, 4, 5}, {false, false, false, true}, {6, 3, 4, 1}},    // w, a batch of two 4N groups
      {{2, 3, 4, 5}, {true, true, true, true}, {1, 1, 1, 1}},       // everything
      {{3, 4, 5}, {false, true, false, false}, {3, 5}},             // 3-D, keepdims 0
      {{6, 7}, {false, true, false, false}, {6}},                   // 2-D rows of a big batch
      {{2, 150, 40, 30}, {false, true, false, false}, {2, 1, 40, 30}}, // sliced along n and c with small LMEM
      {{4, 32, 2, 2}, {true, true, true, true}, {1, 1, 1, 1}},     // everything: sums in 64 runs (int8: full 4N groups)
      {{3, 64, 2, 2}, {true, true, true, true}, {1}},              // 64 runs in fp32; int8 has a padded 4N slot
  };
  const ReduceMode modes[] = {ReduceMode::Sum, ReduceMode::Mean, ReduceMode::Max,
                              ReduceMode::Min, ReduceMode::Prod, ReduceMode::L2};
  for (const auto &rc : cases)
    for (ReduceMode m : modes) {
      if (int8() && (m == ReduceMode::Prod || m == ReduceMode::L2)) continue;
      GraphBuilder gb;
      int x = gb.act("x", rc.in, t());
      int y = gb.act("y", rc.out, t());
      Op &o = gb.op(OpKind::Reduce, "reduce", {x}, y);
      o.params<ReduceParams>() = {m, rc.axes};
      if (int8() && (m == ReduceMode::Sum || m == ReduceMode::Mean)) o.multipliers = {37}, o.rshift = 8;
      gb.g.inputs = {x}, gb.g.outputs = {y};
      SCOPED_TRACE("mode " + std::to_string(int(m)) + " input n " + std::to_string(rc.in[0]) + " rank " +
                   std::to_string(rc.in.size()));
      auto rep = expectMatchesReference(gb.g, opts(), 7, /*fp32BitExact=*/true);
      if (GetParam().smallLmem && rc.in[1] == 150) EXPECT_GT(rep.ops.at(0).slices, 1u);
    }
}

TEST(BackendReduce, Int8LayoutsItCannotMoveAreErrors) {
  GraphBuilder gb;
  int x = gb.act("x", {6, 3, 4, 5}, DType::I8), y = gb.act("y", {1, 3, 4, 5}, DType::I8);
  Op &o = gb.op(OpKind::Reduce, "reduce", {x}, y);
  o.params<ReduceParams>() = {ReduceMode::Max, {true, false, false, false}};
  gb.g.inputs = {x}, gb.g.outputs = {y};
  auto st = gb.g.validate();
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.message(), "Reduce 'reduce': an int8 reduction over a batch of more than 4 items (4N groups)");
  gb.g.tensors[size_t(x)].dtype = gb.g.tensors[size_t(y)].dtype = DType::F32;
  EXPECT_TRUE(gb.g.validate().isOk());
  o.params<ReduceParams>().mode = ReduceMode::Prod;
  gb.g.tensors[size_t(x)].shape = {3, 3, 4, 5};
  gb.g.tensors[size_t(x)].dtype = gb.g.tensors[size_t(y)].dtype = DType::I8;
  st = gb.g.validate();
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.message(), "Reduce 'reduce': an int8 product or L2 norm (the chip computes them in fp32)");
}

// LayerNorm over trailing dims (transformer tokens, per item, per channel:
// instance norm), with and without scale and bias, whole and sliced.
TEST(BackendLayerNorm, Fp32WholeAndSliced) {
  struct NormCase {
    std::vector<int64_t> in;
    std::array<bool, 4> axes;
    int params; // 0 none, 1 scale, 2 scale and bias
  };
  const NormCase cases[] = {
      {{1, 197, 768}, {false, false, true, false}, 2},       // ViT-B tokens: each row of 768
      {{2, 20, 6, 5}, {false, true, true, true}, 1},         // per item over C, H, W
      {{3, 67, 5, 7}, {false, false, true, true}, 0},        // instance norm: per (n, c) over H, W
  };
  for (bool small : {false, true})
    for (const auto &nc : cases) {
      GraphBuilder gb;
      int x = gb.act("x", nc.in, DType::F32), y = gb.act("y", nc.in, DType::F32);
      int64_t count = 1;
      for (size_t d = 0; d < nc.in.size(); ++d)
        if (nc.axes[d]) count *= nc.in[d];
      std::vector<int> in{x};
      if (nc.params >= 1) in.push_back(gb.weight("scale", {count}, DType::F32));
      if (nc.params >= 2) in.push_back(gb.weight("bias", {count}, DType::F32));
      Op &o = gb.op(OpKind::LayerNorm, "ln", in, y);
      o.params<LayerNormParams>() = {nc.axes, 1e-5f};
      gb.g.inputs = {x}, gb.g.outputs = {y};
      Options opt;
      if (small) opt.hw = smallLmem(16 * 1024);
      SCOPED_TRACE("input c " + std::to_string(nc.in[1]) + (small ? " sliced" : ""));
      auto rep = expectMatchesReference(gb.g, opt, 7, /*fp32BitExact=*/true);
      if (small && nc.in[1] == 197) EXPECT_GT(rep.ops.at(0).slices, 1u);
    }
}

// An int8 slice that keeps every batch item moves whole 4N words: one S2S
// command (not one per item, each moving single bytes 4 apart), at batch 6
// too (a full and a partial 4N group), with steps on c and h.
TEST(BackendSlice, Int8KeepingAllItemsIsOneWordCopy) {
  GraphBuilder gb;
  int x = gb.act("x", {6, 9, 5, 7}, DType::I8), y = gb.act("y", {6, 4, 2, 7}, DType::I8);
  Op &o = gb.op(OpKind::Slice, "slice", {x}, y);
  o.params<SliceParams>() = {{0, 1, 1, 0}, {1, 2, 2, 1}};
  gb.g.inputs = {x}, gb.g.outputs = {y};
  auto rep = expectMatchesReference(gb.g, Options{}, 7, /*fp32BitExact=*/true);
  EXPECT_EQ(rep.ops.at(0).gdmaCommands, 1u);
}

// A sum or mean over every element runs over all lanes: one load, a sum
// per lane, a local gather of the 64 partial sums, their sum and one
// multiply (int8: exact int32 partial sums, then the multiplier and shift).
TEST(BackendReduce, FullSumSpreadsOverTheLanes) {
  for (DType t : {DType::F32, DType::I8}) {
    GraphBuilder gb;
    int x = gb.act("x", {4, 256, 4, 18}, t), y = gb.act("y", {1, 1, 1, 1}, t);
    Op &o = gb.op(OpKind::Reduce, "mean", {x}, y);
    o.params<ReduceParams>() = {ReduceMode::Mean, {true, true, true, true}};
    if (t == DType::I8) o.multipliers = {37}, o.rshift = 14;
    gb.g.inputs = {x}, gb.g.outputs = {y};
    SCOPED_TRACE(dtypeName(t));
    auto rep = expectMatchesReference(gb.g, Options{}, 5, /*fp32BitExact=*/true);
    EXPECT_EQ(rep.ops.at(0).tiuCommands, 3u);
    EXPECT_EQ(rep.ops.at(0).gdmaCommands, 3u);
  }
}

// In-place data movement: a channel slice of a tensor whose batch is one
// DDR group (1N one item, 4N up to four) is a run of its bytes, and a
// concat input is written by its producer into the output's channels, so
// neither moves anything. Slices that cover their source in order (a
// split, then a concat of the halves: YOLOv8's C2f) put the source into the
// concat; a lone slice in a concat is copied. fp32 of three items is three
// groups: everything is copied.
TEST(BackendInPlace, ChannelSlicesAndConcatInputs) {
  for (DType t : {DType::F32, DType::I8})
    for (int64_t n : {1, 3}) {
      GraphBuilder gb;
      auto act = [&](const char *name, int64_t c) { return gb.act(name, {n, c, 6, 7}, t); };
      int x = act("x", 70), a = act("a", 70), s0 = act("s0", 35), s1 = act("s1", 35), r0 = act("r0", 35);
      int r1 = act("r1", 35), cat = act("cat", 105), cat2 = act("cat2", 70), y1 = act("y1", 105), y2 = act("y2", 70);
      gb.op(OpKind::Relu, "a", {x}, a);
      gb.op(OpKind::Slice, "s0", {a}, s0);
      gb.op(OpKind::Slice, "s1", {a}, s1).params<SliceParams>().start = {0, 35, 0, 0};
      gb.op(OpKind::Relu, "r0", {s0}, r0);
      gb.op(OpKind::Relu, "r1", {s1}, r1);
      gb.op(OpKind::Concat, "cat", {s0, s1, r0}, cat);
      gb.op(OpKind::Concat, "cat2", {r1, s1}, cat2);
      gb.op(OpKind::Relu, "y1", {cat}, y1);
      gb.op(OpKind::Relu, "y2", {cat2}, y2);
      gb.g.inputs = {x}, gb.g.outputs = {y1, y2, cat2}; // a concat output may be a graph output
      Options o;
      o.layerGroups = false;
      SCOPED_TRACE(std::string(dtypeName(t)) + " batch " + std::to_string(n));
      auto rep = expectMatchesReference(gb.g, o, 3, /*fp32BitExact=*/true);
      const bool inPlace = t != DType::F32 || n == 1;
      EXPECT_EQ(rep.ops.at(1).gdmaCommands + rep.ops.at(2).gdmaCommands, inPlace ? 0u : 2u) << "the slices";
      EXPECT_EQ(rep.ops.at(5).gdmaCommands, inPlace ? 0u : 3u) << "cat: a and r0 written in place";
      EXPECT_EQ(rep.ops.at(6).gdmaCommands, inPlace ? 1u : 2u) << "cat2 copies s1";
    }
}

// Softmax and log-softmax on any axis (attention rows among them), whole
// and sliced, bit-exact with the reference (the kernel library's exp and log).
TEST(BackendSoftmax, Fp32AnyAxisWholeAndSliced) {
  struct SoftmaxCase {
    std::vector<int64_t> in;
    std::array<bool, 4> axes;
  };
  const SoftmaxCase cases[] = {
      {{2, 70, 5, 6}, {false, true, false, false}},   // channels
      {{1, 12, 50, 50}, {false, false, false, true}}, // attention rows
      {{6, 3, 4, 5}, {true, false, false, false}},    // batch
  };
  for (OpKind k : {OpKind::Softmax, OpKind::LogSoftmax})
    for (bool small : {false, true})
      for (const auto &sc : cases) {
        GraphBuilder gb;
        int x = gb.act("x", sc.in, DType::F32), y = gb.act("y", sc.in, DType::F32);
        gb.op(k, "softmax", {x}, y).params<SoftmaxParams>().axes = sc.axes;
        gb.g.inputs = {x}, gb.g.outputs = {y};
        Options opt;
        if (small) opt.hw = smallLmem(8 * 1024);
        SCOPED_TRACE(std::string(opKindName(k)) + " input c " + std::to_string(sc.in[1]) + (small ? " sliced" : ""));
        auto rep = expectMatchesReference(gb.g, opt, 7, /*fp32BitExact=*/true);
        if (small && sc.in[1] == 12) EXPECT_GT(rep.ops.at(0).slices, 1u);
      }
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

// The int16 hand-off (--int16-pointwise): a depthwise conv's int16
// accumulator read by a 1x1 conv (int16 x int8 products, exact sums) that
// writes its own, requantized by a per-channel affine; op by op and grouped.
TEST_P(Int8OpTest, DepthwiseAccumulatorIntoPointwise) {
  for (bool grouped : {false, true}) {
    GraphBuilder gb;
    const int64_t c = 40, oc = 70;
    int x = gb.act("x", {2, c, 15, 11}, DType::I8), dw = gb.act("dw", {2, c, 15, 11}, DType::I16);
    int pw = gb.act("pw", {2, oc, 15, 11}, DType::I16), y = gb.act("y", {2, oc, 15, 11}, DType::I8);
    gb.op(OpKind::Conv, "dw", {x, gb.weight("wd", {c, 1, 3, 3}, DType::I8)}, dw).params<WindowParams>() =
        win(3, 1, 1, 1, c);
    Op &p = gb.op(OpKind::Conv, "pw", {dw, gb.weight("wp", {oc, c, 1, 1}, DType::I8)}, pw);
    p.params<WindowParams>() = win(1, 1, 0), p.rshift = 9;
    int sc = gb.weight("scale", {oc}, DType::I16), bi = gb.weight("bias", {oc}, DType::I32);
    gb.op(OpKind::Affine, "requant", {pw, sc, bi}, y).rshift = 18;
    gb.g.inputs = {x}, gb.g.outputs = {y};
    Options o = opts();
    if (grouped) o.segmentStarts.assign(1, 0);
    SCOPED_TRACE(grouped ? "grouped" : "op by op");
    auto rep = expectMatchesReference(gb.g, o);
    if (grouped) {
      ASSERT_EQ(rep.ops.size(), 1u);
      EXPECT_EQ(rep.ops[0].ops, 3u);
    }
  }
}

// Per-channel weights (docs/quantization.md): an int8 conv (full, then
// depthwise) writes its int16 accumulator, a per-channel affine requantizes
// it to int8; op by op (the int16 tensor in DDR) and in one layer group; and
// op by op with a dilation beyond the command field (groups of taps summed
// in int32: DeepLabV3's ASPP with per-channel weights crashed the emitter).
TEST_P(Int8OpTest, ConvInt16AccumulatorThenAffine) {
  for (int64_t dilation : {int64_t(1), int64_t(17)})
    for (int64_t groups : {int64_t(1), int64_t(70)})
      for (bool grouped : {false, true}) {
        if (dilation > 1 && grouped) continue;
        GraphBuilder gb;
        const int64_t c = 70, ic = groups == 1 ? 5 : c;
        int x = gb.act("x", {3, ic, 19, 13}, DType::I8), acc = gb.act("acc", {3, c, 19, 13}, DType::I16);
        int y = gb.act("y", {3, c, 19, 13}, DType::U8);
        Op &cv = gb.op(OpKind::Conv, "conv", {x, gb.weight("w", {c, ic / groups, 3, 3}, DType::I8)}, acc);
        cv.params<WindowParams>() = win(3, 1, dilation, dilation, groups), cv.rshift = 3;
        int sc = gb.weight("scale", {c}, DType::I16), bi = gb.weight("bias", {c}, DType::I32);
        for (int64_t i = 0; i < c; ++i) {
          int32_t v = int32_t(i * 977 - 30000);
          std::memcpy(&gb.g.tensors[size_t(bi)].data[size_t(4 * i)], &v, 4);
        }
        Op &af = gb.op(OpKind::Affine, "requant", {acc, sc, bi}, y);
        af.relu = true, af.rshift = 17;
        gb.g.inputs = {x}, gb.g.outputs = {y};
        Options o = opts();
        if (grouped) o.segmentStarts.assign(1, 0);
        SCOPED_TRACE(std::string(groups == 1 ? "conv" : "depthwise") + (grouped ? " grouped" : " op by op") +
                     " dilation " + std::to_string(dilation));
        auto rep = expectMatchesReference(gb.g, o);
        if (grouped) {
          ASSERT_EQ(rep.ops.size(), 1u);
          EXPECT_EQ(rep.ops[0].ops, 2u);
        }
      }
}

// int16 activations reach only the kinds that take them: conv and affine.
TEST(BackendInt16, OnlyConvAndAffine) {
  GraphBuilder gb;
  int x = gb.act("x", {1, 8, 4, 4}, DType::I16), y = gb.act("y", {1, 8, 4, 4}, DType::I8);
  gb.op(OpKind::Relu, "relu", {x}, y);
  gb.g.inputs = {x}, gb.g.outputs = {y};
  auto st = gb.g.validate();
  ASSERT_FALSE(st);
  EXPECT_EQ(st.message(), "Relu 'relu': input 'x' is int16: Relu takes no int16 activation");
  GraphBuilder pool;
  int px = pool.act("x", {1, 8, 4, 4}, DType::I16), py = pool.act("y", {1, 8, 2, 2}, DType::I16);
  WindowParams p = win(2, 2, 0);
  p.isMax = true;
  pool.op(OpKind::Pool, "pool", {px}, py).params<WindowParams>() = p;
  pool.g.inputs = {px}, pool.g.outputs = {py};
  st = pool.g.validate();
  ASSERT_FALSE(st);
  EXPECT_EQ(st.message(), "Pool 'pool': output dtype int16: Pool has no int16 form");
  GraphBuilder add;
  int a = add.act("a", {1, 8, 4, 4}, DType::I8), ay = add.act("y", {1, 8, 4, 4}, DType::I16);
  add.op(OpKind::Add, "add", {a, a}, ay).multipliers = {1, 1};
  add.g.inputs = {a}, add.g.outputs = {ay};
  st = add.g.validate();
  ASSERT_FALSE(st);
  EXPECT_EQ(st.message(), "Add 'add': output dtype int16: Add has no int16 form");
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

// Casts of a few-channel tensor (an RGB input) run over all 64 lanes: the
// bytes are those of the 3-lane layout (the DDR order does not change), at
// batch 1 and at batch 5 (a full and a partial 4N group), both directions.
TEST_P(Int8OpTest, FewChannelCastsUseEveryLane) {
  for (int64_t n : {1, 5}) {
    GraphBuilder gb;
    int x = gb.act("x", {n, 3, 16, 24}, DType::F32);
    int q = gb.act("q", {n, 3, 16, 24}, DType::I8, 0.0125f);
    int f = gb.act("f", {n, 3, 16, 24}, DType::F32);
    gb.op(OpKind::Cast, "quant", {x}, q);
    gb.op(OpKind::Cast, "dequant", {q}, f);
    gb.g.inputs = {x}, gb.g.outputs = {q, f};
    SCOPED_TRACE("batch " + std::to_string(n));
    CompileReport rep = expectMatchesReference(gb.g, opts());
    EXPECT_EQ(rep.ops.at(0).cSlice, 64) << "the cast's view spreads its 3 x 16 x 24 elements over 64 lanes";
  }
}

TEST_P(Int8OpTest, Uint8Activations) {
  GraphBuilder gb;
  int x = gb.act("x", {2, 9, 12, 12}, DType::U8);
  int y = gb.act("y", {2, 9, 6, 6}, DType::U8);
  Op &o = gb.op(OpKind::Pool, "maxpool", {x}, y);
  o.params<WindowParams>() = win(2, 2, 0), o.params<WindowParams>().isMax = true;
  gb.g.inputs = {x}, gb.g.outputs = {y};
  expectMatchesReference(gb.g, opts());
}

INSTANTIATE_TEST_SUITE_P(Backend, Int8OpTest, testing::Bool());

} // namespace

// ---- fp32 functions by TIU recipes (FloatKernels.h) ------------------------
namespace {
namespace unary {

using kernels::UnaryKind;
struct Fn {
  UnaryKind kind;
  float lo, hi;       // input range
  float rtol, atol;   // against the function in double precision
  float a = 0, b = 0; // parameters
};
const std::vector<Fn> &functions() {
  static const std::vector<Fn> v = {
      {UnaryKind::Exp, -87, 88.7f, 2e-7f, 0},       {UnaryKind::Log, 1e-30f, 1e30f, 2e-7f, 1e-7f},
      {UnaryKind::Sqrt, 0, 1e6f, 2e-7f, 0},        {UnaryKind::Rsqrt, 1e-6f, 1e6f, 2e-7f, 0},
      {UnaryKind::Reciprocal, -1e3f, 1e3f, 1e-7f, 0}, {UnaryKind::Abs, -50, 50, 0, 0},
      {UnaryKind::Neg, -50, 50, 0, 0},              {UnaryKind::Sign, -3, 3, 0, 0},
      {UnaryKind::Round, -1e9f, 1e9f, 0, 0},        {UnaryKind::Floor, -100, 100, 0, 0},
      {UnaryKind::Ceil, -100, 100, 0, 0},           {UnaryKind::Tanh, -12, 12, 3e-7f, 1e-8f},
      {UnaryKind::SiLU, -100, 100, 3e-7f, 1e-30f},  {UnaryKind::Erf, -6, 6, 4e-7f, 2e-7f},
      {UnaryKind::Gelu, -12, 12, 5e-7f, 2e-7f},     {UnaryKind::Softplus, -100, 100, 3e-7f, 1e-30f},
      {UnaryKind::Softsign, -100, 100, 2e-7f, 0},   {UnaryKind::Mish, -60, 60, 5e-7f, 1e-30f},
      {UnaryKind::Elu, -20, 20, 3e-7f, 1e-8f, 0.7f}, {UnaryKind::Selu, -20, 20, 3e-7f, 1e-8f, 1.67f, 1.05f},
      {UnaryKind::Sin, -100, 100, 2e-6f, 2e-7f},    {UnaryKind::Cos, -100, 100, 2e-6f, 2e-7f},
  };
  return v;
}

double exact(const Fn &fn, double x) {
  switch (fn.kind) {
  case UnaryKind::Exp: return std::exp(x);
  case UnaryKind::Log: return std::log(x);
  case UnaryKind::Sqrt: return std::sqrt(x);
  case UnaryKind::Rsqrt: return 1 / std::sqrt(x);
  case UnaryKind::Reciprocal: return 1 / x;
  case UnaryKind::Abs: return std::fabs(x);
  case UnaryKind::Neg: return -x;
  case UnaryKind::Sign: return (x > 0) - (x < 0);
  case UnaryKind::Round: return std::nearbyint(x);
  case UnaryKind::Floor: return std::floor(x);
  case UnaryKind::Ceil: return std::ceil(x);
  case UnaryKind::Tanh: return std::tanh(x);
  case UnaryKind::SiLU: return x / (1 + std::exp(-x));
  case UnaryKind::Erf: return std::erf(x);
  case UnaryKind::Gelu: return 0.5 * x * std::erfc(-x * M_SQRT1_2);
  case UnaryKind::Softplus: return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  case UnaryKind::Softsign: return x / (1 + std::fabs(x));
  case UnaryKind::Mish: return x * std::tanh(x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)));
  case UnaryKind::Elu: return x > 0 ? x : fn.a * std::expm1(x);
  case UnaryKind::Selu: return fn.b * (x > 0 ? x : fn.a * std::expm1(x));
  case UnaryKind::Sin: return std::sin(x);
  case UnaryKind::Cos: return std::cos(x);
  default: return NAN;
  }
}

TEST(BackendUnary, RecipesMatchTheExactFunctions) {
  for (const Fn &fn : functions()) {
    auto p = unaryKernel(fn.kind, fn.a, fn.b);
    ASSERT_TRUE(p) << unaryName(fn.kind);
    const int steps = 5001;
    size_t bad = 0;
    for (int k = 0; k < steps; ++k) {
      // Log-spaced for ranges of positive numbers over many decades.
      float x = fn.lo > 0 ? fn.lo * std::pow(fn.hi / fn.lo, float(k) / (steps - 1))
                          : fn.lo + (fn.hi - fn.lo) * float(k) / (steps - 1);
      const double want = exact(fn, x), got = runKernel(*p, &x);
      if (!(got == want || std::fabs(got - want) <= fn.rtol * std::fabs(want) + fn.atol) && bad++ < 3)
        ADD_FAILURE() << unaryName(fn.kind) << "(" << x << "): want " << want << " got " << got;
    }
  }
  // Edges: exp over- and underflow, log of 0 and of a negative number.
  auto at = [](UnaryKind k, float x) { return runKernel(*unaryKernel(k), &x); };
  EXPECT_EQ(at(UnaryKind::Exp, 89.0f), INFINITY);
  EXPECT_EQ(at(UnaryKind::Exp, -104.0f), 0.0f);
  EXPECT_EQ(at(UnaryKind::Log, 0.0f), -INFINITY);
  EXPECT_TRUE(std::isnan(at(UnaryKind::Log, -1.0f)));
  EXPECT_EQ(at(UnaryKind::Sqrt, 0.0f), 0.0f);
  EXPECT_EQ(at(UnaryKind::Exp, 88.7f), std::exp(88.7f));
}

TEST(BackendUnary, PowRecipe) {
  struct P { float a, b; };
  for (P v : {P{2, 10}, P{3, -2}, P{-2, 3}, P{-2, 2}, P{0, 2}, P{0, -1}, P{5, 0}, P{0, 0}, P{1.5f, 0.37f}, P{40, 20}}) {
    float in[2] = {v.a, v.b};
    float want = std::pow(v.a, v.b), got = runKernel(powKernel(), in);
    EXPECT_TRUE(got == want || std::fabs(got - want) <= 2e-6f * std::fabs(want)) << v.a << "^" << v.b << " " << got;
  }
}

// The program form of the sigmoid recipe (the BM1684X compiler runs it) is sigmoidChip bit for bit.
TEST(BackendUnary, SigmoidProgramIsTheRecipe) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> d(-30.0f, 30.0f);
  for (int k = 0; k < 20000; ++k) {
    float x = k < 4 ? std::array<float, 4>{0.0f, -0.0f, 1e-30f, 25.0f}[size_t(k)] : d(rng);
    float want = sigmoidChip(x), got = runKernel(sigmoidKernel(), &x);
    ASSERT_EQ(sim::floatBits(got), sim::floatBits(want)) << x;
  }
}

// The commands compute the reference bit for bit, whole, sliced (N, C, H)
// and in a layer group behind an affine that spreads the inputs.
TEST(BackendUnary, CommandsMatchTheReferenceBitForBit) {
  for (const Fn &fn : functions()) {
    GraphBuilder gb;
    const DType f = DType::F32;
    const std::vector<int64_t> shape{3, 70, 7, 9};
    int x = gb.act("x", shape, f), s = gb.act("s", shape, f), y = gb.act("y", shape, f);
    Op &spread = gb.op(OpKind::Affine, "spread", {x}, s);
    // Inputs in [lo, hi] (capped: the recipes' edges are checked above).
    const float lo = std::max(fn.lo, -90.0f), hi = std::min(fn.hi, 90.0f);
    spread.params<AffineParams>() = {(hi - lo) / 2, (hi + lo) / 2};
    Op &u = gb.op(OpKind::Unary, "fn", {s}, y);
    u.params<UnaryParams>() = {fn.kind, fn.a, fn.b};
    gb.g.inputs = {x}, gb.g.outputs = {y};
    SCOPED_TRACE(unaryName(fn.kind));
    for (bool small : {false, true})
      for (bool groups : {false, true}) {
        Options o;
        if (small) o.hw = smallLmem(16 * 1024);
        o.layerGroups = groups;
        if (groups) o.segmentStarts.assign(1, 0);
        expectMatchesReference(gb.g, o, 7, /*fp32BitExact=*/true);
      }
  }
}

TEST(BackendUnary, RejectsInt8AndFunctionsWithoutRecipe) {
  GraphBuilder gb;
  int x = gb.act("x", {1, 4, 2, 2}, DType::F32), y = gb.act("y", {1, 4, 2, 2}, DType::F32);
  Op &u = gb.op(OpKind::Unary, "fn", {x}, y);
  u.params<UnaryParams>().function = UnaryKind::Sigmoid;
  gb.g.inputs = {x}, gb.g.outputs = {y};
  auto st = gb.g.validate();
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("no fp32 recipe for sigmoid"), std::string::npos) << st.message();
}

} // namespace unary
} // namespace

// ---- binary element-wise ops with NumPy broadcasting -----------------------
namespace {

// The second input (or the first) broadcast along every combination of dims
// the tests cover; the commands compute the reference bit for bit.
struct BinaryCase {
  std::vector<int64_t> a, b, y;
};
const std::vector<BinaryCase> &broadcastCases() {
  static const std::vector<BinaryCase> v = {
      {{3, 70, 7, 9}, {3, 70, 7, 9}, {3, 70, 7, 9}}, {{3, 70, 7, 9}, {1, 70, 1, 9}, {3, 70, 7, 9}},
      {{3, 70, 7, 9}, {3, 1, 7, 1}, {3, 70, 7, 9}},  {{1, 1, 1, 1}, {3, 70, 7, 9}, {3, 70, 7, 9}},
      {{3, 1, 7, 9}, {1, 70, 1, 1}, {3, 70, 7, 9}},  {{5, 6, 11}, {11}, {5, 6, 11}},
      {{4, 1}, {1, 66}, {4, 66}},
  };
  return v;
}

TEST(BackendBinary, Fp32BroadcastEveryKind) {
  for (OpKind k : {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Max, OpKind::Min, OpKind::Pow,
                   OpKind::PRelu})
    for (const BinaryCase &bc : broadcastCases())
      for (bool small : {false, true}) {
        GraphBuilder gb;
        int a = gb.act("a", bc.a, DType::F32), b = gb.act("b", bc.b, DType::F32), y = gb.act("y", bc.y, DType::F32);
        // Pow of positive bases (a negative base with a fractional exponent is NaN).
        int base = a;
        if (k == OpKind::Pow) {
          base = gb.act("pos", bc.a, DType::F32);
          Op &sh = gb.op(OpKind::Affine, "shift", {a}, base);
          sh.params<AffineParams>() = {2.0f, 2.5f};
        }
        Op &o = gb.op(k, "op", {base, b}, y);
        o.relu = k == OpKind::Add;
        gb.g.inputs = {a, b}, gb.g.outputs = {y};
        SCOPED_TRACE(std::string(opKindName(k)) + " " + std::to_string(bc.b.size()) + (small ? " sliced" : ""));
        Options opt;
        if (small) opt.hw = smallLmem(8 * 1024);
        expectMatchesReference(gb.g, opt, 7, /*fp32BitExact=*/true);
      }
}

TEST(BackendBinary, Fp32WeightOperands) {
  // c / x with a broadcast constant numerator; prelu with a per-channel slope.
  for (OpKind k : {OpKind::Div, OpKind::PRelu, OpKind::Sub}) {
    GraphBuilder gb;
    int x = gb.act("x", {2, 67, 5, 6}, DType::F32), y = gb.act("y", {2, 67, 5, 6}, DType::F32);
    std::vector<int> in = k == OpKind::Div ? std::vector<int>{gb.weight("c", {1, 1, 5, 6}, DType::F32), x}
                                           : std::vector<int>{x, gb.weight("s", {67}, DType::F32)};
    gb.op(k, "op", in, y);
    gb.g.inputs = {x}, gb.g.outputs = {y};
    SCOPED_TRACE(opKindName(k));
    expectMatchesReference(gb.g, Options{}, 7, /*fp32BitExact=*/true);
  }
}

TEST(BackendBinary, ComparisonsAndWhere) {
  // cond = a > b (or <, ==) broadcast; where(cond, a, c) with a broadcast c.
  for (OpKind k : {OpKind::Greater, OpKind::Less, OpKind::Equal}) {
    GraphBuilder gb;
    int a = gb.act("a", {2, 67, 4, 9}, DType::F32), b = gb.act("b", {1, 67, 1, 9}, DType::F32);
    int cond = gb.act("cond", {2, 67, 4, 9}, DType::F32), y = gb.act("y", {2, 67, 4, 9}, DType::F32);
    // Equal needs equal values: a == relu(a) holds for half of them.
    int rhs = b;
    if (k == OpKind::Equal) {
      rhs = gb.act("r", {2, 67, 4, 9}, DType::F32);
      gb.op(OpKind::Relu, "relu", {a}, rhs);
    }
    gb.op(k, "cmp", {a, rhs}, cond);
    gb.op(OpKind::Where, "where", {cond, a, gb.weight("c", {1, 1, 4, 1}, DType::F32)}, y);
    // A per-channel weight as the third input stays third.
    int y2 = gb.act("y2", {2, 67, 4, 9}, DType::F32);
    gb.op(OpKind::Where, "where2", {cond, a, gb.weight("pc", {67}, DType::F32)}, y2);
    gb.g.inputs = {a, b}, gb.g.outputs = {cond, y, y2};
    SCOPED_TRACE(opKindName(k));
    for (bool small : {false, true}) {
      Options opt;
      if (small) opt.hw = smallLmem(8 * 1024);
      expectMatchesReference(gb.g, opt, 7, /*fp32BitExact=*/true);
    }
  }
}

// The product of two activations (attention's Q.K^T and P.V; one batch dim;
// M past the 64 lanes), whole and sliced over the batch and M, bit-exact.
TEST(BackendMatMul, Fp32BatchedWholeAndSliced) {
  struct MatMulCase {
    std::vector<int64_t> a, b;
  };
  const MatMulCase cases[] = {
      {{1, 12, 197, 64}, {1, 12, 64, 197}}, // ViT-B/16 Q.K^T per head
      {{1, 12, 197, 197}, {1, 12, 197, 64}}, // P.V
      {{5, 70, 9}, {5, 9, 3}},
      {{33, 17}, {17, 66}},
  };
  for (const auto &mc : cases)
    for (bool small : {false, true}) {
      GraphBuilder gb;
      std::vector<int64_t> ys(mc.a.begin(), mc.a.end() - 1);
      ys.push_back(mc.b.back());
      int a = gb.act("a", mc.a, DType::F32), b = gb.act("b", mc.b, DType::F32), y = gb.act("y", ys, DType::F32);
      gb.op(OpKind::MatMul, "mm", {a, b}, y);
      gb.g.inputs = {a, b}, gb.g.outputs = {y};
      Options opt;
      if (small) opt.hw = smallLmem(16 * 1024);
      SCOPED_TRACE("a " + std::to_string(mc.a[mc.a.size() - 2]) + "x" + std::to_string(mc.a.back()) +
                   (small ? " sliced" : ""));
      auto rep = expectMatchesReference(gb.g, opt, 7, /*fp32BitExact=*/true);
      if (small && mc.a.size() == 4) {
        EXPECT_GT(rep.ops.at(0).slices, 1u);
      }
    }
}

TEST(BackendMatMul, RejectsWhatTheChipCannotDo) {
  auto check = [](std::vector<int64_t> as, std::vector<int64_t> bs, std::vector<int64_t> ys, DType t,
                  const std::string &want) {
    GraphBuilder gb;
    int a = gb.act("a", as, t, 0.1f), b = gb.act("b", bs, t, 0.1f), y = gb.act("y", ys, t, 0.1f);
    gb.op(OpKind::MatMul, "mm", {a, b}, y);
    gb.g.inputs = {a, b}, gb.g.outputs = {y};
    auto st = gb.g.validate();
    if (st) st = compileToBmodel(gb.g, Options{}).status();
    ASSERT_FALSE(st) << want;
    EXPECT_NE(st.message().find(want), std::string::npos) << st.message();
  };
  check({2, 3, 4}, {2, 4, 5}, {2, 3, 5}, DType::I8, "fp32 only (int8 models run it as an fp32 island)");
  check({2, 3, 4}, {1, 4, 5}, {2, 3, 5}, DType::F32, "lhs and rhs leading (batch) dims differ");
  check({2, 3, 4}, {2, 5, 5}, {2, 3, 5}, DType::F32, "lhs has K = 4 columns but rhs K = 5 rows");
  check({2, 3, 4}, {2, 4, 5}, {2, 3, 4}, DType::F32, "output must be the leading dims, M = 3 and N = 5");
  check({1, 5000}, {5000, 2}, {1, 2}, DType::F32, "K = 5000 exceeds the");
}

TEST(BackendBinary, Int8SubMinAndBroadcast) {
  for (OpKind k : {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Max, OpKind::Min})
    for (const BinaryCase &bc : broadcastCases()) {
      if (bc.a.size() != bc.b.size()) continue; // int8 broadcasts within one rank
      GraphBuilder gb;
      int a = gb.act("a", bc.a, DType::I8, 0.05f), b = gb.act("b", bc.b, DType::I8, 0.02f);
      int y = gb.act("y", bc.y, DType::I8, 0.04f);
      Op &o = gb.op(k, "op", {a, b}, y);
      o.multipliers = k == OpKind::Mul ? std::vector<int32_t>{57} : std::vector<int32_t>{11, -9};
      o.rshift = k == OpKind::Mul ? 10 : 4;
      gb.g.inputs = {a, b}, gb.g.outputs = {y};
      SCOPED_TRACE(opKindName(k));
      for (bool small : {false, true}) {
        Options opt;
        if (small) opt.hw = smallLmem();
        expectMatchesReference(gb.g, opt);
      }
    }
}

TEST(BackendBinary, RejectsWhatTheChipCannotDo) {
  auto check = [](OpKind k, std::vector<int64_t> as, DType t, const std::string &want) {
    GraphBuilder gb;
    int a = gb.act("a", as, t, 0.1f), b = gb.act("b", {1, 4, 3, 3}, t, 0.1f), y = gb.act("y", {1, 4, 3, 3}, t, 0.1f);
    Op &o = gb.op(k, "op", {a, b}, y);
    if (t != DType::F32) o.multipliers = {1, 1};
    gb.g.inputs = {a, b}, gb.g.outputs = {y};
    auto st = gb.g.validate();
    ASSERT_FALSE(st) << want;
    EXPECT_NE(st.message().find(want), std::string::npos) << st.message();
  };
  check(OpKind::Div, {1, 4, 3, 3}, DType::I8, "int8 Div is not a chip op (fp32 only)");
  check(OpKind::Sub, {1, 4, 3, 2}, DType::F32, "input 'a' shape [1, 4, 3, 2] does not broadcast to the output's [1, 4, 3, 3]");
  check(OpKind::Min, {4, 3, 3}, DType::I8, "int8 input 'a' must have the output's rank (4 dims)");
}

} // namespace
