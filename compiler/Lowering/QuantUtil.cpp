#include "compiler/Lowering/QuantUtil.h"

#include "compiler/Dialect/Tpu/TpuOps.h"

#include <algorithm>
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

} // namespace tpu::lowering
