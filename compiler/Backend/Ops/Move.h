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

// fn(source element, destination element) for every element of a piece,
// in index order, until fn returns false; false then.
template <class Fn> bool everyElement(const MovePiece &m, Fn fn) {
  for (int64_t a = 0; a < m.size[0]; ++a)
    for (int64_t b = 0; b < m.size[1]; ++b)
      for (int64_t h = 0; h < m.size[2]; ++h)
        for (int64_t w = 0; w < m.size[3]; ++w)
          if (!fn(m.src + a * m.srcStride[0] + b * m.srcStride[1] + h * m.srcStride[2] + w * m.srcStride[3],
                  m.dst + a * m.dstStride[0] + b * m.dstStride[1] + h * m.dstStride[2] + w * m.dstStride[3]))
            return false;
  return true;
}

// The output is first filled with fillValue (int8: the integer) when
// `fills`, then every piece is copied in order.
struct MoveParams {
  std::vector<MovePiece> pieces;
  bool fills = false;
  float fillValue = 0.0f;
};

} // namespace tpu::backend
