#include "tools/explore/JobPool.h"

#include "support/ReadFile.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace tpu::explore {

namespace {
using Clock = std::chrono::steady_clock;
}

Result<std::vector<JobOutcome>> runJobs(const std::vector<Job> &jobs, unsigned workers,
                                        const std::function<void(size_t, size_t)> &onProgress) {
  std::vector<JobOutcome> outcomes(jobs.size());
  std::map<pid_t, std::pair<size_t, Clock::time_point>> running;
  size_t next = 0, done = 0;
  if (workers == 0) workers = 1;
  if (onProgress) onProgress(0, jobs.size());
  while (done < jobs.size()) {
    while (next < jobs.size() && running.size() < workers) {
      const Job &job = jobs[next];
      posix_spawn_file_actions_t actions;
      posix_spawn_file_actions_init(&actions);
      posix_spawn_file_actions_addopen(&actions, 1, job.logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      posix_spawn_file_actions_adddup2(&actions, 1, 2);
      std::vector<char *> argv;
      for (const std::string &a : job.argv) argv.push_back(const_cast<char *>(a.c_str()));
      argv.push_back(nullptr);
      pid_t pid = 0;
      int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
      posix_spawn_file_actions_destroy(&actions);
      if (rc != 0) {
        // Let the children already started finish before reporting.
        for (auto &r : running) waitpid(r.first, nullptr, 0);
        return makeError("cannot start ", job.argv[0], ": ", std::strerror(rc));
      }
      running[pid] = {next, Clock::now()};
      ++next;
    }
    int status = 0;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      return makeError("waiting for a job: ", std::strerror(errno));
    }
    auto it = running.find(pid);
    if (it == running.end()) continue; // not one of ours
    JobOutcome &out = outcomes[it->second.first];
    out.wallSeconds = std::chrono::duration<double>(Clock::now() - it->second.second).count();
    out.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    running.erase(it);
    ++done;
    if (onProgress) onProgress(done, jobs.size());
  }
  return outcomes;
}

std::string shellQuote(const std::string &word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                              "_-./=:,+@%") == std::string::npos)
    return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string commandLine(const std::vector<std::string> &argv) {
  std::string line;
  for (const std::string &a : argv) line += (line.empty() ? "" : " ") + shellQuote(a);
  return line;
}

std::string lastLine(const std::string &path) {
  auto text = readFile(path); // a log not written yet has no last line
  return text ? lastLineOf(*text) : std::string();
}

std::string lastLineOf(const std::string &text) {
  std::istringstream in(text);
  std::string line, last;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  return last;
}

} // namespace tpu::explore
