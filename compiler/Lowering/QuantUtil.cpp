#include "compiler/Lowering/QuantUtil.h"

#include "compiler/Dialect/Tpu/TpuOps.h"

#include <algorithm>
#include <climits>
#include <cmath>

namespace tpu::lowering {

bool isUnsignedRange(const calib::TensorRange &range, bool allowUnsigned) { return allowUnsigned && range.min >= 0; }

float int8Scale(const calib::TensorRange &range, bool allowUnsigned) {
  return float(range.threshold / (isUnsignedRange(range, allowUnsigned) ? 255.0 : 127.0));
}

mlir::RankedTensorType quantizedType(llvm::ArrayRef<int64_t> shape, const calib::TensorRange &range,
                                     mlir::MLIRContext *ctx, bool allowUnsigned) {
  return tpuir::int8Type(shape, int8Scale(range, allowUnsigned), ctx, isUnsignedRange(range, allowUnsigned));
}

std::optional<int> chooseShift(std::initializer_list<Bound> bounds) {
  for (int r = 31; r >= 0; --r) {
    bool fits = true;
    for (const Bound &b : bounds) fits = fits && std::round(std::fabs(b.value) * std::ldexp(1.0, r)) <= b.limit;
    if (fits) return r;
  }
  return std::nullopt;
}

int64_t fixedPoint(double v, int r) { return int64_t(std::round(v * std::ldexp(1.0, r))); }

int64_t clampTo(int64_t v, int64_t lo, int64_t hi) { return std::min(std::max(v, lo), hi); }

double maxAbs(const std::vector<float> &v) {
  double m = 0;
  for (float x : v) m = std::max(m, double(std::fabs(x)));
  return m;
}

std::optional<AffineIntegers> affineIntegers(double k, const std::vector<double> &scale,
                                             const std::vector<double> &bias, double so) {
  double maxScale = 0, maxBias = 0;
  for (double v : scale) maxScale = std::max(maxScale, std::fabs(v));
  for (double v : bias) maxBias = std::max(maxBias, std::fabs(v));
  auto r = chooseShift({{maxScale * k, 32767}, {maxBias / so, 2147483647.0}});
  if (!r) return std::nullopt;
  AffineIntegers a;
  a.rshift = *r;
  for (double v : scale) a.multipliers.push_back(int16_t(clampTo(fixedPoint(v * k, *r), -32768, 32767)));
  for (double v : bias) a.offsets.push_back(int32_t(clampTo(fixedPoint(v / so, *r), INT32_MIN, INT32_MAX)));
  return a;
}

} // namespace tpu::lowering
