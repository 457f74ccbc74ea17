// Layer groups: every groupable op kind inside a forced group (fp32 and
// int8, whole and sliced along N/H with halos), bit-exact with QuantRef;
// the DP search vs op by op on a small CNN (identical bytes, fewer
// estimated cycles); invalid groups are refused.
#include "BackendHarness.h"
#include "compiler/Backend/AddressAssigner.h"
#include "compiler/Backend/Ops/Activation.h"
#include "compiler/Backend/Ops/Affine.h"
#include "compiler/Backend/Ops/Window.h"

using namespace tpu;
using namespace tpu::backend;
using namespace tpu::backend::test;

namespace {

WindowParams win(int64_t k, int64_t s, int64_t pad, int64_t groups = 1) {
  WindowParams p;
  p.kh = p.kw = k, p.strideH = p.strideW = s;
  p.padTop = p.padBottom = p.padLeft = p.padRight = pad, p.groups = groups;
  return p;
}

struct Chain {
  GraphBuilder gb;
  DType t;
  int cur;
  std::array<int64_t, 4> s;
  int n = 0;
  Chain(DType type, std::array<int64_t, 4> shape) : t(type), s(shape) {
    cur = gb.act("in", {s[0], s[1], s[2], s[3]}, t);
    gb.g.inputs = {cur};
  }
  bool q() const { return t != DType::F32; }
  int next(int64_t c, int64_t h, int64_t w) {
    s = {s[0], c, h, w};
    return gb.act("t" + std::to_string(n++), {s[0], c, h, w}, t);
  }
  Op &conv(int64_t oc, WindowParams p) {
    int64_t oh = windowOutput(s[2], p.kh, p.strideH, p.dilationH, p.padTop, p.padBottom);
    int64_t ow = windowOutput(s[3], p.kw, p.strideW, p.dilationW, p.padLeft, p.padRight);
    int in = cur;
    int64_t ic = s[1];
    int w = gb.weight("w" + std::to_string(n), {oc, ic / p.groups, p.kh, p.kw}, q() ? DType::I8 : DType::F32);
    int b = gb.weight("b" + std::to_string(n), {oc}, q() ? DType::I16 : DType::F32);
    cur = next(oc, oh, ow);
    Op &o = gb.op(OpKind::Conv, "conv" + std::to_string(n), {in, w, b}, cur);
    o.params<WindowParams>() = p, o.rshift = q() ? 9 : 0;
    return o;
  }
  Op &pool(bool isMax, WindowParams p) {
    int in = cur;
    cur = next(s[1], windowOutput(s[2], p.kh, p.strideH, 1, p.padTop, p.padBottom),
               windowOutput(s[3], p.kw, p.strideW, 1, p.padLeft, p.padRight));
    Op &o = gb.op(OpKind::Pool, "pool" + std::to_string(n), {in}, cur);
    o.params<WindowParams>() = p, o.params<WindowParams>().isMax = isMax;
    if (!isMax) o.multipliers = {q() ? 29 : 1}, o.rshift = q() ? 8 : 0;
    return o;
  }
  Op &unary(OpKind k) {
    int in = cur;
    cur = next(s[1], s[2], s[3]);
    Op &o = gb.op(k, opKindName(k) + std::to_string(n), {in}, cur);
    if (k == OpKind::LeakyRelu) o.params<LeakyReluParams>().alpha = 0.2f, o.multipliers = {26}, o.rshift = 7;
    if (k == OpKind::Clip) o.params<ClipParams>() = {q() ? -30 : -0.3f, q() ? 100 : 0.4f};
    if (k == OpKind::Requant) o.multipliers = {77}, o.rshift = 6;
    if (k == OpKind::Affine) o.params<AffineParams>() = {0.2f, 0.5f}, o.multipliers = {51, 300}, o.rshift = 6;
    return o;
  }
  Op &binary(OpKind k, int other) {
    int in = cur;
    cur = next(s[1], s[2], s[3]);
    Op &o = gb.op(k, opKindName(k) + std::to_string(n), {in, other}, cur);
    if (q()) o.multipliers = k == OpKind::Mul ? std::vector<int32_t>{41} : std::vector<int32_t>{7, -5},
             o.rshift = k == OpKind::Mul ? 11 : 3;
    return o;
  }
  Graph finish() {
    gb.g.outputs = {cur};
    return gb.g;
  }
};

// A chain exercising windows with halos, a residual read by two ops of the
// group, and element-wise kinds; compiled as one forced group.
Graph mixedChain(DType t) {
  Chain c(t, {5, 7, 29, 23});
  int input = c.cur;
  c.conv(70, win(3, 1, 1));
  c.unary(OpKind::Relu);
  int mid = c.cur;
  c.conv(70, win(3, 1, 1, 70)); // depthwise
  c.binary(OpKind::Add, mid);   // residual inside the group
  c.unary(OpKind::LeakyRelu);
  c.pool(true, win(3, 2, 1));
  c.conv(9, win(3, 2, 1));
  c.unary(OpKind::Clip);
  (void)input;
  return c.finish();
}

TEST(BackendLayerGroup, ForcedGroupMatchesReference) {
  for (DType t : {DType::F32, DType::I8})
    for (uint32_t lane : {512u * 1024, 32u * 1024, 16u * 1024}) {
      Graph g = mixedChain(t);
      Options o;
      o.hw.lmemBytesPerLane = lane;
      o.segmentStarts.assign(1, 0); // one segment: all ops
      SCOPED_TRACE(std::string(t == DType::F32 ? "f32" : "int8") + " lane " + std::to_string(lane));
      auto rep = expectMatchesReference(g, o);
      ASSERT_EQ(rep.ops.size(), 1u);
      EXPECT_EQ(rep.ops[0].ops, g.ops.size());
      if (lane <= 32u * 1024) {
        EXPECT_GT(rep.ops[0].slices, 1u);
      }
    }
}

// A conv whose dilation and pads exceed the command fields (groups of kernel
// taps into an int32 / fp32 sum) inside a group, sliced along H: the top
// and bottom slices see pads above 15, the middle ones none.
TEST(BackendLayerGroup, ConvBeyondTheFieldsInAGroup) {
  for (DType t : {DType::F32, DType::I8})
    for (uint32_t lane : {512u * 1024, 32u * 1024}) {
      Chain c(t, {2, 6, 100, 19});
      c.conv(20, win(3, 1, 1));
      c.unary(OpKind::Relu);
      WindowParams wide = win(3, 1, 18);
      wide.dilationH = wide.dilationW = 18;
      c.conv(70, wide).relu = true;
      c.pool(true, win(2, 2, 0));
      Graph g = c.finish();
      Options o;
      o.hw.lmemBytesPerLane = lane;
      o.segmentStarts.assign(1, 0);
      SCOPED_TRACE(std::string(t == DType::F32 ? "f32" : "int8") + " lane " + std::to_string(lane));
      auto rep = expectMatchesReference(g, o);
      ASSERT_EQ(rep.ops.size(), 1u);
      if (lane < 512u * 1024) {
        EXPECT_GT(rep.ops[0].slices, 1u);
      }
    }
}

TEST(BackendLayerGroup, EveryGroupableKindInAGroup) {
  for (DType t : {DType::F32, DType::I8}) {
    std::vector<OpKind> kinds{OpKind::Relu, OpKind::LeakyRelu, OpKind::Clip, OpKind::Mul, OpKind::Max,
                              OpKind::Affine};
    if (t == DType::I8) kinds.push_back(OpKind::Requant);
    for (OpKind k : kinds) {
      Chain c(t, {3, 5, 21, 13});
      int x = c.cur;
      c.conv(66, win(3, 1, 1));
      int y = c.cur;
      if (k == OpKind::Mul || k == OpKind::Max) {
        c.binary(k, y);
      } else {
        c.unary(k);
      }
      c.pool(false, win(2, 2, 0));
      (void)x;
      Graph g = c.finish();
      Options o;
      o.hw.lmemBytesPerLane = 4 * 1024;
      o.segmentStarts.assign(1, 0); // one segment: all ops
      SCOPED_TRACE(std::string(opKindName(k)) + (t == DType::F32 ? " f32" : " int8"));
      expectMatchesReference(g, o);
    }
  }
}

TEST(BackendLayerGroup, PerChannelWeightsInAGroup) {
  for (DType t : {DType::F32, DType::I8}) {
    Chain c(t, {3, 5, 21, 13});
    c.conv(70, win(3, 1, 1));
    for (OpKind k : {OpKind::Mul, OpKind::Add}) {
      int in = c.cur;
      int w = c.gb.weight("cw" + std::to_string(c.n), {70}, c.q() ? DType::I8 : DType::F32);
      c.cur = c.next(c.s[1], c.s[2], c.s[3]);
      Op &o = c.gb.op(k, opKindName(k) + std::to_string(c.n), {in, w}, c.cur);
      if (c.q()) o.multipliers = k == OpKind::Mul ? std::vector<int32_t>{41} : std::vector<int32_t>{7, -5},
                 o.rshift = k == OpKind::Mul ? 9 : 3;
    }
    Graph g = c.finish();
    Options o;
    o.hw.lmemBytesPerLane = 16 * 1024;
    o.segmentStarts.assign(1, 0);
    SCOPED_TRACE(t == DType::F32 ? "f32" : "int8");
    auto rep = expectMatchesReference(g, o);
    ASSERT_EQ(rep.ops.size(), 1u);
    EXPECT_EQ(rep.ops[0].ops, 3u);
  }
}

// An input broadcast along H and W (an SE block's channel scale), H alone or
// W alone joins a group: loaded once per slice, read with stride 0; as the
// first or the second operand, sliced along N and H, fp32 and int8.
TEST(BackendLayerGroup, BroadcastInputsInAGroup) {
  for (DType t : {DType::F32, DType::I8})
    for (std::array<int64_t, 2> hw : {std::array<int64_t, 2>{1, 1}, {1, 13}, {21, 1}}) {
      Chain c(t, {3, 5, 21, 13});
      const int scale = c.gb.act("scale", {3, 70, hw[0], hw[1]}, t);
      c.gb.g.inputs.push_back(scale);
      c.conv(70, win(3, 1, 1));
      const int y = c.cur;
      c.binary(OpKind::Mul, scale);
      // The broadcast tensor first: the group clips rows to the other input.
      const int prod = c.cur;
      c.cur = c.next(c.s[1], c.s[2], c.s[3]);
      Op &add = c.gb.op(OpKind::Add, "add_first", {scale, prod}, c.cur);
      if (c.q()) add.multipliers = {7, -5}, add.rshift = 3;
      c.binary(OpKind::Add, y);
      c.pool(true, win(3, 2, 1));
      Graph g = c.finish();
      Options o;
      o.hw.lmemBytesPerLane = 8 * 1024;
      o.segmentStarts.assign(1, 0); // one segment: all ops
      SCOPED_TRACE(std::string(t == DType::F32 ? "f32" : "int8") + " broadcast " + std::to_string(hw[0]) + "x" +
                   std::to_string(hw[1]));
      auto rep = expectMatchesReference(g, o);
      ASSERT_EQ(rep.ops.size(), 1u);
      EXPECT_EQ(rep.ops[0].ops, g.ops.size());
      EXPECT_GT(rep.ops[0].slices, 1u);
    }
}

// All ops of g forced into one group are refused for `why`; the search
// never picks that group (op by op instead: `ops` ops, still correct).
void expectGroupRefused(const Graph &g, const std::string &why, size_t ops) {
  Options o;
  o.segmentStarts.assign(1, 0); // one segment: all ops
  auto m = compileToBmodel(g, o);
  ASSERT_FALSE(m.isOk());
  EXPECT_NE(m.message().find(why), std::string::npos) << m.message();
  o.segmentStarts.clear();
  auto rep = expectMatchesReference(g, o);
  EXPECT_EQ(rep.ops.size(), ops);
}

// A weight of the output's full shape (ViT's position embedding) is read like
// an activation; a group loads only activations and per-channel weights, so
// the op stays out of groups (grouped, its weight was never loaded: ViT-B/16
// INT8 read a DDR address as local memory).
TEST(BackendLayerGroup, FullShapeWeightKeepsItsOpOutOfGroups) {
  Chain c(DType::F32, {1, 70, 21, 13});
  c.conv(70, win(3, 1, 1));
  int in = c.cur;
  int w = c.gb.weight("pos", {1, 70, 21, 13}, DType::F32);
  c.cur = c.next(c.s[1], c.s[2], c.s[3]);
  c.gb.op(OpKind::Add, "add_pos", {in, w}, c.cur);
  expectGroupRefused(c.finish(), "Add is not groupable", 2);
}

// A group cannot read an input broadcast along N or C (it holds every
// tensor by rows of its own shape), nor one it computes itself.
TEST(BackendLayerGroup, BroadcastsAGroupCannotReadAreRefused) {
  const std::pair<std::array<int64_t, 2>, std::string> cases[] = {{{1, 70}, "batch sizes differ"},
                                                                    {{3, 1}, "Mul is not groupable"}};
  for (const auto &[nc, why] : cases) {
    Chain c(DType::F32, {3, 5, 21, 13});
    const int scale = c.gb.act("scale", {nc[0], nc[1], 1, 1}, DType::F32);
    c.gb.g.inputs.push_back(scale);
    c.conv(70, win(3, 1, 1));
    c.binary(OpKind::Mul, scale);
    SCOPED_TRACE("broadcast " + std::to_string(nc[0]) + "x" + std::to_string(nc[1]));
    expectGroupRefused(c.finish(), why, 2);
  }
  Chain c(DType::F32, {3, 70, 7, 7});
  const int x = c.cur;
  c.pool(false, win(7, 1, 0)); // the channel means, 1x1
  const int means = c.cur;
  c.cur = c.next(70, 7, 7);
  c.gb.op(OpKind::Mul, "rescale", {x, means}, c.cur);
  expectGroupRefused(c.finish(), "a broadcast input is computed in the group", 2);
}

TEST(BackendLayerGroup, LutAndCastInAGroup) {
  GraphBuilder gb;
  int x = gb.act("x", {5, 67, 19, 9}, DType::F32);
  int q = gb.act("q", {5, 67, 19, 9}, DType::I8, 0.01f);
  int l = gb.act("l", {5, 67, 19, 9}, DType::I8, 0.02f);
  int f = gb.act("f", {5, 67, 19, 9}, DType::F32);
  gb.op(OpKind::Cast, "quant", {x}, q);
  gb.op(OpKind::Lut, "table", {q, gb.weight("tb", {256}, DType::I8)}, l);
  gb.op(OpKind::Cast, "dequant", {l}, f);
  gb.g.inputs = {x}, gb.g.outputs = {f};
  Options o;
  o.hw.lmemBytesPerLane = 4 * 1024;
  o.segmentStarts.assign(1, 0); // one segment: all ops
  auto rep = expectMatchesReference(gb.g, o);
  ASSERT_EQ(rep.ops.size(), 1u);
  EXPECT_EQ(rep.ops[0].ops, 3u);
}

TEST(BackendLayerGroup, InvalidGroupsAreRefused) {
  // An intermediate read outside the group (a graph output) cannot stay local.
  Chain c(DType::F32, {1, 4, 8, 8});
  c.unary(OpKind::Relu);
  int mid = c.cur;
  c.unary(OpKind::Clip);
  Graph g = c.finish();
  g.outputs.push_back(mid);
  expectGroupRefused(g, "an intermediate is a graph output", 2);
}

// A group's ops run slice by slice, interleaved: the group output must not
// take the DDR bytes of a group input that later slices still load (the
// op-by-op liveness freed the input after the conv, its last reader, and the
// output of the relu after it reused them: ResNet-18 F32 grouped, cosine 0.989).
TEST(BackendLayerGroup, GroupOutputKeepsOffItsInputsInDdr) {
  Chain c(DType::F32, {1, 16, 64, 64});
  c.unary(OpKind::Relu); // op 0, alone: its output is the group's input
  const int groupIn = c.cur;
  c.conv(16, win(3, 2, 1)); // op 1: the group input's last reader
  const int intermediate = c.cur;
  c.unary(OpKind::Relu); // op 2: the group output
  Graph g = c.finish();
  const int groupOut = c.cur;
  const uint64_t inBytes = activationBytes(g.tensors[groupIn]), outBytes = activationBytes(g.tensors[groupOut]);
  auto disjoint = [&](const AddressMap &m) {
    const uint64_t a = m.addr[groupIn], b = m.addr[groupOut];
    return a + inBytes <= b || b + outBytes <= a;
  };
  auto opByOp = assignAddresses(g, isa::HwConfig{});
  ASSERT_TRUE(opByOp.isOk()) << opByOp.message();
  EXPECT_FALSE(disjoint(*opByOp)); // op by op the reuse is right: the conv has finished
  auto grouped = assignAddresses(g, isa::HwConfig{}, {{0, 0}, {1, 2}});
  ASSERT_TRUE(grouped.isOk()) << grouped.message();
  EXPECT_TRUE(disjoint(*grouped));
  EXPECT_NE(opByOp->addr[intermediate], 0u);
  EXPECT_EQ(grouped->addr[intermediate], 0u); // stays in local memory
  EXPECT_EQ(grouped->activationTotal, opByOp->activationTotal);
  EXPECT_FALSE(assignAddresses(g, isa::HwConfig{}, {{0, 0}, {1, 3}}).isOk());
  // Compiled and run: many slices, double-buffered and not.
  for (bool doubleBuffer : {true, false})
    for (uint32_t lane : {4096u, 8192u}) {
      Options o;
      o.hw.lmemBytesPerLane = lane;
      o.doubleBuffer = doubleBuffer;
      o.segmentStarts = {0, 1};
      SCOPED_TRACE("lane " + std::to_string(lane) + (doubleBuffer ? " double-buffered" : " one set"));
      auto rep = expectMatchesReference(g, o);
      ASSERT_EQ(rep.ops.size(), 2u);
      EXPECT_EQ(rep.ops[1].ops, 2u);
      EXPECT_GT(rep.ops[1].slices, 2u);
    }
}

// The small CNN of the issue's "done when": grouped and op-by-op give the
// same bytes; grouping lowers the estimated cycles.
Graph cnn(DType t, int64_t n) {
  Chain c(t, {n, 3, 64, 64});
  c.conv(32, win(3, 2, 1)).relu = true;
  int a = c.cur;
  c.conv(32, win(3, 1, 1)).relu = true;
  c.conv(32, win(3, 1, 1));
  c.binary(OpKind::Add, a).relu = true;
  c.pool(true, win(2, 2, 0));
  c.conv(64, win(3, 1, 1)).relu = true;
  c.conv(64, win(1, 1, 0));
  return c.finish();
}

TEST(BackendLayerGroup, GroupedBeatsOpByOpWithIdenticalBytes) {
  for (DType t : {DType::F32, DType::I8}) {
    Graph g = cnn(t, 4);
    Options grouped, opByOp;
    opByOp.layerGroups = false;
    CompileReport rg, ro;
    auto mg = compileToBmodel(g, grouped, &rg), mo = compileToBmodel(g, opByOp, &ro);
    ASSERT_TRUE(mg.isOk()) << mg.message();
    ASSERT_TRUE(mo.isOk()) << mo.message();
    auto in = randomInputs(g, 11);
    auto og = runModel(g, *mg, grouped.hw, in), oo = runModel(g, *mo, opByOp.hw, in);
    ASSERT_TRUE(og.isOk()) << og.message();
    ASSERT_TRUE(oo.isOk()) << oo.message();
    EXPECT_EQ(og->outputs, oo->outputs);
    EXPECT_LT(rg.totalCycles, ro.totalCycles) << rg.text() << ro.text();
    EXPECT_LT(rg.ops.size(), ro.ops.size());
    size_t groups = 0;
    for (const auto &r : rg.ops) groups += r.ops > 1;
    EXPECT_GE(groups, 1u);
    EXPECT_NE(rg.text().find("layer groups"), std::string::npos);
    auto gain = layerGroupGain(g, grouped, rg);
    ASSERT_TRUE(gain.isOk()) << gain.message();
    EXPECT_NE(gain->find("% less"), std::string::npos) << *gain;
    expectMatchesReference(g, grouped);
  }
}

// ResNet-50's shapes (torchvision, batch 1 and 4), random weights: every
// op compiles, the DP forms layer groups and they lower the estimate.
Graph resnet50(DType t, int64_t n) {
  GraphBuilder gb;
  const bool q = t != DType::F32;
  int count = 0;
  auto conv = [&](int x, int64_t oc, int64_t k, int64_t s, bool relu) {
    auto xs = gb.g.tensors[x].nchw();
    const int64_t pad = k / 2;
    int y = gb.act("t" + std::to_string(count),
                   {n, oc, windowOutput(xs[2], k, s, 1, pad, pad), windowOutput(xs[3], k, s, 1, pad, pad)}, t);
    int w = gb.weight("w" + std::to_string(count), {oc, xs[1], k, k}, q ? DType::I8 : DType::F32);
    int b = gb.weight("b" + std::to_string(count), {oc}, q ? DType::I16 : DType::F32);
    Op &o = gb.op(OpKind::Conv, "conv" + std::to_string(count++), {x, w, b}, y);
    o.params<WindowParams>() = win(k, s, pad), o.relu = relu, o.rshift = q ? 8 : 0;
    return y;
  };
  int x = gb.act("input", {n, 3, 224, 224}, t);
  int p = gb.act("pool", {n, 64, 56, 56}, t);
  Op &mp = gb.op(OpKind::Pool, "maxpool", {conv(x, 64, 7, 2, true)}, p);
  mp.params<WindowParams>() = win(3, 2, 1), mp.params<WindowParams>().isMax = true;
  int cur = p;
  const int blocks[4] = {3, 4, 6, 3};
  for (int s = 0; s < 4; ++s)
    for (int b = 0; b < blocks[s]; ++b) {
      const int64_t width = 64 << s, stride = b == 0 && s > 0 ? 2 : 1;
      int y = conv(conv(conv(cur, width, 1, 1, true), width, 3, stride, true), width * 4, 1, 1, false);
      int shortcut = b == 0 ? conv(cur, width * 4, 1, stride, false) : cur;
      auto ys = gb.g.tensors[y].nchw();
      int sum = gb.act("sum" + std::to_string(count), {ys[0], ys[1], ys[2], ys[3]}, t);
      Op &add = gb.op(OpKind::Add, "add" + std::to_string(count++), {y, shortcut}, sum);
      add.relu = true;
      if (q) add.multipliers = {1, 1}, add.rshift = 1;
      cur = sum;
    }
  int g = gb.act("gap", {n, 2048, 1, 1}, t);
  Op &gap = gb.op(OpKind::GlobalAvgPool, "gap", {cur}, g);
  gap.multipliers = {q ? 167 : 1}, gap.rshift = q ? 13 : 0;
  int y = gb.act("logits", {n, 1000}, t);
  Op &fc = gb.op(OpKind::Fc, "fc", {g, gb.weight("fc", {1000, 2048}, q ? DType::I8 : DType::F32)}, y);
  fc.rshift = q ? 8 : 0;
  gb.g.name = "resnet50";
  gb.g.inputs = {x}, gb.g.outputs = {y};
  return gb.g;
}

TEST(BackendLayerGroup, ResNet50ShapesCompile) {
  for (DType t : {DType::I8, DType::F32})
    for (int64_t n : {1, 4}) {
      if (t == DType::F32 && n == 4) continue;
      Graph g = resnet50(t, n);
      ASSERT_TRUE(g.validate().isOk()) << g.validate().message();
      Options grouped, opByOp;
      opByOp.layerGroups = false;
      CompileReport rg, ro;
      auto mg = compileToBmodel(g, grouped, &rg);
      auto mo = compileToBmodel(g, opByOp, &ro);
      ASSERT_TRUE(mg.isOk()) << mg.message();
      ASSERT_TRUE(mo.isOk()) << mo.message();
      EXPECT_EQ(ro.ops.size(), g.ops.size());
      EXPECT_LT(rg.ops.size(), ro.ops.size());
      EXPECT_LT(rg.totalCycles, ro.totalCycles);
      EXPECT_LT(ro.neuronBytes, ro.activationBytesNoReuse);
      std::printf("resnet50 %s batch %lld: %zu segments, estimated %.2f ms grouped vs %.2f ms op by op\n",
                  t == DType::F32 ? "fp32" : "int8", (long long)n, rg.ops.size(), rg.totalCycles / 550e3,
                  ro.totalCycles / 550e3);
    }
}

} // namespace

