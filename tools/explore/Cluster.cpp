#include "tools/explore/Cluster.h"

#include "runtime/RunFiles.h"
#include "tools/explore/Html.h"
#include "tools/explore/JobPool.h"
#include "tools/explore/Sweep.h"

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <unistd.h>

namespace fs = std::filesystem;

namespace tpu::explore {

std::vector<std::string> SweepTasks::commandBeforePoints() const {
  return {tpuc, "sweep", sweepFile, "--out-dir", outDir, "--points"};
}

std::vector<std::string> SweepTasks::command(size_t task) const {
  std::vector<std::string> argv = commandBeforePoints();
  argv.insert(argv.end(), {pointLists[task], "--quiet"});
  return argv;
}

std::string SweepTasks::shellLine(size_t task) const {
  return commandLine(command(task)) + " > " + shellQuote(outDir + "/tasks/points_" + pointLists[task] + ".log") +
         " 2>&1";
}

std::vector<std::string> chunkPointLists(const std::vector<size_t> &points, size_t size) {
  if (size == 0) size = 1;
  std::vector<std::string> lists;
  for (size_t at = 0; at < points.size(); at += size)
    lists.push_back(formatPointList(
        std::vector<size_t>(points.begin() + long(at), points.begin() + long(std::min(points.size(), at + size)))));
  return lists;
}

std::string slurmArrayScript(const SweepTasks &tasks, unsigned maxRunning, const std::string &partition) {
  std::ostringstream s;
  s << "#!/bin/sh\n"
    << "# tpuc sweep --engine slurm: array task I runs the points of case I.\n"
    << "#SBATCH --job-name=tpuc-sweep\n"
    << "#SBATCH --array=0-" << tasks.pointLists.size() - 1;
  if (maxRunning) s << '%' << maxRunning;
  s << "\n#SBATCH --output=" << tasks.outDir << "/slurm/task_%A_%a.log\n"
    << "#SBATCH --cpus-per-task=1\n";
  if (!partition.empty()) s << "#SBATCH --partition=" << partition << "\n";
  s << "case \"$SLURM_ARRAY_TASK_ID\" in\n";
  for (size_t i = 0; i < tasks.pointLists.size(); ++i) s << i << ") points=" << tasks.pointLists[i] << " ;;\n";
  s << "*) echo \"no points for array task $SLURM_ARRAY_TASK_ID\" >&2; exit 2 ;;\n"
    << "esac\n";
  s << "exec " << commandLine(tasks.commandBeforePoints()) << " \"$points\" --quiet\n";
  return s.str();
}

Result<std::string> sbatchJobId(const std::string &output) {
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    std::string id = line.substr(0, line.find(';'));
    if (!id.empty() && id.find_first_not_of("0123456789") == std::string::npos) return id;
  }
  return makeError("sbatch printed no job id: ", output.empty() ? "(nothing)" : lastLineOf(output));
}

Result<std::string> findProgram(const std::string &name, const std::string &package) {
  const char *path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return makeError("'", name, "' is not on PATH (Debian package ", package, ")");
}

namespace {

Status makeDir(const std::string &dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return makeError(dir, ": cannot create: ", ec.message());
  return Status::ok();
}

// Runs one command with its output in `log`; returns its exit code.
Result<int> runLogged(const std::vector<std::string> &argv, const std::string &log) {
  auto outcome = runJobs({{argv, log}}, 1, nullptr);
  if (!outcome) return outcome.status();
  return (*outcome)[0].exitCode;
}

} // namespace

