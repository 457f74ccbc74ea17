// Parameters of Fc (Fc.cpp).
#pragma once

namespace tpu::backend {

struct FcParams {
  bool transposedInput = false; // x is (K, M), the left matrix transposed (gemm transA)
};

} // namespace tpu::backend
