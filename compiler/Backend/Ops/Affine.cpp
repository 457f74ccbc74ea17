// Affine: x * a + b, with scalars (fp32 alpha, beta; int8 multipliers) or
// per channel (batch norm: scale [C], bias [C] weights). One md_linear mac.
// The int8 input may be int16: a conv's accumulator requantized per channel.
#include "compiler/Backend/Ops/Affine.h"
#include "compiler/Backend/ElementwiseEmitter.h"
#include "compiler/Backend/OpRegistry.h"
#include "compiler/Backend/OpValidation.h"
#include "compiler/Backend/ReferenceEval.h"
#include "support/Parallel.h"

namespace tpu::backend {

namespace {

using namespace emit;

Status validateAffine(const OpCheck &c) {
  const auto &ys = c.ys;
  // An int16 input is a conv's accumulator, requantized to int8 here.
  if (c.y.dtype == DType::I16) return makeError("output dtype int16 (an affine writes int8 or fp32)");
  if (c.op.inputs.size() == 3) {
    // Per channel: scale and bias weights of C values ([C] or [1, C, 1, 1]).
    TPU_RETURN_IF_ERROR(c.sameType(c.in(0)));
    if (c.in(0).isWeight()) return makeError("the first input must be an activation");
    if (c.in(0).nchw() != ys) return makeError("input and output shapes differ");
    for (size_t i = 1; i < 3; ++i) {
      const Tensor &w = c.in(i);
      const DType want = !c.int8 ? DType::F32 : i == 1 ? DType::I16 : DType::I32;
      if (!w.isWeight() || w.numel() != ys[1] || (w.shape.size() != 1 && w.shape != std::vector<int64_t>{1, ys[1], 1, 1}))
        return makeError("weight '", w.name, "' must hold one value per channel ([", ys[1], "] or [1, ", ys[1],
                         ", 1, 1])");
      if (w.dtype != want) return makeError("weight '", w.name, "' must be ", dtypeName(want));
    }
    return Status::ok();
  }
  TPU_RETURN_IF_ERROR(c.unaryInput());
  if (!c.int8) return Status::ok();
  TPU_RETURN_IF_ERROR(c.needMultipliers(2));
  return fitsInt16(c.op.multipliers[0]);
}

void evaluateAffine(const RefArgs &r, Bytes &out) {
  const Op &op = r.op;
  const DType t = r.y.dtype;
  if (r.in.size() == 3) { // per channel: x * scale[c] + bias[c]
    const int64_t plane = r.ys[2] * r.ys[3], channels = r.ys[1];
    auto channel = [&](size_t i) { return size_t(int64_t(i) / plane % channels); };
    if (r.isInt) {
      auto a = r.ints(0), sc = toInts(*r.in[1], DType::I16), bi = toInts(*r.in[2], DType::I32);
      std::vector<int64_t> ri(r.count);
      parallelFor(int64_t(r.count) / plane, 1, [&](int64_t p0, int64_t p1) {
        for (int64_t nc = p0; nc < p1; ++nc) {
          const int64_t scale = sc[size_t(nc % channels)], offset = bi[size_t(nc % channels)];
          for (int64_t i = nc * plane; i < (nc + 1) * plane; ++i)
            ri[size_t(i)] = requantizeOp(a[size_t(i)] * scale + offset, op, op.relu, t);
        }
      });
      out = fromInts(ri, t);
      return;
    }
    const float *a = floats(*r.in[0]), *sc = floats(*r.in[1]), *bi = floats(*r.in[2]);
    std::vector<float> rf(r.count);
    for (size_t i = 0; i < r.count; ++i) {
      float s = a[i] * sc[channel(i)];
      float v = s + bi[channel(i)];
      rf[i] = op.relu ? sim::relu(v) : v;
    }
    out = fromFloats(rf);
    return;
  }
  auto int8 = [&](int64_t v) { return requantizeOp(v * op.multipliers[0] + op.multipliers[1], op, op.relu, t); };
  mapElements(r, out, int8, [&, p = op.params<AffineParams>()](float v) {
    float s = v * p.alpha;
    float w = s + p.beta;
    return op.relu ? sim::relu(w) : w;
  });
}

// md_linear mac: a * b + c with constant or per-channel b, c.
class AffineOp : public ElementwiseOp {
public:
  using ElementwiseOp::ElementwiseOp;
  uint16_t computeOn(const std::vector<LocalTensor> &ins, const LocalTensor &y, const std::vector<LocalTensor> &, int64_t, int64_t,
                     uint16_t wait) override {
    const bool f = isFloat();
    isa::MdLinear c;
    c.res0 = y.operand(hw_), c.opd0 = ins[0].operand(hw_), c.opdCount = 3;
    if (hasChannelWeights()) {
      c.opd1 = channelWeight(0, y.shape).operand(hw_), c.opd2 = channelWeight(1, y.shape).operand(hw_);
    } else {
      c.opd1 = f ? constantF(p_.alpha) : constant(DType::I16, op_.multipliers[0]);
      c.opd2 = f ? constantF(p_.beta) : constant(DType::I32, op_.multipliers[1]);
    }
    c.opd1.shape = c.opd2.shape = y.shape;
    c.rshift = f ? 0 : op_.rshift, c.relu = op_.relu;
    return e_.b->tiu(c, wait);
  }

private:
  const AffineParams &p_ = op_.params<AffineParams>();
};

} // namespace

namespace ops {
const OpImpl Affine{OpKind::Affine, validateAffine, evaluateAffine, slicedAs<AffineOp>, nullptr, nullptr,
                    /*int16Activations=*/true};
} // namespace ops

} // namespace tpu::backend
