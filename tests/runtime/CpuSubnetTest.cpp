// CPU sub-nets (docs/bmodel.md, "Sub-nets"): host ops run by the runtime
// between TPU sub-nets on the func and sim backends, int32 tensors both
// ways, the timed totals over the TPU sub-nets with the host time apart, and
// the one-line errors at load and run time.
#include "runtime/Runtime.h"

#include "TestNets.h"
#include "isa/bmodel/Bmodel.h"
#include "kernels/HostOps.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>

using namespace tpu;
using namespace tpu::runtime;
using namespace tpu::runtime::testnets;
using bmodel::DataType;
using bmodel::StoreMode;
using bmodel::Subnet;

namespace {

Subnet cpuSubnet(const kernels::HostCall &call, std::vector<bmodel::Tensor> inputs, bmodel::Tensor output) {
  Subnet s;
  s.mode = Subnet::Mode::Cpu;
  s.cpuOpType = call.code;
  s.cpuParam = call.serialize();
  s.inputs = std::move(inputs);
  s.outputs = {std::move(output)};
  return s;
}

kernels::HostCall argMax(int64_t axis, bool keepdims, kernels::Shape result) {
  kernels::HostCall c;
  c.code = kernels::findHostOp("top.arg_max")->code;
  c.attrs.setInts("axis", {axis});
  c.attrs.setInts("keepdims", {keepdims});
  c.resultShapes = {std::move(result)};
  return c;
}

// One CPU sub-net and no command group: y[i] = argmax_j x[i, j].
bmodel::Model argMaxModel() {
  bmodel::Net net;
  net.name = "argmax";
  auto x = tensor("x", DataType::Float32, StoreMode::N1, {2, 5}, kDdr + 0x1000);
  auto y = tensor("y", DataType::Int32, StoreMode::N1, {2}, kDdr + 0x2000);
  net.inputs = {x};
  net.outputs = {y};
  net.ctxAddr = kDdr;
  net.ctxSize = 0x10000;
  net.subnets = {cpuSubnet(argMax(1, false, {2}), {x}, y)};
  bmodel::Model m;
  m.nets.push_back(net);
  return m;
}

const NpzMap kArgMaxInput{{"x", NpyArray::from<float>({2, 5}, {0.1f, 0.9f, -1, 0.3f, 0.2f, 5, 4, 3, 7, -2})}};

Result<std::unique_ptr<Runtime>> loaded(const bmodel::Model &m, BackendKind kind) {
  auto rt = Runtime::create(isa::HwConfig(), kind);
  if (!rt) return rt.status();
  auto bytes = bmodel::serialize(m);
  if (!bytes) return bytes.status();
  TPU_RETURN_IF_ERROR((*rt)->loadBmodel(bytes->data(), bytes->size()));
  return rt;
}

std::string loadError(const bmodel::Model &m) {
  auto rt = loaded(m, BackendKind::Func);
  return rt ? std::string("(loaded)") : rt.message();
}

std::vector<BackendKind> backends() {
  std::vector<BackendKind> kinds{BackendKind::Func};
  if (backendAvailable(BackendKind::Sim)) kinds.push_back(BackendKind::Sim);
  return kinds;
}

// conv_add (TPU) -> z -> arg_max over channels (CPU) -> u, int32 -> copy (TPU) -> top1
struct ConvArgMaxNet {
  ConvAddNet conv{5};
  const uint64_t uAddr = kDdr + 0x40000, yAddr = kDdr + 0x50000;

  bmodel::Model model(bool withSubnets = true) const {
    bmodel::Model m = conv.model("conv_argmax");
    bmodel::Net &net = m.nets[0];
    const bmodel::Tensor z = net.outputs[0];
    auto u = tensor("u", DataType::Int32, StoreMode::N1, {1, 1, conv.h, conv.w}, uAddr);
    auto top1 = tensor("top1", DataType::Int32, StoreMode::N1, {1, 1, conv.h, conv.w}, yAddr);
    net.outputs = {top1};
    net.ctxSize = yAddr + 0x10000 - net.ctxAddr;
    // u to top1 as 32-bit words, DDR to DDR.
    isa::GdmaCommand copy;
    copy.direction = isa::GdmaDirection::S2S;
    copy.strideEnable = false;
    copy.src = gdmaTensor(uAddr, {1, 1, 1, conv.h * conv.w});
    copy.dst = gdmaTensor(yAddr, {1, 1, 1, conv.h * conv.w});
    copy.cmdId = 1;
    bmodel::CmdGroup g;
    g.gdma.push_back(*isa::encode(copy).encode());
    g.gdmaLayer = {"copy"};
    net.groups.push_back(g);
    if (!withSubnets) return m;
    Subnet first, last;
    first.groupCount = 1;
    first.inputs = net.inputs;
    first.outputs = {z};
    last.firstGroup = 1;
    last.groupCount = 1;
    last.inputs = {u};
    last.outputs = {top1};
    net.subnets = {first, cpuSubnet(argMax(1, true, {1, 1, conv.h, conv.w}), {z}, u), last};
    return m;
  }

