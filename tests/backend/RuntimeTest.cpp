// Compiled bmodels through the runtime (runtime/Runtime.h): the func
// backend gives the reference's bytes; the sim backend (SystemC, when built)
// times the grouped and the op-by-op bmodel, and the grouped one is faster.
#include "BackendHarness.h"
#include "compiler/Backend/Ops/Window.h"

#include "runtime/Runtime.h"

using namespace tpu;
using namespace tpu::backend;
using namespace tpu::backend::test;

namespace {

WindowParams k3(int64_t stride) {
  WindowParams p;
  p.kh = p.kw = 3, p.strideH = p.strideW = stride;
  p.padTop = p.padBottom = p.padLeft = p.padRight = 1;
  return p;
}

// conv(s2)+relu -> conv+relu -> conv -> add(residual)+relu -> maxpool -> gap -> fc.
Graph cnn(DType t, int64_t n) {
  GraphBuilder gb;
  const bool q = t != DType::F32;
  DType wt = q ? DType::I8 : DType::F32, bt = q ? DType::I16 : DType::F32;
  int x = gb.act("image", {n, 3, 64, 64}, t, 0.02f);
  int c1 = gb.act("c1", {n, 32, 32, 32}, t), c2 = gb.act("c2", {n, 32, 32, 32}, t);
  int c3 = gb.act("c3", {n, 32, 32, 32}, t), a = gb.act("a", {n, 32, 32, 32}, t);
  int p = gb.act("p", {n, 32, 16, 16}, t), g = gb.act("g", {n, 32, 1, 1}, t);
  int y = gb.act("logits", {n, 10}, t, 0.1f);
  auto conv = [&](const char *name, int in, int out, int64_t ic, int64_t stride, bool relu) {
    Op &o = gb.op(OpKind::Conv, name,
                  {in, gb.weight(std::string(name) + ".w", {32, ic, 3, 3}, wt),
                   gb.weight(std::string(name) + ".b", {32}, bt)},
                  out);
    o.params<WindowParams>() = k3(stride), o.relu = relu, o.rshift = q ? 9 : 0;
  };
  conv("conv1", x, c1, 3, 2, true);
  conv("conv2", c1, c2, 32, 1, true);
  conv("conv3", c2, c3, 32, 1, false);
  Op &add = gb.op(OpKind::Add, "add", {c3, c1}, a);
  add.relu = true;
  if (q) add.multipliers = {1, 1}, add.rshift = 1;
  Op &pool = gb.op(OpKind::Pool, "pool", {a}, p);
  WindowParams &pw = pool.params<WindowParams>();
  pw.kh = pw.kw = 2, pw.strideH = pw.strideW = 2, pw.isMax = true;
  Op &gap = gb.op(OpKind::GlobalAvgPool, "gap", {p}, g);
  gap.multipliers = {q ? 128 : 1}, gap.rshift = q ? 15 : 0;
  Op &fc = gb.op(OpKind::Fc, "fc", {g, gb.weight("fc.w", {10, 32}, wt), gb.weight("fc.b", {10}, bt)}, y);
  fc.rshift = q ? 7 : 0;
  gb.g.name = "cnn";
  gb.g.inputs = {x}, gb.g.outputs = {y};
  return gb.g;
}

NpyArray toNpy(const Tensor &t, const Bytes &b) {
  NpyArray a;
  a.dtype = dtypeName(t.dtype), a.shape = t.shape, a.data = b;
  return a;
}

// Runs on a runtime backend; returns the output as the tensor's own bytes.
Result<Bytes> runOn(runtime::BackendKind kind, const Graph &g, const bmodel::Model &m, const Bytes &input,
                    runtime::RunReport &report) {
  auto rt = runtime::Runtime::create(isa::HwConfig{}, kind);
  if (!rt) return rt.status();
  auto bytes = bmodel::serialize(m);
  if (!bytes) return bytes.status();
  TPU_RETURN_IF_ERROR((*rt)->loadBmodel(bytes->data(), bytes->size()));
  const Tensor &in = g.tensors[g.inputs[0]], &out = g.tensors[g.outputs[0]];
  NpzMap inputs{{in.name, toNpy(in, input)}};
  auto outs = (*rt)->run(g.name, inputs, runtime::RunOptions{}, report);
  if (!outs) return outs.status();
  std::vector<float> v = outs->at(out.name).toFloat();
  Bytes r(out.bytes());
  for (size_t i = 0; i < v.size(); ++i) {
    if (out.dtype == DType::F32) std::memcpy(&r[4 * i], &v[i], 4);
    else r[i] = uint8_t(int8_t(std::lround(v[i] / out.scale)));
  }
  return r;
}

TEST(BackendRuntime, FuncBackendMatchesReference) {
  for (DType t : {DType::F32, DType::I8})
    for (bool groups : {false, true}) {
      Graph g = cnn(t, 5);
      Options o;
      o.layerGroups = groups;
      auto m = compileToBmodel(g, o);
      ASSERT_TRUE(m.isOk()) << m.message();
      auto in = randomInputs(g, 5);
      auto ref = evalGraph(g, in);
      ASSERT_TRUE(ref.isOk()) << ref.message();
      runtime::RunReport rep;
      auto got = runOn(runtime::BackendKind::Func, g, *m, in[0], rep);
      ASSERT_TRUE(got.isOk()) << got.message();
      const Bytes &want = (*ref)[g.outputs[0]];
      if (t == DType::I8) {
        EXPECT_EQ(*got, want);
      } else {
        const float *a = reinterpret_cast<const float *>(want.data());
        const float *b = reinterpret_cast<const float *>(got->data());
        for (size_t i = 0; i < want.size() / 4; ++i) EXPECT_NEAR(a[i], b[i], 1e-5f * std::max(1.0f, std::fabs(a[i])));
      }
    }
}

TEST(BackendRuntime, SimulatedGroupedIsFaster) {
  if (!runtime::backendAvailable(runtime::BackendKind::Sim)) GTEST_SKIP() << "sim backend not built";
  for (DType t : {DType::F32, DType::I8}) {
    Graph g = cnn(t, 4);
    Options grouped, opByOp;
    opByOp.layerGroups = false;
    CompileReport rg, ro;
    auto mg = compileToBmodel(g, grouped, &rg), mo = compileToBmodel(g, opByOp, &ro);
    ASSERT_TRUE(mg.isOk() && mo.isOk());
    auto in = randomInputs(g, 9);
    runtime::RunReport sg, so;
    auto og = runOn(runtime::BackendKind::Sim, g, *mg, in[0], sg);
    auto oo = runOn(runtime::BackendKind::Sim, g, *mo, in[0], so);
    ASSERT_TRUE(og.isOk()) << og.message();
    ASSERT_TRUE(oo.isOk()) << oo.message();
    EXPECT_EQ(*og, *oo);
    ASSERT_TRUE(sg.timed && so.timed);
    EXPECT_LT(sg.totalCycles, so.totalCycles);
    std::printf("%s: simulated %.0f cycles grouped vs %.0f op by op (estimated %.0f vs %.0f)\n",
                t == DType::F32 ? "fp32" : "int8", sg.totalCycles, so.totalCycles, rg.totalCycles,
                ro.totalCycles);
  }
}

} // namespace
