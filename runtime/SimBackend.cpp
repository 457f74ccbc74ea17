#include "runtime/SimBackend.h"

#include "simulator/systemc/SimBuilder.h"
#include "simulator/systemc/Simulator.h"

namespace tpu::runtime {

namespace {

const std::string &layerOf(const std::vector<std::string> &layers, size_t i) {
  static const std::string none;
  return i < layers.size() ? layers[i] : none;
}

class SimBackend final : public Backend {
public:
  BackendKind kind() const override { return BackendKind::Sim; }

  Status execute(SimDevice &device, const LoadedNet &net, const RunOptions &opts,
                 RunReport &report) override {
    sysc::ProgramBuilder builder(device.config());
    for (size_t g = 0; g < net.groups.size(); ++g) {
      const LoadedGroup &group = net.groups[g];
      const bmodel::CmdGroup &raw = net.desc.groups[g];
      builder.beginGroup();
      for (size_t i = 0; i < group.tiu.size(); ++i)
        builder.addTiu(group.tiu[i], layerOf(raw.tiuLayer, i));
      for (size_t i = 0; i < group.gdma.size(); ++i)
        builder.addGdma(group.gdma[i], layerOf(raw.gdmaLayer, i));
    }
    sysc::SimOptions simOpts;
    simOpts.recordTrace = opts.recordTrace;
    simOpts.maxCycles = opts.maxCycles;
    simOpts.wallClockSeconds = opts.wallClockSeconds;
    auto sim = sysc::simulate(device.config(), device.lmem(), device.gmem(), builder.take(), simOpts);
    if (!sim) return sim.status();
    report.timed = true;
    report.clockMhz = sim->clockMhz;
    report.totalCycles = sim->totalCycles;
    report.tiuUtilization = sim->tiu().utilization;
    report.gdmaUtilization = sim->gdma().utilization;
    for (const auto &l : sim->layers)
      report.layers.push_back({l.name, l.busyCycles[size_t(sysc::Engine::Tiu)],
                               l.busyCycles[size_t(sysc::Engine::Gdma)], l.lastEnd - l.firstStart});
    report.statsJson = sim->statsJson();
    if (opts.recordTrace) report.traceJson = sim->chromeTraceJson();
    return Status::ok();
  }
};

} // namespace

std::unique_ptr<Backend> makeSimBackend() { return std::make_unique<SimBackend>(); }

} // namespace tpu::runtime
