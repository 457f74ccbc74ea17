// Whole-graph code generation: address reuse, double buffering, commands
// carrying layer names, the too-big error, graph validation errors, and
// QuantRef's integer formulas on hand-computed values.
#include "BackendHarness.h"
#include "compiler/Backend/Ops/Activation.h"
#include "compiler/Backend/Ops/Affine.h"
#include "compiler/Backend/Ops/Upsample.h"
#include "compiler/Backend/Ops/Window.h"

#include "compiler/Backend/AddressAssigner.h"
#include "compiler/Backend/LmemAllocator.h"

using namespace tpu;
using namespace tpu::backend;
using namespace tpu::backend::test;

namespace {

// conv -> relu -> maxpool -> conv -> add(residual) -> gap -> fc, in `t`.
Graph smallCnn(DType t, int64_t n = 2) {
  GraphBuilder gb;
  const bool q = t != DType::F32;
  DType wt = q ? DType::I8 : DType::F32, bt = q ? DType::I16 : DType::F32;
  int x = gb.act("input", {n, 3, 32, 32}, t);
  int c1 = gb.act("c1", {n, 16, 32, 32}, t), r1 = gb.act("r1", {n, 16, 32, 32}, t);
  int p1 = gb.act("p1", {n, 16, 16, 16}, t), c2 = gb.act("c2", {n, 16, 16, 16}, t);
  int a = gb.act("a", {n, 16, 16, 16}, t), g = gb.act("g", {n, 16, 1, 1}, t);
  int y = gb.act("logits", {n, 10}, t);
  WindowParams k3;
  k3.kh = k3.kw = 3, k3.padTop = k3.padBottom = k3.padLeft = k3.padRight = 1;
  Op &o1 = gb.op(OpKind::Conv, "conv1", {x, gb.weight("w1", {16, 3, 3, 3}, wt), gb.weight("b1", {16}, bt)}, c1);
  o1.params<WindowParams>() = k3, o1.rshift = q ? 8 : 0;
  gb.op(OpKind::Relu, "relu1", {c1}, r1);
  Op &pool = gb.op(OpKind::Pool, "pool1", {r1}, p1);
  WindowParams &pw = pool.params<WindowParams>();
  pw.kh = pw.kw = 2, pw.strideH = pw.strideW = 2, pw.isMax = true;
  Op &o2 = gb.op(OpKind::Conv, "conv2", {p1, gb.weight("w2", {16, 16, 3, 3}, wt), gb.weight("b2", {16}, bt)}, c2);
  o2.params<WindowParams>() = k3, o2.rshift = q ? 10 : 0, o2.relu = true;
  Op &add = gb.op(OpKind::Add, "add", {c2, p1}, a);
  add.relu = true;
  if (q) add.multipliers = {3, 5}, add.rshift = 2;
  Op &gap = gb.op(OpKind::GlobalAvgPool, "gap", {a}, g);
  gap.multipliers = {q ? 128 : 1}, gap.rshift = q ? 15 : 0;
  Op &fc = gb.op(OpKind::Fc, "fc", {g, gb.weight("wf", {10, 16}, wt), gb.weight("bf", {10}, bt)}, y);
  fc.rshift = q ? 6 : 0;
  gb.g.name = "small_cnn";
  gb.g.inputs = {x}, gb.g.outputs = {y};
  return gb.g;
}

TEST(BackendCodeGen, SmallCnnMatchesReference) {
  for (DType t : {DType::F32, DType::I8}) {
    Graph g = smallCnn(t, 5);
    ASSERT_TRUE(g.validate().isOk()) << g.validate().message();
    Options o;
    expectMatchesReference(g, o);
    o.hw = smallLmem();
    expectMatchesReference(g, o);
  }
}

TEST(BackendCodeGen, ModelDescribesIoAndLayers) {
  Graph g = smallCnn(DType::I8, 5);
  CompileReport rep;
  Options opByOp;
  opByOp.layerGroups = false;
  auto m = compileToBmodel(g, opByOp, &rep);
  ASSERT_TRUE(m.isOk()) << m.message();
  const bmodel::Net &net = m->nets.at(0);
  EXPECT_EQ(net.name, "small_cnn");
  ASSERT_EQ(net.inputs.size(), 1u);
  EXPECT_EQ(net.inputs[0].name, "input");
  EXPECT_EQ(net.inputs[0].dtype, bmodel::DataType::Int8);
  EXPECT_EQ(net.inputs[0].storeMode, bmodel::StoreMode::N4);
  EXPECT_EQ(net.inputs[0].size, 8u * 3 * 32 * 32); // batch 5 rounded up to 8
  EXPECT_FLOAT_EQ(net.inputs[0].scale, 0.05f);
  EXPECT_EQ(net.outputs[0].shape, (std::vector<uint64_t>{5, 10}));
  // Every command carries its op's name; one group per op.
  std::set<std::string> names;
  for (const auto &grp : net.groups) {
    for (const auto &l : grp.tiuLayer) names.insert(l);
    for (const auto &l : grp.gdmaLayer) names.insert(l);
  }
  EXPECT_EQ(names, (std::set<std::string>{"conv1", "relu1", "pool1", "conv2", "add", "gap", "fc"}));
  EXPECT_EQ(net.groups.size(), 7u);
  EXPECT_EQ(rep.ops.size(), 7u);
  EXPECT_GT(rep.totalCycles, 0.0);
  EXPECT_NE(rep.text().find("conv1"), std::string::npos);
  // Coefficients 4 KiB aligned, activations after them.
  EXPECT_EQ(net.coeffAddr % 4096, 0u);
  EXPECT_GE(net.ctxAddr, net.coeffAddr + net.coeff.size());
}

// A one-item int8 activation is 1N in DDR (compact bytes, no 4N padding):
// the IO tensors say so and take a quarter of the bytes 4N words would.
TEST(BackendCodeGen, OneItemInt8Is1N) {
  Graph g = smallCnn(DType::I8, 1);
  auto m = compileToBmodel(g, Options{});
  ASSERT_TRUE(m.isOk()) << m.message();
  const bmodel::Net &net = m->nets.at(0);
  EXPECT_EQ(net.inputs[0].storeMode, bmodel::StoreMode::N1);
  EXPECT_EQ(net.inputs[0].size, 3u * 32 * 32);
  EXPECT_EQ(net.outputs[0].storeMode, bmodel::StoreMode::N1);
  expectMatchesReference(g, Options{});
}

TEST(BackendCodeGen, ActivationsReuseMemory) {
  Graph g = smallCnn(DType::F32, 4);
  auto am = assignAddresses(g, isa::HwConfig{});
  ASSERT_TRUE(am.isOk()) << am.message();
  EXPECT_LT(am->neuronSize, am->activationTotal);
  // No two tensors live at the same time overlap: conv1's input and output.
  const auto &t = g.tensors;
  auto range = [&](int i) { return std::make_pair(am->addr[i], am->addr[i] + activationBytes(t[i])); };
  auto in = range(g.ops[0].inputs[0]), out = range(g.ops[0].output);
  EXPECT_TRUE(in.second <= out.first || out.second <= in.first);
  // The residual's input (p1) is still live when add runs: not overlapping c2.
  auto p1 = range(g.ops[3].inputs[0]), c2 = range(g.ops[3].output);
  EXPECT_TRUE(p1.second <= c2.first || c2.second <= p1.first);
}

TEST(BackendCodeGen, DoubleBufferingSameResultFewerCycles) {
  Graph g = smallCnn(DType::F32, 8);
  Options single, dbl;
  single.doubleBuffer = false;
  single.hw = dbl.hw = smallLmem(16 * 1024);
  CompileReport r1, r2;
  auto m1 = compileToBmodel(g, single, &r1), m2 = compileToBmodel(g, dbl, &r2);
  ASSERT_TRUE(m1.isOk() && m2.isOk());
  auto in = randomInputs(g, 3);
  auto o1 = runModel(g, *m1, single.hw, in), o2 = runModel(g, *m2, dbl.hw, in);
  ASSERT_TRUE(o1.isOk() && o2.isOk()) << o1.message() << o2.message();
  EXPECT_EQ(o1->outputs, o2->outputs);
  EXPECT_LT(r2.totalCycles, r1.totalCycles) << r1.text() << r2.text();
  bool anyDouble = false;
  for (const auto &r : r2.ops) anyDouble |= r.buffers == 2;
  EXPECT_TRUE(anyDouble);
}

TEST(BackendCodeGen, OpTooBigForLocalMemoryIsAnError) {
  // One row of a 1 x 1 x 1 x 60000 fp32 tensor is 240 KB in one lane.
  GraphBuilder gb;
  int x = gb.act("x", {1, 1, 1, 60000}, DType::F32), y = gb.act("y", {1, 1, 1, 60000}, DType::F32);
  gb.op(OpKind::Relu, "wide_relu", {x}, y);
  gb.g.inputs = {x}, gb.g.outputs = {y};
  Options o;
  o.hw = smallLmem(64 * 1024);
  auto m = compileToBmodel(gb.g, o);
  ASSERT_FALSE(m.isOk());
  EXPECT_NE(m.message().find("Relu 'wide_relu'"), std::string::npos) << m.message();
  EXPECT_NE(m.message().find("480000 bytes per lane"), std::string::npos) << m.message();
}

TEST(BackendCodeGen, LmemPlanSeparatesBanks) {
  isa::HwConfig hw;
  LmemAllocator a(hw);
  auto p = a.plan({1000, 2000, 3000}, "test");
  ASSERT_TRUE(p.isOk());
  EXPECT_EQ(p->offsets, (std::vector<uint32_t>{0, 65536, 131072}));
  // When bank starts no longer fit, buffers are packed.
  auto q = a.plan({200000, 200000, 100000}, "test");
  ASSERT_TRUE(q.isOk());
  EXPECT_LE(q->used, hw.lmemBytesPerLane);
  auto r = a.plan({400000, 200000}, "two buffers");
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.message().find("two buffers needs"), std::string::npos);
}

