#include "runtime/ChipRunners.h"

#include "isa/chips/Registry.h"
#include "runtime/bm1684x/FuncRun.h"
#if TPU_HAVE_SIM_BACKEND
#include "runtime/SimBackend.h"
#include "runtime/bm1684x/SimRun.h"
#endif

#include <chrono>

namespace tpu::runtime {

namespace {

struct ChipRunner {
  isa::Chip chip;
  Result<NpzMap> (*func)(const bmodel::Model &model, const std::string &net, const NpzMap &inputs);
#if TPU_HAVE_SIM_BACKEND
  Result<bm1684x::TimedRun> (*sim)(const bmodel::Model &model, const std::string &net, const NpzMap &inputs,
                                   const isa::HwConfig &hw, const sysc::SimOptions &options);
#endif
};
constexpr ChipRunner kChipRunners[] = {{isa::Chip::BM1684X, bm1684x::runFunc
#if TPU_HAVE_SIM_BACKEND
                                        ,
                                        bm1684x::runSim
#endif
}};

const ChipRunner *runnerOf(const std::string &bmodelChip) {
  const isa::ChipInfo *info = isa::chipByBmodelName(bmodelChip);
  for (const ChipRunner &c : kChipRunners)
    if (info && info->chip == c.chip) return &c;
  return nullptr;
}

} // namespace

bool runsOutsideRuntime(const std::string &bmodelChip) { return runnerOf(bmodelChip) != nullptr; }

Status runnerTakesBackend(const std::string &bmodelChip, BackendKind backend) {
  if (!runnerOf(bmodelChip)) return makeError("a ", bmodelChip, " bmodel runs on Runtime");
  if (backend == BackendKind::Device)
    return makeError("a ", bmodelChip, " bmodel runs on the func or sim backend (no device yet)");
  return Status::ok();
}

Result<isa::HwConfig> chipConfig(const bmodel::Model &model, const std::string &configJson, const std::string &origin) {
  const ChipRunner *runner = runnerOf(model.chip);
  if (!runner) return makeError("a ", model.chip, " bmodel runs on Runtime");
  isa::HwConfig cfg = isa::chipInfo(runner->chip).hwConfig();
  if (configJson.empty()) return cfg;
  return isa::HwConfig::fromJson(configJson, origin, cfg);
}

Result<NpzMap> runOutsideRuntime(const bmodel::Model &model, const std::string &netName, const NpzMap &inputs,
                                 BackendKind backend, const isa::HwConfig &hw, bool recordTrace, RunReport &report) {
  const ChipRunner *runner = runnerOf(model.chip);
  TPU_RETURN_IF_ERROR(runnerTakesBackend(model.chip, backend));
  auto started = std::chrono::steady_clock::now();
  report.backend = backend;
  Result<NpzMap> outputs = makeError("no run");
  if (backend == BackendKind::Func) {
    outputs = runner->func(model, netName, inputs);
  } else {
#if TPU_HAVE_SIM_BACKEND
    sysc::SimOptions options;
    options.recordTrace = recordTrace;
    auto run = runner->sim(model, netName, inputs, hw, options);
    if (!run) return run.status();
    fillTimedReport(run->report, recordTrace, report);
    outputs = std::move(run->outputs);
#else
    (void)hw, (void)recordTrace;
    return makeError("the sim backend: this build has no SystemC model");
#endif
  }
  if (!outputs) return outputs.status();
  report.wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  for (const bmodel::Net &net : model.nets)
    if (netName.empty() || net.name == netName)
      for (const bmodel::CmdGroup &g : net.groups) {
        ++report.groups;
        report.tiuCommands += g.tiuStreamCount;
        report.gdmaCommands += g.gdmaStreamCount;
      }
  return outputs;
}

} // namespace tpu::runtime
