// The SystemC engines, dispatcher, cmd_id synchronisation, DDR channel,
// stats and trace on synthetic commands (fixed costs, callback effects).
// Properties, not magic numbers.
#include "simulator/systemc/Simulator.h"
#include "timing/GdmaTiming.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <random>

using namespace tpu;
using namespace tpu::sysc;

namespace {

SimCommand cmd(uint32_t id, uint32_t waitId, double cycles, uint64_t ddrBytes = 0, int32_t layer = -1) {
  SimCommand c;
  c.id = id;
  c.waitId = waitId;
  c.name = "op" + std::to_string(id);
  c.latencyCycles = 10;
  c.dataCycles = cycles;
  c.ddrBytes = ddrBytes;
  c.payloadBytes = ddrBytes;
  c.layer = layer;
  return c;
}

struct SimFramework : ::testing::Test {
  isa::HwConfig hw;
  sim::LocalMemory lmem{hw};
  sim::GlobalMemory gmem{hw};
  Result<SimReport> run(const SimProgram &p, const isa::HwConfig *cfg = nullptr, SimOptions o = {}) {
    return simulate(cfg ? *cfg : hw, lmem, gmem, p, o);
  }
};

// A random two-engine program: every command may wait for an id the other
// engine issues earlier in program order, so it never deadlocks.
SimProgram randomProgram(uint32_t seed, unsigned groups, unsigned perEngine) {
  std::mt19937 rng(seed);
  SimProgram p;
  for (unsigned g = 0; g < groups; ++g) {
    SimGroup grp;
    uint32_t issued[2] = {0, 0};
    for (unsigned k = 0; k < 2 * perEngine; ++k) {
      unsigned e = rng() % 2;
      if (issued[e] == perEngine) e ^= 1;
      unsigned o = e ^ 1;
      uint32_t wait = issued[o] && rng() % 2 ? 1 + rng() % issued[o] : 0;
      // Dependencies never go backwards in the waiting queue's history.
      if (!grp.queue[e].empty()) wait = std::max(wait, grp.queue[e].back().waitId);
      uint64_t bytes = e == 1 ? 1024 * (1 + rng() % 64) : 0;
      grp.queue[e].push_back(cmd(++issued[e], wait, double(rng() % 500), bytes));
    }
    p.groups.push_back(std::move(grp));
  }
  return p;
}

const TraceEvent *find(const SimReport &r, Engine e, uint32_t group, uint32_t id) {
  for (const TraceEvent &t : r.events)
    if (t.engine == e && t.group == group && t.id == id) return &t;
  return nullptr;
}

} // namespace

TEST_F(SimFramework, DependentCommandsNeverOverlap) {
  SimProgram p = randomProgram(7, 3, 40);
  auto r = run(p);
  ASSERT_TRUE(r) << r.message();
  ASSERT_EQ(r->events.size(), 3u * 80u);
  unsigned checked = 0;
  for (const TraceEvent &t : r->events) {
    if (!t.waitId) continue;
    const TraceEvent *dep = find(*r, otherEngine(t.engine), t.group, t.waitId);
    ASSERT_NE(dep, nullptr);
    EXPECT_GE(t.startCycle, dep->endCycle) << engineName(t.engine) << " id " << t.id;
    ++checked;
  }
  EXPECT_GT(checked, 50u);
  // Groups run one after the other.
  for (size_t g = 1; g < r->groups.size(); ++g) EXPECT_GE(r->groups[g].startCycle, r->groups[g - 1].endCycle);
}

TEST_F(SimFramework, IndependentCommandsOverlap) {
  SimProgram p;
  SimGroup g;
  g.tiu().push_back(cmd(1, 0, 1000));
  g.gdma().push_back(cmd(1, 0, 0, 64 * 1024));
  p.groups.push_back(g);
  auto r = run(p);
  ASSERT_TRUE(r) << r.message();
  const TraceEvent *t = find(*r, Engine::Tiu, 0, 1), *d = find(*r, Engine::Gdma, 0, 1);
  ASSERT_TRUE(t && d);
  EXPECT_LT(t->startCycle, d->endCycle);
  EXPECT_LT(d->startCycle, t->endCycle);
  double sum = (t->endCycle - t->startCycle) + (d->endCycle - d->startCycle);
  EXPECT_LT(r->totalCycles, sum);
  EXPECT_DOUBLE_EQ(r->totalCycles, std::max(t->endCycle, d->endCycle));
}

