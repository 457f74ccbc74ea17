// A local worker pool of child processes: at most `workers` run at once,
// each with stdout and stderr going to its own log file. Outcomes are stored
// by job index, so callers see them in job order whatever order the
// children finish in.
#pragma once

#include "support/Status.h"

#include <functional>
#include <string>
#include <vector>

namespace tpu::explore {

struct Job {
  std::vector<std::string> argv; // argv[0] is the program path
  std::string logPath;
};

struct JobOutcome {
  int exitCode = -1;       // the child's exit status; 128+signal when killed
  double wallSeconds = 0;
};

// Fails only when a child cannot be started; a child's non-zero exit is an outcome.
Result<std::vector<JobOutcome>> runJobs(const std::vector<Job> &jobs, unsigned workers,
                                        const std::function<void(size_t done, size_t total)> &onProgress);

// POSIX shell quoting ('...' when needed) and a whole command line.
std::string shellQuote(const std::string &word);
std::string commandLine(const std::vector<std::string> &argv);

// The last non-empty line of a log (or of a text), for one-line error messages.
std::string lastLine(const std::string &path);
std::string lastLineOf(const std::string &text);

} // namespace tpu::explore
