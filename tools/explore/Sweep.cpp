#include "tools/explore/Sweep.h"

#include "runtime/RunFiles.h"
#include "tools/explore/Cluster.h"
#include "tools/explore/SweepEngines.h"
#include "tools/explore/SweepPlan.h"
#include "tools/explore/SweepReport.h"

#include <algorithm>
#include <filesystem>
#include <thread>

namespace fs = std::filesystem;

namespace tpu::explore {

Result<SweepEngine> parseEngine(const std::string &name) {
  if (name == "local") return SweepEngine::Local;
  if (name == "parallel") return SweepEngine::Parallel;
  if (name == "slurm") return SweepEngine::Slurm;
  return makeError("unknown engine '", name, "' (known: local, parallel, slurm)");
}

Result<SweepResult> runSweep(const SweepSpec &spec, const SweepOptions &options) {
  auto planned = planSweep(spec, options);
  if (!planned) return planned.status();
  Plan &plan = *planned;
  SweepResult result;
  unsigned hardwareThreads = std::max(1u, std::thread::hardware_concurrency());

  // A task: its points here, their row files, no merge.
  if (!options.points.empty()) {
    auto rows = runPointsHere(plan, spec, options.points, options.jobs ? options.jobs : 1, true, options.progress);
    if (!rows) return rows.status();
    noteCompiles(plan, spec, result);
    result.rows = rows.take();
    for (size_t i : options.points) result.files.push_back(plan.rowPath(i));
    countFailures(result);
    return result;
  }
  if (options.collect) return collectRows(plan, spec, std::move(result));

  std::vector<size_t> pending;
  for (size_t i = 0; i < plan.points.size(); ++i) {
    if (options.resume) {
      auto row = readRow(plan, spec, i);
      if (row && row->error.empty()) continue;
    }
    pending.push_back(i);
  }
  if (options.resume)
    result.notes.push_back("resume: " + std::to_string(pending.size()) + " of " + std::to_string(plan.points.size()) +
                           " points to run" + (pending.empty() ? "" : " (" + formatPointList(pending) + ")"));
  if (pending.empty()) return collectRows(plan, spec, std::move(result));

  size_t chunk = options.chunk;
  if (chunk == 0) chunk = options.engine == SweepEngine::Slurm ? (pending.size() + 999) / 1000 : 1;
  SweepTasks tasks{plan.tpuc, fs::absolute(options.sweepFile).lexically_normal().string(), plan.out,
                   chunkPointLists(pending, chunk)};
  if (!options.jobsFile.empty()) {
    std::error_code ec;
    fs::create_directories(plan.out + "/tasks", ec);
    std::string lines;
    for (size_t k = 0; k < tasks.pointLists.size(); ++k) lines += tasks.shellLine(k) + "\n";
    TPU_RETURN_IF_ERROR(runtime::writeFileAtomically(options.jobsFile, lines));
    result.files.push_back(options.jobsFile);
    return result;
  }
  switch (options.engine) {
  case SweepEngine::Local: {
    auto rows = runPointsHere(plan, spec, pending, options.jobs ? options.jobs : hardwareThreads, false,
                              options.progress);
    if (!rows) return rows.status();
    noteCompiles(plan, spec, result);
    break;
  }
  case SweepEngine::Parallel: {
    auto notes = runParallel(tasks, {options.jobs, options.sshLogin, options.sshLoginFile});
    if (!notes) return notes.status();
    result.notes.insert(result.notes.end(), notes->begin(), notes->end());
    break;
  }
  case SweepEngine::Slurm: {
    auto notes = submitSlurm(tasks, {options.jobs, options.partition, options.wait});
    if (!notes) return notes.status();
    result.notes.insert(result.notes.end(), notes->begin(), notes->end());
    if (!options.wait) return result; // the collect job merges the rows
    break;
  }
  }
  return collectRows(plan, spec, std::move(result));
}

} // namespace tpu::explore