TEST_F(SimFramework, MoreDdrBandwidthNeverSlowsAStream) {
  SimProgram p = randomProgram(11, 2, 30);
  double previous = 0;
  for (double gbs : {4.0, 8.0, 16.0, 32.0, 64.0, 128.0}) {
    isa::HwConfig cfg = hw;
    cfg.ddrBandwidthGBs = gbs;
    auto r = run(p, &cfg);
    ASSERT_TRUE(r) << r.message();
    if (previous > 0) EXPECT_LE(r->totalCycles, previous) << gbs << " GB/s";
    previous = r->totalCycles;
  }
  // A DMA-bound stream (no compute, big transfers) gets close to 2x faster.
  SimProgram dma;
  SimGroup g;
  for (uint16_t i = 1; i <= 20; ++i) g.gdma().push_back(cmd(i, 0, 0, 1 << 20));
  dma.groups.push_back(g);
  isa::HwConfig slow = hw, fast = hw;
  fast.ddrBandwidthGBs = 2 * slow.ddrBandwidthGBs;
  auto a = run(dma, &slow), b = run(dma, &fast);
  ASSERT_TRUE(a && b);
  EXPECT_LT(b->totalCycles, a->totalCycles * 0.55);
}

TEST_F(SimFramework, GdmaDurationFollowsBandwidth) {
  SimProgram p;
  SimGroup g;
  g.gdma().push_back(cmd(1, 0, 0, 1 << 20));
  p.groups.push_back(g);
  auto r = run(p);
  ASSERT_TRUE(r) << r.message();
  double expected = 10 + double(1 << 20) / timing::ddrBytesPerCycle(hw);
  EXPECT_NEAR(r->totalCycles, expected, 0.01);
  EXPECT_EQ(r->ddrBytes, uint64_t(1) << 20);
}

TEST_F(SimFramework, DeadlockIsAnErrorNamingBothCommands) {
  SimProgram p;
  SimGroup g;
  g.tiu().push_back(cmd(1, 0, 5));
  g.tiu().push_back(cmd(2, 2, 5)); // waits for GDMA id 2 ...
  g.gdma().push_back(cmd(1, 1, 5));
  g.gdma().push_back(cmd(2, 2, 5)); // ... which waits for TIU id 2
  p.groups.push_back(SimGroup{});
  p.groups.push_back(g);
  auto r = run(p);
  ASSERT_FALSE(r);
  const std::string &m = r.message();
  EXPECT_NE(m.find("deadlock in command group 1"), std::string::npos) << m;
  EXPECT_NE(m.find("TIU command #1 (op2, id 2) waits for GDMA id 2"), std::string::npos) << m;
  EXPECT_NE(m.find("GDMA command #1 (op2, id 2) waits for TIU id 2"), std::string::npos) << m;
  // The model is reusable after the error.
  auto again = run(randomProgram(3, 1, 10));
  EXPECT_TRUE(again) << again.message();
}

TEST_F(SimFramework, WaitingForAnIdNeverIssuedIsADeadlock) {
  SimProgram p;
  SimGroup g;
  g.tiu().push_back(cmd(1, 9, 5));
  g.gdma().push_back(cmd(1, 0, 5));
  g.gdma().push_back(cmd(2, 0, 5));
  p.groups.push_back(g);
  auto r = run(p);
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("TIU command #0 (op1, id 1) waits for GDMA id 9, but the GDMA queue ended "
                             "after completing id 2"),
            std::string::npos)
      << r.message();
}

