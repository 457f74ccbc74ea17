// The shared DDR channel on its own: concurrent transfers split the
// bandwidth, bytes are conserved, the channel never exceeds its bandwidth.
#include "simulator/systemc/DdrChannel.h"
#include "simulator/systemc/Simulator.h"

#include <gtest/gtest.h>

#include <memory>

using namespace tpu::sysc;
using namespace sc_core;

namespace {

// A requester that issues its transfers at given cycles, one after another.
struct Client : sc_module {
  SC_HAS_PROCESS(Client);
  Client(sc_module_name n, RunControl &ctl, DdrChannel &ddr) : sc_module(n), ctl(ctl), ddr(ddr) { SC_THREAD(run); }
  struct Job {
    double startCycle;
    uint64_t bytes;
  };
  std::vector<Job> jobs;
  std::vector<double> finished;
  sc_event go;
  RunControl &ctl;
  DdrChannel &ddr;
  void run() {
    for (;;) {
      wait(go);
      for (const Job &j : jobs) {
        double now = ctl.nowCycles();
        if (j.startCycle > now) wait(RunControl::cyclesToTime(j.startCycle - now));
        ddr.transfer(j.bytes);
        finished.push_back(ctl.nowCycles());
      }
    }
  }
};

struct Bench {
  RunControl ctl;
  DdrChannel ddr{"ddr", ctl};
  Client a{"a", ctl, ddr}, b{"b", ctl, ddr}, c{"c", ctl, ddr};
  SimProgram none;
  Bench() { sc_start(SC_ZERO_TIME); }
  // Runs the clients' jobs at `bytesPerCycle`; returns the report.
  SimReport run(double bytesPerCycle) {
    ctl.begin(SimOptions{}, 1000.0, none);
    ddr.configure(bytesPerCycle);
    for (Client *cl : {&a, &b, &c}) {
      cl->finished.clear();
      cl->go.notify(SC_ZERO_TIME);
    }
    sc_start();
    return ctl.finish(ctl.nowCycles());
  }
};

Bench &bench() {
  static auto b = std::make_unique<Bench>();
  return *b;
}

} // namespace

TEST(DdrChannel, ConcurrentTransfersShareTheBandwidth) {
  Bench &b = bench();
  b.a.jobs = {{0, 1000}};
  b.b.jobs = {};
  b.c.jobs = {};
  b.run(10);
  ASSERT_EQ(b.a.finished.size(), 1u);
  double alone = b.a.finished[0];
  EXPECT_NEAR(alone, 100, 1e-3);

  // Two equal transfers at once: each at half speed, both end together.
  b.b.jobs = {{0, 1000}};
  b.run(10);
  EXPECT_NEAR(b.a.finished[0], 2 * alone, 1e-3);
  EXPECT_NEAR(b.b.finished[0], 2 * alone, 1e-3);

  // A second transfer joins half-way: A has 500 bytes left at cycle 50, moves
  // them at 5 B/cycle (done at 150); B moved 500 by then and finishes alone at 200.
  b.b.jobs = {{50, 1000}};
  b.run(10);
  EXPECT_NEAR(b.a.finished[0], 150, 1e-3);
  EXPECT_NEAR(b.b.finished[0], 200, 1e-3);
}

TEST(DdrChannel, NeverExceedsItsBandwidthAndConservesBytes) {
  Bench &b = bench();
  b.a.jobs = {{0, 4096}, {10, 64}, {500, 100000}};
  b.b.jobs = {{3, 777}, {4, 20000}};
  b.c.jobs = {{0, 1}, {250, 3000}, {251, 3000}};
  SimReport r = b.run(16);
  uint64_t total = 4096 + 64 + 100000 + 777 + 20000 + 1 + 3000 + 3000;
  ASSERT_FALSE(r.ddrSamples.empty());
  EXPECT_EQ(r.ddrSamples.back().bytesDone, total);
  EXPECT_EQ(r.ddrSamples.back().activeTransfers, 0u);
  double last = std::max({b.a.finished.back(), b.b.finished.back(), b.c.finished.back()});
  EXPECT_GE(last * 16 + 1e-6, double(total)); // cannot beat the bandwidth
  for (size_t i = 1; i < r.ddrSamples.size(); ++i) EXPECT_GE(r.ddrSamples[i].cycle, r.ddrSamples[i - 1].cycle);
}

// This process already elaborated and started its own modules: the model's
// entry point cannot add its modules any more and says so instead of crashing.
TEST(DdrChannel, SimulateAfterAnotherModelStartedIsAnError) {
  bench();
  tpu::isa::HwConfig hw;
  tpu::sim::LocalMemory lm(hw);
  tpu::sim::GlobalMemory gm(hw);
  auto r = tpu::sysc::simulate(hw, lm, gm, SimProgram{});
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("SystemC kernel: "), std::string::npos) << r.message();
  EXPECT_EQ(r.message().find('\n'), std::string::npos) << r.message();
}