// Weight prefetch: in a group of two convolutions whose weights dominate
// (7x7 planes, 256 channels), the first conv waits only for the group input
// and its own weights; the second conv's weights are loaded by later GDMA
// commands while it computes. Same bytes as the reference.
TEST(BackendLayerGroup, EachOpWaitsOnlyForItsOwnWeights) {
  for (DType t : {DType::F32, DType::I8}) {
    Chain c(t, {1, 256, 7, 7});
    c.conv(256, win(3, 1, 1)).relu = true;
    c.conv(256, win(1, 1, 0));
    Graph g = c.finish();
    Options o;
    o.segmentStarts.assign(1, 0);
    expectMatchesReference(g, o);
    auto m = compileToBmodel(g, o);
    ASSERT_TRUE(m.isOk()) << m.message();
    ASSERT_EQ(m->nets[0].groups.size(), 1u);
    const bmodel::CmdGroup &grp = m->nets[0].groups[0];
    const std::string first = g.ops[0].name, second = g.ops[1].name;
    auto tiu0 = isa::decodeTiu(grp.tiu[0].data());
    ASSERT_TRUE(tiu0.isOk()) << tiu0.message();
    ASSERT_EQ(grp.tiuLayer[0], first);
    const uint16_t firstWaits = tiu0->cmdIdGdma;
    size_t secondLoads = 0;
    for (size_t i = 0; i < grp.gdma.size(); ++i)
      if (grp.gdmaLayer[i] == second) {
        EXPECT_GT(i + 1, firstWaits) << "conv 1 waits for GDMA #" << i << " of " << second;
        ++secondLoads;
      }
    EXPECT_GE(secondLoads, 1u);
    for (size_t i = 0; i < grp.tiu.size(); ++i)
      if (grp.tiuLayer[i] == second) {
        auto cmd = isa::decodeTiu(grp.tiu[i].data());
        ASSERT_TRUE(cmd.isOk());
        EXPECT_GT(cmd->cmdIdGdma, firstWaits);
      }
  }
}