TEST_F(SimFramework, SemanticErrorStopsWithCommandIndex) {
  SimProgram p;
  SimGroup g;
  int laterRan = 0;
  g.tiu().push_back(cmd(1, 0, 5));
  g.tiu().push_back(cmd(2, 0, 5));
  g.tiu()[1].execute = [](sim::LocalMemory &, sim::GlobalMemory &gm) {
    return gm.write(0x10, "x", 1); // below the DDR base: out of range
  };
  g.tiu().push_back(cmd(3, 0, 5));
  g.tiu()[2].execute = [&](sim::LocalMemory &, sim::GlobalMemory &) {
    ++laterRan;
    return Status::ok();
  };
  g.gdma().push_back(cmd(1, 3, 5)); // blocked on the command that never runs
  p.groups.push_back(g);
  auto r = run(p);
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("group 0: TIU command #1 (op2, id 2): write: global memory access"),
            std::string::npos)
      << r.message();
  EXPECT_EQ(laterRan, 0);
  EXPECT_TRUE(run(randomProgram(5, 1, 10)));
}

TEST_F(SimFramework, InvalidProgramsAreRejected) {
  SimProgram p;
  SimGroup g;
  g.tiu().push_back(cmd(2, 0, 5));
  g.tiu().push_back(cmd(2, 0, 5));
  p.groups.push_back(g);
  auto r = run(p);
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("TIU command #1 (op2): id 2 does not follow id 2"), std::string::npos)
      << r.message();
  p.groups[0].tiu().pop_back();
  p.groups[0].tiu()[0].layer = 3;
  r = run(p);
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("layer index 3"), std::string::npos) << r.message();
  p.groups[0].tiu()[0].layer = -1;
  p.groups[0].tiu()[0].dataCycles = 1e19; // e.g. the saturated cost of garbage shapes
  r = run(p);
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("TIU command #0 (op2): cost of"), std::string::npos) << r.message();
  p.groups[0].tiu()[0].dataCycles = kMaxRunCycles / 2;
  p.groups[0].tiu().push_back(cmd(3, 0, kMaxRunCycles / 2));
  r = run(p);
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("beyond the model's"), std::string::npos) << r.message();
}

TEST_F(SimFramework, CycleLimitStopsTheRun) {
  SimOptions o;
  o.maxCycles = 1000;
  auto r = run(randomProgram(9, 2, 50), nullptr, o);
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("simulated-cycle limit of 1000 cycles exceeded"), std::string::npos) << r.message();
}

TEST_F(SimFramework, DataEffectsFollowDependencies) {
  // GDMA "loads" a byte into LMEM; the TIU doubles it once the load completed;
  // GDMA "stores" it after the TIU completed.
  SimProgram p;
  SimGroup g;
  g.gdma().push_back(cmd(1, 0, 0, 4096));
  g.gdma()[0].execute = [](sim::LocalMemory &lm, sim::GlobalMemory &) {
    lm.lane(3)[0] = 21;
    return Status::ok();
  };
  g.tiu().push_back(cmd(1, 1, 50));
  g.tiu()[0].execute = [](sim::LocalMemory &lm, sim::GlobalMemory &) {
    lm.lane(3)[1] = uint8_t(lm.lane(3)[0] * 2);
    return Status::ok();
  };
  g.gdma().push_back(cmd(2, 1, 0, 4096));
  g.gdma()[1].execute = [](sim::LocalMemory &lm, sim::GlobalMemory &gm) {
    return gm.write(gm.base(), lm.lane(3) + 1, 1);
  };
  p.groups.push_back(g);
  auto r = run(p);
  ASSERT_TRUE(r) << r.message();
  uint8_t out = 0;
  ASSERT_TRUE(gmem.read(gmem.base(), &out, 1));
  EXPECT_EQ(out, 42);
  EXPECT_GT(r->gdma().waitingCycles, 0.0);
  EXPECT_GT(r->tiu().waitingCycles, 0.0);
}

