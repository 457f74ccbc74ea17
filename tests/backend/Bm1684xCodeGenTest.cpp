// The BM1684X code generator (compiler/Backend/BM1684X): graphs of every kind it compiles, run on the
// BM1684X semantics (runtime/bm1684x/FuncRun.h) and compared with the fp32 reference (QuantRef's evalGraph);
// slicing forced by tensors larger than a lane; kinds and forms it does not compile refused by name.
#include "compiler/Backend/BM1684X/CodeGen.h"
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
#include "isa/bmodel/Bmodel.h"
#include "runtime/bm1684x/FuncRun.h"
#include "tests/backend/BackendHarness.h"

#include <gtest/gtest.h>

using namespace tpu;
using namespace tpu::backend;
using namespace tpu::backend::test;

namespace {

// Compiles `g`, writes and reads the bmodel back, runs it and compares each output with the reference
// within 1e-5 relative to max(1, |reference|) (equal infinities, NaN for NaN), or bit for bit when
// `bitExact`. Returns the compile report.
bm1684x::CompileReport expectRunsLikeReference(const Graph &g, uint32_t seed = 7, bool bitExact = false) {
  bm1684x::CompileReport report;
  auto inputs = randomInputs(g, seed);
  auto ref = evalGraph(g, inputs);
  EXPECT_TRUE(ref.isOk()) << ref.message();
  auto model = bm1684x::compileToBmodel(g, &report);
  EXPECT_TRUE(model.isOk()) << model.message();
  if (!ref || !model) return report;
  auto bytes = bmodel::serialize(*model);
  EXPECT_TRUE(bytes.isOk()) << bytes.message();
  if (!bytes) return report;
  auto parsed = bmodel::parse(bytes->data(), bytes->size(), bmodel::ChipScope::AnyKnown);
  EXPECT_TRUE(parsed.isOk()) << parsed.message();
  if (!parsed) return report;
  EXPECT_EQ(parsed->chip, "BM1684X");
  NpzMap given;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const Tensor &t = g.tensors[size_t(g.inputs[i])];
    given[t.name] = NpyArray::from(t.shape, reinterpret_cast<const float *>(inputs[i].data()), inputs[i].size() / 4);
  }
  auto outputs = runtime::bm1684x::runFunc(*parsed, "", given);
  EXPECT_TRUE(outputs.isOk()) << outputs.message();
  if (!outputs) return report;
  for (int o : g.outputs) {
    const Tensor &t = g.tensors[size_t(o)];
    const float *want = reinterpret_cast<const float *>((*ref)[size_t(o)].data());
    std::vector<float> got = outputs->at(t.name).toFloat();
    EXPECT_EQ(got.size(), size_t(t.numel())) << t.name;
    size_t bad = 0;
    for (size_t k = 0; k < got.size(); ++k)
      if (bitExact ? std::memcmp(&want[k], &got[k], 4) != 0 && bad++ < 5
                   : !(want[k] == got[k] || (std::isnan(want[k]) && std::isnan(got[k])) ||
                       std::fabs(want[k] - got[k]) <= 1e-5f * std::max(1.0f, std::fabs(want[k]))) &&
                         bad++ < 5)
        ADD_FAILURE() << t.name << "[" << k << "]: want " << want[k] << " got " << got[k];
  }
  return report;
}

WindowParams window(int64_t k, int64_t stride, int64_t pad, int64_t dilation = 1) {
  WindowParams p;
  p.kh = p.kw = k;
  p.strideH = p.strideW = stride;
  p.dilationH = p.dilationW = dilation;
  p.padTop = p.padBottom = p.padLeft = p.padRight = pad;
  return p;
}

TEST(Bm1684xCodeGen, ConvPoolElementwiseFc) {
  GraphBuilder b;
  int x = b.act("x", {1, 70, 20, 20}, DType::F32);
  int w = b.weight("w", {70, 70, 3, 3}, DType::F32), bias = b.weight("bias", {70}, DType::F32);
  int c = b.act("conv", {1, 70, 20, 20}, DType::F32);
  Op &conv = b.op(OpKind::Conv, "conv", {x, w, bias}, c);
  conv.params<WindowParams>() = window(3, 1, 1);
  conv.relu = true;
  int p = b.act("pool", {1, 70, 10, 10}, DType::F32);
  b.op(OpKind::Pool, "pool", {c}, p).params<WindowParams>() = [] {
    WindowParams w3 = window(3, 2, 1);
    w3.isMax = true;
    return w3;
  }();
  int scale = b.weight("scale", {70}, DType::F32), s = b.act("scaled", {1, 70, 10, 10}, DType::F32);
  b.op(OpKind::Mul, "scaled", {p, scale}, s);
  int sum = b.act("sum", {1, 70, 10, 10}, DType::F32);
  b.op(OpKind::Add, "sum", {s, p}, sum).relu = true;
  int gap = b.act("gap", {1, 70, 1, 1}, DType::F32);
  b.op(OpKind::GlobalAvgPool, "gap", {sum}, gap);
  int flat = b.act("flat", {1, 70}, DType::F32);
  b.op(OpKind::Reshape, "flat", {gap}, flat);
  int fw = b.weight("fw", {10, 70}, DType::F32), fb = b.weight("fb", {10}, DType::F32);
  int y = b.act("y", {1, 10}, DType::F32);
  b.op(OpKind::Fc, "fc", {flat, fw, fb}, y);
  b.g.inputs = {x};
  b.g.outputs = {y, c};
  auto report = expectRunsLikeReference(b.g);
  EXPECT_GT(report.tiuCommands, 6u);
  EXPECT_GT(report.coeffBytes, 70u * 70 * 9 * 4);
}