TEST(BackendCodeGen, CommandIdsFollowTheRule) {
  CommandBuilder b;
  b.setLayer("l");
  isa::GdmaCommand load;
  EXPECT_EQ(b.gdma(load, 0), 1);
  EXPECT_EQ(b.tiu(isa::Arith{}, 1), 1);
  EXPECT_EQ(b.gdma(load, 1), 2);
  b.beginGroup();
  EXPECT_EQ(b.lastTiu(), 0);
  EXPECT_EQ(b.gdma(load, 0), 1);
  const auto &g0 = b.groups()[0];
  EXPECT_EQ(g0.tiu[0].cmdIdGdma, 1);
  EXPECT_EQ(g0.gdma[1].eng0SyncId, 1);
  EXPECT_EQ(g0.gdmaLayer[1], "l");
}

TEST(BackendQuantRef, IntegerFormulas) {
  Op add;
  add.kind = OpKind::Add, add.multipliers = {3, -2}, add.rshift = 2;
  // (5*3 + 4*-2) = 7 -> (7 + 2) >> 2 = 2 (half up)
  EXPECT_EQ(int8Binary(OpKind::Add, 5, 4, add, DType::I8), 2);
  // 6 -> (6+2)>>2 = 2 ; -6 -> (-6+2)>>2 = -1 (half up, towards +inf)
  EXPECT_EQ(int8Binary(OpKind::Add, 2, 0, add, DType::I8), 2);
  EXPECT_EQ(int8Binary(OpKind::Add, -2, 0, add, DType::I8), -1);
  add.relu = true;
  EXPECT_EQ(int8Binary(OpKind::Add, -2, 0, add, DType::I8), 0);
  Op mul;
  mul.kind = OpKind::Mul, mul.multipliers = {100}, mul.rshift = 3;
  EXPECT_EQ(int8Binary(OpKind::Mul, 100, 100, mul, DType::I8), 127); // saturates
  Op leaky;
  leaky.kind = OpKind::LeakyRelu, leaky.multipliers = {13}, leaky.rshift = 7;
  EXPECT_EQ(int8LeakyRelu(50, leaky, DType::I8), 50);
  EXPECT_EQ(int8LeakyRelu(-100, leaky, DType::I8), -10); // -1300/128 = -10.16 -> -10
  EXPECT_EQ(quantizeValue(0.125f, 0.05f, DType::I8), 2);   // 2.5 -> 2 (half to even)
  EXPECT_EQ(quantizeValue(100.0f, 0.05f, DType::I8), 127);
  EXPECT_EQ(quantizeValue(-1.0f, 0.05f, DType::U8), 0);
}

