// tpuc sweep: a grid of hardware parameters and compiler options over a list
// of models, compiled once per (model, options), simulated on the local
// pool, GNU Parallel or a Slurm job array — wiring only; the work is in
// tools/explore/Sweep.h and tools/explore/Cluster.h.
#include "tools/explore/Sweep.h"
#include "tools/tpuc/Subcommand.h"
#include "tools/tpuc/SubcommandArgs.h"

#include <filesystem>
#include <iostream>

namespace {

// Options that only one engine reads, so a typo'd engine is not silently ignored.
struct EngineOption {
  const char *name;
  tpu::explore::SweepEngine engine;
};
constexpr EngineOption kEngineOptions[] = {
    {"--sshlogin", tpu::explore::SweepEngine::Parallel},
    {"--sshloginfile", tpu::explore::SweepEngine::Parallel},
    {"--partition", tpu::explore::SweepEngine::Slurm},
    {"--wait", tpu::explore::SweepEngine::Slurm},
};

int runSweep(int argc, char **argv) {
  tpuc::SubcommandArgs args("sweep", "sweep.json [--out-dir DIR] [--engine local|parallel|slurm] [--jobs N] "
                                     "[--resume] [--jobs-file jobs.txt | --collect | --points LIST]");
  args.positionals(1, 1, "sweep.json");
  args.option("--out-dir", "where the cache, per-point files, CSV, JSON lines and SVG plots go (default: sweep_out; "
                           "for parallel over ssh and slurm a directory every node sees at the same path)");
  args.option("--engine", "local (a pool of processes here, default), parallel (GNU Parallel) or slurm (a job array)");
  args.option("--jobs", "local: simulations at once (default: hardware threads); parallel: jobs per host (default: "
                        "one per CPU); slurm: array tasks running at once (default: no limit)",
              "-j");
  args.option("--chunk", "points per parallel/slurm task (default 1; slurm: enough for at most 1000 tasks)");
  args.option("--sshlogin", "parallel: hosts to run on, passed to GNU Parallel (e.g. 8/node1,8/node2,:)");
  args.option("--sshloginfile", "parallel: a file of hosts, passed to GNU Parallel");
  args.option("--partition", "slurm: the partition of the array and collect jobs");
  args.flag("--wait", "slurm: wait for the array to finish and collect here (default: submit a collect job and return)");
  args.flag("--resume", "run only the points without a row file or whose row records an error");
  args.option("--jobs-file", "write one task command line per chunk of points here instead of running them");
  args.flag("--collect", "do not run: merge the row files the tasks wrote into the CSV, JSON lines and plots");
  args.option("--points", "run only these points here (e.g. 0-3,7) and write their row files: one task of an engine");
  args.flag("--quiet", "no progress bar");
  if (auto done = args.parseCommandLine(argc, argv)) return *done;
  auto jobs = args.getDouble("--jobs", 0);
  if (!jobs) return tpuc::fail("sweep", jobs.message());
  if (*jobs < 0 || *jobs > 1024 || *jobs != double(unsigned(*jobs)))
    return tpuc::fail("sweep", "--jobs must be a whole number in [0, 1024]");
  auto chunk = args.getInt("--chunk", 0);
  if (!chunk) return tpuc::fail("sweep", chunk.message());
  if (*chunk < 0 || *chunk > 1000000) return tpuc::fail("sweep", "--chunk must be a whole number in [0, 1000000]");
  auto engine = tpu::explore::parseEngine(args.get("--engine", "local"));
  if (!engine) return tpuc::fail("sweep", "--engine: " + engine.message());
  for (const EngineOption &o : kEngineOptions)
    if ((args.has(o.name) || args.isSet(o.name)) && *engine != o.engine)
      return tpuc::fail("sweep", std::string(o.name) + " needs --engine " +
                                     (o.engine == tpu::explore::SweepEngine::Slurm ? "slurm" : "parallel"));
  int modes = args.has("--jobs-file") + args.isSet("--collect") + args.has("--points");
  if (modes > 1) return tpuc::fail("sweep", "--jobs-file, --collect and --points exclude each other");
  if (args.isSet("--resume") && (args.isSet("--collect") || args.has("--points")))
    return tpuc::fail("sweep", "--resume applies to a run, not to --collect or --points");

  const std::string sweepFile = args.args()[0];
  auto spec = tpu::explore::loadSweep(sweepFile);
  if (!spec) return tpuc::fail("sweep", spec.message());
  tpu::explore::SweepOptions opt;
  opt.outDir = args.get("--out-dir", "sweep_out");
  opt.sweepFile = sweepFile;
  opt.engine = *engine;
  opt.jobs = unsigned(*jobs);
  opt.chunk = size_t(*chunk);
  opt.sshLogin = args.get("--sshlogin");
  opt.sshLoginFile = args.get("--sshloginfile");
  opt.partition = args.get("--partition");
  opt.wait = args.isSet("--wait");
  opt.jobsFile = args.get("--jobs-file");
  opt.collect = args.isSet("--collect");
  opt.resume = args.isSet("--resume");
  opt.progress = !args.isSet("--quiet");
  if (args.has("--points")) {
    auto points = tpu::explore::parsePointList(args.get("--points"), tpu::explore::expandSweep(*spec).size());
    if (!points) return tpuc::fail("sweep", "--points: " + points.message());
    opt.points = points.take();
  }
  std::error_code ec;
  opt.tpucPath = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) return tpuc::fail("sweep", "cannot find the tpuc binary: " + ec.message());
  auto result = tpu::explore::runSweep(*spec, opt);
  if (!result) return tpuc::fail("sweep", result.message());
  for (const std::string &n : result->notes) std::cout << n << "\n";
  for (const std::string &f : result->files) std::cout << "wrote " << f << "\n";
  if (!result->rows.empty()) std::cout << result->rows.size() << " points\n";
  if (result->failed)
    return tpuc::fail("sweep", std::to_string(result->failed) + " of " + std::to_string(result->rows.size()) +
                                   " points failed (first " + result->firstFailure + "); " +
                                   (opt.points.empty() ? "their rows hold the error, --resume reruns them"
                                                       : "their row files hold the error"));
  return tpuc::kExitOk;
}

tpuc::RegisterSubcommand registerSweep("sweep", "simulate a grid of hardware parameters and compiler options",
                                       runSweep);

} // namespace
