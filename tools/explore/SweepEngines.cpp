#include "tools/explore/SweepEngines.h"

#include "isa/bmodel/Bmodel.h"
#include "runtime/RunFiles.h"
#include "support/Npz.h"
#include "tools/explore/Cluster.h"
#include "tools/explore/Html.h"
#include "tools/explore/JobPool.h"
#include "tools/explore/SimStats.h"
#include "tools/explore/SweepReport.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <sys/file.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace tpu::explore {

namespace {

// Deterministic inputs: float32 in [-1, 1) from splitmix64 with a fixed seed.
NpyArray seededInput(const std::vector<int64_t> &shape, uint64_t seed) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(size_t(std::max<int64_t>(n, 0)));
  uint64_t s = seed;
  for (float &x : v) {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    x = float(double(z >> 11) / double(1ull << 53) * 2.0 - 1.0);
  }
  return NpyArray::from(shape, v);
}

void progressBar(const char *phase, size_t done, size_t total) {
  constexpr size_t width = 30;
  size_t filled = total ? done * width / total : width;
  std::cerr << '\r' << phase << " [" << std::string(filled, '#') << std::string(width - filled, '.') << "] " << done
            << '/' << total << (done == total ? "\n" : "") << std::flush;
}

// The simulated launch's own wall time, from the "wall time X ms" line tpuc sim prints.
double wallFromLog(const std::string &logPath) {
  auto text = readTextFile(logPath);
  if (!text) return -1;
  auto at = text->rfind("wall time ");
  if (at == std::string::npos) return -1;
  return std::atof(text->c_str() + at + 10) / 1e3;
}

// A name no other process on any node uses, for files renamed into the shared cache.
std::string uniqueSuffix() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return std::string(host) + "." + std::to_string(::getpid());
}

// The build's compile commands, writing into `tmp`; the bmodel is renamed
// into the cache only when the build succeeded, so a reader never sees half a file.
Job compileJob(const Plan &plan, const Build &b, const SweepModel &m, const std::string &tmp) {
  const std::string &tpuc = plan.tpuc;
  // "build": deploy names the net after its output file, as it always has here.
  std::string top = tmp + "/model.top.mlir", part = tmp + "/build.bmodel";
  std::vector<std::string> import{tpuc, "import", fs::absolute(m.onnx).string(), "-o", top};
  if (!m.inputShapes.empty()) import.insert(import.end(), {"--input-shapes", m.inputShapes});
  std::string script = commandLine(import);
  std::vector<std::string> deploy{tpuc, "deploy", top, "--quantize", b.compile.quantize, "-o", part};
  if (b.compile.quantize == "INT8") {
    std::string table = tmp + "/model.cali";
    script +=
        " && " + commandLine({tpuc, "calibrate", top, "--dataset", fs::absolute(m.calibration).string(), "-o", table});
    deploy.insert(deploy.end(), {"--calibration-table", table});
  }
  if (!b.compile.layerGroup) deploy.push_back("--no-layer-group");
  if (!b.compile.chip.empty()) deploy.insert(deploy.end(), {"--chip", b.compile.chip});
  script += " && " + commandLine(deploy) + " && mv " + shellQuote(part) + " " + shellQuote(b.bmodel);
  return {{"/bin/sh", "-c", script}, tmp + "/compile.log"};
}

// Compiles the builds of `needed` that are not in the cache. With `lock`
// (tasks on several nodes) one build at a time under a lock file in its
// directory, so the tasks that need it wait for one compile instead of each
// compiling it; without (the local pool) all at once.
Status compileBuilds(Plan &plan, const SweepSpec &spec, const std::set<size_t> &needed, unsigned workers, bool lock,
                     bool progress) {
  std::vector<size_t> missing;
  for (size_t i : needed)
    if (!fs::exists(plan.builds[i].bmodel)) missing.push_back(i);
  auto start = [&](size_t i) -> Result<Job> {
    Build &b = plan.builds[i];
    std::string tmp = b.dir + "/tmp." + uniqueSuffix();
    std::error_code ec;
    fs::create_directories(tmp, ec);
    if (ec) return makeError(tmp, ": cannot create: ", ec.message());
    return compileJob(plan, b, spec.models[b.model], tmp);
  };
  auto finish = [&](size_t i, const Job &job, const JobOutcome &outcome) {
    Build &b = plan.builds[i];
    std::string log = b.dir + "/compile.log";
    std::error_code ec;
    fs::rename(job.logPath, log, ec);
    fs::remove_all(fs::path(job.logPath).parent_path(), ec);
    if (outcome.exitCode != 0)
      b.error = "compiling " + spec.models[b.model].name + " (" + b.compile.key() + ") failed: " + lastLine(log) +
                " (log: " + log + ")";
    else
      b.compileSeconds = outcome.wallSeconds;
  };
  if (!lock) {
    std::vector<Job> jobs;
    for (size_t i : missing) {
      auto job = start(i);
      if (!job) return job.status();
      jobs.push_back(job.take());
    }
    if (jobs.empty()) return Status::ok();
    auto outcomes = runJobs(jobs, workers, [&](size_t d, size_t t) {
      if (progress) progressBar("compile ", d, t);
    });
    if (!outcomes) return outcomes.status();
    for (size_t k = 0; k < missing.size(); ++k) finish(missing[k], jobs[k], (*outcomes)[k]);
    return Status::ok();
  }
  for (size_t i : missing) {
    Build &b = plan.builds[i];
    std::error_code ec;
    fs::create_directories(b.dir, ec);
    std::string lockPath = b.dir + "/lock";
    int fd = ::open(lockPath.c_str(), O_RDWR | O_CREAT, 0644);
    if (fd < 0 || ::flock(fd, LOCK_EX) != 0) {
      if (fd >= 0) ::close(fd);
      return makeError(lockPath, ": cannot lock: ", std::strerror(errno));
    }
    Status st = Status::ok();
    if (!fs::exists(b.bmodel)) { // another task may have built it while we waited
      auto job = start(i);
      auto outcome = job ? runJobs({*job}, 1, nullptr) : Result<std::vector<JobOutcome>>(job.status());
      if (outcome)
        finish(i, *job, (*outcome)[0]);
      else
        st = outcome.status();
    }
    ::close(fd);
    TPU_RETURN_IF_ERROR(st);
  }
  return Status::ok();
}