TEST(BackendGraph, ValidationNamesTheProblem) {
  auto expectError = [](Graph g, const std::string &part) {
    Status st = g.validate();
    EXPECT_FALSE(st.isOk());
    EXPECT_NE(st.message().find(part), std::string::npos) << st.message();
  };
  Graph base = smallCnn(DType::I8);
  {
    Graph g = base;
    g.ops[2].params<WindowParams>().padTop = 16; // a conv takes it (as groups of kernel taps), a pool does not
    expectError(g, "Pool 'pool1': pads must be in [0, 15]");
  }
  {
    Graph g = base;
    g.tensors[g.ops[0].inputs[1]].data.pop_back();
    expectError(g, "weight 'w1'");
  }
  {
    Graph g = base;
    std::swap(g.ops[0], g.ops[1]);
    expectError(g, "not defined before it");
  }
  {
    Graph g = base;
    g.ops[4].multipliers = {3};
    expectError(g, "Add 'add': int8 needs 2 multiplier(s)");
  }
  {
    Graph g = base;
    Tensor z;
    z.name = "z", z.shape = {2, 16, 16, 15}, z.dtype = DType::I8;
    g.inputs.push_back(g.addTensor(z));
    g.ops[4].inputs[1] = g.inputs.back();
    expectError(g, "input 'z' shape [2, 16, 16, 15] does not broadcast to the output's");
  }
  {
    Graph g = base;
    g.ops[6].inputs.resize(1);
    expectError(g, "Fc 'fc': takes between 2 and 3 inputs");
  }
  {
    Graph g = base;
    Tensor &bias = g.tensors[g.ops[0].inputs[2]];
    bias.dtype = DType::F32, bias.data.resize(bias.bytes());
    expectError(g, "bias 'b1'");
  }
}

} // namespace

