#include "compiler/Lowering/WeightRounding.h"

#include "support/Parallel.h"

#include <algorithm>
#include <cmath>

namespace tpu::lowering {

std::vector<PatchMoments> patchMoments(const std::vector<std::vector<float>> &samples, const ConvGeometry &g,
                                       int64_t maxPositions) {
  const int64_t k = g.patchSize(), cg = g.c / g.groups, perSample = g.n * g.oh * g.ow;
  const int64_t taken = std::min(perSample, std::max<int64_t>(1, maxPositions));
  const int64_t rowLen = g.groups * k, rows = taken * int64_t(samples.size());
  // Every sampled patch of every group, one row per position: [rows, groups * k].
  std::vector<float> patches(size_t(rows * rowLen), 0.0f);
  for (size_t s = 0; s < samples.size(); ++s) {
    const std::vector<float> &x = samples[s];
    for (int64_t i = 0; i < taken; ++i) {
      const int64_t pos = i * perSample / taken, ni = pos / (g.oh * g.ow), oy = pos / g.ow % g.oh, ox = pos % g.ow;
      float *row = &patches[size_t((int64_t(s) * taken + i) * rowLen)];
      for (int64_t c = 0; c < g.c; ++c)
        for (int64_t ky = 0; ky < g.kh; ++ky)
          for (int64_t kx = 0; kx < g.kw; ++kx) {
            const int64_t iy = oy * g.strideH - g.padTop + ky * g.dilationH;
            const int64_t ix = ox * g.strideW - g.padLeft + kx * g.dilationW;
            if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
            const int64_t gi = c / cg, j = (c % cg) * g.kh * g.kw + ky * g.kw + kx;
            row[gi * k + j] = x[size_t(((ni * g.c + c) * g.h + iy) * g.w + ix)];
          }
    }
  }
  std::vector<PatchMoments> m(size_t(g.groups));
  for (PatchMoments &pm : m) pm.mean.assign(size_t(k), 0.0), pm.second.assign(size_t(k * k), 0.0);
  const double inv = rows ? 1.0 / double(rows) : 0.0;
  // One (group, row j) of the second moment per item: the upper triangle,
  // mirrored; the same sums in the same order whatever the thread count.
  parallelFor(g.groups * k, 1, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t gi = item / k, j = item % k;
      PatchMoments &pm = m[size_t(gi)];
      double sum = 0;
      std::vector<double> acc(size_t(k - j), 0.0);
      for (int64_t r = 0; r < rows; ++r) {
        const float *p = &patches[size_t(r * rowLen + gi * k)];
        const double a = p[j];
        sum += a;
        if (a != 0)
          for (int64_t l = j; l < k; ++l) acc[size_t(l - j)] += a * p[l];
      }
      pm.mean[size_t(j)] = sum * inv;
      for (int64_t l = j; l < k; ++l) pm.second[size_t(j * k + l)] = pm.second[size_t(l * k + j)] = acc[size_t(l - j)] * inv;
    }
  });
  return m;
}

std::vector<double> roundWeights(const std::vector<double> &t, const ConvGeometry &g,
                                 const std::vector<PatchMoments> &moments, bool optimize, bool correctBias,
                                 std::vector<int8_t> &wq) {
  const int64_t k = g.patchSize(), ocPerGroup = g.oc / g.groups;
  wq.assign(t.size(), 0);
  std::vector<double> shift(correctBias ? size_t(g.oc) : 0, 0.0);
  parallelFor(g.oc, 1, [&](int64_t begin, int64_t end) {
    std::vector<double> d(static_cast<size_t>(k)), grad(static_cast<size_t>(k));
    for (int64_t o = begin; o < end; ++o) {
      const PatchMoments &pm = moments[size_t(o / ocPerGroup)];
      const double *target = &t[size_t(o * k)];
      for (int64_t j = 0; j < k; ++j) d[size_t(j)] = std::clamp(std::round(target[j]), -128.0, 127.0) - target[j];
      if (optimize) {
        // E[(d . x)^2] = d^T M d, M the (centred when the bias takes the
        // mean) second moment; grad = M d.
        auto moment = [&](int64_t i, int64_t j) {
          const double s = pm.second[size_t(i * k + j)];
          return correctBias ? s - pm.mean[size_t(i)] * pm.mean[size_t(j)] : s;
        };
        for (int64_t i = 0; i < k; ++i) {
          double s = 0;
          for (int64_t j = 0; j < k; ++j) s += moment(i, j) * d[size_t(j)];
          grad[size_t(i)] = s;
        }
        for (int pass = 0; pass < 4; ++pass) {
          bool changed = false;
          for (int64_t j = 0; j < k; ++j) {
            const double alt = d[size_t(j)] >= 0 ? d[size_t(j)] - 1 : d[size_t(j)] + 1;
            const double q = target[j] + alt;
            if (q < -128.0 - 1e-9 || q > 127.0 + 1e-9) continue;
            const double delta = alt - d[size_t(j)];
            if (2 * delta * grad[size_t(j)] + delta * delta * moment(j, j) >= -1e-12) continue;
            d[size_t(j)] = alt;
            for (int64_t i = 0; i < k; ++i) grad[size_t(i)] += delta * moment(i, j);
            changed = true;
          }
          if (!changed) break;
        }
      }
      double mean = 0;
      for (int64_t j = 0; j < k; ++j) {
        wq[size_t(o * k + j)] = int8_t(std::lround(target[j] + d[size_t(j)]));
        mean += d[size_t(j)] * pm.mean[size_t(j)];
      }
      if (correctBias) shift[size_t(o)] = mean;
    }
  });
  return shift;
}

} // namespace tpu::lowering
