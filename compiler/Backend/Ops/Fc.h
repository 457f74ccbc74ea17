// Parameters of Fc (Fc.cpp).
#pragma once

#include <cstdint>

namespace tpu::backend {

struct FcParams {
  bool transposedInput = false; // x is (K, M), the left matrix transposed (gemm transA)
};

// The chunks an Fc sums K in, its reference's order (the BM1684's matrix command takes at most 4095 rows
// of K): `count` chunks of `rows` (the last one shorter), each summed from 0, the first adding the bias
// and each later one the sum so far.
struct KChunks {
  int64_t rows, count;
};
KChunks kChunks(int64_t k);

} // namespace tpu::backend
