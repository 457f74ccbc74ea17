// The shape of a MatMul (MatMul.cpp): lhs [..., M, K] x rhs [..., K, N] over B leading items.
#pragma once

#include "compiler/Backend/Graph.h"
#include "support/Status.h"

namespace tpu::backend {

struct MatMulDims {
  int64_t b = 1, m = 1, k = 1, n = 1;
};
// From the tensors' shapes; the error says which do not agree.
Result<MatMulDims> matMulDims(const Tensor &lhs, const Tensor &rhs, const Tensor &y);

} // namespace tpu::backend
