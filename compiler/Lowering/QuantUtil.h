// The int8 quantization arithmetic of the Top -> Tpu lowering: the quantized
// activation type of a calibrated tensor, the choice of the right shift and
// the fixed-point values under it. Formulas: docs/quantization.md.
#pragma once

#include "compiler/Calibration/CalibrationTable.h"

#include "mlir/IR/BuiltinTypes.h"

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <vector>

namespace tpu::lowering {

// A tensor whose calibrated minimum is >= 0 (ReLU outputs) is uint8 with
// scale threshold / 255 (unless `allowUnsigned` is false), any other int8
// with threshold / 127.
bool isUnsignedRange(const calib::TensorRange &range, bool allowUnsigned = true);
float int8Scale(const calib::TensorRange &range, bool allowUnsigned = true);
// The int8 activation type of a tensor of that range.
mlir::RankedTensorType quantizedType(llvm::ArrayRef<int64_t> shape, const calib::TensorRange &range,
                                     mlir::MLIRContext *ctx, bool allowUnsigned = true);

// A value that must fit a field: round(|value| * 2^r) <= limit.
struct Bound {
  double value;
  double limit;
};
// Largest right shift r in [0, 31] with every bound satisfied: the finest
// fixed-point grid the fields can hold; nullopt if none.
std::optional<int> chooseShift(std::initializer_list<Bound> bounds);
// round(v * 2^r).
int64_t fixedPoint(double v, int r);
int64_t clampTo(int64_t v, int64_t lo, int64_t hi);
double maxAbs(const std::vector<float> &v);

// An int8 affine's integers: y = x * scale[c] * k + bias[c] / so (k the
// input scale over the output scale so) as (x * multiplier[c] + offset[c])
// >> rshift, multipliers int16 and offsets int32 at the largest shift that
// fits them; nullopt if none does.
struct AffineIntegers {
  std::vector<int16_t> multipliers;
  std::vector<int32_t> offsets;
  int rshift = 0;
};
std::optional<AffineIntegers> affineIntegers(double k, const std::vector<double> &scale,
                                             const std::vector<double> &bias, double so);

} // namespace tpu::lowering