  NpzMap inputs() const {
    return {{"x", NpyArray::from({1, conv.ic, conv.h, conv.w}, randomFloats(conv.ic * conv.h * conv.w, 6))},
            {"y", NpyArray::from({1, conv.oc, conv.h, conv.w}, randomFloats(conv.oc * conv.h * conv.w, 7))}};
  }
};

} // namespace

TEST(CpuSubnet, HostOpAloneRunsOnEveryBackend) {
  for (BackendKind kind : backends()) {
    SCOPED_TRACE(backendKindName(kind));
    auto rt = loaded(argMaxModel(), kind);
    ASSERT_TRUE(rt) << rt.message();
    RunReport report;
    auto out = (*rt)->run("argmax", kArgMaxInput, RunOptions(), report);
    ASSERT_TRUE(out) << out.message();
    EXPECT_EQ(out->at("y").shape, std::vector<int64_t>{2});
    const float *y = out->at("y").as<float>();
    EXPECT_EQ(y[0], 1.0f);
    EXPECT_EQ(y[1], 3.0f);
    EXPECT_EQ(report.cpuSubnets, 1u);
    EXPECT_GT(report.hostSeconds, 0.0);
    EXPECT_LE(report.hostSeconds, report.wallSeconds);
    EXPECT_EQ(report.groups, 0u);
    EXPECT_EQ(report.timed, kind == BackendKind::Sim);
    EXPECT_EQ(report.totalCycles, 0.0);
  }
}

TEST(CpuSubnet, BetweenTpuSubnetsOnEveryBackend) {
  ConvArgMaxNet net;
  // z from the same TIU/GDMA commands without the host step.
  auto plain = loaded(net.conv.model(), BackendKind::Func);
  ASSERT_TRUE(plain) << plain.message();
  RunReport plainReport;
  auto z = (*plain)->run("conv_add", net.inputs(), RunOptions(), plainReport);
  ASSERT_TRUE(z) << z.message();
  const float *zv = z->at("z").as<float>();
  const uint32_t pixels = net.conv.h * net.conv.w;

  for (BackendKind kind : backends()) {
    SCOPED_TRACE(backendKindName(kind));
    auto rt = loaded(net.model(), kind);
    ASSERT_TRUE(rt) << rt.message();
    RunReport report;
    auto out = (*rt)->run("conv_argmax", net.inputs(), RunOptions(), report);
    ASSERT_TRUE(out) << out.message();
    const float *y = out->at("top1").as<float>();
    for (uint32_t p = 0; p < pixels; ++p) {
      uint32_t best = 0;
      for (uint32_t c = 1; c < net.conv.oc; ++c)
        if (zv[c * pixels + p] > zv[best * pixels + p]) best = c;
      ASSERT_EQ(y[p], float(best)) << "pixel " << p;
    }
    EXPECT_EQ(report.groups, 2u);
    EXPECT_EQ(report.cpuSubnets, 1u);
    EXPECT_GT(report.hostSeconds, 0.0);
  }
}

