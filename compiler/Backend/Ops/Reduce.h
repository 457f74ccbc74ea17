// Parameters of the reducing kinds of Reduce.cpp (Reduce, LayerNorm,
// Softmax, LogSoftmax), and the layouts the Reduce emitter takes.
#pragma once

#include "compiler/Backend/Graph.h"
#include "support/Status.h"

#include <array>

namespace tpu::backend {

// Which NCHW dims of the input an op reduces (LayerNorm: normalizes).
using ReduceAxes = std::array<bool, 4>;

// What a Reduce computes over its reduced dims.
enum class ReduceMode : uint8_t { Sum, Mean, Max, Min, Prod, L2 };

struct ReduceParams {
  ReduceMode mode = ReduceMode::Sum;
  ReduceAxes axes{false, false, false, false};
};

struct SoftmaxParams { // Softmax and LogSoftmax
  ReduceAxes axes{false, false, false, false};
};

struct LayerNormParams {
  ReduceAxes axes{false, false, false, false};
  float epsilon = 0.0f; // added to the variance
};

// Where the emitter puts the dims (local n and c: kept; h and w: reduced),
// their sizes and DDR element strides, and how the output is stored.
struct ReducePlan {
  std::array<int64_t, 4> size{1, 1, 1, 1}, xStride{0, 0, 0, 0};
  // Local n is the batch of an int8 input of more than 4 items: moved one
  // 4N group (xGroupElems elements) at a time.
  bool xGroups = false;
  int64_t xGroupElems = 0;
  // The output's element strides of local n and c; yGroups: local n is the
  // int8 output's batch, stored one 4N group (yGroupElems) at a time.
  std::array<int64_t, 2> yStride{0, 0};
  bool yGroups = false;
  int64_t yGroupElems = 0;
};

// The plan of a Reduce of x into y over `axes`; the error says why there is none (as reduceLayout's).
Result<ReducePlan> planReduce(const Tensor &x, const Tensor &y, const std::array<bool, 4> &axes);

// Whether the Reduce emitter can move input x and output y (their shapes
// and dtypes) for these reduced NCHW dims: the kept and the reduced dims
// must each merge into at most two (int8 4N layouts restrict the merging
// and the output's batch); the error says why not.
Status reduceLayout(const Tensor &x, const Tensor &y, const ReduceAxes &axes);

} // namespace tpu::backend