// An atrous conv (dilation 16) whose pads of 16 exceed the 4-bit pad fields: padded in local memory.
TEST(Bm1684xCodeGen, PadsBeyondTheFieldsInLocalMemory) {
  GraphBuilder b;
  int x = b.act("x", {1, 70, 40, 40}, DType::F32);
  int w = b.weight("w", {70, 70, 3, 3}, DType::F32), bias = b.weight("bias", {70}, DType::F32);
  int y = b.act("y", {1, 70, 40, 40}, DType::F32);
  b.op(OpKind::Conv, "atrous", {x, w, bias}, y).params<WindowParams>() = window(3, 1, 16, 16);
  b.g.inputs = {x};
  b.g.outputs = {y};
  expectRunsLikeReference(b.g);
}

// Dilations beyond the 4-bit fields as phases: 24 (DeepLab's ASPP: 2 x 2 phases of dilation 12), a prime
// 17 with stride 2 on a depthwise conv (17 x 17 phases of dilation 1, some with no output), and 20 along h
// only with uneven pads.
TEST(Bm1684xCodeGen, DilationsBeyondTheFieldsAsPhases) {
  GraphBuilder b;
  int x = b.act("x", {1, 70, 28, 28}, DType::F32);
  int w = b.weight("w", {66, 70, 3, 3}, DType::F32), bias = b.weight("bias", {66}, DType::F32);
  int aspp = b.act("aspp", {1, 66, 28, 28}, DType::F32);
  b.op(OpKind::Conv, "aspp", {x, w, bias}, aspp).params<WindowParams>() = window(3, 1, 24, 24);
  int dw = b.weight("dw", {70, 1, 3, 3}, DType::F32);
  int prime = b.act("prime", {1, 70, 14, 14}, DType::F32);
  WindowParams dp = window(3, 2, 17, 17);
  dp.groups = 70;
  b.op(OpKind::Conv, "prime", {x, dw}, prime).params<WindowParams>() = dp;
  int w2 = b.weight("w2", {8, 70, 2, 3}, DType::F32);
  int tall = b.act("tall", {1, 8, 13, 28}, DType::F32);
  WindowParams tp = window(3, 1, 1);
  tp.kh = 2, tp.dilationH = 20, tp.padTop = 3, tp.padBottom = 2;
  b.op(OpKind::Conv, "tall", {x, w2}, tall).params<WindowParams>() = tp;
  b.g.inputs = {x};
  b.g.outputs = {aspp, prime, tall};
  expectRunsLikeReference(b.g);
}

// Groups of 4 input and 6 output channels: one conv per group, its channels from lane 0.
TEST(Bm1684xCodeGen, GroupedConv) {
  GraphBuilder b;
  int x = b.act("x", {1, 12, 9, 9}, DType::F32);
  int w = b.weight("w", {18, 4, 3, 3}, DType::F32), bias = b.weight("bias", {18}, DType::F32);
  int y = b.act("y", {1, 18, 5, 5}, DType::F32);
  Op &conv = b.op(OpKind::Conv, "grouped", {x, w, bias}, y);
  conv.params<WindowParams>() = window(3, 2, 1);
  conv.params<WindowParams>().groups = 3;
  conv.relu = true;
  b.g.inputs = {x};
  b.g.outputs = {y};
  expectRunsLikeReference(b.g);
}

// A transposed conv (stride 2, pads 1, an output padding row and column) as the chip runs it, then PRelu.
TEST(Bm1684xCodeGen, TransposedConvAndPRelu) {
  GraphBuilder b;
  int x = b.act("x", {1, 70, 7, 9}, DType::F32);
  int w = b.weight("w", {70, 5, 3, 3}, DType::F32), bias = b.weight("bias", {5}, DType::F32);
  int y = b.act("y", {1, 5, 14, 18}, DType::F32);
  b.op(OpKind::ConvTranspose, "up", {x, w, bias}, y).params<WindowParams>() = window(3, 2, 1);
  int slope = b.weight("slope", {5}, DType::F32), z = b.act("z", {1, 5, 14, 18}, DType::F32);
  b.op(OpKind::PRelu, "prelu", {y, slope}, z);
  b.g.inputs = {x};
  b.g.outputs = {z};
  expectRunsLikeReference(b.g);
}