// The timed totals are those of the TPU sub-nets one after the other: the
// same cycles as the groups without sub-nets, with the host time apart.
TEST(CpuSubnet, TimedTotalsAddUpOverTpuSubnets) {
  if (!backendAvailable(BackendKind::Sim)) GTEST_SKIP() << "built without the SystemC model";
  ConvArgMaxNet net;
  RunOptions opts;
  opts.recordTrace = true;
  RunReport split, whole;
  auto rt = loaded(net.model(), BackendKind::Sim);
  ASSERT_TRUE(rt) << rt.message();
  ASSERT_TRUE((*rt)->run("conv_argmax", net.inputs(), opts, split));
  auto rtWhole = loaded(net.model(false), BackendKind::Sim);
  ASSERT_TRUE(rtWhole) << rtWhole.message();
  ASSERT_TRUE((*rtWhole)->run("conv_argmax", net.inputs(), opts, whole));

  EXPECT_GT(split.totalCycles, 0);
  EXPECT_DOUBLE_EQ(split.totalCycles, whole.totalCycles);
  EXPECT_DOUBLE_EQ(split.tiuUtilization, whole.tiuUtilization);
  EXPECT_DOUBLE_EQ(split.gdmaUtilization, whole.gdmaUtilization);
  ASSERT_EQ(split.layers.size(), whole.layers.size());
  for (size_t i = 0; i < split.layers.size(); ++i) {
    EXPECT_EQ(split.layers[i].name, whole.layers[i].name);
    EXPECT_DOUBLE_EQ(split.layers[i].tiuBusyCycles, whole.layers[i].tiuBusyCycles);
    EXPECT_DOUBLE_EQ(split.layers[i].gdmaBusyCycles, whole.layers[i].gdmaBusyCycles);
    EXPECT_DOUBLE_EQ(split.layers[i].spanCycles, whole.layers[i].spanCycles);
  }
  EXPECT_EQ(whole.cpuSubnets, 0u);

  auto stats = nlohmann::json::parse(split.statsJson);
  ASSERT_EQ(stats["groups"].size(), 2u);
  EXPECT_EQ(stats["groups"][1]["start_cycle"], stats["groups"][0]["end_cycle"]);
  EXPECT_EQ(stats["total_cycles"], nlohmann::json::parse(whole.statsJson)["total_cycles"]);
  EXPECT_EQ(stats["tpu_us"], stats["time_us"]);
  EXPECT_DOUBLE_EQ(stats["host_us"].get<double>(), split.hostSeconds * 1e6);
  EXPECT_EQ(stats["cpu_subnets"], 1);
  // Without CPU sub-nets the stats are what they always were.
  EXPECT_FALSE(nlohmann::json::parse(whole.statsJson).contains("host_us"));

  // The trace holds every command of both TPU sub-nets, the second after the first.
  auto trace = nlohmann::json::parse(split.traceJson)["traceEvents"];
  double copyStart = -1, lastConvEnd = 0;
  size_t commands = 0;
  for (const auto &e : trace) {
    if (e["ph"] != "X" || e["cat"] == "group") continue;
    ++commands;
    const double start = e["ts"].get<double>(), end = start + e["dur"].get<double>();
    if (e["args"]["group"] == 1)
      copyStart = start;
    else
      lastConvEnd = std::max(lastConvEnd, end);
  }
  EXPECT_EQ(commands, 7u);
  EXPECT_GE(copyStart, lastConvEnd - 1e-9); // trace times are microseconds in doubles
}

TEST(CpuSubnet, IntegerInputsArriveAsExactValues) {
  kernels::HostCall gather;
  gather.code = kernels::findHostOp("top.gather")->code;
  gather.attrs.setInts("axis", {0});
  gather.resultShapes = {{2, 4}};
  bmodel::Net net;
  net.name = "gather";
  auto data = tensor("data", DataType::Float32, StoreMode::N1, {3, 4}, kDdr + 0x1000);
  auto idx = tensor("idx", DataType::Int32, StoreMode::N1, {2}, kDdr + 0x2000);
  auto out = tensor("out", DataType::Float32, StoreMode::N1, {2, 4}, kDdr + 0x3000);
  net.inputs = {data, idx};
  net.outputs = {out};
  net.ctxAddr = kDdr;
  net.ctxSize = 0x10000;
  net.subnets = {cpuSubnet(gather, {data, idx}, out)};
  bmodel::Model m;
  m.nets.push_back(net);
  for (BackendKind kind : backends()) {
    SCOPED_TRACE(backendKindName(kind));
    auto rt = loaded(m, kind);
    ASSERT_TRUE(rt) << rt.message();
    NpzMap in{{"data", NpyArray::from<float>({3, 4}, {0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23})},
              {"idx", NpyArray::from<float>({2}, {2, -3})}};
    RunReport report;
    auto result = (*rt)->run("gather", in, RunOptions(), report);
    ASSERT_TRUE(result) << result.message();
    const float *o = result->at("out").as<float>();
    EXPECT_EQ(std::vector<float>(o, o + 8), (std::vector<float>{20, 21, 22, 23, 0, 1, 2, 3}));
  }
}