namespace {

TEST(BackendCodeGen, DeterministicBytes) {
  Graph g = smallCnn(DType::I8, 5);
  auto a = compileToBmodel(g, Options{}), b = compileToBmodel(g, Options{});
  ASSERT_TRUE(a.isOk() && b.isOk());
  auto sa = bmodel::serialize(*a), sb = bmodel::serialize(*b);
  ASSERT_TRUE(sa.isOk() && sb.isOk());
  EXPECT_EQ(*sa, *sb);
}

// The op mix of a PP-OCR-style detector: conv, depthwise conv, an SE block
// (global pool, convs, hard-sigmoid, channel-broadcast Mul), upsample,
// concat, transposed conv, sigmoid (int8: a table).
Graph detector(DType t) {
  GraphBuilder gb;
  const bool q = t != DType::F32;
  DType wt = q ? DType::I8 : DType::F32, bt = q ? DType::I16 : DType::F32;
  int n = 0;
  auto name = [&](const char *p) { return std::string(p) + std::to_string(n++); };
  auto conv = [&](int x, int64_t oc, int64_t k, int64_t s, int64_t groups, bool relu) {
    auto xs = gb.g.tensors[x].nchw();
    WindowParams p;
    p.kh = p.kw = k, p.strideH = p.strideW = s, p.groups = groups;
    p.padTop = p.padBottom = p.padLeft = p.padRight = k / 2;
    int y = gb.act(name("t"), {xs[0], oc, windowOutput(xs[2], k, s, 1, k / 2, k / 2),
                               windowOutput(xs[3], k, s, 1, k / 2, k / 2)}, t);
    Op &o = gb.op(OpKind::Conv, name("conv"),
                  {x, gb.weight(name("w"), {oc, xs[1] / groups, k, k}, wt), gb.weight(name("b"), {oc}, bt)}, y);
    o.params<WindowParams>() = p, o.relu = relu, o.rshift = q ? 8 : 0;
    return y;
  };
  auto like = [&](int x, std::vector<int64_t> shape = {}) {
    const Tensor &xt = gb.g.tensors[x];
    return gb.act(name("t"), shape.empty() ? xt.shape : shape, t);
  };
  int x = gb.act("image", {2, 3, 48, 40}, t);
  int c1 = conv(x, 16, 3, 2, 1, true);            // 24x20
  int d1 = conv(c1, 16, 3, 1, 16, true);          // depthwise
  // SE: gap -> 1x1 conv -> relu -> 1x1 conv -> hard-sigmoid -> broadcast mul.
  int g = like(d1, {2, 16, 1, 1});
  Op &gap = gb.op(OpKind::GlobalAvgPool, name("gap"), {d1}, g);
  gap.multipliers = {q ? 205 : 1}, gap.rshift = q ? 16 : 0;
  int s1 = conv(g, 8, 1, 1, 1, true), s2 = conv(s1, 16, 1, 1, 1, false);
  int hs = like(s2);
  Op &aff = gb.op(OpKind::Affine, name("hsig"), {s2}, hs);
  aff.params<AffineParams>() = {0.2f, 0.5f}, aff.multipliers = {26, 64}, aff.rshift = 7;
  int hc = like(hs);
  Op &clip = gb.op(OpKind::Clip, name("clip"), {hs}, hc);
  clip.params<ClipParams>() = {0, q ? 1 : 1.0f};
  int se = like(d1);
  Op &mul = gb.op(OpKind::Mul, name("se"), {d1, hc}, se);
  if (q) mul.multipliers = {90}, mul.rshift = 7;
  int c2 = conv(se, 24, 3, 2, 1, true);           // 12x10
  int up = like(c2, {2, 24, 24, 20});
  Op &u = gb.op(OpKind::Upsample, name("up"), {c2}, up);
  u.params<UpsampleParams>() = {2, 2};
  int cat = like(up, {2, 40, 24, 20});
  gb.op(OpKind::Concat, name("cat"), {up, se}, cat);
  int head = conv(cat, 8, 3, 1, 1, true);
  int deconv = like(head, {2, 4, 48, 40});
  WindowParams dp;
  dp.kh = dp.kw = 2, dp.strideH = dp.strideW = 2;
  Op &dc = gb.op(OpKind::ConvTranspose, name("deconv"),
                 {head, gb.weight(name("w"), {8, 4, 2, 2}, wt), gb.weight(name("b"), {4}, bt)}, deconv);
  dc.params<WindowParams>() = dp, dc.rshift = q ? 7 : 0;
  int prob = like(deconv);
  if (q) {
    Tensor tb;
    tb.name = "sigmoid_table", tb.shape = {256}, tb.dtype = DType::I8;
    tb.data = activationTable(kernels::UnaryKind::Sigmoid, 0, 0, DType::I8, 0.05f, DType::I8, 1.0f / 127);
    gb.op(OpKind::Lut, name("sigmoid"), {deconv, gb.g.addTensor(tb)}, prob);
  } else {
    gb.op(OpKind::Sigmoid, name("sigmoid"), {deconv}, prob);
  }
  gb.g.name = "detector";
  gb.g.inputs = {x}, gb.g.outputs = {prob};
  return gb.g;
}

TEST(BackendCodeGen, DetectorOpMix) {
  for (DType t : {DType::F32, DType::I8}) {
    Graph g = detector(t);
    ASSERT_TRUE(g.validate().isOk()) << g.validate().message();
    Options grouped, opByOp, sliced;
    opByOp.layerGroups = false;
    sliced.hw = smallLmem(16 * 1024);
    SCOPED_TRACE(t == DType::F32 ? "fp32" : "int8");
    auto rg = expectMatchesReference(g, grouped);
    expectMatchesReference(g, opByOp);
    expectMatchesReference(g, sliced);
    EXPECT_LT(rg.ops.size(), g.ops.size());
  }
}

} // namespace