// Grouped transposed convs: two groups of 4 -> 3 channels, and one channel per group (CenterNet's DLA
// up-sampling, 4 x 4 kernel, stride 2, pads 1) as depthwise windows over the zero-inserted input.
TEST(Bm1684xCodeGen, GroupedTransposedConvs) {
  GraphBuilder b;
  int x = b.act("x", {1, 8, 6, 5}, DType::F32);
  int w = b.weight("w", {8, 3, 4, 4}, DType::F32), bias = b.weight("bias", {6}, DType::F32);
  int y = b.act("y", {1, 6, 12, 10}, DType::F32);
  WindowParams two = window(4, 2, 1);
  two.groups = 2;
  b.op(OpKind::ConvTranspose, "up2", {x, w, bias}, y).params<WindowParams>() = two;
  int dx = b.act("dx", {1, 70, 9, 7}, DType::F32);
  int dw = b.weight("dw", {70, 1, 4, 4}, DType::F32);
  int dy = b.act("dy", {1, 70, 18, 14}, DType::F32);
  WindowParams each = window(4, 2, 1);
  each.groups = 70;
  b.op(OpKind::ConvTranspose, "updw", {dx, dw}, dy).params<WindowParams>() = each;
  b.g.inputs = {x, dx};
  b.g.outputs = {y, dy};
  expectRunsLikeReference(b.g);
}

// YOLOv8's stem: a stride-2 conv on 640 x 640, whose slices after the first read one input row more than
// the first (its pad takes one): the input buffer must hold the longer slices.
TEST(Bm1684xCodeGen, LaterSlicesReadTheirWholeWindow) {
  GraphBuilder b;
  int x = b.act("x", {1, 3, 640, 640}, DType::F32);
  int w = b.weight("w", {32, 3, 3, 3}, DType::F32);
  int y = b.act("y", {1, 32, 320, 320}, DType::F32);
  b.op(OpKind::Conv, "conv", {x, w}, y).params<WindowParams>() = window(3, 2, 1);
  b.g.inputs = {x};
  b.g.outputs = {y};
  auto report = expectRunsLikeReference(b.g);
  EXPECT_GT(report.tiuCommands, 3u); // sliced
}

// A 7x7 stride-2 conv on 224x224 and 130 output channels: neither the input nor the output fits a lane, so
// rows are sliced with halos, and output channels run over three lane rows.
TEST(Bm1684xCodeGen, SlicedConvWithHalos) {
  GraphBuilder b;
  int x = b.act("x", {1, 3, 224, 224}, DType::F32);
  int w = b.weight("w", {130, 3, 7, 7}, DType::F32);
  int y = b.act("y", {1, 130, 112, 112}, DType::F32);
  b.op(OpKind::Conv, "conv", {x, w}, y).params<WindowParams>() = window(7, 2, 3);
  b.g.inputs = {x};
  b.g.outputs = {y};
  auto report = expectRunsLikeReference(b.g);
  EXPECT_GT(report.tiuCommands, 2u); // more than one conv before sys.end
}

TEST(Bm1684xCodeGen, DepthwiseAveragePoolClipConcatBinary) {
  GraphBuilder b;
  int x = b.act("x", {2, 32, 16, 16}, DType::F32);
  int dw = b.weight("dw", {32, 1, 3, 3}, DType::F32), db = b.weight("db", {32}, DType::F32);
  int d = b.act("dw", {2, 32, 8, 8}, DType::F32);
  Op &depthwise = b.op(OpKind::Conv, "dw", {x, dw, db}, d);
  depthwise.params<WindowParams>() = window(3, 2, 1);
  depthwise.params<WindowParams>().groups = 32;
  depthwise.relu = true;
  int a = b.act("avg", {2, 32, 4, 4}, DType::F32);
  b.op(OpKind::Pool, "avg", {d}, a).params<WindowParams>() = window(2, 2, 0);
  int clip = b.act("clip", {2, 32, 4, 4}, DType::F32);
  b.op(OpKind::Clip, "clip", {a}, clip).params<ClipParams>() = {0.0f, 0.25f};
  int diff = b.act("diff", {2, 32, 4, 4}, DType::F32), half = b.weight("half", {1}, DType::F32);
  b.op(OpKind::Sub, "diff", {a, clip}, diff);
  int m = b.act("m", {2, 32, 4, 4}, DType::F32), lo = b.act("lo", {2, 32, 4, 4}, DType::F32);
  b.op(OpKind::Max, "m", {diff, half}, m);
  b.op(OpKind::Min, "lo", {m, clip}, lo);
  int cat = b.act("cat", {2, 64, 4, 4}, DType::F32);
  b.op(OpKind::Concat, "cat", {lo, a}, cat);
  b.g.inputs = {x};
  b.g.outputs = {cat};
  expectRunsLikeReference(b.g);
}

