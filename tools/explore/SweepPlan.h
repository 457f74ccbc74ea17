// The plan every engine shares: the points of a sweep, their checked
// configs, and one build per (model, compile options) under a cache
// directory named by a content hash, with where each point's files go
// under the out-dir.
#pragma once

#include "tools/explore/Sweep.h"

#include <string>
#include <vector>

namespace tpu::explore {

// One compiled (or given) bmodel of the sweep.
struct Build {
  size_t model;
  CompileOptions compile;
  std::string dir, bmodel, inputs, netName;
  std::string chip;          // the chip field its bmodel has ("BM1684X"): the points' configs start from its preset
  double compileSeconds = 0; // spent by this process
  std::string error;         // why its points cannot run
};

// Everything the engines share: the points, their configs and builds, and
// where each file goes under the out-dir.
struct Plan {
  std::string out, tpuc;
  std::vector<SweepPoint> points;
  std::vector<isa::HwConfig> configs;
  std::vector<Build> builds;
  std::vector<size_t> buildOf; // per point
  std::vector<std::string> hwKeys;
  std::string stem(size_t i) const { return out + "/points/" + points[i].id(); }
  std::string rowPath(size_t i) const { return stem(i) + ".row.json"; }
};

// Checks every point's config, creates the out-dir and names the builds.
Result<Plan> planSweep(const SweepSpec &spec, const SweepOptions &options);

} // namespace tpu::explore