// The net to run and its inputs: the model's own, or seeded random ones from
// the bmodel's first net (written once into the cache, atomically).
Status prepareInputs(Build &b, const SweepModel &m) {
  auto model = bmodel::readFile(b.bmodel, nullptr, bmodel::ChipScope::AnyKnown);
  if (!model) return model.status();
  // The points' configs start from the preset of the chip planned for the build.
  if (model->chip != b.chip)
    return makeError(b.bmodel, ": a ", model->chip, " bmodel, but the sweep planned its points on the ", b.chip,
                     "'s preset");
  if (model->nets.empty()) return makeError(b.bmodel, ": no nets");
  const bmodel::Net &net = model->nets[0];
  b.netName = net.name;
  if (!m.inputs.empty()) {
    b.inputs = fs::absolute(m.inputs).string();
    return Status::ok();
  }
  b.inputs = b.dir + "/inputs.npz";
  if (fs::exists(b.inputs)) return Status::ok();
  std::error_code ec;
  fs::create_directories(b.dir, ec);
  NpzMap in;
  uint64_t seed = 1684;
  for (const bmodel::Tensor &t : net.inputs)
    in[t.name] = seededInput(std::vector<int64_t>(t.shape.begin(), t.shape.end()), seed++);
  std::string tmp = b.inputs + ".tmp." + uniqueSuffix();
  TPU_RETURN_IF_ERROR(writeNpz(tmp, in));
  fs::rename(tmp, b.inputs, ec);
  if (ec) return makeError(b.inputs, ": cannot rename ", tmp, " into place: ", ec.message());
  return Status::ok();
}

} // namespace

Result<std::vector<SweepRow>> runPointsHere(Plan &plan, const SweepSpec &spec, const std::vector<size_t> &which,
                                            unsigned workers, bool lock, bool progress) {
  std::set<size_t> needed;
  for (size_t i : which) needed.insert(plan.buildOf[i]);
  TPU_RETURN_IF_ERROR(compileBuilds(plan, spec, needed, workers, lock, progress));
  for (size_t i : needed) {
    Build &b = plan.builds[i];
    if (!b.error.empty()) continue;
    if (auto st = prepareInputs(b, spec.models[b.model]); !st) b.error = st.message();
  }
  std::vector<Job> jobs;
  std::vector<size_t> simulated;
  for (size_t i : which) {
    const Build &b = plan.builds[plan.buildOf[i]];
    if (!b.error.empty()) continue;
    std::string stem = plan.stem(i);
    TPU_RETURN_IF_ERROR(runtime::writeFileAtomically(stem + ".config.json", plan.configs[i].toJson()));
    jobs.push_back({{plan.tpuc, "sim", b.bmodel, "--net", b.netName, "--input", b.inputs, "-o", stem + ".out.npz",
                     "--config", stem + ".config.json", "--stats", stem + ".stats.json"},
                    stem + ".log"});
    simulated.push_back(i);
  }
  auto ran = runJobs(jobs, workers, [&](size_t d, size_t t) {
    if (progress) progressBar("simulate", d, t);
  });
  if (!ran) return ran.status();
  std::map<size_t, JobOutcome> outcomeOf;
  for (size_t k = 0; k < simulated.size(); ++k) outcomeOf[simulated[k]] = (*ran)[k];

  std::vector<SweepRow> rows;
  for (size_t i : which) {
    const Build &b = plan.builds[plan.buildOf[i]];
    SweepRow row = blankRow(plan, spec, i);
    row.compileSeconds = b.compileSeconds;
    std::string log = plan.stem(i) + ".log";
    if (!b.error.empty())
      row.error = b.error;
    else if (outcomeOf[i].exitCode != 0)
      row.error = "tpuc sim failed: " + lastLine(log) + " (log: " + log + ")";
    else if (auto f = readSimStatsFile(plan.stem(i) + ".stats.json"); !f)
      row.error = f.message();
    else {
      row.latencyUs = f->timeUs;
      row.totalCycles = f->totalCycles;
      row.tiuUtilization = f->engines[0].utilization;
      row.gdmaUtilization = f->engines[1].utilization;
      row.ddrBytes = uint64_t(f->ddrBytes);
      row.lmemPeakBytes = f->lmemPeakBytes();
      double wall = wallFromLog(log);
      row.simWallSeconds = wall >= 0 ? wall : outcomeOf[i].wallSeconds;
    }
    TPU_RETURN_IF_ERROR(runtime::writeFileAtomically(plan.rowPath(i), rowJson(row, plan.hwKeys).dump() + "\n"));
    rows.push_back(std::move(row));
  }
  return rows;
}

void noteCompiles(const Plan &plan, const SweepSpec &spec, SweepResult &result) {
  for (const Build &b : plan.builds)
    if (b.compileSeconds > 0)
      result.notes.push_back("compiled " + spec.models[b.model].name + " (" + b.compile.key() + ") in " +
                             fixed(b.compileSeconds, 2) + " s into " + b.dir);
}

} // namespace tpu::explore
