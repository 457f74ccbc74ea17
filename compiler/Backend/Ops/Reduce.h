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

// Whether the Reduce emitter can move input x and output y (their shapes
// and dtypes) for these reduced NCHW dims: the kept and the reduced dims
// must each merge into at most two (int8 4N layouts restrict the merging
// and the output's batch); the error says why not.
Status reduceLayout(const Tensor &x, const Tensor &y, const ReduceAxes &axes);

} // namespace tpu::backend
