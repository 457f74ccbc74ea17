// Parameters of Move (Move.cpp).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace tpu::backend {

// A box of up to 4 dims copied from input `input` to the output.
// Element (i0..i3) of the box goes from the input's element src + sum
// i_k * srcStride[k] to the output's element dst + sum i_k * dstStride[k];
// offsets count elements of the compact C-order tensors, strides may be
// negative or 0 (a broadcast read).
struct MovePiece {
  int input = 0;
  std::array<int64_t, 4> size{1, 1, 1, 1};
  int64_t src = 0, dst = 0;
  std::array<int64_t, 4> srcStride{0, 0, 0, 0}, dstStride{0, 0, 0, 0};
};

// The output is first filled with fillValue (int8: the integer) when
// `fills`, then every piece is copied in order.
struct MoveParams {
  std::vector<MovePiece> pieces;
  bool fills = false;
  float fillValue = 0.0f;
};

} // namespace tpu::backend
