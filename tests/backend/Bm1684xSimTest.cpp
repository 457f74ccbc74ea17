// The BM1684X's timed simulator (runtime/bm1684x/SimRun.h): a compiled net run through the SystemC model
// computes byte for byte what the functional semantics compute, and spends the time its commands cost.
#include "compiler/Backend/BM1684X/CodeGen.h"
#include "compiler/Backend/Ops/Window.h"
#include "isa/bm1684x/HwPreset.h"
#include "runtime/bm1684x/FuncRun.h"
#include "runtime/bm1684x/SimRun.h"
#include "tests/backend/BackendHarness.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

using namespace tpu;
using namespace tpu::backend;
using namespace tpu::backend::test;

namespace {

// conv 3x3 + relu, max pool, add: enough slices and both engines.
Graph smallNet(DType t) {
  GraphBuilder b;
  int x = b.act("x", {1, 70, 24, 24}, t);
  int w = b.weight("w", {70, 70, 3, 3}, t), bias = b.weight("bias", {70}, DType::F32);
  int c = b.act("conv", {1, 70, 24, 24}, t);
  Op &conv = b.op(OpKind::Conv, "conv", {x, w, bias}, c);
  WindowParams p;
  p.kh = p.kw = 3;
  p.padTop = p.padBottom = p.padLeft = p.padRight = 1;
  conv.params<WindowParams>() = p;
  conv.relu = true;
  int pooled = b.act("pool", {1, 70, 12, 12}, t);
  WindowParams q;
  q.kh = q.kw = q.strideH = q.strideW = 2;
  q.isMax = true;
  b.op(OpKind::Pool, "pool", {c}, pooled).params<WindowParams>() = q;
  int y = b.act("y", {1, 70, 12, 12}, t);
  b.op(OpKind::Add, "y", {pooled, pooled}, y);
  b.g.inputs = {x};
  b.g.outputs = {y};
  return b.g;
}

NpzMap inputsOf(const Graph &g) {
  auto raw = randomInputs(g, 3);
  NpzMap given;
  const Tensor &t = g.tensors[size_t(g.inputs[0])];
  given[t.name] = NpyArray::from(t.shape, reinterpret_cast<const float *>(raw[0].data()), raw[0].size() / 4);
  return given;
}

} // namespace

TEST(Bm1684xSim, EqualsFuncAndTakesTheCommandsTime) {
  {
    Graph g = smallNet(DType::F32);
    auto model = bm1684x::compileToBmodel(g);
    ASSERT_TRUE(model.isOk()) << model.message();
    NpzMap given = inputsOf(g);
    auto func = runtime::bm1684x::runFunc(*model, "", given);
    ASSERT_TRUE(func.isOk()) << func.message();
    sysc::SimOptions options;
    options.recordTrace = true;
    const isa::HwConfig hw = isa::bm1684x::hwConfig();
    auto timed = runtime::bm1684x::runSim(*model, "", given, hw, options);
    ASSERT_TRUE(timed.isOk()) << timed.message();
    const NpyArray &a = func->at("y"), &b = timed->outputs.at("y");
    ASSERT_EQ(a.data.size(), b.data.size());
    EXPECT_EQ(0, std::memcmp(a.data.data(), b.data.data(), a.data.size()));
    const sysc::SimReport &r = timed->report;
    const auto &group = model->nets[0].groups[0];
    EXPECT_EQ(r.tiu().commands, group.tiuStreamCount);
    EXPECT_EQ(r.gdma().commands, group.gdmaStreamCount);
    EXPECT_EQ(r.clockMhz, 1000.0);
    // The engines overlap at most fully and at least not at all.
    EXPECT_GT(r.tiu().busyCycles, 0.0);
    EXPECT_GT(r.gdma().busyCycles, 0.0);
    EXPECT_LE(r.totalCycles, r.tiu().busyCycles + r.gdma().busyCycles + 1e-6 * r.totalCycles);
    EXPECT_GE(r.totalCycles, std::max(r.tiu().busyCycles, r.gdma().busyCycles));
    EXPECT_GT(r.ddrBytes, 70u * 24 * 24 * 4); // the input crosses the channel at least once
    EXPECT_FALSE(r.chromeTraceJson().empty());
    // A slower DDR channel takes longer; the data do not change.
    isa::HwConfig slow = hw;
    slow.ddrBandwidthGBs /= 4;
    auto slower = runtime::bm1684x::runSim(*model, "", given, slow, options);
    ASSERT_TRUE(slower.isOk()) << slower.message();
    EXPECT_GT(slower->report.totalCycles, r.totalCycles);
    EXPECT_EQ(0, std::memcmp(slower->outputs.at("y").data.data(), b.data.data(), b.data.size()));
  }
}

// A max pool over a tensor larger than half a lane's memory runs in row slices, each in one of two buffer
// sets: the DMA loads slice k + 1 and stores slice k - 1 while the TIU computes slice k, so the run takes
// less than the engines' busy times one after the other, and computes what func computes.
TEST(Bm1684xSim, PingPongSlicesOverlapTheEngines) {
  GraphBuilder b;
  int x = b.act("x", {1, 64, 160, 160}, DType::F32);
  int y = b.act("y", {1, 64, 160, 160}, DType::F32);
  WindowParams p;
  p.kh = p.kw = 3;
  p.padTop = p.padBottom = p.padLeft = p.padRight = 1;
  p.isMax = true;
  b.op(OpKind::Pool, "pool", {x}, y).params<WindowParams>() = p;
  b.g.inputs = {x};
  b.g.outputs = {y};
  bm1684x::CompileReport report;
  auto model = bm1684x::compileToBmodel(b.g, &report);
  ASSERT_TRUE(model.isOk()) << model.message();
  EXPECT_GE(report.tiuCommands, 3u); // two slices or more, and the end
  NpzMap given = inputsOf(b.g);
  auto func = runtime::bm1684x::runFunc(*model, "", given);
  ASSERT_TRUE(func.isOk()) << func.message();
  auto timed = runtime::bm1684x::runSim(*model, "", given, isa::bm1684x::hwConfig(), {});
  ASSERT_TRUE(timed.isOk()) << timed.message();
  const NpyArray &a = func->at("y"), &c = timed->outputs.at("y");
  ASSERT_EQ(a.data.size(), c.data.size());
  EXPECT_EQ(0, std::memcmp(a.data.data(), c.data.data(), a.data.size()));
  const sysc::SimReport &r = timed->report;
  EXPECT_LT(r.totalCycles, 0.95 * (r.tiu().busyCycles + r.gdma().busyCycles));
}
