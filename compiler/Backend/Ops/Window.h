// The window of the window kinds (Conv, ConvTranspose, Pool): their
// parameters and the geometry they share (Window.cpp).
#pragma once

#include "compiler/Backend/Graph.h"

#include <array>
#include <cstdint>
#include <vector>

namespace tpu::backend {

// Parameters of Conv, ConvTranspose and Pool.
struct WindowParams {
  int64_t kh = 1, kw = 1, strideH = 1, strideW = 1, dilationH = 1, dilationW = 1;
  int64_t padTop = 0, padBottom = 0, padLeft = 0, padRight = 0;
  int64_t groups = 1; // Conv only
  bool isMax = false; // Pool only
  // Pool avg: each window divides by the taps it covers inside the padded
  // input (count_include_pad), or inside the input alone when false.
  bool countPad = true;
};

// The transposed conv as the chip runs it: a stride-1 conv over the input
// with stride-1 zeros inserted, the kernel rotated, these pads.
struct TransposedPads {
  int64_t top, bottom, left, right;
};
TransposedPads transposedPads(const Op &op, const Tensor &x, const Tensor &y);
TransposedPads transposedPads(const WindowParams &p, const std::array<int64_t, 4> &xs,
                              const std::array<int64_t, 4> &ys);

// Output spatial size of a window op for an input extent (floor division;
// the output tensor may be larger by one for ceil mode: extra end padding).
int64_t windowOutput(int64_t in, int64_t k, int64_t stride, int64_t dilation, int64_t padA, int64_t padB);

// The window of a Conv/Pool with the end pads grown so that the output
// tensor's size is produced (ceil mode adds at most one row/column).
WindowParams effectiveWindow(const Op &op, const Tensor &x, const Tensor &y);

// Pool avg along one dim: per output index, the taps its divisor counts
// (those inside the input, and inside its declared padding with countPad).
// The window's divisor is the product of its row's and its column's counts.
std::vector<int64_t> averageTaps(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t dilation, int64_t padA,
                                 int64_t padB, bool countPad);

// Pool avg: the taps each output row and each output column covers (from
// the declared pads: the divisor does not count ceil mode's extra padding).
struct AverageTaps {
  std::vector<int64_t> rows, cols;
  int64_t at(int64_t oy, int64_t ox) const { return rows[size_t(oy)] * cols[size_t(ox)]; }
  bool uniform() const;
};
AverageTaps averageTapsOf(const Op &op, const Tensor &x, const Tensor &y);

} // namespace tpu::backend
