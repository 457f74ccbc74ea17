#include "runtime/SimBackend.h"

#include "simulator/systemc/SimBuilder.h"
#include "simulator/systemc/Simulator.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>

namespace tpu::runtime {

namespace {

const std::string &layerOf(const std::vector<std::string> &layers, size_t i) {
  static const std::string none;
  return i < layers.size() ? layers[i] : none;
}

// Appends the run of groups `range` to `total`: its cycles start where
// total's end, its groups follow total's (the net's groups in order), its
// layers merge with total's by name.
void appendRun(sysc::SimReport &total, sysc::SimReport run, GroupRange range) {
  const double offset = total.totalCycles;
  total.totalCycles += run.totalCycles;
  for (unsigned e = 0; e < sysc::kEngineCount; ++e) {
    sysc::EngineStats &t = total.engines[e];
    const sysc::EngineStats &r = run.engines[e];
    t.commands += r.commands;
    t.busyCycles += r.busyCycles;
    t.waitingCycles += r.waitingCycles;
    t.idleCycles += r.idleCycles;
    t.utilization = total.totalCycles > 0 ? t.busyCycles / total.totalCycles : 0;
  }
  total.ddrBytes += run.ddrBytes;
  total.payloadBytes += run.payloadBytes;
  total.lmemPeakBytes = std::max(total.lmemPeakBytes, run.lmemPeakBytes);
  total.wakeups += run.wakeups;
  for (size_t g = range.first; g < range.first + range.count; ++g) {
    sysc::GroupStats gs = run.groups[g];
    gs.startCycle += offset;
    gs.endCycle += offset;
    total.groups.push_back(gs);
  }
  // The run's layer table indexes its events; map it onto total's.
  std::vector<int32_t> layerIndex;
  for (const std::string &name : run.layerNames) {
    auto at = std::find(total.layerNames.begin(), total.layerNames.end(), name);
    layerIndex.push_back(int32_t(at - total.layerNames.begin()));
    if (at == total.layerNames.end()) total.layerNames.push_back(name);
  }
  for (const sysc::LayerStats &l : run.layers) {
    auto at = std::find_if(total.layers.begin(), total.layers.end(),
                           [&](const sysc::LayerStats &t) { return t.name == l.name; });
    if (at == total.layers.end()) {
      total.layers.push_back(l);
      total.layers.back().firstStart += offset;
      total.layers.back().lastEnd += offset;
      continue;
    }
    at->lastEnd = std::max(at->lastEnd, l.lastEnd + offset);
    for (unsigned e = 0; e < sysc::kEngineCount; ++e) {
      at->commands[e] += l.commands[e];
      at->busyCycles[e] += l.busyCycles[e];
    }
  }
  for (sysc::TraceEvent &ev : run.events) {
    if (ev.layer >= 0) ev.layer = layerIndex[size_t(ev.layer)];
    ev.readyCycle += offset;
    ev.startCycle += offset;
    ev.endCycle += offset;
    total.events.push_back(std::move(ev));
  }
  const uint64_t bytesBefore = total.ddrSamples.empty() ? 0 : total.ddrSamples.back().bytesDone;
  for (sysc::DdrSample s : run.ddrSamples) {
    s.cycle += offset;
    s.bytesDone += bytesBefore;
    total.ddrSamples.push_back(s);
  }
}

// The stats JSON with the host time of the CPU sub-nets beside the TPU time
// (time_us stays the simulated TPU time): "tpu_us", "host_us", "cpu_subnets"
// after "time_us" (docs/runtime.md).
std::string statsWithHostTime(const std::string &stats, double tpuUs, const RunReport &report) {
  using Json = nlohmann::ordered_json;
  Json in = Json::parse(stats), out;
  for (auto it = in.begin(); it != in.end(); ++it) {
    out[it.key()] = std::move(*it);
    if (it.key() != "time_us") continue;
    out["tpu_us"] = tpuUs;
    out["host_us"] = report.hostSeconds * 1e6;
    out["cpu_subnets"] = report.cpuSubnets;
  }
  return out.dump(2) + "\n";
}

class SimLaunch final : public Launch {
public:
  SimLaunch(SimDevice &device, const LoadedNet &net, const RunOptions &opts)
      : device_(device), net_(net), opts_(opts), start_(std::chrono::steady_clock::now()) {
    total_.clockMhz = device.config().clockMhz;
  }