// Broadcasts of either input, leaky relu, affine (scalars and per channel), then the copy kinds: a strided
// slice, nearest upsampling, and a move that fills and places a transposed box.
TEST(Bm1684xCodeGen, BroadcastAffineAndCopies) {
  GraphBuilder b;
  int x = b.act("x", {2, 70, 6, 10}, DType::F32), row = b.act("row", {1, 1, 6, 10}, DType::F32);
  int col = b.act("col", {2, 70, 1, 1}, DType::F32);
  int s = b.act("s", {2, 70, 6, 10}, DType::F32), t = b.act("t", {2, 70, 6, 10}, DType::F32);
  b.op(OpKind::Sub, "s", {row, x}, s); // the first input broadcast over n and c
  b.op(OpKind::Mul, "t", {s, col}, t); // the second over h and w
  int l = b.act("l", {2, 70, 6, 10}, DType::F32);
  b.op(OpKind::LeakyRelu, "l", {t}, l).params<LeakyReluParams>().alpha = 0.125f;
  int a = b.act("a", {2, 70, 6, 10}, DType::F32);
  b.op(OpKind::Affine, "a", {l}, a).params<AffineParams>() = {1.5f, -0.25f};
  int sc = b.weight("sc", {70}, DType::F32), bi = b.weight("bi", {70}, DType::F32);
  int pc = b.act("pc", {2, 70, 6, 10}, DType::F32);
  b.op(OpKind::Affine, "pc", {a, sc, bi}, pc).relu = true;
  int sl = b.act("sl", {2, 35, 3, 4}, DType::F32);
  b.op(OpKind::Slice, "sl", {pc}, sl).params<SliceParams>() = {{0, 1, 0, 2}, {1, 2, 2, 2}};
  int up = b.act("up", {2, 35, 6, 12}, DType::F32);
  b.op(OpKind::Upsample, "up", {sl}, up).params<UpsampleParams>() = {2, 3};
  int mv = b.act("mv", {2, 35, 12, 8}, DType::F32);
  MoveParams &m = b.op(OpKind::Move, "mv", {up}, mv).params<MoveParams>();
  m.fills = true, m.fillValue = -2.0f;
  // up's (n, c, h, w) box of 2 x 35 x 6 x 8 written transposed in h and w at row 2 of mv... as columns.
  MovePiece piece;
  piece.size = {2, 35, 6, 8};
  piece.srcStride = {35 * 6 * 12, 6 * 12, 12, 1};
  piece.dstStride = {35 * 12 * 8, 12 * 8, 1, 8};
  piece.dst = 2 * 8;
  m.pieces = {piece};
  b.g.inputs = {x, row, col};
  b.g.outputs = {mv};
  expectRunsLikeReference(b.g);
}

// Reductions whose kept and reduced dims merge in different ways, each mode.
TEST(Bm1684xCodeGen, Reductions) {
  GraphBuilder b;
  int x = b.act("x", {2, 70, 5, 6}, DType::F32);
  struct Case {
    const char *name;
    ReduceMode mode;
    ReduceAxes axes;
    std::vector<int64_t> shape;
  };
  const Case cases[] = {{"mean_hw", ReduceMode::Mean, {false, false, true, true}, {2, 70}},
                        {"sum_c", ReduceMode::Sum, {false, true, false, false}, {2, 1, 5, 6}},
                        {"min_nw", ReduceMode::Min, {true, false, false, true}, {70, 5}},
                        {"max_all", ReduceMode::Max, {true, true, true, true}, {1}},
                        {"l2_hw", ReduceMode::L2, {false, false, true, true}, {2, 70, 1, 1}},
                        {"prod_hw", ReduceMode::Prod, {false, false, true, true}, {2, 70}},
                        {"prod_c", ReduceMode::Prod, {false, true, false, false}, {2, 5, 6}}};
  for (const Case &c : cases) {
    int y = b.act(c.name, c.shape, DType::F32);
    b.op(OpKind::Reduce, c.name, {x}, y).params<ReduceParams>() = {c.mode, c.axes};
    b.g.outputs.push_back(y);
  }
  b.g.inputs = {x};
  expectRunsLikeReference(b.g);
}

