#include "runtime/RunFiles.h"

#include "isa/bmodel/Bmodel.h"
#include "runtime/ChipRunners.h"
#include "runtime/Runtime.h"
#include "support/ReadFile.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <unistd.h>
#include <vector>

namespace tpu::runtime {

namespace {

std::string tempNameFor(const std::string &path) {
  return path + ".tmp" + std::to_string(::getpid());
}

// Writes to a temporary file; the caller renames or removes it.
Status writeTemp(const std::string &tmp, const std::string &path, const std::string &bytes) {
  std::ofstream os(tmp, std::ios::binary | std::ios::trunc);
  if (!os) return makeError(path, ": cannot open for writing");
  os.write(bytes.data(), std::streamsize(bytes.size()));
  os.close();
  if (!os) {
    std::remove(tmp.c_str());
    return makeError(path, ": write failed");
  }
  return Status::ok();
}

// Temporary files not yet renamed; removed on destruction.
struct PendingFiles {
  std::vector<std::pair<std::string, std::string>> files; // tmp, final
  ~PendingFiles() {
    for (auto &[tmp, path] : files) std::remove(tmp.c_str());
  }
  Status commit() {
    for (auto &[tmp, path] : files)
      if (std::rename(tmp.c_str(), path.c_str()) != 0)
        return makeError(path, ": cannot rename ", tmp, " into place");
    files.clear();
    return Status::ok();
  }
};

// Runs the bmodel of `rq` outside Runtime (its chip's runner): the outputs, and the report.
Result<NpzMap> runWithChipRunner(const bmodel::Model &model, const RunFilesRequest &rq, RunReport &report) {
  std::string configJson;
  if (!rq.configPath.empty()) {
    auto text = readFile(rq.configPath, "hardware config");
    if (!text) return text.status();
    configJson = *text;
  }
  auto cfg = chipConfig(model, configJson, rq.configPath);
  if (!cfg) return cfg.status();
  auto inputs = readNpz(rq.inputPath);
  if (!inputs) return inputs.status();
  // Per-command events feed the trace, the per-layer stats and the layer lines printed after a timed run.
  auto outputs =
      runOutsideRuntime(model, rq.netName, *inputs, rq.backend, *cfg, rq.backend == BackendKind::Sim, report);
  if (!outputs) return Status(outputs.status()).prefix(rq.bmodelPath);
  return outputs;
}

Status writeOutputs(PendingFiles &pending, const std::string &path, const NpzMap &outputs) {
  std::string tmp = tempNameFor(path);
  pending.files.push_back({tmp, path});
  Status st = writeNpz(tmp, outputs);
  if (st) return st;
  // Name the file the user asked for, not the temporary one.
  std::string msg = st.message();
  for (size_t at; (at = msg.find(tmp)) != std::string::npos;) msg.replace(at, tmp.size(), path);
  return Status::error(msg);
}

// Runs a BM1684 bmodel of `rq` on a Runtime: the outputs, and the report.
Result<NpzMap> runOnRuntime(const RunFilesRequest &rq, RunReport &report) {
  const bool timed = rq.backend == BackendKind::Sim;
  isa::HwConfig cfg;
  if (!rq.configPath.empty()) {
    auto loaded = isa::HwConfig::load(rq.configPath);
    if (!loaded) return loaded.status();
    cfg = loaded.take();
  }
  auto rt = Runtime::create(cfg, rq.backend);
  if (!rt) return rt.status();
  TPU_RETURN_IF_ERROR((*rt)->loadBmodel(rq.bmodelPath));

  std::string netName = rq.netName;
  if (netName.empty()) {
    auto names = (*rt)->netNames();
    if (names.size() != 1) {
      std::string list;
      for (const auto &n : names) list += (list.empty() ? "'" : ", '") + n + "'";
      return makeError(rq.bmodelPath, ": holds ", names.size(), " nets (", list,
                       "): choose one with --net");
    }
    netName = names[0];
  }
  auto inputs = readNpz(rq.inputPath);
  if (!inputs) return inputs.status();

  RunOptions opts;
  // Per-command events feed the trace, the per-layer stats and the layer
  // lines printed after a timed run.
  opts.recordTrace = timed;
  auto outputs = (*rt)->run(netName, *inputs, opts, report);
  if (!outputs) return Status(outputs.status()).prefix(rq.bmodelPath);
  return outputs;
}

} // namespace

Status writeFileAtomically(const std::string &path, const std::string &bytes) {
  PendingFiles pending;
  std::string tmp = tempNameFor(path);
  TPU_RETURN_IF_ERROR(writeTemp(tmp, path, bytes));
  pending.files.push_back({tmp, path});
  return pending.commit();
}

Result<RunReport> runBmodelFiles(const RunFilesRequest &rq) {
  const bool timed = rq.backend == BackendKind::Sim;
  if (!timed && !rq.tracePath.empty()) return makeError("--trace needs the timed backend (--backend sim)");
  if (!timed && !rq.statsPath.empty()) return makeError("--stats needs the timed backend (--backend sim)");

  auto chip = bmodel::readChip(rq.bmodelPath);
  if (!chip) return chip.status();
  RunReport report;
  Result<NpzMap> outputs = makeError("no run");
  if (runsOutsideRuntime(*chip)) {
    auto model = bmodel::readFile(rq.bmodelPath, nullptr, bmodel::ChipScope::AnyKnown);
    if (!model) return model.status();
    outputs = runWithChipRunner(*model, rq, report);
    if (!outputs) return outputs.status();
  } else {
    auto run = runOnRuntime(rq, report);
    if (!run) return run.status();
    outputs = run.take();
  }

  // Everything is computed: write each file beside its final name, then
  // rename them all.
  PendingFiles pending;
  TPU_RETURN_IF_ERROR(writeOutputs(pending, rq.outputPath, *outputs));
  auto addText = [&](const std::string &path, const std::string &text) -> Status {
    if (path.empty()) return Status::ok();
    std::string tmp = tempNameFor(path);
    TPU_RETURN_IF_ERROR(writeTemp(tmp, path, text));
    pending.files.push_back({tmp, path});
    return Status::ok();
  };
  TPU_RETURN_IF_ERROR(addText(rq.tracePath, report.traceJson));
  TPU_RETURN_IF_ERROR(addText(rq.statsPath, report.statsJson));
  TPU_RETURN_IF_ERROR(pending.commit());
  return report;
}

std::string formatRunReport(const RunReport &r) {
  std::ostringstream os;
  os << "backend " << backendKindName(r.backend) << ": " << r.groups << " group(s), "
     << r.tiuCommands << " TIU + " << r.gdmaCommands << " GDMA commands, wall time "
     << std::fixed << std::setprecision(3) << r.wallSeconds * 1e3 << " ms\n";
  if (r.cpuSubnets)
    os << "host: " << r.cpuSubnets << " CPU sub-net(s), " << r.hostSeconds * 1e3 << " ms measured on this machine"
       << (r.timed ? ", apart from the simulated TPU time" : "") << "\n";
  if (r.timed) {
    os << "simulated: " << std::setprecision(0) << r.totalCycles << " cycles = "
       << std::setprecision(3) << r.timeUs() << " us at " << std::setprecision(0) << r.clockMhz
       << " MHz\n";
    os << "utilization: TIU " << std::setprecision(1) << r.tiuUtilization * 100 << " %, GDMA "
       << r.gdmaUtilization * 100 << " %\n";
    // The layers that kept the engines busiest, at most ten.
    std::vector<LayerTime> top = r.layers;
    std::stable_sort(top.begin(), top.end(), [](const LayerTime &a, const LayerTime &b) {
      return a.tiuBusyCycles + a.gdmaBusyCycles > b.tiuBusyCycles + b.gdmaBusyCycles;
    });
    if (top.size() > 10) top.resize(10);
    for (const LayerTime &l : top)
      os << "layer " << l.name << ": TIU " << std::setprecision(0) << l.tiuBusyCycles
         << " cycles, GDMA " << l.gdmaBusyCycles << " cycles, span " << l.spanCycles
         << " cycles\n";
  }
  return os.str();
}

} // namespace tpu::runtime
