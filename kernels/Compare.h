// Similarity of two tensors, used by `tpuc compare` and the stage-by-stage
// comparisons of `tpuc flow`. Definitions: docs/validation.md.
#pragma once

#include "support/Npz.h"
#include "support/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tpu::kernels {

struct CompareStats {
  double cosine = 1;       // a.b / (|a| |b|); 1 when both are all zeros
  double euclidean = 1;    // 1 - |a-b| / |(a+b)/2|; 1 when a == b
  double sqnrDb = 0;       // 10 log10(var(a) / var(a-b)); +inf when a == b
  double maxAbsDiff = 0;   // max |a-b|
  int64_t nanMismatch = 0; // positions where exactly one side is NaN
};

// a is the reference. Accumulates in double, in index order.
CompareStats compareTensors(const float *a, const float *b, int64_t n);

} // namespace tpu::kernels

namespace tpu::kernels {

struct CompareOptions {
  double minCosine = 0.99;
  double minEuclidean = 0.99;
  std::vector<std::string> names;  // only these (each must exist on both sides); empty = all common
  std::vector<std::string> except; // skip these
};

struct CompareRow {
  std::string name;
  std::vector<int64_t> shape;
  CompareStats stats;
  bool pass = true;
};

struct CompareReport {
  std::vector<CompareRow> rows; // in name order
  std::vector<std::string> onlyInA, onlyInB;
  bool allPass() const;
};

// Compares every common tensor of two archives (a is the reference). Errors:
// a shape mismatch (naming the tensor and both shapes), a --names entry
// missing from a side, or no tensor left to compare.
Result<CompareReport> compareArchives(const NpzMap &a, const NpzMap &b, const CompareOptions &options);
// The table `tpuc compare` prints, with a summary line.
std::string formatReport(const CompareReport &report, const CompareOptions &options);

} // namespace tpu::kernels
