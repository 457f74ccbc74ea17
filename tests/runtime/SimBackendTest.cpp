// The timed backend against the functional one: same output bytes, a timed
// report, and DMA overlapping compute in the trace.
#include "runtime/Runtime.h"

#include "TestNets.h"
#include "isa/bmodel/Bmodel.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <thread>

using namespace tpu;
using namespace tpu::runtime;
using namespace tpu::runtime::testnets;

namespace {

struct Outcome {
  NpzMap outputs;
  RunReport report;
};

Outcome runConvAdd(BackendKind kind, const RunOptions &opts, unsigned seed) {
  Outcome o;
  auto rt = Runtime::create(isa::HwConfig(), kind);
  EXPECT_TRUE(rt) << rt.message();
  if (!rt) return o;
  ConvAddNet net(seed);
  auto bytes = bmodel::serialize(net.model());
  EXPECT_TRUE(bytes);
  Status st = (*rt)->loadBmodel(bytes->data(), bytes->size());
  EXPECT_TRUE(st) << st.message();
  NpzMap in{{"x", NpyArray::from({1, 3, 8, 8}, randomFloats(192, seed + 1))},
            {"y", NpyArray::from({1, 4, 8, 8}, randomFloats(256, seed + 2))}};
  auto out = (*rt)->run("conv_add", in, opts, o.report);
  EXPECT_TRUE(out) << out.message();
  if (out) o.outputs = out.take();
  return o;
}

} // namespace

TEST(SimBackend, SameBytesAsFunc) {
  if (!backendAvailable(BackendKind::Sim)) GTEST_SKIP() << "built without the SystemC model";
  Outcome func = runConvAdd(BackendKind::Func, RunOptions(), 11);
  Outcome sim = runConvAdd(BackendKind::Sim, RunOptions(), 11);
  ASSERT_EQ(func.outputs.size(), 1u);
  ASSERT_EQ(sim.outputs.size(), 1u);
  EXPECT_EQ(func.outputs.at("z").data, sim.outputs.at("z").data);
  EXPECT_FALSE(func.report.timed);
  EXPECT_TRUE(sim.report.timed);
  EXPECT_GT(sim.report.totalCycles, 0);
  EXPECT_GT(sim.report.tiuUtilization, 0);
  EXPECT_GT(sim.report.gdmaUtilization, 0);
  EXPECT_NEAR(sim.report.timeUs(), sim.report.totalCycles / 550.0, 1e-9);
  EXPECT_FALSE(sim.report.statsJson.empty());
}

// GDMA 3 (load y) waits for nothing, so it runs while TIU 1 (conv) computes.
TEST(SimBackend, TraceShowsDmaOverlappingCompute) {
  if (!backendAvailable(BackendKind::Sim)) GTEST_SKIP() << "built without the SystemC model";
  RunOptions opts;
  opts.recordTrace = true;
  Outcome sim = runConvAdd(BackendKind::Sim, opts, 12);
  auto trace = nlohmann::json::parse(sim.report.traceJson, nullptr, false);
  ASSERT_FALSE(trace.is_discarded());
  const auto &events = trace.is_array() ? trace : trace["traceEvents"];
  ASSERT_TRUE(events.is_array());
  // Complete events ("ph": "X") per engine track: [ts, ts + dur).
  std::map<std::string, std::vector<std::pair<double, double>>> spans;
  std::map<std::pair<int64_t, int64_t>, std::string> trackName;
  for (const auto &e : events)
    if (e.value("ph", "") == "M" && e.value("name", "") == "thread_name")
      trackName[{e.value("pid", 0), e.value("tid", 0)}] = e["args"].value("name", "");
  for (const auto &e : events)
    if (e.value("ph", "") == "X") {
      std::string track = trackName[{e.value("pid", 0), e.value("tid", 0)}];
      double ts = e.value("ts", 0.0), dur = e.value("dur", 0.0);
      spans[track].push_back({ts, ts + dur});
    }
  std::string tiuTrack, gdmaTrack;
  for (const auto &[name, s] : spans) {
    if (name.find("TIU") != std::string::npos) tiuTrack = name;
    if (name.find("GDMA") != std::string::npos) gdmaTrack = name;
  }
  ASSERT_FALSE(tiuTrack.empty()) << sim.report.traceJson.substr(0, 2000);
  ASSERT_FALSE(gdmaTrack.empty());
  EXPECT_EQ(spans[tiuTrack].size(), 2u);
  EXPECT_EQ(spans[gdmaTrack].size(), 4u);
  bool overlap = false;
  for (auto [t0, t1] : spans[tiuTrack])
    for (auto [g0, g1] : spans[gdmaTrack])
      if (g0 < t1 && t0 < g1) overlap = true;
  EXPECT_TRUE(overlap) << "no GDMA event overlaps a TIU event";
}

// Separate runtimes on separate threads (two func, one sim when built in)
// run the same net repeatedly and all agree with a single-threaded run.
TEST(SimBackend, ConcurrentRuntimesAgree) {
  const std::vector<uint8_t> expected = runConvAdd(BackendKind::Func, RunOptions(), 21).outputs.at("z").data;
  std::vector<BackendKind> kinds = {BackendKind::Func, BackendKind::Func};
  if (backendAvailable(BackendKind::Sim)) kinds.push_back(BackendKind::Sim);
  std::vector<std::vector<std::vector<uint8_t>>> results(kinds.size());
  std::vector<std::thread> threads;
  for (size_t t = 0; t < kinds.size(); ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 4; ++i) {
        Outcome o = runConvAdd(kinds[t], RunOptions(), 21);
        results[t].push_back(o.outputs.count("z") ? o.outputs.at("z").data : std::vector<uint8_t>());
      }
    });
  for (auto &th : threads) th.join();
  for (size_t t = 0; t < kinds.size(); ++t)
    for (const auto &r : results[t]) EXPECT_EQ(r, expected) << "thread " << t;
}