Result<std::vector<std::string>> runParallel(const SweepTasks &tasks, const ParallelOptions &options) {
  auto parallel = findProgram("parallel", "parallel");
  if (!parallel) return makeError("--engine parallel: ", parallel.message());
  const std::string dir = tasks.outDir + "/parallel";
  TPU_RETURN_IF_ERROR(makeDir(dir));
  TPU_RETURN_IF_ERROR(makeDir(tasks.outDir + "/tasks"));
  std::string lines;
  for (size_t i = 0; i < tasks.pointLists.size(); ++i) lines += tasks.shellLine(i) + "\n";
  TPU_RETURN_IF_ERROR(runtime::writeFileAtomically(dir + "/jobs.txt", lines));
  std::vector<std::string> argv{*parallel, "--will-cite", "--joblog", dir + "/joblog"};
  argv.insert(argv.end(), {"--jobs", options.jobsPerHost ? std::to_string(options.jobsPerHost) : "100%"});
  if (!options.sshLogin.empty()) argv.insert(argv.end(), {"--sshlogin", options.sshLogin});
  if (!options.sshLoginFile.empty()) argv.insert(argv.end(), {"--sshloginfile", options.sshLoginFile});
  argv.insert(argv.end(), {"--arg-file", dir + "/jobs.txt"});
  auto rc = runLogged(argv, dir + "/parallel.log");
  if (!rc) return rc.status();
  // 1-101: that many tasks failed (their rows say why); above: Parallel itself failed.
  if (*rc > 101)
    return makeError("GNU Parallel failed (exit ", *rc, "): ", lastLine(dir + "/parallel.log"), " (log: ", dir,
                     "/parallel.log)");
  return std::vector<std::string>{"GNU Parallel ran " + std::to_string(tasks.pointLists.size()) + " tasks (" +
                                  commandLine(argv) + "); joblog " + dir + "/joblog"};
}

Result<std::vector<std::string>> submitSlurm(const SweepTasks &tasks, const SlurmOptions &options) {
  // sbatch splits #SBATCH lines at white space.
  if (tasks.outDir.find_first_of(" \t\n") != std::string::npos)
    return makeError("--engine slurm: the out-dir '", tasks.outDir, "' holds white space, which #SBATCH lines cannot");
  auto sbatch = findProgram("sbatch", "slurm-client");
  if (!sbatch) return makeError("--engine slurm: ", sbatch.message());
  const std::string dir = tasks.outDir + "/slurm";
  TPU_RETURN_IF_ERROR(makeDir(dir));
  const std::string script = dir + "/array.sh";
  TPU_RETURN_IF_ERROR(runtime::writeFileAtomically(script, slurmArrayScript(tasks, options.maxRunning, options.partition)));

  std::vector<std::string> argv{*sbatch, "--parsable"};
  if (options.wait) argv.push_back("--wait");
  argv.push_back(script);
  const std::string log = dir + "/sbatch_array.log";
  auto rc = runLogged(argv, log);
  if (!rc) return rc.status();
  auto text = readTextFile(log);
  auto id = sbatchJobId(text ? *text : "");
  // With --wait the exit code is the highest of the tasks': a failed point's
  // task exits non-zero, and its row says why.
  if (!id) return makeError("sbatch ", script, " failed (exit ", *rc, "): ", id.message());
  size_t n = tasks.pointLists.size();
  std::vector<std::string> notes{"Slurm array job " + *id + ": " + std::to_string(n) + (n == 1 ? " task" : " tasks") +
                                 ", logs " + dir + "/task_" + *id + "_<task>.log"};
  if (options.wait) return notes;

  std::vector<std::string> collect{tasks.tpuc, "sweep", tasks.sweepFile, "--out-dir", tasks.outDir, "--collect",
                                   "--quiet"};
  std::vector<std::string> collectArgv{*sbatch, "--parsable", "--job-name=tpuc-sweep-collect",
                                       "--dependency=afterany:" + *id,
                                       "--output=" + dir + "/collect_%j.log"};
  if (!options.partition.empty()) collectArgv.push_back("--partition=" + options.partition);
  collectArgv.insert(collectArgv.end(), {"--wrap", commandLine(collect)});
  const std::string collectLog = dir + "/sbatch_collect.log";
  auto crc = runLogged(collectArgv, collectLog);
  if (!crc) return crc.status();
  auto ctext = readTextFile(collectLog);
  auto cid = sbatchJobId(ctext ? *ctext : "");
  if (!cid) return makeError("sbatch of the collect job failed (exit ", *crc, "): ", cid.message());
  notes.push_back("Slurm collect job " + *cid + " (after " + *id + "): writes " + tasks.outDir +
                  "/sweep.csv, log " + dir + "/collect_" + *cid + ".log");
  return notes;
}

} // namespace tpu::explore
