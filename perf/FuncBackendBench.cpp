// Speed of the functional library (the `func` backend's inner loop):
// simulated commands per second and multiply-accumulates per second for
// conv (int8, fp32), element-wise ar and a GDMA copy, plus a whole command
// group through the runtime's program-order loop. Numbers: docs/runtime.md.
// With TPU_BENCH_BMODEL=model.bmodel and TPU_BENCH_INPUT=in.npz it also
// times whole launches of that model (BM_BmodelLaunch, for profiling).
#include "isa/GdmaCommand.h"
#include "isa/TiuCommand.h"
#include "runtime/FuncBackend.h"
#include "runtime/Runtime.h"
#include "support/Parallel.h"
#include "simulator/semantics/GdmaExec.h"
#include "simulator/semantics/TiuExec.h"

#include <benchmark/benchmark.h>

#include <cstdlib>

using namespace tpu;

namespace {

constexpr uint32_t kLane = 512 * 1024;

isa::LocalOperand operand(uint32_t addr, isa::Shape4 s, isa::Prec p) {
  isa::LocalOperand op;
  op.addr = addr;
  op.shape = s;
  op.prec = p;
  op.isSigned = true;
  op.strideMode = isa::StrideMode::Aligned;
  return op;
}

// A 3x3, pad 1 convolution of c x hw x hw to c channels.
isa::TiuCommand conv(isa::Prec p, uint32_t c, uint32_t hw) {
  isa::Conv cv;
  cv.input = operand(0, {1, c, hw, hw}, p);
  cv.weight = operand(0x20000, {c, c, 3, 3}, p);
  cv.output = operand(0x40000, {1, c, hw, hw}, p);
  cv.bias = operand(0, {1, c, 1, 1}, p);
  cv.padTop = cv.padBottom = cv.padLeft = cv.padRight = 1;
  if (p == isa::Prec::Int8) cv.rshift = 8;
  isa::TiuCommand cmd;
  cmd.op = cv;
  return cmd;
}

isa::TiuCommand add(isa::Prec p, uint32_t c, uint32_t hw) {
  isa::Arith ar;
  ar.eu = isa::EuOp::Add;
  ar.res0 = operand(0x40000, {1, c, hw, hw}, p);
  ar.opd0 = operand(0, {1, c, hw, hw}, p);
  ar.opd1 = operand(0x20000, {1, c, hw, hw}, p);
  ar.opd2 = operand(0, {1, c, hw, hw}, p);
  isa::TiuCommand cmd;
  cmd.op = ar;
  return cmd;
}

isa::GdmaCommand loadFp32(uint32_t c, uint32_t hw) {
  isa::GdmaCommand g;
  g.direction = isa::GdmaDirection::S2L;
  g.strideEnable = false;
  g.src.addr = 0x100000000ull;
  g.src.shape = {1, c, hw, hw};
  g.dst.addr = 0;
  g.dst.shape = {1, c, hw, hw};
  return g;
}

struct Machine {
  isa::HwConfig cfg;
  sim::LocalMemory lmem{cfg};
  sim::GlobalMemory gmem{cfg};
};

void setRates(benchmark::State &state, double macsPerCommand) {
  state.counters["commands/s"] =
      benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
  if (macsPerCommand > 0)
    state.counters["MAC/s"] =
        benchmark::Counter(double(state.iterations()) * macsPerCommand, benchmark::Counter::kIsRate);
}

void runTiu(benchmark::State &state, const isa::TiuCommand &cmd, double macs) {
  Machine m;
  for (auto _ : state) {
    Status st = sim::executeTiu(m.cfg, m.lmem, cmd);
    if (!st) {
      state.SkipWithError(st.message().c_str());
      break;
    }
  }
  setRates(state, macs);
}

void BM_ConvInt8(benchmark::State &state) {
  uint32_t c = uint32_t(state.range(0)), hw = uint32_t(state.range(1));
  runTiu(state, conv(isa::Prec::Int8, c, hw), double(c) * c * 9 * hw * hw);
}
void BM_ConvFp32(benchmark::State &state) {
  uint32_t c = uint32_t(state.range(0)), hw = uint32_t(state.range(1));
  runTiu(state, conv(isa::Prec::Fp32, c, hw), double(c) * c * 9 * hw * hw);
}
void BM_ArAddInt8(benchmark::State &state) {
  uint32_t c = uint32_t(state.range(0)), hw = uint32_t(state.range(1));
  runTiu(state, add(isa::Prec::Int8, c, hw), 0);
  state.counters["elements/s"] = benchmark::Counter(
      double(state.iterations()) * c * hw * hw, benchmark::Counter::kIsRate);
}
void BM_ArAddFp32(benchmark::State &state) {
  uint32_t c = uint32_t(state.range(0)), hw = uint32_t(state.range(1));
  runTiu(state, add(isa::Prec::Fp32, c, hw), 0);
  state.counters["elements/s"] = benchmark::Counter(
      double(state.iterations()) * c * hw * hw, benchmark::Counter::kIsRate);
}

void BM_GdmaLoadFp32(benchmark::State &state) {
  uint32_t c = uint32_t(state.range(0)), hw = uint32_t(state.range(1));
  Machine m;
  isa::GdmaCommand cmd = loadFp32(c, hw);
  for (auto _ : state) {
    Status st = sim::executeGdma(m.cfg, m.lmem, m.gmem, cmd);
    if (!st) {
      state.SkipWithError(st.message().c_str());
      break;
    }
  }
  setRates(state, 0);
  state.SetBytesProcessed(int64_t(state.iterations()) * c * hw * hw * 4);
}

// A whole group through the program-order loop of the func backend: load,
// conv, load, add, store — per-command dispatch overhead included.
void BM_GroupInOrder(benchmark::State &state) {
  const uint32_t c = 64, hw = 14;
  runtime::SimDevice dev{isa::HwConfig()};
  runtime::LoadedGroup g;
  isa::GdmaCommand load = loadFp32(c, hw);
  load.cmdId = 1;
  g.gdma.push_back(load);
  isa::TiuCommand cv = conv(isa::Prec::Fp32, c, hw);
  cv.cmdIdTpu = 1;
  cv.cmdIdGdma = 1;
  g.tiu.push_back(cv);
  isa::TiuCommand ar = add(isa::Prec::Fp32, c, hw);
  ar.cmdIdTpu = 2;
  ar.cmdIdGdma = 1;
  g.tiu.push_back(ar);
  isa::GdmaCommand store = loadFp32(c, hw);
  store.direction = isa::GdmaDirection::L2S;
  std::swap(store.src, store.dst);
  store.src.addr = 0x40000;
  store.cmdId = 2;
  store.eng0SyncId = 2;
  g.gdma.push_back(store);
  std::vector<isa::SyncIds> tiuIds, gdmaIds;
  for (auto &t : g.tiu) tiuIds.push_back({t.cmdIdTpu, t.cmdIdGdma});
  for (auto &d : g.gdma) gdmaIds.push_back({d.cmdId, d.eng0SyncId});
  auto order = isa::programOrder(tiuIds, gdmaIds);
  if (!order) {
    state.SkipWithError(order.message().c_str());
    return;
  }
  g.order = order.take();
  for (auto _ : state) {
    Status st = runtime::executeGroupInOrder(dev, g);
    if (!st) {
      state.SkipWithError(st.message().c_str());
      break;
    }
  }
  state.counters["commands/s"] = benchmark::Counter(
      double(state.iterations()) * g.order.size(), benchmark::Counter::kIsRate);
  state.counters["MAC/s"] = benchmark::Counter(
      double(state.iterations()) * c * c * 9 * hw * hw, benchmark::Counter::kIsRate);
}

void BM_BmodelLaunch(benchmark::State &state, std::string bmodel, std::string input) {
  auto rt = runtime::Runtime::create(isa::HwConfig{}, runtime::BackendKind::Func);
  auto in = readNpz(input);
  if (!rt || !in) return state.SkipWithError(!rt ? rt.message().c_str() : in.message().c_str());
  runtime::Runtime &r = *rt.value();
  if (Status st = r.loadBmodel(bmodel); !st) return state.SkipWithError(st.message().c_str());
  const std::string net = r.netNames().front();
  for (auto _ : state) {
    runtime::RunReport report;
    auto out = r.run(net, in.value(), {}, report);
    if (!out) return state.SkipWithError(out.message().c_str());
  }
}

} // namespace

// (channels, height = width): a ResNet-like middle layer and a small one.
BENCHMARK(BM_ConvInt8)->Args({64, 14})->Args({64, 28})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ConvFp32)->Args({64, 14})->Args({64, 28})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ArAddInt8)->Args({64, 56})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ArAddFp32)->Args({64, 56})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GdmaLoadFp32)->Args({64, 56})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GroupInOrder)->Unit(benchmark::kMicrosecond);

int main(int argc, char **argv) {
  const char *bmodel = std::getenv("TPU_BENCH_BMODEL"), *input = std::getenv("TPU_BENCH_INPUT");
  if (const char *threads = std::getenv("TPU_BENCH_THREADS")) tpu::setNumThreads(std::atoi(threads));
  if (bmodel && input)
    benchmark::RegisterBenchmark("BM_BmodelLaunch", BM_BmodelLaunch, bmodel, input)->Unit(benchmark::kMillisecond);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
