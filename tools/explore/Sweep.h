// `tpuc sweep`: a grid over hardware parameters (any HwConfig key) and
// compiler options (layer groups, quantization) for a list of models.
// Each distinct (model, compiler options) is compiled once into a cache
// keyed by a sha256 of the model file's bytes and the options; every point
// is then one `tpuc sim ... --config point.json --stats point.json` child
// process, run by a local worker pool (or written to a job list for GNU
// Parallel / Slurm). Rows come out in point order whatever the finishing
// order, so the CSV/JSON/SVG files are deterministic.
#pragma once

#include "support/Status.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tpu::explore {

// One model of the sweep: a ready bmodel, or an ONNX model to compile.
struct SweepModel {
  std::string name;
  std::string bmodel;                       // ready bmodel (compiler options do not apply)
  std::string onnx;                         // or an ONNX model
  std::string inputShapes;                  // e.g. "[[1,3,224,224]]" (ONNX)
  std::string calibration;                  // directory of .npz samples (ONNX, INT8)
  std::string inputs;                       // .npz for the runs; empty = seeded random inputs
};

// The compiler choices of one build.
struct CompileOptions {
  std::string quantize = "F32";             // F32 or INT8
  bool layerGroup = true;
  std::string key() const;                  // "F32_lg" / "INT8_nolg"
};

struct SweepSpec {
  std::vector<SweepModel> models;
  // HwConfig key -> values, in key order; each point takes one value per key.
  std::map<std::string, std::vector<double>> hardware;
  std::vector<std::string> quantize{"F32"};
  std::vector<bool> layerGroup{true};
  std::string baseConfig;                   // HwConfig JSON the points start from; empty = BM1684
};

// Parses a sweep file. Relative paths are taken from the file's directory.
// Errors name the file and the key (unknown key, wrong type, bad value,
// missing model file, HwConfig key or value rejected by HwConfig).
Result<SweepSpec> parseSweep(const std::string &text, const std::string &origin, const std::string &baseDir);
Result<SweepSpec> loadSweep(const std::string &path);

// One point of the grid, in a fixed order: models, then compile options
// (quantize, layer group), then hardware values (keys in name order, the
// last key varying fastest).
struct SweepPoint {
  size_t index = 0;
  size_t model = 0;
  CompileOptions compile;
  std::map<std::string, double> hardware;
  std::string id() const;                   // "p0003"
};
std::vector<SweepPoint> expandSweep(const SweepSpec &spec);

struct SweepOptions {
  std::string outDir;                       // everything goes under here
  std::string tpucPath;                     // the tpuc binary the jobs run
  unsigned jobs = 0;                        // worker processes; 0 = hardware threads
  std::string jobsFile;                     // write the sim commands there instead of running them
  bool collect = false;                     // do not simulate: read stats files written by the jobs
  bool progress = true;                     // progress bar on stderr
};

// What one point measured (empty optionals print as empty CSV fields).
struct SweepRow {
  SweepPoint point;
  std::string model, bmodel;
  double latencyUs = 0, totalCycles = 0;
  double tiuUtilization = 0, gdmaUtilization = 0;
  uint64_t ddrBytes = 0;
  double lmemPeakBytes = -1;                // -1: the stats carry no LMEM figure
  double compileSeconds = 0;                // 0 for a ready or cached bmodel
  double simWallSeconds = 0;
};

struct SweepResult {
  std::vector<SweepRow> rows;               // in point order
  std::vector<std::string> files;           // what was written
};

// Compiles, simulates (or writes the job list / collects), writes
// sweep.csv, sweep.jsonl, latency_vs_ddr.svg and roofline_<model>.svg.
Result<SweepResult> runSweep(const SweepSpec &spec, const SweepOptions &options);

} // namespace tpu::explore
