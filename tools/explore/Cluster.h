// Running a sweep's points on other machines: the task command lines, GNU
// Parallel and a Slurm job array. A task is `tpuc sweep SWEEP --out-dir OUT
// --points LIST --quiet`: it compiles what its points need into the shared
// cache and writes one row file per point, so the machines share nothing but
// the out-dir (a file system every node sees, at the same path).
#pragma once

#include "support/Status.h"

#include <string>
#include <vector>

namespace tpu::explore {

struct SweepTasks {
  std::string tpuc, sweepFile, outDir;      // absolute paths, the same on every node
  std::vector<std::string> pointLists;      // one "0-3,7" per task
  std::vector<std::string> commandBeforePoints() const; // ... --points
  std::vector<std::string> command(size_t task) const;
  std::string shellLine(size_t task) const; // command > OUT/tasks/points_<list>.log 2>&1
};

// Groups points into tasks of `size` points (0 = 1) in the given order.
std::vector<std::string> chunkPointLists(const std::vector<size_t> &points, size_t size);

// The job-array script: task I runs the points of pointLists[I] (held in
// the script, which sbatch copies at submission); at most `maxRunning` tasks
// at once (0 = no limit).
std::string slurmArrayScript(const SweepTasks &tasks, unsigned maxRunning, const std::string &partition);

// The job id `sbatch --parsable` printed ("123" or "123;cluster").
Result<std::string> sbatchJobId(const std::string &output);

// A program on PATH, or an error naming the Debian package that has it.
Result<std::string> findProgram(const std::string &name, const std::string &package);

struct ParallelOptions {
  unsigned jobsPerHost = 0;                 // 0: one per CPU of each host
  std::string sshLogin;                     // e.g. "8/node1,8/node2,:" (":" is this machine)
  std::string sshLoginFile;
};
// Writes OUT/parallel/jobs.txt and runs it with GNU Parallel (joblog
// OUT/parallel/joblog). A task that fails is not an error here: its rows say why.
Result<std::vector<std::string>> runParallel(const SweepTasks &tasks, const ParallelOptions &options);

struct SlurmOptions {
  unsigned maxRunning = 0;
  std::string partition;
  bool wait = false;                        // block until the array is done
};
// Writes OUT/slurm/array.sh and submits it. Without
// `wait` a collect job (`tpuc sweep --collect`) is submitted after it
// (afterany). Returns what was submitted, for the user.
Result<std::vector<std::string>> submitSlurm(const SweepTasks &tasks, const SlurmOptions &options);

} // namespace tpu::explore
