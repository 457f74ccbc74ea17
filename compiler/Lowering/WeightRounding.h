// Bias correction and output-aware rounding of a conv's int8 weights
// (docs/quantization.md, "Accuracy levers"), from the conv's fp32 input on
// calibration samples. Both work on the fixed-point targets t = w * s_x /
// s_y * 2^r the lowering rounds (any shift, any scale) and read the input
// only through the moments of its patches (the kh x kw x ic/group vectors
// one output element is computed from).
#pragma once

#include <cstdint>
#include <tuple>
#include <vector>

namespace tpu::lowering {

// A 2-D convolution's shapes (NCHW input, [oc, ic/groups, kh, kw] filter).
struct ConvGeometry {
  int64_t n = 1, c = 1, h = 1, w = 1;   // input
  int64_t oc = 1, groups = 1, kh = 1, kw = 1;
  int64_t strideH = 1, strideW = 1, dilationH = 1, dilationW = 1, padTop = 0, padLeft = 0;
  int64_t oh = 1, ow = 1;              // output
  int64_t patchSize() const { return c / groups * kh * kw; }
  // What patchMoments reads (every field but oc), as one comparable value:
  // a field added above belongs here too when the moments depend on it.
  auto patchFields() const {
    return std::make_tuple(n, c, h, w, groups, kh, kw, strideH, strideW, dilationH, dilationW, padTop, padLeft, oh, ow);
  }
};

// Per group, the mean E[x] and second moment E[x x^T] (patchSize()^2, row
// major) of the input patches; zero padding counts as zeros.
struct PatchMoments {
  std::vector<double> mean, second;
};

// Moments over up to `maxPositions` output positions per sample, evenly
// spaced over (n, oh, ow) (all of them when fewer). `samples` hold the
// conv's input, n * c * h * w values each.
std::vector<PatchMoments> patchMoments(const std::vector<std::vector<float>> &samples, const ConvGeometry &g,
                                       int64_t maxPositions);

// Rounds the targets `t` ([oc, patchSize()], fixed point) to int8.
// Nearest rounding, then with `optimize` a coordinate descent that flips
// single weights between floor and ceil while E[(d . x)^2] falls (d = the
// rounding error of one output channel's weights; centred, E[((d . (x -
// E[x]))^2], when `correctBias`: the mean then goes to the bias). With
// `correctBias`, returns per output channel the mean output error d . E[x]
// in the targets' units (input values times fixed-point weights): the
// caller subtracts it from the bias. Else an empty vector.
std::vector<double> roundWeights(const std::vector<double> &t, const ConvGeometry &g,
                                 const std::vector<PatchMoments> &moments, bool optimize, bool correctBias,
                                 std::vector<int8_t> &wq);

} // namespace tpu::lowering
