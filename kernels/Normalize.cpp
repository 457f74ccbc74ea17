// Softmax, batch/layer normalization and reductions. Sums use double
// accumulators: these are the reference the quantized paths are judged by.
#include "kernels/Kernels.h"
#include "support/Parallel.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tpu::kernels {

void softmax(const float *in, float *out, const Shape &shape, int64_t axis, bool log) {
  const AxisSplit split = splitAtAxis(shape, size_t(axis)); // captured below: no structured binding (C++17)
  const int64_t outer = split.outer, len = split.len, inner = split.inner;
  parallelFor(outer * inner, 64, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      int64_t o = t / inner, i = t % inner;
      const float *src = in + o * len * inner + i;
      float *dst = out + o * len * inner + i;
      float mx = -std::numeric_limits<float>::infinity();
      for (int64_t k = 0; k < len; ++k) mx = std::max(mx, src[k * inner]);
      double sum = 0;
      for (int64_t k = 0; k < len; ++k) sum += std::exp(static_cast<double>(src[k * inner] - mx));
      if (log) {
        double ls = std::log(sum);
        for (int64_t k = 0; k < len; ++k) dst[k * inner] = static_cast<float>(src[k * inner] - mx - ls);
      } else {
        for (int64_t k = 0; k < len; ++k)
          dst[k * inner] = static_cast<float>(std::exp(static_cast<double>(src[k * inner] - mx)) / sum);
      }
    }
  });
}

void batchNorm(const float *in, float *out, const Shape &shape, const float *scale, const float *bias,
               const float *mean, const float *var, float eps) {
  int64_t n = shape[0], c = shape.size() > 1 ? shape[1] : 1;
  int64_t spatial = 1;
  for (size_t d = 2; d < shape.size(); ++d) spatial *= shape[d];
  parallelFor(n * c, 1, [&](int64_t b, int64_t e) {
    for (int64_t nc = b; nc < e; ++nc) {
      int64_t ch = nc % c;
      float k = scale[ch] / std::sqrt(var[ch] + eps);
      float m = mean[ch], bb = bias[ch];
      const float *src = in + nc * spatial;
      float *dst = out + nc * spatial;
      for (int64_t i = 0; i < spatial; ++i) dst[i] = (src[i] - m) * k + bb;
    }
  });
}

void layerNorm(const float *in, float *out, const Shape &shape, int64_t axis, const float *scale, const float *bias,
               float eps) {
  int64_t outer = 1, len = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis; d < shape.size(); ++d) len *= shape[d];
  parallelFor(outer, 1, [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o) {
      const float *src = in + o * len;
      float *dst = out + o * len;
      double sum = 0, sq = 0;
      for (int64_t i = 0; i < len; ++i) sum += src[i];
      double mean = sum / len;
      for (int64_t i = 0; i < len; ++i) sq += (src[i] - mean) * (src[i] - mean);
      double inv = 1.0 / std::sqrt(sq / len + eps);
      for (int64_t i = 0; i < len; ++i) {
        double v = (src[i] - mean) * inv;
        if (scale) v *= scale[i];
        if (bias) v += bias[i];
        dst[i] = static_cast<float>(v);
      }
    }
  });
}

void reduce(ReduceKind kind, const float *in, const Shape &shape, const std::vector<int64_t> &axes, float *out) {
  size_t rank = shape.size();
  std::vector<bool> reduced(rank, false);
  for (int64_t a : axes) reduced[a] = true;
  // Output strides over the kept dims (0 along reduced dims).
  std::vector<int64_t> ostride(rank, 0);
  int64_t outCount = 1, count = 1;
  for (size_t d = rank; d-- > 0;) {
    if (reduced[d]) {
      count *= shape[d];
    } else {
      ostride[d] = outCount;
      outCount *= shape[d];
    }
  }
  double init = 0;
  if (kind == ReduceKind::Max) init = -std::numeric_limits<double>::infinity();
  if (kind == ReduceKind::Min) init = std::numeric_limits<double>::infinity();
  if (kind == ReduceKind::Prod) init = 1;
  std::vector<double> acc(outCount, init);
  // LogSumExp subtracts the max first for stability.
  std::vector<double> mx;
  if (kind == ReduceKind::LogSumExp) {
    mx.assign(outCount, -std::numeric_limits<double>::infinity());
  }
  int64_t total = numElements(shape);
  auto visit = [&](auto fn) {
    std::vector<int64_t> idx(rank, 0);
    int64_t o = 0;
    for (int64_t i = 0; i < total; ++i) {
      fn(o, static_cast<double>(in[i]));
      for (size_t d = rank; d-- > 0;) {
        o += ostride[d];
        if (++idx[d] < shape[d]) break;
        o -= ostride[d] * shape[d];
        idx[d] = 0;
      }
    }
  };
  switch (kind) {
  case ReduceKind::Sum:
  case ReduceKind::Mean:
    visit([&](int64_t o, double v) { acc[o] += v; });
    break;
  case ReduceKind::Max:
    visit([&](int64_t o, double v) { acc[o] = std::max(acc[o], v); });
    break;
  case ReduceKind::Min:
    visit([&](int64_t o, double v) { acc[o] = std::min(acc[o], v); });
    break;
  case ReduceKind::Prod:
    visit([&](int64_t o, double v) { acc[o] *= v; });
    break;
  case ReduceKind::L1:
    visit([&](int64_t o, double v) { acc[o] += std::fabs(v); });
    break;
  case ReduceKind::L2:
  case ReduceKind::SumSquare:
    visit([&](int64_t o, double v) { acc[o] += v * v; });
    break;
  case ReduceKind::LogSumExp:
    visit([&](int64_t o, double v) { mx[o] = std::max(mx[o], v); });
    visit([&](int64_t o, double v) { acc[o] += std::exp(v - mx[o]); });
    break;
  }
  for (int64_t o = 0; o < outCount; ++o) {
    double v = acc[o];
    if (kind == ReduceKind::Mean) v /= count;
    if (kind == ReduceKind::L2) v = std::sqrt(v);
    if (kind == ReduceKind::LogSumExp) v = std::log(v) + mx[o];
    out[o] = static_cast<float>(v);
  }
}

void argReduce(bool isMax, const float *in, const Shape &shape, int64_t axis, bool selectLast, float *out) {
  int64_t outer = 1, inner = 1, len = shape[axis];
  for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const float *src = in + o * len * inner + i;
      int64_t best = 0;
      for (int64_t k = 1; k < len; ++k) {
        float v = src[k * inner], b = src[best * inner];
        bool better = isMax ? (v > b || (selectLast && v == b)) : (v < b || (selectLast && v == b));
        if (better) best = k;
      }
      out[o * inner + i] = static_cast<float>(best);
    }
  }
}

} // namespace tpu::kernels