// The fp32 functions as the BM1684's programs (FloatKernels.h) on BM1684X commands: Sigmoid, every Unary
// function with a recipe, Div, Pow, the comparisons and Where, against the reference that runs the same
// programs.
TEST(Bm1684xCodeGen, FunctionPrograms) {
  GraphBuilder b;
  const std::vector<int64_t> shape{2, 70, 3, 5};
  int x = b.act("x", shape, DType::F32), z = b.act("z", shape, DType::F32);
  b.g.inputs = {x, z};
  int sig = b.act("sig", shape, DType::F32);
  b.op(OpKind::Sigmoid, "sig", {x}, sig);
  b.g.outputs.push_back(sig);
  int fn = 0;
  for (kernels::UnaryKind k : {kernels::UnaryKind::Exp, kernels::UnaryKind::Log, kernels::UnaryKind::Tanh,
                               kernels::UnaryKind::Sqrt, kernels::UnaryKind::Abs, kernels::UnaryKind::Erf,
                               kernels::UnaryKind::Floor, kernels::UnaryKind::Sin, kernels::UnaryKind::Rsqrt}) {
    int y = b.act("u" + std::to_string(fn++), shape, DType::F32);
    b.op(OpKind::Unary, unaryName(k), {x}, y).params<UnaryParams>().function = k;
    b.g.outputs.push_back(y);
  }
  for (OpKind k : {OpKind::Div, OpKind::Pow, OpKind::Greater, OpKind::Less, OpKind::Equal}) {
    int y = b.act(opKindName(k), shape, DType::F32);
    b.op(k, opKindName(k), {x, z}, y);
    b.g.outputs.push_back(y);
  }
  int w = b.act("where", shape, DType::F32);
  b.op(OpKind::Where, "where", {sig, x, z}, w);
  b.g.outputs.push_back(w);
  expectRunsLikeReference(b.g);
}

// Fc on a 3-D input (a 1x1 conv over its 2 x 90 rows of 70) and on a transposed (K, M) input.
TEST(Bm1684xCodeGen, FcOnRowsAndTransposedInput) {
  GraphBuilder b;
  int x = b.act("x", {2, 90, 70}, DType::F32), w = b.weight("w", {100, 70}, DType::F32);
  int bias = b.weight("bias", {100}, DType::F32), y = b.act("y", {2, 90, 100}, DType::F32);
  b.op(OpKind::Fc, "rows", {x, w, bias}, y).relu = true;
  int xt = b.act("xt", {70, 6}, DType::F32), yt = b.act("yt", {6, 100}, DType::F32);
  b.op(OpKind::Fc, "transposed", {xt, w}, yt).params<FcParams>().transposedInput = true;
  b.g.inputs = {x, xt};
  b.g.outputs = {y, yt};
  expectRunsLikeReference(b.g);
}

// A batched MatMul of two activations (the right one read transposed as the weights), and ViT's patch
// embedding: a 16 x 16 kernel at stride 16, beyond the 4-bit stride fields.
TEST(Bm1684xCodeGen, MatMulAndPatchConv) {
  GraphBuilder b;
  int l = b.act("l", {2, 3, 70, 50}, DType::F32), r = b.act("r", {2, 3, 50, 90}, DType::F32);
  int y = b.act("y", {2, 3, 70, 90}, DType::F32);
  b.op(OpKind::MatMul, "mm", {l, r}, y);
  int x = b.act("x", {1, 3, 64, 48}, DType::F32), w = b.weight("w", {20, 3, 16, 16}, DType::F32);
  int bias = b.weight("bias", {20}, DType::F32), p = b.act("p", {1, 20, 4, 3}, DType::F32);
  b.op(OpKind::Conv, "patches", {x, w, bias}, p).params<WindowParams>() = window(16, 16, 0);
  b.g.inputs = {l, r, x};
  b.g.outputs = {y, p};
  expectRunsLikeReference(b.g);
}

// Softmax over the channels (across lanes) and LogSoftmax over h and w.
TEST(Bm1684xCodeGen, SoftmaxAndLogSoftmax) {
  GraphBuilder b;
  int x = b.act("x", {2, 70, 3, 5}, DType::F32);
  int s = b.act("s", {2, 70, 3, 5}, DType::F32), l = b.act("l", {2, 70, 3, 5}, DType::F32);
  b.op(OpKind::Softmax, "s", {x}, s).params<SoftmaxParams>().axes = {false, true, false, false};
  b.op(OpKind::LogSoftmax, "l", {x}, l).params<SoftmaxParams>().axes = {false, false, true, true};
  b.g.inputs = {x};
  b.g.outputs = {s, l};
  expectRunsLikeReference(b.g);
}