  Status execute(GroupRange range) override {
    // The groups before the range stay empty in the program, so that errors,
    // trace events and group stats carry the net's group indices; an empty
    // group takes no time.
    sysc::ProgramBuilder builder(device_.config());
    for (size_t g = 0; g < range.first + range.count; ++g) {
      builder.beginGroup();
      if (g < range.first) continue;
      const LoadedGroup &group = net_.groups[g];
      const bmodel::CmdGroup &raw = net_.desc.groups[g];
      for (size_t i = 0; i < group.tiu.size(); ++i) builder.addTiu(group.tiu[i], layerOf(raw.tiuLayer, i));
      for (size_t i = 0; i < group.gdma.size(); ++i) builder.addGdma(group.gdma[i], layerOf(raw.gdmaLayer, i));
    }
    sysc::SimOptions simOpts;
    simOpts.recordTrace = opts_.recordTrace;
    // The limits hold for the whole launch: each run gets what the earlier
    // runs (and the host steps, for wall-clock time) left of them.
    if (opts_.maxCycles > 0) {
      simOpts.maxCycles = opts_.maxCycles - total_.totalCycles;
      if (simOpts.maxCycles <= 0)
        return makeError("simulated-cycle limit of ", opts_.maxCycles, " cycles reached before group ", range.first);
    }
    if (opts_.wallClockSeconds > 0) {
      std::chrono::duration<double> spent = std::chrono::steady_clock::now() - start_;
      simOpts.wallClockSeconds = opts_.wallClockSeconds - spent.count();
      if (simOpts.wallClockSeconds <= 0)
        return makeError("wall-clock limit of ", opts_.wallClockSeconds, " s exceeded before group ", range.first);
    }
    auto sim = sysc::simulate(device_.config(), device_.lmem(), device_.gmem(), builder.take(), simOpts);
    if (!sim) return sim.status();
    appendRun(total_, sim.take(), range);
    return Status::ok();
  }

  void finish(RunReport &report) override {
    fillTimedReport(total_, opts_.recordTrace, report);
    if (report.cpuSubnets) report.statsJson = statsWithHostTime(report.statsJson, total_.timeUs(), report);
  }

private:
  SimDevice &device_;
  const LoadedNet &net_;
  const RunOptions opts_;
  const std::chrono::steady_clock::time_point start_;
  sysc::SimReport total_; // the runs so far, one after the other
};

class SimBackend final : public Backend {
public:
  BackendKind kind() const override { return BackendKind::Sim; }
  Result<std::unique_ptr<Launch>> begin(SimDevice &device, const LoadedNet &net, const RunOptions &opts) override {
    return std::unique_ptr<Launch>(std::make_unique<SimLaunch>(device, net, opts));
  }
};

} // namespace

void fillTimedReport(const sysc::SimReport &sim, bool withTrace, RunReport &report) {
  report.timed = true;
  report.clockMhz = sim.clockMhz;
  report.totalCycles = sim.totalCycles;
  report.tiuUtilization = sim.tiu().utilization;
  report.gdmaUtilization = sim.gdma().utilization;
  for (const auto &l : sim.layers)
    report.layers.push_back({l.name, l.busyCycles[size_t(sysc::Engine::Tiu)], l.busyCycles[size_t(sysc::Engine::Gdma)],
                             l.lastEnd - l.firstStart});
  report.statsJson = sim.statsJson();
  if (withTrace) report.traceJson = sim.chromeTraceJson();
}

std::unique_ptr<Backend> makeSimBackend() { return std::make_unique<SimBackend>(); }

} // namespace tpu::runtime
