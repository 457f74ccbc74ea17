// `tpuc sweep`: a grid over hardware parameters (any HwConfig key) and
// compiler options (layer groups, quantization) for a list of models.
// Each distinct (model, compiler options) is compiled once into a cache
// keyed by a sha256 of the model file's bytes and the options; every point
// is then one `tpuc sim ... --config point.json --stats point.json` child
// process, run by a local worker pool, by GNU Parallel or by a Slurm job
// array (tools/explore/Cluster.h). Each point writes its own row file; the
// rows are merged in point order whatever the finishing order, so the
// CSV/JSON/SVG files are deterministic.
#pragma once

#include "tools/explore/SweepSpec.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tpu::explore {

// Where the points run. Every engine ends in the same per-point row files
// (points/pNNNN.row.json), so all of them give the same rows.
enum class SweepEngine {
  Local,     // a pool of child processes on this machine
  Parallel,  // GNU Parallel runs one `tpuc sweep --points` task per chunk (here or over ssh)
  Slurm,     // a Slurm job array, one chunk per array task
};
Result<SweepEngine> parseEngine(const std::string &name);

struct SweepOptions {
  std::string outDir;                       // everything goes under here (on a shared file system for a cluster)
  std::string tpucPath;                     // the tpuc binary the jobs run
  std::string sweepFile;                    // the sweep file, named in the task command lines
  SweepEngine engine = SweepEngine::Local;
  // local: worker processes (0 = hardware threads); parallel: jobs per host
  // (0 = one per CPU); slurm: array tasks running at once (0 = no limit);
  // --points: worker processes of the task (0 = 1).
  unsigned jobs = 0;
  size_t chunk = 0;                         // points per parallel/slurm task; 0 = 1 (slurm: up to 1000 tasks)
  std::string sshLogin;                     // parallel: --sshlogin (e.g. "8/node1,8/node2,:")
  std::string sshLoginFile;                 // parallel: --sshloginfile
  std::string partition;                    // slurm: sbatch --partition
  bool wait = false;                        // slurm: wait for the array, then collect here
  std::string jobsFile;                     // write the task command lines there instead of running them
  bool collect = false;                     // do not run: merge the row files into the CSV/JSON and plots
  bool resume = false;                      // run only the points without a row or with a failed one
  std::vector<size_t> points;               // run only these points here and write their rows (a task)
  bool progress = true;                     // progress bar on stderr
};

// What one point measured (empty optionals print as empty CSV fields). A
// failed point keeps its error and no figures.
struct SweepRow {
  SweepPoint point;
  std::string model, bmodel;
  std::string chip; // the bmodel's chip field ("BM1684X")
  double latencyUs = 0, totalCycles = 0;
  double tiuUtilization = 0, gdmaUtilization = 0;
  uint64_t ddrBytes = 0;
  double lmemPeakBytes = -1;                // -1: the stats carry no LMEM figure
  double compileSeconds = 0;                // 0 for a ready or cached bmodel
  double simWallSeconds = 0;
  std::string error;                        // empty when the point ran
};

struct SweepResult {
  std::vector<SweepRow> rows;               // in point order (a task: its points)
  std::vector<std::string> files;           // what was written
  std::vector<std::string> notes;           // what was submitted or skipped, for the user
  size_t failed = 0;                        // rows with an error
  std::string firstFailure;                 // "p0003: <error>"
};

// Runs the sweep with the chosen engine (or one task's points, or writes the
// job list, or collects), then writes sweep.csv, sweep.jsonl,
// latency_vs_ddr.svg and roofline_<model>.svg from the row files. A failed
// point does not stop the sweep: it is counted in `failed`.
Result<SweepResult> runSweep(const SweepSpec &spec, const SweepOptions &options);

} // namespace tpu::explore