TEST_F(SimFramework, StatsAddUpAndAreDeterministic) {
  SimProgram p = randomProgram(21, 2, 25);
  p.layerNames = {"conv1", "relu1"};
  for (auto &g : p.groups)
    for (auto &q : g.queue)
      for (size_t i = 0; i < q.size(); ++i) q[i].layer = int32_t(i % 3) - 1; // -1, 0, 1
  auto a = run(p), b = run(p);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->statsJson(), b->statsJson());
  EXPECT_EQ(a->chromeTraceJson(), b->chromeTraceJson());
  for (const EngineStats &e : a->engines) {
    EXPECT_NEAR(e.busyCycles + e.waitingCycles + e.idleCycles, a->totalCycles, 1e-6);
    EXPECT_GT(e.utilization, 0.0);
    EXPECT_LE(e.utilization, 1.0);
    EXPECT_EQ(e.commands, 50u);
  }
  ASSERT_EQ(a->layers.size(), 2u);
  EXPECT_EQ(a->layers[0].name, "conv1");
  uint64_t layered = 0;
  for (const LayerStats &l : a->layers) layered += l.commands[0] + l.commands[1];
  EXPECT_LT(layered, 100u);
  EXPECT_GT(layered, 50u);
  auto j = nlohmann::json::parse(a->statsJson());
  EXPECT_EQ(j["engines"]["tiu"]["commands"], 50);
  EXPECT_EQ(j["groups"].size(), 2u);
  EXPECT_EQ(j["layers"][1]["name"], "relu1");
  EXPECT_NEAR(j["total_cycles"].get<double>(), a->totalCycles, 0.0005);
}

TEST_F(SimFramework, TraceJsonHasBothEngineTracksAndDdrCounters) {
  SimProgram p = randomProgram(4, 1, 10);
  p.layerNames = {"conv1"};
  p.groups[0].tiu()[0].layer = 0;
  auto r = run(p);
  ASSERT_TRUE(r) << r.message();
  auto j = nlohmann::json::parse(r->chromeTraceJson());
  std::map<int, std::string> threads;
  std::map<int, int> complete;
  int counters = 0, flowStarts = 0, flowEnds = 0;
  bool layerNamed = false;
  for (const auto &e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") threads[e["tid"]] = e["args"]["name"];
    if (e["ph"] == "X") {
      complete[e["tid"]]++;
      EXPECT_GE(e["dur"].get<double>(), 0.0);
      if (e["name"] == "op1 conv1") layerNamed = true;
    }
    if (e["ph"] == "C") ++counters;
    if (e["ph"] == "s") ++flowStarts;
    if (e["ph"] == "f") ++flowEnds;
  }
  size_t dependent = 0;
  for (const TraceEvent &t : r->events) dependent += t.waitId != 0;
  EXPECT_EQ(size_t(flowStarts), dependent);
  EXPECT_EQ(flowEnds, flowStarts);
  EXPECT_EQ(threads[1], "TIU");
  EXPECT_EQ(threads[2], "GDMA");
  EXPECT_EQ(complete[1], 10);
  EXPECT_EQ(complete[2], 10);
  EXPECT_GT(counters, 0);
  EXPECT_TRUE(layerNamed);
}

TEST_F(SimFramework, WallClockLimitStopsTheRun) {
  SimOptions o;
  o.wallClockSeconds = 1e-12; // already spent before the first command
  auto r = run(randomProgram(9, 1, 10), nullptr, o);
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("wall-clock limit"), std::string::npos) << r.message();
  EXPECT_NE(r.message().find("command #0"), std::string::npos) << r.message();
}

TEST_F(SimFramework, RunsWithDifferentConfigsInOneProcess) {
  SimProgram p = randomProgram(13, 1, 20);
  auto a = run(p);
  isa::HwConfig slow = hw;
  slow.clockMhz = 330; // smaller BM1684 variants
  auto b = run(p, &slow);
  ASSERT_TRUE(a && b);
  EXPECT_DOUBLE_EQ(b->clockMhz, 330);
  // Compute cycles are the same; DDR moves more bytes per (slower) cycle.
  EXPECT_LE(b->totalCycles, a->totalCycles);
  EXPECT_GT(b->timeUs(), a->timeUs());
}
