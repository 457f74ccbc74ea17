// What the SystemC model costs per command on top of the work it simulates:
// synthetic commands with no data effect (pure scheduling: threads, events,
// cmd_id waits, DDR channel, stats), with and without trace recording, and
// real ar.add commands through the model versus executeTiu called directly.
#include "simulator/semantics/TiuExec.h"
#include "simulator/systemc/SimBuilder.h"
#include "simulator/systemc/Simulator.h"

#include <benchmark/benchmark.h>

using namespace tpu;
using namespace tpu::sysc;

namespace {

// Both queues of `perEngine` commands, each TIU command waiting for the GDMA
// command before it and every GDMA command for the TIU command two back.
SimProgram syntheticProgram(unsigned perEngine) {
  SimProgram p;
  SimGroup g;
  for (unsigned i = 1; i <= perEngine; ++i) {
    SimCommand d;
    d.id = uint16_t(i);
    d.waitId = uint16_t(i > 2 ? i - 2 : 0);
    d.name = "gdma";
    d.latencyCycles = 60;
    d.ddrBytes = 4096;
    g.gdma().push_back(d);
    SimCommand t;
    t.id = uint16_t(i);
    t.waitId = uint16_t(i);
    t.name = "tiu";
    t.latencyCycles = 40;
    t.dataCycles = 100;
    g.tiu().push_back(t);
  }
  p.groups.push_back(std::move(g));
  return p;
}

void BM_SchedulingOnly(benchmark::State &state) {
  isa::HwConfig hw;
  sim::LocalMemory lm(hw);
  sim::GlobalMemory gm(hw);
  SimProgram p = syntheticProgram(unsigned(state.range(0)));
  SimOptions o;
  o.recordTrace = state.range(1) != 0;
  uint64_t wakeups = 0;
  for (auto _ : state) {
    auto r = simulate(hw, lm, gm, p, o);
    if (!r) state.SkipWithError(r.message().c_str());
    wakeups = r->wakeups;
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * 2 * state.range(0));
  state.counters["wakeups_per_cmd"] = double(wakeups) / double(2 * state.range(0));
}
BENCHMARK(BM_SchedulingOnly)->Args({1000, 0})->Args({1000, 1})->Args({20000, 0})->Unit(benchmark::kMillisecond);

isa::TiuCommand addCommand(uint16_t id) {
  isa::Arith ar;
  ar.eu = isa::EuOp::Add;
  for (isa::LocalOperand *o : {&ar.res0, &ar.opd0, &ar.opd1}) {
    o->shape = {1, 64, 16, 16};
    o->prec = isa::Prec::Fp32;
  }
  ar.res0.addr = 0x10000;
  ar.opd1.addr = 0x20000;
  isa::TiuCommand t;
  t.cmdIdTpu = id;
  t.op = ar;
  return t;
}

void BM_AddThroughModel(benchmark::State &state) {
  isa::HwConfig hw;
  sim::LocalMemory lm(hw);
  sim::GlobalMemory gm(hw);
  ProgramBuilder b(hw);
  b.beginGroup();
  for (int i = 1; i <= state.range(0); ++i) b.addTiu(addCommand(uint16_t(i)));
  SimProgram p = b.take();
  SimOptions o;
  o.recordTrace = false;
  for (auto _ : state) {
    auto r = simulate(hw, lm, gm, p, o);
    if (!r) state.SkipWithError(r.message().c_str());
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * state.range(0));
}
BENCHMARK(BM_AddThroughModel)->Arg(2000)->Unit(benchmark::kMillisecond);

void BM_AddDirect(benchmark::State &state) {
  isa::HwConfig hw;
  sim::LocalMemory lm(hw);
  std::vector<isa::TiuCommand> cmds;
  for (int i = 1; i <= state.range(0); ++i) cmds.push_back(addCommand(uint16_t(i)));
  for (auto _ : state)
    for (const auto &c : cmds) {
      Status st = sim::executeTiu(hw, lm, c);
      if (!st) state.SkipWithError(st.message().c_str());
    }
  state.SetItemsProcessed(int64_t(state.iterations()) * state.range(0));
}
BENCHMARK(BM_AddDirect)->Arg(2000)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
