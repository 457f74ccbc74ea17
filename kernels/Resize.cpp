// N-D resize, one dimension at a time: nearest picks a source index, linear
// blends two neighbours (separable, so N-linear overall).
#include "kernels/Kernels.h"

#include <algorithm>
#include <cmath>

namespace tpu::kernels {
namespace {

// Source coordinate of output index x for one dimension.
double sourceCoord(CoordMode mode, int64_t x, int64_t inLen, int64_t outLen, double scale) {
  switch (mode) {
  case CoordMode::HalfPixel:
    return (x + 0.5) / scale - 0.5;
  case CoordMode::PytorchHalfPixel:
    return outLen > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  case CoordMode::AlignCorners: {
    // ONNX measures the resized length as in * scale (unrounded).
    double resized = inLen * scale;
    return resized <= 1.0 ? 0.0 : x * static_cast<double>(inLen - 1) / (resized - 1.0);
  }
  case CoordMode::Asymmetric:
    return x / scale;
  case CoordMode::TfHalfPixelForNN:
    return (x + 0.5) / scale;
  }
  return 0.0;
}

int64_t nearestIndex(NearestMode mode, double c, int64_t inLen) {
  double f = std::floor(c);
  int64_t i;
  switch (mode) {
  case NearestMode::Floor:
    i = static_cast<int64_t>(f);
    break;
  case NearestMode::Ceil:
    i = static_cast<int64_t>(std::ceil(c));
    break;
  case NearestMode::RoundPreferFloor:
    i = static_cast<int64_t>(c - f == 0.5 ? f : std::round(c));
    break;
  case NearestMode::RoundPreferCeil:
    i = static_cast<int64_t>(c - f == 0.5 ? f + 1 : std::round(c));
    break;
  default:
    i = 0;
  }
  return std::clamp<int64_t>(i, 0, inLen - 1);
}

// Resizes dimension `dim` of a tensor from shape[dim] to outLen.
void resizeDim(const float *in, const Shape &shape, int64_t dim, int64_t outLen, double scale, const ResizeParams &p,
               float *out) {
  int64_t outer = 1, inner = 1, inLen = shape[dim];
  for (int64_t d = 0; d < dim; ++d) outer *= shape[d];
  for (size_t d = dim + 1; d < shape.size(); ++d) inner *= shape[d];
  const ResizeTaps t = resizeTaps(inLen, outLen, scale, p);
  const std::vector<int64_t> &i0 = t.i0, &i1 = t.i1;
  const std::vector<float> &w = t.w;
  for (int64_t o = 0; o < outer; ++o) {
    const float *src = in + o * inLen * inner;
    float *dst = out + o * outLen * inner;
    for (int64_t x = 0; x < outLen; ++x) {
      const float *a = src + i0[x] * inner, *b = src + i1[x] * inner;
      float wb = w[x], wa = 1.0f - wb;
      float *d = dst + x * inner;
      for (int64_t i = 0; i < inner; ++i) d[i] = a[i] * wa + b[i] * wb;
    }
  }
}

} // namespace

ResizeParams resizeParams(std::string_view mode, std::string_view coord, std::string_view nearest) {
  ResizeParams p;
  p.mode = mode == "linear" ? ResizeMode::Linear : ResizeMode::Nearest;
  p.coord = coord == "asymmetric"             ? CoordMode::Asymmetric
            : coord == "align_corners"        ? CoordMode::AlignCorners
            : coord == "pytorch_half_pixel"   ? CoordMode::PytorchHalfPixel
            : coord == "tf_half_pixel_for_nn" ? CoordMode::TfHalfPixelForNN
                                              : CoordMode::HalfPixel;
  p.nearest = nearest == "round_prefer_ceil" ? NearestMode::RoundPreferCeil
              : nearest == "floor"           ? NearestMode::Floor
              : nearest == "ceil"            ? NearestMode::Ceil
                                             : NearestMode::RoundPreferFloor;
  return p;
}

ResizeTaps resizeTaps(int64_t inLen, int64_t outLen, double scale, const ResizeParams &p) {
  ResizeTaps t;
  t.i0.resize(size_t(outLen)), t.i1.resize(size_t(outLen)), t.w.resize(size_t(outLen));
  for (int64_t x = 0; x < outLen; ++x) {
    double c = sourceCoord(p.coord, x, inLen, outLen, scale);
    if (p.mode == ResizeMode::Nearest) {
      t.i0[x] = t.i1[x] = nearestIndex(p.nearest, c, inLen);
      t.w[x] = 0;
    } else {
      c = std::clamp(c, 0.0, static_cast<double>(inLen - 1));
      int64_t lo = static_cast<int64_t>(std::floor(c));
      t.i0[x] = lo;
      t.i1[x] = std::min(lo + 1, inLen - 1);
      t.w[x] = static_cast<float>(c - lo);
    }
  }
  return t;
}

void resize(const float *in, const Shape &inShape, float *out, const Shape &outShape, const std::vector<double> &scales,
            const ResizeParams &p) {
  Shape cur = inShape;
  std::vector<float> bufA(in, in + numElements(inShape)), bufB;
  for (size_t d = 0; d < inShape.size(); ++d) {
    if (outShape[d] == inShape[d] && scales[d] == 1.0) continue;
    Shape next = cur;
    next[d] = outShape[d];
    bufB.assign(numElements(next), 0.0f);
    resizeDim(bufA.data(), cur, d, outShape[d], scales[d], p, bufB.data());
    bufA.swap(bufB);
    cur = next;
  }
  std::copy(bufA.begin(), bufA.end(), out);
}

} // namespace tpu::kernels
