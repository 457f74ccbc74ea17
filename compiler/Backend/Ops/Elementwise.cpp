// Add, Mul and Max: two inputs of the output's shape (the second may be
// (N, C, 1, 1), broadcast over H and W, or a per-channel weight). int8:
// Add/Max requantize(eu(a*m0, b*m1)), Mul requantize(a*b*m).
#include "compiler/Backend/ElementwiseEmitter.h"
#include "compiler/Backend/OpRegistry.h"
#include "compiler/Backend/OpValidation.h"
#include "compiler/Backend/ReferenceEval.h"

#include <algorithm>

namespace tpu::backend {

int64_t int8Binary(OpKind kind, int64_t a, int64_t b, const Op &op, DType out) {
  switch (kind) {
  case OpKind::Add: return requantizeOp(a * op.multipliers[0] + b * op.multipliers[1], op, op.relu, out);
  case OpKind::Max: return requantizeOp(std::max(a * op.multipliers[0], b * op.multipliers[1]), op, op.relu, out);
  default: return requantizeOp(a * b * op.multipliers[0], op, op.relu, out);
  }
}

namespace {

using namespace emit;

// Mul scales the product once; Add and Max scale each input.
size_t multiplierCount(OpKind k) { return k == OpKind::Mul ? 1 : 2; }

Status validateBinary(const OpCheck &c) {
  if (c.in(0).isWeight()) return makeError("the first input must be an activation");
  const auto &ys = c.ys;
  if (c.in(1).isWeight()) {
    // A per-channel constant: C values ([C] or [1, C, 1, 1]) of the activation type.
    const Tensor &w = c.in(1);
    if (w.numel() != ys[1] || (w.shape.size() != 1 && w.shape != std::vector<int64_t>{1, ys[1], 1, 1}))
      return makeError("weight '", w.name, "' must hold one value per channel ([", ys[1], "] or [1, ", ys[1], ", 1, 1])");
    if (w.dtype != (c.int8 ? DType::I8 : DType::F32))
      return makeError("weight '", w.name, "' must be ", c.int8 ? "int8" : "float32");
    if (c.in(0).nchw() != ys) return makeError("input and output shapes differ");
    return c.needMultipliers(multiplierCount(c.op.kind));
  }
  for (size_t i = 0; i < 2; ++i) {
    TPU_RETURN_IF_ERROR(c.sameType(c.in(i)));
    auto xs = c.in(i).nchw();
    // The second input may be (N, C, 1, 1), broadcast over H and W.
    bool bcast = i == 1 && xs[0] == ys[0] && xs[1] == ys[1] && xs[2] == 1 && xs[3] == 1;
    if (xs != ys && !bcast)
      return makeError("input '", c.in(i).name, "' shape differs from the output's (only the second input may be (N, C, 1, 1))");
  }
  TPU_RETURN_IF_ERROR(c.needMultipliers(multiplierCount(c.op.kind)));
  for (int32_t m : c.op.multipliers) TPU_RETURN_IF_ERROR(fitsInt16(m));
  return Status::ok();
}

void evaluateBinary(const RefArgs &r, Bytes &out) {
  // Element i of the second input: the same, its (n, c) when broadcast,
  // or its channel for a per-channel weight.
  const Tensor &second = r.input(1);
  const int64_t plane = second.numel() == r.y.numel() ? 1 : r.ys[2] * r.ys[3];
  const int64_t wrap = second.isWeight() ? r.ys[1] : INT64_MAX;
  const OpKind kind = r.op.kind;
  if (r.isInt) {
    auto a = r.ints(0), b = r.ints(1);
    std::vector<int64_t> ri(r.count);
    for (size_t i = 0; i < r.count; ++i)
      ri[i] = int8Binary(kind, a[i], b[size_t(int64_t(i) / plane % wrap)], r.op, r.y.dtype);
    out = fromInts(ri, r.y.dtype);
    return;
  }
  const float *a = floats(*r.in[0]), *b = floats(*r.in[1]);
  std::vector<float> rf(r.count);
  for (size_t i = 0; i < r.count; ++i) {
    const float bv = b[int64_t(i) / plane % wrap];
    float v = kind == OpKind::Add ? a[i] + bv : kind == OpKind::Mul ? a[i] * bv : std::max(a[i], bv);
    rf[i] = r.op.relu ? sim::relu(v) : v;
  }
  out = fromFloats(rf);
}

class BinaryOp : public ElementwiseOp {
public:
  BinaryOp(Emitter &e, const Op &op) : ElementwiseOp(e, op) {}
  // int8: the scaled inputs (Add/Max) or the product (Mul) in int32.
  unsigned temps() const override { return isFloat() ? 0 : unsigned(multiplierCount(op_.kind)); }
  DType tempType() const override { return isFloat() ? DType::F32 : DType::I32; }
  uint16_t computeOn(const std::vector<LocalTensor> &ins, const LocalTensor &y, const std::vector<LocalTensor> &tmp, int64_t, int64_t,
                     uint16_t wait) override {
    using isa::EuOp;
    const LocalTensor &a = ins[0];
    const LocalTensor b2 = hasChannelWeights() ? channelWeight(0, y.shape) : ins[1];
    const auto &m = op_.multipliers;
    EuOp eu = op_.kind == OpKind::Add ? EuOp::Add : op_.kind == OpKind::Max ? EuOp::Max : EuOp::Mul;
    if (isFloat()) return elementwise(eu, y, a.operand(hw_), b2.operand(hw_), 0, op_.relu, wait);
    if (op_.kind == OpKind::Mul) {
      elementwise(EuOp::Mul, tmp[0], a.operand(hw_), b2.operand(hw_), 0, false, wait);
      return elementwise(EuOp::Mul, y, tmp[0].operand(hw_), constant(DType::I16, m[0]), op_.rshift, op_.relu, wait);
    }
    elementwise(EuOp::Mul, tmp[0], a.operand(hw_), constant(DType::I16, m[0]), 0, false, wait);
    elementwise(EuOp::Mul, tmp[1], b2.operand(hw_), constant(DType::I16, m[1]), 0, false, wait);
    return elementwise(eu, y, tmp[0].operand(hw_), tmp[1].operand(hw_), op_.rshift, op_.relu, wait);
  }
};

} // namespace

namespace ops {
const OpImpl Add{OpKind::Add, validateBinary, evaluateBinary, slicedAs<BinaryOp>, nullptr, nullptr};
const OpImpl Mul{OpKind::Mul, validateBinary, evaluateBinary, slicedAs<BinaryOp>, nullptr, nullptr};
const OpImpl Max{OpKind::Max, validateBinary, evaluateBinary, slicedAs<BinaryOp>, nullptr, nullptr};
} // namespace ops

} // namespace tpu::backend
