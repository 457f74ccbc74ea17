// Requant: int8 -> int8, requantize(x * multiplier, rshift, relu).
#include "compiler/Backend/ElementwiseEmitter.h"
#include "compiler/Backend/OpRegistry.h"
#include "compiler/Backend/OpValidation.h"
#include "compiler/Backend/ReferenceEval.h"

namespace tpu::backend {

namespace {

using namespace emit;

Status validateRequant(const OpCheck &c) {
  TPU_RETURN_IF_ERROR(c.unaryInput());
  if (!c.int8) return makeError("Requant is int8 only");
  TPU_RETURN_IF_ERROR(c.needMultipliers(1));
  return fitsInt16(c.op.multipliers[0]);
}

void evaluateRequant(const RefArgs &r, Bytes &out) {
  const Op &op = r.op;
  const DType t = r.y.dtype;
  mapInts(r, out, [&](int64_t v) { return requantizeOp(v * op.multipliers[0], op, op.relu, t); });
}

class RequantOp : public ElementwiseOp {
public:
  using ElementwiseOp::ElementwiseOp;
  uint16_t computeOn(const std::vector<LocalTensor> &ins, const LocalTensor &y, const std::vector<LocalTensor> &, int64_t, int64_t,
                     uint16_t wait) override {
    return elementwise(isa::EuOp::Mul, y, ins[0].operand(hw_), constant(DType::I16, op_.multipliers[0]), op_.rshift, op_.relu,
              wait);
  }
};

} // namespace

namespace ops {
const OpImpl Requant{OpKind::Requant, validateRequant, evaluateRequant, slicedAs<RequantOp>, nullptr, nullptr};
} // namespace ops

} // namespace tpu::backend
