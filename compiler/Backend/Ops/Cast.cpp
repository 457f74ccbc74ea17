// Cast: fp32 -> int8 (quantize with the output's scale, round half to even,
// saturate) or int8 -> fp32 (q * the input's scale); fp32 <-> a 16-bit float
// (rounded to nearest even, widened exactly: support/Float16.h).
#include "compiler/Backend/ElementwiseEmitter.h"
#include "compiler/Backend/OpRegistry.h"
#include "compiler/Backend/OpValidation.h"
#include "compiler/Backend/ReferenceEval.h"

namespace tpu::backend {

namespace {

using namespace emit;
using isa::EuOp;

Status validateCast(const OpCheck &c) {
  const Tensor &x = c.in(0);
  if ((x.dtype == DType::F32 && isHalf(c.y.dtype)) || (isHalf(x.dtype) && c.y.dtype == DType::F32))
    return x.nchw() == c.ys ? Status::ok() : makeError("input and output shapes differ");
  bool toInt = x.dtype == DType::F32 && c.int8;
  bool toFloat = isInt8Like(x.dtype) && c.y.dtype == DType::F32;
  if (!toInt && !toFloat) return makeError("casts fp32 <-> int8 only");
  if (x.nchw() != c.ys) return makeError("input and output shapes differ");
  float s = toInt ? c.y.scale : x.scale;
  if (!(s > 0.0f) || s != s) return makeError("scale ", s, " must be positive");
  return Status::ok();
}

void evaluateCast(const RefArgs &r, Bytes &out) {
  if (isHalf(r.y.dtype) || isHalf(r.x.dtype)) {
    out = isHalf(r.y.dtype) ? roundToHalf(*r.in[0], r.y.dtype) : widenHalf(*r.in[0], r.x.dtype);
    return;
  }
  if (r.isInt) {
    const float *a = floats(*r.in[0]);
    std::vector<int64_t> ri(r.count);
    for (size_t i = 0; i < r.count; ++i) ri[i] = quantizeValue(a[i], r.y.scale, r.y.dtype);
    out = fromInts(ri, r.y.dtype);
    return;
  }
  auto a = r.ints(0);
  std::vector<float> rf(r.count);
  for (size_t i = 0; i < r.count; ++i) rf[i] = float(a[i]) * r.x.scale;
  out = fromFloats(rf);
}

// The conversion and the scaling, through an fp32 scratch buffer.
class CastOp : public ElementwiseOp {
public:
  using ElementwiseOp::ElementwiseOp;
  unsigned temps() const override { return 1; }
  DType tempType() const override { return DType::F32; }
  uint16_t computeOn(const std::vector<LocalTensor> &ins, const LocalTensor &y, const std::vector<LocalTensor> &tmp, int64_t, int64_t,
                     uint16_t wait) override {
    const LocalTensor &a = ins[0];
    if (isFloat()) { // int8 -> fp32: convert, then scale
      elementwise(EuOp::Copy, tmp[0], a.operand(hw_), LocalOperand{}, 0, false, wait, 1);
      return elementwise(EuOp::Mul, y, tmp[0].operand(hw_), constantF(e_.g.tensors[op_.inputs[0]].scale), 0, false, wait);
    }
    // fp32 -> int8: scale, then convert (round half to even, saturate)
    elementwise(EuOp::Mul, tmp[0], a.operand(hw_), constantF(1.0f / e_.g.tensors[op_.output].scale), 0, false, wait);
    return elementwise(EuOp::Copy, y, tmp[0].operand(hw_), LocalOperand{}, 0, false, wait, 1);
  }
};

} // namespace

namespace ops {
const OpImpl Cast{OpKind::Cast, validateCast, evaluateCast, slicedAs<CastOp>, nullptr, nullptr};
} // namespace ops

} // namespace tpu::backend
