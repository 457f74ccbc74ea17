// Relu, LeakyRelu and Clip: one activation input, element by element.
#include "compiler/Backend/Ops/Activation.h"
#include "compiler/Backend/ElementwiseEmitter.h"
#include "compiler/Backend/OpRegistry.h"
#include "compiler/Backend/OpValidation.h"
#include "compiler/Backend/ReferenceEval.h"

#include <algorithm>

namespace tpu::backend {

int64_t int8LeakyRelu(int64_t x, const Op &op, DType out) {
  return std::max(x, requantizeOp(x * op.multipliers[0], op, false, out));
}

namespace {

using namespace emit;
using isa::EuOp;

Status validateRelu(const OpCheck &c) { return c.unaryInput(); }

Status validateLeakyRelu(const OpCheck &c) {
  TPU_RETURN_IF_ERROR(c.unaryInput());
  TPU_RETURN_IF_ERROR(c.needMultipliers(1));
  const float alpha = c.op.params<LeakyReluParams>().alpha;
  if (!c.int8 && !(alpha >= 0.0f && alpha <= 1.0f)) return makeError("alpha ", alpha, " is outside [0, 1]");
  if (c.int8 && (c.op.multipliers[0] < -128 || c.op.multipliers[0] > 127))
    return makeError("multiplier ", c.op.multipliers[0], " does not fit int8");
  return Status::ok();
}

Status validateClip(const OpCheck &c) {
  TPU_RETURN_IF_ERROR(c.unaryInput());
  const ClipParams &p = c.op.params<ClipParams>();
  if (!(p.min <= p.max)) return makeError("clip bounds [", p.min, ", ", p.max, "] are empty");
  return Status::ok();
}

void evaluateRelu(const RefArgs &r, Bytes &out) {
  mapElements(r, out, [](int64_t v) { return std::max<int64_t>(v, 0); }, [](float v) { return std::max(v, 0.0f); });
}

void evaluateLeakyRelu(const RefArgs &r, Bytes &out) {
  const Op &op = r.op;
  const DType t = r.y.dtype;
  const float alpha = op.params<LeakyReluParams>().alpha;
  auto int8 = [&](int64_t v) { return int8LeakyRelu(v, op, t); };
  mapElements(r, out, int8, [&](float v) { return std::max(v, v * alpha); });
}

void evaluateClip(const RefArgs &r, Bytes &out) {
  const ClipParams &p = r.op.params<ClipParams>();
  const int64_t lo = int64_t(p.min), hi = int64_t(p.max);
  auto int8 = [&](int64_t v) { return std::min(std::max(v, lo), hi); };
  mapElements(r, out, int8, [&](float v) { return std::min(std::max(v, p.min), p.max); });
}

class ReluOp : public ElementwiseOp {
public:
  using ElementwiseOp::ElementwiseOp;
  uint16_t computeOn(const std::vector<LocalTensor> &ins, const LocalTensor &y, const std::vector<LocalTensor> &, int64_t, int64_t,
                     uint16_t wait) override {
    return elementwise(EuOp::Max, y, ins[0].operand(hw_), isFloat() ? constantF(0.0f) : constant(outType(), 0), 0, false,
              wait);
  }
};

// max(x, x * slope), the product in a scratch buffer.
class LeakyReluOp : public ElementwiseOp {
public:
  using ElementwiseOp::ElementwiseOp;
  unsigned temps() const override { return 1; }
  uint16_t computeOn(const std::vector<LocalTensor> &ins, const LocalTensor &y, const std::vector<LocalTensor> &tmp, int64_t, int64_t,
                     uint16_t wait) override {
    const LocalTensor &a = ins[0];
    if (isFloat())
      elementwise(EuOp::Mul, tmp[0], a.operand(hw_), constantF(p_.alpha), 0, false, wait);
    else
      elementwise(EuOp::Mul, tmp[0], a.operand(hw_), constant(DType::I8, op_.multipliers[0]), op_.rshift, false, wait);
    return elementwise(EuOp::Max, y, a.operand(hw_), tmp[0].operand(hw_), 0, false, wait);
  }

private:
  const LeakyReluParams &p_ = op_.params<LeakyReluParams>();
};

class ClipOp : public ElementwiseOp {
public:
  using ElementwiseOp::ElementwiseOp;
  uint16_t computeOn(const std::vector<LocalTensor> &ins, const LocalTensor &y, const std::vector<LocalTensor> &, int64_t, int64_t,
                     uint16_t wait) override {
    const LocalTensor &a = ins[0];
    if (isFloat()) {
      elementwise(EuOp::Max, y, a.operand(hw_), constantF(p_.min), 0, false, wait);
      return elementwise(EuOp::Min, y, y.operand(hw_), constantF(p_.max), 0, false, wait);
    }
    // The integer bounds saturated to the output type, as int16 constants.
    auto r = sim::intRange(Prec::Int8, outType() != DType::U8);
    int64_t lo = sim::saturate(int64_t(p_.min), r), hi = sim::saturate(int64_t(p_.max), r);
    elementwise(EuOp::Max, y, a.operand(hw_), constant(DType::I16, lo), 0, false, wait);
    return elementwise(EuOp::Min, y, y.operand(hw_), constant(DType::I16, hi), 0, false, wait);
  }

private:
  const ClipParams &p_ = op_.params<ClipParams>();
};

} // namespace

namespace ops {
const OpImpl Relu{OpKind::Relu, validateRelu, evaluateRelu, slicedAs<ReluOp>, nullptr, nullptr};
const OpImpl LeakyRelu{OpKind::LeakyRelu, validateLeakyRelu, evaluateLeakyRelu, slicedAs<LeakyReluOp>, nullptr,
                       nullptr};
const OpImpl Clip{OpKind::Clip, validateClip, evaluateClip, slicedAs<ClipOp>, nullptr, nullptr};
} // namespace ops

} // namespace tpu::backend