// LayerNorm over the channels (across lanes) with scale and bias, and over h and w without.
TEST(Bm1684xCodeGen, LayerNorm) {
  GraphBuilder b;
  int x = b.act("x", {2, 70, 3, 5}, DType::F32);
  int scale = b.weight("scale", {70}, DType::F32), bias = b.weight("bias", {70}, DType::F32);
  int c = b.act("c", {2, 70, 3, 5}, DType::F32), hw = b.act("hw", {2, 70, 3, 5}, DType::F32);
  LayerNormParams &overC = b.op(OpKind::LayerNorm, "c", {x, scale, bias}, c).params<LayerNormParams>();
  overC.axes = {false, true, false, false}, overC.epsilon = 1e-5f;
  LayerNormParams &overHw = b.op(OpKind::LayerNorm, "hw", {x}, hw).params<LayerNormParams>();
  overHw.axes = {false, false, true, true}, overHw.epsilon = 1e-3f;
  b.g.inputs = {x};
  b.g.outputs = {c, hw};
  expectRunsLikeReference(b.g);
}

// Bilinear resizes (half-pixel) along both axes through the intermediate, along w only, and a nearest one.
TEST(Bm1684xCodeGen, Resizes) {
  GraphBuilder b;
  int x = b.act("x", {2, 70, 5, 7}, DType::F32);
  const kernels::ResizeParams linear = kernels::resizeParams("linear", "half_pixel", "");
  const kernels::ResizeParams nearest = kernels::resizeParams("nearest", "asymmetric", "floor");
  struct Case {
    const char *name;
    int64_t h, w;
    kernels::ResizeParams mode;
  };
  for (const Case &c : {Case{"both", 9, 12, linear}, Case{"w_only", 5, 3, linear}, Case{"nearest", 10, 14, nearest}}) {
    int y = b.act(c.name, {2, 70, c.h, c.w}, DType::F32);
    ResizeParams &p = b.op(OpKind::Resize, c.name, {x}, y).params<ResizeParams>();
    p.h = kernels::resizeTaps(5, c.h, double(c.h) / 5, c.mode);
    p.w = kernels::resizeTaps(7, c.w, double(c.w) / 7, c.mode);
    b.g.outputs.push_back(y);
  }
  b.g.inputs = {x};
  expectRunsLikeReference(b.g);
}

// Averages whose windows divide by different counts (pads not counted; ceil mode's extra row and column),
// and copies stepping backwards along a dim on one side (cut into elements) or on both (walked forwards).
TEST(Bm1684xCodeGen, UnevenAveragesAndBackwardCopies) {
  GraphBuilder b;
  int x = b.act("x", {2, 70, 9, 7}, DType::F32), a = b.act("a", {2, 70, 9, 7}, DType::F32);
  Op &pads = b.op(OpKind::Pool, "pads", {x}, a);
  pads.params<WindowParams>() = window(3, 1, 1);
  pads.params<WindowParams>().countPad = false;
  int c = b.act("c", {2, 70, 4, 3}, DType::F32); // floor mode: every window full
  Op &ceil = b.op(OpKind::Pool, "ceil", {x}, c);
  ceil.params<WindowParams>() = window(2, 2, 0);
  int c2 = b.act("c2", {2, 70, 5, 4}, DType::F32); // ceil mode: the last row and column cover one tap each
  Op &ceilMode = b.op(OpKind::Pool, "ceil_mode", {x}, c2);
  ceilMode.params<WindowParams>() = window(2, 2, 0);
  int r = b.act("r", {2, 70, 9, 7}, DType::F32);
  MoveParams &m = b.op(OpKind::Move, "reverse", {a}, r).params<MoveParams>();
  MovePiece piece; // w reversed on the source only, h reversed on both sides
  piece.size = {2, 70, 9, 7};
  piece.src = 8 * 7 + 6, piece.srcStride = {70 * 9 * 7, 9 * 7, -7, -1};
  piece.dst = 8 * 7, piece.dstStride = {70 * 9 * 7, 9 * 7, -7, 1};
  m.pieces = {piece};
  b.g.inputs = {x};
  b.g.outputs = {r, c, c2};
  expectRunsLikeReference(b.g);
}