TEST(CpuSubnet, LoadRejectsWhatCannotRun) {
  bmodel::Model m = argMaxModel();
  kernels::HostCall unknown = argMax(1, false, {2});
  unknown.code = 99;
  m.nets[0].subnets[0] = cpuSubnet(unknown, m.nets[0].inputs, m.nets[0].outputs[0]);
  EXPECT_EQ(loadError(m), "<memory>: net 'argmax': sub-net 0: unknown host op code 99");

  m = argMaxModel();
  m.nets[0].subnets[0].cpuOpType = 2;
  EXPECT_EQ(loadError(m), "<memory>: net 'argmax': sub-net 0: op_type 2 but the parameters are for top.arg_max (1)");

  m = argMaxModel();
  m.nets[0].subnets[0].cpuParam.pop_back();
  EXPECT_NE(loadError(m).find("<memory>: net 'argmax': sub-net 0: host op parameters are truncated"), std::string::npos)
      << loadError(m);

  m = argMaxModel();
  for (auto *t : {&m.nets[0].inputs[0], &m.nets[0].subnets[0].inputs[0]}) {
    t->dtype = DataType::Int8;
    t->size = t->storageBytes();
  }
  EXPECT_EQ(loadError(m), "<memory>: net 'argmax': sub-net 0: input 'x' is int8: a CPU sub-net reads and "
                          "writes float32 or int32 tensors");

  m = argMaxModel();
  m.nets[0].subnets[0].outputs[0].shape = {2, 1};
  EXPECT_EQ(loadError(m), "<memory>: net 'argmax': sub-net 0: top.arg_max: output 'y' is 2x1, result 0 of the op is 2");

  m = argMaxModel();
  m.nets[0].subnets[0].inputs[0].shape = {3, 5};
  m.nets[0].subnets[0].inputs[0].size = 60;
  EXPECT_EQ(loadError(m),
            "<memory>: net 'argmax': sub-net 0: top.arg_max: the inputs give result 0 the shape 3, the parameters 2");

  m = argMaxModel();
  m.nets[0].subnets[0].inputs.push_back(m.nets[0].inputs[0]);
  EXPECT_EQ(loadError(m), "<memory>: net 'argmax': sub-net 0: top.arg_max takes 1..1 inputs, has 2");
}

TEST(CpuSubnet, NonIntegerResultForAnInt32OutputIsAnError) {
  kernels::HostCall keep;
  keep.code = kernels::findHostOp("top.cast")->code;
  keep.attrs.setText("to", "f32");
  keep.resultShapes = {{2, 5}};
  bmodel::Model m = argMaxModel();
  bmodel::Net &net = m.nets[0];
  net.outputs[0] = tensor("y", DataType::Int32, StoreMode::N1, {2, 5}, kDdr + 0x2000);
  net.subnets[0] = cpuSubnet(keep, net.inputs, net.outputs[0]);
  auto rt = loaded(m, BackendKind::Func);
  ASSERT_TRUE(rt) << rt.message();
  RunReport report;
  auto out = (*rt)->run("argmax", kArgMaxInput, RunOptions(), report);
  ASSERT_FALSE(out);
  EXPECT_EQ(out.message(), "net 'argmax': sub-net 0 (top.cast): output 'y': element 0 is 0.1, not an int32");
}

TEST(CpuSubnet, DeviceBackendRefusesWithOneLine) {
  setenv("TPU_LIBSOPHON_DIR", STUB_LIBSOPHON_DIR, 1);
  setenv("TPU_STUB_LOG", (::testing::TempDir() + "cpusubnet_device.log").c_str(), 1);
  auto rt = loaded(argMaxModel(), BackendKind::Device);
  ASSERT_TRUE(rt) << rt.message();
  RunReport report;
  auto out = (*rt)->run("argmax", kArgMaxInput, RunOptions(), report);
  ASSERT_FALSE(out);
  EXPECT_EQ(out.message(), "net 'argmax': the device backend does not run CPU sub-nets yet (sub-net 0): use "
                           "--backend sim or func");
}
