// Issue 3's end-to-end check through the runtime library: the hand-written
// program tests/data/asm/conv_add.s (two loads, conv, add, store) assembled,
// run on func and on sim: the same bytes, equal to a naive conv + bias + add
// computed here, and the load of y overlapping the conv in the trace.
#include "runtime/Runtime.h"

#include "TestNets.h"
#include "isa/Assembler.h"
#include "isa/bmodel/Bmodel.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>

using namespace tpu;
using namespace tpu::runtime;

namespace {

const std::string kProgram = std::string(TPU_TEST_DATA_DIR) + "/asm/conv_add.s";
constexpr int kIc = 8, kOc = 16, kIn = 10, kOut = 8;

struct ProgramRun {
  NpzMap inputs, outputs;
  RunReport report;
  bmodel::Model model;
};

ProgramRun runProgram(BackendKind kind, bool trace) {
  ProgramRun r;
  auto model = isa::assembleFile(kProgram);
  EXPECT_TRUE(model) << model.message();
  if (!model) return r;
  r.model = *model;
  auto bytes = bmodel::serialize(*model);
  EXPECT_TRUE(bytes) << bytes.message();
  auto rt = Runtime::create(isa::HwConfig(), kind);
  EXPECT_TRUE(rt) << rt.message();
  Status st = (*rt)->loadBmodel(bytes->data(), bytes->size(), "conv_add.bmodel");
  EXPECT_TRUE(st) << st.message();
  r.inputs = {{"x", NpyArray::from({1, kIc, kIn, kIn}, testnets::randomFloats(kIc * kIn * kIn, 31))},
              {"y", NpyArray::from({1, kOc, kOut, kOut}, testnets::randomFloats(kOc * kOut * kOut, 32))}};
  RunOptions opts;
  opts.recordTrace = trace;
  auto out = (*rt)->run("conv_add", r.inputs, opts, r.report);
  EXPECT_TRUE(out) << out.message();
  if (out) r.outputs = out.take();
  return r;
}

// z = conv3x3(x, W) (valid) + bias + y with W [oc][ic][3][3] then the biases
// in the coefficient blob, as the program's header comment describes.
std::vector<float> reference(const ProgramRun &r) {
  const auto &coeff = r.model.nets.at(0).coeff;
  std::vector<float> w(kOc * kIc * 9), bias(kOc);
  std::memcpy(w.data(), coeff.data(), w.size() * 4);
  std::memcpy(bias.data(), coeff.data() + w.size() * 4, bias.size() * 4);
  auto x = r.inputs.at("x").values<float>(), y = r.inputs.at("y").values<float>();
  std::vector<float> z(kOc * kOut * kOut);
  for (int o = 0; o < kOc; ++o)
    for (int i = 0; i < kOut; ++i)
      for (int j = 0; j < kOut; ++j) {
        double acc = bias[o];
        for (int c = 0; c < kIc; ++c)
          for (int ky = 0; ky < 3; ++ky)
            for (int kx = 0; kx < 3; ++kx)
              acc += double(w[((o * kIc + c) * 3 + ky) * 3 + kx]) * x[(c * kIn + i + ky) * kIn + j + kx];
        const int k = (o * kOut + i) * kOut + j;
        z[k] = float(acc + y[k]);
      }
  return z;
}

} // namespace

TEST(EndToEnd, ConvAddProgramMatchesNaiveReferenceOnFunc) {
  ProgramRun func = runProgram(BackendKind::Func, false);
  ASSERT_EQ(func.outputs.count("z"), 1u);
  auto got = func.outputs.at("z").values<float>();
  auto want = reference(func);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-5) << "element " << i;
}

TEST(EndToEnd, ConvAddProgramSameBytesOnSimWithOverlap) {
  if (!backendAvailable(BackendKind::Sim)) GTEST_SKIP() << "built without the SystemC model";
  ProgramRun func = runProgram(BackendKind::Func, false);
  ProgramRun sim = runProgram(BackendKind::Sim, true);
  ASSERT_EQ(sim.outputs.count("z"), 1u);
  EXPECT_EQ(sim.outputs.at("z").data, func.outputs.at("z").data);
  EXPECT_TRUE(sim.report.timed);
  EXPECT_GT(sim.report.totalCycles, 0);

  // Some GDMA event overlaps some TIU event on the timeline.
  auto trace = nlohmann::json::parse(sim.report.traceJson, nullptr, false);
  ASSERT_FALSE(trace.is_discarded());
  std::map<int, std::string> tracks;
  std::map<std::string, std::vector<std::pair<double, double>>> spans;
  for (const auto &e : trace["traceEvents"])
    if (e.value("ph", "") == "M" && e.value("name", "") == "thread_name")
      tracks[e.value("tid", -1)] = e["args"].value("name", "");
  for (const auto &e : trace["traceEvents"])
    if (e.value("ph", "") == "X") {
      double ts = e.value("ts", 0.0);
      spans[tracks[e.value("tid", -1)]].push_back({ts, ts + e.value("dur", 0.0)});
    }
  ASSERT_EQ(spans["TIU"].size(), 2u);
  ASSERT_EQ(spans["GDMA"].size(), 5u);
  int overlaps = 0;
  for (auto [t0, t1] : spans["TIU"])
    for (auto [g0, g1] : spans["GDMA"])
      if (g0 < t1 && t0 < g1) ++overlaps;
  EXPECT_GT(overlaps, 0) << sim.report.traceJson;
}
