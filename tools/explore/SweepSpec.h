// A sweep file and its grid: the models, the HwConfig values and compiler
// options to cross, parsed and checked before anything runs, and the points
// in their fixed order.
#pragma once

#include "isa/HwConfig.h"
#include "isa/chips/Registry.h"
#include "support/Status.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tpu::explore {

// One model of the sweep: a ready bmodel, or an ONNX model to compile.
struct SweepModel {
  std::string name;
  std::string bmodel;      // ready bmodel (compiler options do not apply)
  std::string onnx;        // or an ONNX model
  std::string inputShapes; // e.g. "[[1,3,224,224]]" (ONNX)
  std::string calibration; // directory of .npz samples (ONNX, INT8)
  std::string inputs;      // .npz for the runs; empty = seeded random inputs
  std::string chip;        // a ready bmodel's chip field ("BM1684X"), read when the sweep file is parsed
};

// The compiler choices of one build.
struct CompileOptions {
  std::string quantize = "F32"; // F32 or INT8
  bool layerGroup = true;
  std::string chip;        // tpuc deploy --chip ("bm1684x"); empty: deploy's default, no --chip
  std::string key() const; // "F32_lg" / "INT8_nolg" / "F32_lg_bm1684x"
};

struct SweepSpec {
  std::vector<SweepModel> models;
  // HwConfig key -> values, in key order; each point takes one value per key.
  std::map<std::string, std::vector<double>> hardware;
  std::vector<std::string> quantize{"F32"};
  std::vector<bool> layerGroup{true};
  std::vector<std::string> chips{""}; // compiler.chip: --chip names; "" = deploy's default chip
  std::string baseConfig;             // HwConfig keys over the point's chip preset; empty = the preset alone
};

// Parses a sweep file. Relative paths are taken from the file's directory.
// Errors name the file and the key (unknown key, wrong type, bad value,
// missing model file, HwConfig key or value rejected by HwConfig).
Result<SweepSpec> parseSweep(const std::string &text, const std::string &origin, const std::string &baseDir);
Result<SweepSpec> loadSweep(const std::string &path);

// One point of the grid, in a fixed order: models, then compile options
// (chip, quantize, layer group), then hardware values (keys in name order, the
// last key varying fastest).
struct SweepPoint {
  size_t index = 0;
  size_t model = 0;
  CompileOptions compile;
  std::map<std::string, double> hardware;
  std::string id() const; // "p0003"
};
std::vector<SweepPoint> expandSweep(const SweepSpec &spec);

// "0-3,7" <-> {0,1,2,3,7}; indices must be below `count`.
Result<std::vector<size_t>> parsePointList(const std::string &text, size_t count);
std::string formatPointList(const std::vector<size_t> &points);

// The chip a point runs on: a ready bmodel's, the compile option's, or the one tpuc deploy compiles for
// without --chip.
const isa::ChipInfo &pointChip(const SweepSpec &spec, const SweepPoint &point);
// The HwConfig the points of `chip` start from: its preset (isa::ChipInfo::hwConfig), with the keys of
// the file's base_config over it.
Result<isa::HwConfig> baseConfig(const std::string &path, const isa::ChipInfo &chip);
// The point's config: the base with the point's values; HwConfig names a bad key or value.
Result<isa::HwConfig> pointConfig(const isa::HwConfig &base, const std::map<std::string, double> &values,
                                  const std::string &where);
// A JSON number for a HwConfig key: integral values stay integers, so
// integer fields (npuLanes) accept them.
nlohmann::ordered_json hwValue(double v);

} // namespace tpu::explore