// A net in F16 and in BF16, bit for bit as Graph.h's rule computes it: cast in; a conv of 70 input
// channels (Ic32 weights, three groups; fp32 bias) with relu; max pooling; an add; a depthwise conv whose
// fp32 bias is added to its fp32 sums; an average and a global average (the input widened to fp32, then
// 1/count * x summed term by term); an fc; a clip; an affine, a sigmoid and a division; reductions; a
// resize; cast out.
TEST(Bm1684xCodeGen, SixteenBitFloatNet) {
  for (DType half : {DType::F16, DType::BF16}) {
    GraphBuilder b;
    int x = b.act("x", {2, 70, 10, 9}, DType::F32), h = b.act("h", {2, 70, 10, 9}, half);
    b.op(OpKind::Cast, "in", {x}, h);
    int w = b.weight("w", {66, 70, 3, 3}, half), bias = b.weight("bias", {66}, DType::F32);
    int c = b.act("c", {2, 66, 10, 9}, half);
    Op &conv = b.op(OpKind::Conv, "conv", {h, w, bias}, c);
    conv.params<WindowParams>() = window(3, 1, 1);
    conv.relu = true;
    int m = b.act("m", {2, 66, 5, 5}, half);
    b.op(OpKind::Pool, "max", {c}, m).params<WindowParams>() = [] {
      WindowParams p = window(2, 2, 0);
      p.isMax = true;
      p.padRight = 1;
      return p;
    }();
    int a = b.act("a", {2, 66, 5, 5}, half);
    b.op(OpKind::Add, "add", {m, m}, a);
    int dw = b.weight("dw", {66, 1, 3, 3}, half), db = b.weight("db", {66}, DType::F32);
    int d = b.act("d", {2, 66, 5, 5}, half);
    WindowParams dp = window(3, 1, 1);
    dp.groups = 66;
    Op &depthwise = b.op(OpKind::Conv, "dw", {a, dw, db}, d);
    depthwise.params<WindowParams>() = dp;
    depthwise.relu = true;
    int av = b.act("av", {2, 66, 3, 3}, half);
    b.op(OpKind::Pool, "avg", {d}, av).params<WindowParams>() = window(3, 1, 0);
    int gap = b.act("gap", {2, 66, 1, 1}, half);
    b.op(OpKind::GlobalAvgPool, "gap", {av}, gap);
    int fw = b.weight("fw", {40, 66}, half), fb = b.weight("fb", {40}, DType::F32);
    int fc = b.act("fc", {2, 40}, half), cl = b.act("cl", {2, 40}, half), y = b.act("y", {2, 40}, DType::F32);
    b.op(OpKind::Fc, "fc", {gap, fw, fb}, fc);
    b.op(OpKind::Clip, "clip", {fc}, cl).params<ClipParams>() = {-0.25f, 6.0f};
    b.op(OpKind::Cast, "out", {cl}, y);
    // In fp32 tiles: a per-channel affine (x * scale + bias, the product not rounded to 16 bits), a sigmoid
    // (the fp32 program), a division.
    int sc = b.weight("sc", {66}, half), sb = b.weight("sb", {66}, half);
    int af = b.act("af", {2, 66, 5, 5}, half), sg = b.act("sg", {2, 66, 5, 5}, half);
    int dv = b.act("dv", {2, 66, 5, 5}, half), y2 = b.act("y2", {2, 66, 5, 5}, DType::F32);
    b.op(OpKind::Affine, "affine", {d, sc, sb}, af);
    b.op(OpKind::Sigmoid, "sigmoid", {af}, sg);
    b.op(OpKind::Div, "div", {af, sg}, dv);
    b.op(OpKind::Cast, "out2", {dv}, y2);
    // Reductions in fp32 tiles: a mean, a product, a softmax over channels, a layer norm with 16-bit weights.
    int mean = b.act("mean", {2, 66, 1, 1}, half), prod = b.act("prod", {2, 1, 5, 5}, half);
    Op &rm = b.op(OpKind::Reduce, "mean", {dv}, mean);
    rm.params<ReduceParams>().mode = ReduceMode::Mean;
    rm.params<ReduceParams>().axes = {false, false, true, true};
    Op &rp = b.op(OpKind::Reduce, "prod", {sg}, prod);
    rp.params<ReduceParams>().mode = ReduceMode::Prod;
    rp.params<ReduceParams>().axes = {false, true, false, false};
    int sm = b.act("sm", {2, 66, 5, 5}, half);
    b.op(OpKind::Softmax, "softmax", {dv}, sm).params<SoftmaxParams>().axes = {false, true, false, false};
    int ls = b.weight("ls", {5, 5}, half), lb = b.weight("lb", {5, 5}, half), ln = b.act("ln", {2, 66, 5, 5}, half);
    LayerNormParams &lp = b.op(OpKind::LayerNorm, "ln", {sm, ls, lb}, ln).params<LayerNormParams>();
    lp.axes = {false, false, true, true};
    lp.epsilon = 1e-5f;
    int y3 = b.act("y3", {2, 66, 1, 1}, DType::F32), y4 = b.act("y4", {2, 1, 5, 5}, DType::F32);
    int y5 = b.act("y5", {2, 66, 5, 5}, DType::F32);
    b.op(OpKind::Cast, "out3", {mean}, y3);
    b.op(OpKind::Cast, "out4", {prod}, y4);
    b.op(OpKind::Cast, "out5", {ln}, y5);
    // A bilinear resize along both axes: its fp32 form on the input widened in DDR, rounded once.
    int rs = b.act("rs", {2, 66, 9, 12}, half), y6 = b.act("y6", {2, 66, 9, 12}, DType::F32);
    ResizeParams &rp2 = b.op(OpKind::Resize, "resize", {ln}, rs).params<ResizeParams>();
    const kernels::ResizeParams linear = kernels::resizeParams("linear", "half_pixel", "");
    rp2.h = kernels::resizeTaps(5, 9, 9.0 / 5, linear);
    rp2.w = kernels::resizeTaps(5, 12, 12.0 / 5, linear);
    b.op(OpKind::Cast, "out6", {rs}, y6);
    b.g.inputs = {x};
    b.g.outputs = {y, y2, y3, y4, y5, y6};
    SCOPED_TRACE(dtypeName(half));
    expectRunsLikeReference(b.g, 7, /*bitExact=*/true);
  }
}

