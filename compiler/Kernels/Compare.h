// Similarity of two tensors, used by `tpuc compare` and the stage-by-stage
// comparisons of `tpuc flow`. Definitions: docs/validation.md.
#pragma once

#include <cstdint>

namespace tpu::kernels {

struct CompareStats {
  double cosine = 1;      // a.b / (|a| |b|); 1 when both are all zeros
  double euclidean = 1;   // 1 - |a-b| / |(a+b)/2|; 1 when a == b
  double sqnrDb = 0;      // 10 log10(var(a) / var(a-b)); +inf when a == b
  double maxAbsDiff = 0;  // max |a-b|
  int64_t nanMismatch = 0; // positions where exactly one side is NaN
};

// a is the reference. Accumulates in double, in index order.
CompareStats compareTensors(const float *a, const float *b, int64_t n);

} // namespace tpu::kernels
