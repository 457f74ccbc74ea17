// Sigmoid, fp32 only (int8: a Lut op), the chip's recipe step for step
// (SigmoidRecipe, QuantRef.h): clamp, scale, Taylor series of exp, repeated
// squaring, 1 / (e + 1).
#include "compiler/Backend/ElementwiseEmitter.h"
#include "compiler/Backend/OpRegistry.h"
#include "compiler/Backend/OpValidation.h"
#include "compiler/Backend/ReferenceEval.h"

#include "isa/GdmaCommand.h"

#include <algorithm>

namespace tpu::backend {

const std::array<float, SigmoidRecipe::kExpTerms> &SigmoidRecipe::expCoefficients() {
  static const std::array<float, kExpTerms> c = [] {
    std::array<float, kExpTerms> v{};
    double f = 1.0;
    for (unsigned k = 0; k < kExpTerms; ++k) {
      if (k > 0) f *= double(k);
      v[k] = float(1.0 / f);
    }
    return v;
  }();
  return c;
}

float sigmoidChip(float x) {
  const auto &c = SigmoidRecipe::expCoefficients();
  float t = std::min(std::max(x, -SigmoidRecipe::kClamp), SigmoidRecipe::kClamp);
  t = t * (-1.0f / float(1u << SigmoidRecipe::kSquarings));
  float e = 0.0f;
  for (unsigned k = SigmoidRecipe::kExpTerms; k-- > 0;) {
    float p = e * t;
    e = p + c[k];
  }
  for (unsigned i = 0; i < SigmoidRecipe::kSquarings; ++i) e = e * e;
  e = e + 1.0f;
  return 1.0f / e;
}

namespace {

using namespace emit;
using isa::EuOp;

Status validateSigmoid(const OpCheck &c) {
  TPU_RETURN_IF_ERROR(c.unaryInput());
  if (c.int8) return makeError("int8 sigmoid is a Lut op");
  return Status::ok();
}

void evaluateSigmoid(const RefArgs &r, Bytes &out) { mapFloats(r, out, sigmoidChip); }

class SigmoidOp : public ElementwiseOp {
public:
  using ElementwiseOp::ElementwiseOp;
  unsigned temps() const override { return 1; } // e
  std::vector<uint64_t> fixedBytes(int64_t) const override { return {SigmoidRecipe::kExpTerms * 4}; }
  // The Taylor coefficients, filled into the same offset of every lane.
  uint16_t loadFixed(const Tile &, uint16_t wait) override {
    uint16_t id = 0;
    const auto &c = SigmoidRecipe::expCoefficients();
    for (size_t k = 0; k < c.size(); ++k) {
      isa::GdmaCommand f;
      f.direction = isa::GdmaDirection::S2L, f.specialFunc = isa::GdmaSpecialFunc::ConstantFill;
      f.constantValue = sim::floatBits(c[k]);
      f.src.format = f.dst.format = isa::GdmaFormat::Fp32;
      f.src.shape = f.dst.shape = {1, lanes(), 1, 1};
      f.dst.addr = fixed_[0] + uint32_t(k * 4), f.dst.stride = {1, 1, 1, 1};
      id = e_.b->gdma(f, wait);
    }
    return id;
  }
  uint16_t computeOn(const std::vector<LocalTensor> &ins, const LocalTensor &y, const std::vector<LocalTensor> &tmp, int64_t, int64_t,
                     uint16_t wait) override {
    using R = SigmoidRecipe;
    const LocalTensor &a = ins[0], &e = tmp[0];
    elementwise(EuOp::Max, y, a.operand(hw_), constantF(-R::kClamp), 0, false, wait);
    elementwise(EuOp::Min, y, y.operand(hw_), constantF(R::kClamp), 0, false, wait);
    elementwise(EuOp::Mul, y, y.operand(hw_), constantF(-1.0f / float(1u << R::kSquarings)), 0, false, wait);
    LocalTensor coef;
    coef.offset = fixed_[0], coef.dtype = DType::F32, coef.shape = {1, y.shape.c, 1, R::kExpTerms};
    coef.stride = {0, 0, 0, 1};
    elementwise(EuOp::Taylor, e, y.operand(hw_), coef.operand(hw_), 0, false, wait);
    for (unsigned i = 0; i < R::kSquarings; ++i) elementwise(EuOp::Mul, e, e.operand(hw_), e.operand(hw_), 0, false, wait);
    elementwise(EuOp::Add, e, e.operand(hw_), constantF(1.0f), 0, false, wait);
    return elementwise(EuOp::Divide, y, constantF(1.0f), e.operand(hw_), 0, false, wait);
  }
};

} // namespace

namespace ops {
const OpImpl Sigmoid{OpKind::Sigmoid, validateSigmoid, evaluateSigmoid, slicedAs<SigmoidOp>, nullptr, nullptr};
} // namespace ops

} // namespace tpu::backend