// A conv of 512 input channels (16 groups of Ic32) and an fc of K = 18432: the fc sums K in the
// reference's chunks (kChunks: 5 of at most 4032), bit for bit in F16 and, for the fc alone, in F32.
TEST(Bm1684xCodeGen, SixteenBitWideConvAndFc) {
  {
    GraphBuilder b;
    int x = b.act("x", {3, 18432}, DType::F32), w = b.weight("w", {200, 18432}, DType::F32);
    int bias = b.weight("bias", {200}, DType::F32), y = b.act("y", {3, 200}, DType::F32);
    b.op(OpKind::Fc, "fc", {x, w, bias}, y);
    b.g.inputs = {x};
    b.g.outputs = {y};
    expectRunsLikeReference(b.g, 7, true);
  }
  GraphBuilder b;
  int x = b.act("x", {1, 512, 6, 6}, DType::F32), h = b.act("h", {1, 512, 6, 6}, DType::F16);
  b.op(OpKind::Cast, "in", {x}, h);
  int w = b.weight("w", {512, 512, 3, 3}, DType::F16), bias = b.weight("bias", {512}, DType::F32);
  int c = b.act("c", {1, 512, 6, 6}, DType::F16);
  b.op(OpKind::Conv, "conv", {h, w, bias}, c).params<WindowParams>() = window(3, 1, 1);
  int fw = b.weight("fw", {100, 512 * 36}, DType::F16), fb = b.weight("fb", {100}, DType::F32);
  int fc = b.act("fc", {1, 100}, DType::F16), y = b.act("y", {1, 100}, DType::F32),
      y2 = b.act("y2", {1, 512, 6, 6}, DType::F32);
  b.op(OpKind::Fc, "fc", {c, fw, fb}, fc);
  b.op(OpKind::Cast, "out", {fc}, y);
  b.op(OpKind::Cast, "out2", {c}, y2);
  b.g.inputs = {x};
  b.g.outputs = {y, y2};
  expectRunsLikeReference(b.g, 7, true);
}

TEST(Bm1684xCodeGen, RefusesWhatItDoesNotCompile) {
  {
    GraphBuilder b;
    int x = b.act("x", {1, 4, 4, 4}, DType::F32), y = b.act("y", {1, 4, 4, 4}, DType::F32);
    ResizeParams &p = b.op(OpKind::Resize, "up", {x}, y).params<ResizeParams>();
    p.h = kernels::ResizeTaps{{0, 1, 2, 3}, {0, 1, 2, 3}, {0, 0, 0, 0}};
    p.w = kernels::ResizeTaps{{0, 1, 2, 3}, {0, 1, 2, 3}, {0, 0, 0, 0}};
    b.g.inputs = {x};
    b.g.outputs = {y};
    auto model = bm1684x::compileToBmodel(b.g);
    ASSERT_TRUE(model.isOk()) << model.message(); // an identity resize: one copy
  }
  {
    GraphBuilder b;
    int x = b.act("x", {1, 4, 32, 32}, DType::F32), w = b.weight("w", {4, 4, 3, 3}, DType::F32);
    int y = b.act("y", {1, 4, 2, 2}, DType::F32);
    Op &conv = b.op(OpKind::Conv, "wide", {x, w}, y);
    conv.params<WindowParams>() = window(3, 16, 0);
    b.g.inputs = {x};
    b.g.outputs = {y};
    auto model = bm1684x::compileToBmodel(b.g);
    ASSERT_FALSE(model.isOk());
    EXPECT_NE(model.message().find("Conv 'wide': a stride of 16 (1 to 15)"), std::string::npos) << model.message();
  }
  {
    GraphBuilder b;
    int x = b.act("x", {1, 4, 4, 4}, DType::I8), y = b.act("y", {1, 4, 4, 4}, DType::I8);
    b.op(OpKind::Relu, "r", {x}, y);
    b.g.inputs = {x};
    b.g.outputs = {y};
    auto model = bm1684x::compileToBmodel(b.g);
    ASSERT_FALSE(model.isOk());
    EXPECT_EQ(model.message(), "graph input 'x' is int8: BM1684X bmodels take fp32 inputs and outputs");
  }
}

} // namespace
