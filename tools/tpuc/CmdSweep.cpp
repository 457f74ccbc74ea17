// tpuc sweep: a grid of hardware parameters and compiler options over a list
// of models, compiled once per (model, options), simulated in parallel —
// wiring only; the work is in tools/explore/Sweep.h.
#include "support/ArgParser.h"
#include "tools/explore/Sweep.h"
#include "tools/tpuc/Subcommand.h"

#include <filesystem>
#include <iostream>

namespace {

int runSweep(int argc, char **argv) {
  tpu::ArgParser args("sweep", "tpuc sweep sweep.json [--out-dir DIR] [--jobs N] [--jobs-file jobs.txt | --collect]");
  args.positionals(1, 1, "sweep.json");
  args.option("--out-dir", "where the cache, per-point files, CSV, JSON lines and SVG plots go (default: sweep_out)");
  args.option("--jobs", "simulations run at once (default: the machine's hardware threads)", "-j");
  args.option("--jobs-file", "compile, then write one tpuc sim command line per point here instead of running them");
  args.flag("--collect", "do not simulate: gather the stats the job list wrote into the CSV and plots");
  args.flag("--quiet", "no progress bar");
  if (auto st = args.parse(argc, argv); !st) return tpuc::fail("sweep", st.message());
  if (args.helpRequested()) {
    std::cout << args.help();
    return tpuc::kExitOk;
  }
  auto jobs = args.getDouble("--jobs", 0);
  if (!jobs) return tpuc::fail("sweep", jobs.message());
  if (*jobs < 0 || *jobs > 1024 || *jobs != double(unsigned(*jobs)))
    return tpuc::fail("sweep", "--jobs must be a whole number in [0, 1024]");
  if (args.has("--jobs-file") && args.isSet("--collect"))
    return tpuc::fail("sweep", "--jobs-file and --collect exclude each other");

  auto spec = tpu::explore::loadSweep(args.args()[0]);
  if (!spec) return tpuc::fail("sweep", spec.message());
  tpu::explore::SweepOptions opt;
  opt.outDir = args.get("--out-dir", "sweep_out");
  opt.jobs = unsigned(*jobs);
  opt.jobsFile = args.get("--jobs-file");
  opt.collect = args.isSet("--collect");
  opt.progress = !args.isSet("--quiet");
  std::error_code ec;
  opt.tpucPath = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) return tpuc::fail("sweep", "cannot find the tpuc binary: " + ec.message());
  auto result = tpu::explore::runSweep(*spec, opt);
  if (!result) return tpuc::fail("sweep", result.message());
  for (const std::string &f : result->files) std::cout << "wrote " << f << "\n";
  if (!result->rows.empty()) std::cout << result->rows.size() << " points\n";
  return tpuc::kExitOk;
}

tpuc::RegisterSubcommand registerSweep("sweep", "simulate a grid of hardware parameters and compiler options",
                                       runSweep);

} // namespace
