// The binary element-wise kinds: Add, Sub, Mul, Max, Min, Div, Pow, PRelu,
// Greater, Less, Equal, and Where (three inputs).
// Inputs broadcast NumPy-style against the output (int8: of the output's
// rank), or the second is a per-channel weight (isChannelWeight); an fp32
// weight may have any broadcast shape. int8: Add/Sub/Max/Min
// requantize(eu(a*m0, b*m1)), Mul requantize(a*b*m); Div, Pow and PRelu are
// fp32 only (Pow, PRelu, the comparisons and Where: FloatKernels programs).
#include "compiler/Backend/ElementwiseEmitter.h"
#include "compiler/Backend/FloatKernels.h"
#include "compiler/Backend/OpRegistry.h"
#include "compiler/Backend/OpValidation.h"
#include "compiler/Backend/ReferenceEval.h"

#include <algorithm>
#include <cmath>

namespace tpu::backend {

int64_t int8Binary(OpKind kind, int64_t a, int64_t b, const Op &op, DType out) {
  const auto &m = op.multipliers;
  switch (kind) {
  case OpKind::Add: return requantizeOp(a * m[0] + b * m[1], op, op.relu, out);
  case OpKind::Sub: return requantizeOp(a * m[0] - b * m[1], op, op.relu, out);
  case OpKind::Max: return requantizeOp(std::max(a * m[0], b * m[1]), op, op.relu, out);
  case OpKind::Min: return requantizeOp(std::min(a * m[0], b * m[1]), op, op.relu, out);
  default: return requantizeOp(a * b * m[0], op, op.relu, out);
  }
}

namespace {

using namespace emit;
using isa::EuOp;

// Mul scales the product once; the others scale each input.
size_t multiplierCount(OpKind k) { return k == OpKind::Mul ? 1 : 2; }
// The fp32 programs (null: one command, eu below).
const KernelProgram *program(OpKind k) {
  switch (k) {
  case OpKind::Pow: return &powKernel();
  case OpKind::PRelu: return &preluKernel();
  case OpKind::Greater: return &compareKernel(true, false);
  case OpKind::Less: return &compareKernel(false, true);
  case OpKind::Equal: return &compareKernel(false, false);
  case OpKind::Where: return &whereKernel();
  default: return nullptr;
  }
}
bool isFloatOnly(OpKind k) { return k == OpKind::Div || program(k); }
EuOp euOf(OpKind k) {
  switch (k) {
  case OpKind::Add: return EuOp::Add;
  case OpKind::Sub: return EuOp::Sub;
  case OpKind::Max: return EuOp::Max;
  case OpKind::Min: return EuOp::Min;
  case OpKind::Div: return EuOp::Divide;
  default: return EuOp::Mul;
  }
}

std::string shapeText(const std::vector<int64_t> &s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

Status validateBinary(const OpCheck &c) {
  const OpKind kind = c.op.kind;
  const size_t inputs = c.op.inputs.size();
  bool allWeights = true;
  for (size_t i = 0; i < inputs; ++i) allWeights &= c.in(i).isWeight();
  if (allWeights) return makeError("every input is a weight");
  if (c.int8 && isFloatOnly(kind)) return makeError("int8 ", opKindName(kind), " is not a chip op (fp32 only)");
  if (c.op.relu && program(kind)) return makeError("no fused relu");
  std::array<int64_t, 4> cover{1, 1, 1, 1}; // the broadcast of the inputs' shapes
  for (size_t i = 0; i < inputs; ++i) {
    const Tensor &x = c.in(i);
    if (i >= 1 && isChannelWeight(x, c.y)) {
      if (x.dtype != (c.int8 ? DType::I8 : DType::F32))
        return makeError("weight '", x.name, "' must be ", c.int8 ? "int8" : "float32");
      cover[1] = std::max(cover[1], c.ys[1]);
      continue;
    }
    if (x.isWeight()) {
      if (c.int8)
        return makeError("weight '", x.name, "' must hold one value per channel ([", c.ys[1], "] or [1, ", c.ys[1],
                         ", 1, 1]) in int8");
      if (x.dtype != DType::F32) return makeError("weight '", x.name, "' must be float32");
    } else {
      TPU_RETURN_IF_ERROR(c.sameType(x));
    }
    const auto xs = broadcastNchw(x, c.y);
    if (x.shape.size() > c.y.shape.size())
      return makeError("input '", x.name, "' has more dims than the output");
    for (size_t d = 0; d < 4; ++d) {
      if (xs[d] != c.ys[d] && xs[d] != 1)
        return makeError("input '", x.name, "' shape ", shapeText(x.shape), " does not broadcast to the output's ",
                         shapeText(c.y.shape));
      cover[d] = std::max(cover[d], xs[d]);
    }
    if (c.int8 && !x.isWeight() && xs != x.nchw())
      return makeError("int8 input '", x.name, "' must have the output's rank (", c.y.shape.size(), " dims)");
  }
  if (cover != c.ys) return makeError("output shape ", shapeText(c.y.shape), " is not the broadcast of the inputs'");
  TPU_RETURN_IF_ERROR(c.needMultipliers(multiplierCount(kind)));
  for (int32_t m : c.op.multipliers) TPU_RETURN_IF_ERROR(fitsInt16(m));
  return Status::ok();
}

// For each output element, the index of input i's element it reads.
std::vector<size_t> sourceIndex(const RefArgs &r, size_t i) {
  const Tensor &x = r.input(i);
  std::vector<size_t> idx(r.count);
  if (i >= 1 && isChannelWeight(x, r.y)) {
    for (size_t k = 0; k < r.count; ++k) idx[k] = size_t(int64_t(k) / (r.ys[2] * r.ys[3]) % r.ys[1]);
    return idx;
  }
  const auto xs = broadcastNchw(x, r.y);
  size_t k = 0;
  for (int64_t n = 0; n < r.ys[0]; ++n)
    for (int64_t c = 0; c < r.ys[1]; ++c)
      for (int64_t h = 0; h < r.ys[2]; ++h)
        for (int64_t w = 0; w < r.ys[3]; ++w)
          idx[k++] = size_t((((n % xs[0]) * xs[1] + c % xs[1]) * xs[2] + h % xs[2]) * xs[3] + w % xs[3]);
  return idx;
}

void evaluateBinary(const RefArgs &r, Bytes &out) {
  const std::vector<size_t> ia = sourceIndex(r, 0), ib = sourceIndex(r, 1);
  const OpKind kind = r.op.kind;
  if (r.isInt) {
    auto a = r.ints(0), b = r.ints(1);
    std::vector<int64_t> ri(r.count);
    for (size_t i = 0; i < r.count; ++i) ri[i] = int8Binary(kind, a[ia[i]], b[ib[i]], r.op, r.y.dtype);
    out = fromInts(ri, r.y.dtype);
    return;
  }
  std::vector<float> rf(r.count);
  if (const KernelProgram *prog = program(kind)) {
    const size_t n = r.in.size();
    std::vector<std::vector<size_t>> idx{ia, ib};
    for (size_t k = 2; k < n; ++k) idx.push_back(sourceIndex(r, k));
    std::vector<float> in(n);
    for (size_t i = 0; i < r.count; ++i) {
      for (size_t k = 0; k < n; ++k) in[k] = floats(*r.in[k])[idx[k][i]];
      rf[i] = runKernel(*prog, in.data());
    }
    out = fromFloats(rf);
    return;
  }
  const float *a = floats(*r.in[0]), *b = floats(*r.in[1]);
  for (size_t i = 0; i < r.count; ++i) {
    const float av = a[ia[i]], bv = b[ib[i]];
    float v = 0.0f;
    switch (kind) {
    case OpKind::Add: v = av + bv; break;
    case OpKind::Sub: v = av - bv; break;
    case OpKind::Mul: v = av * bv; break;
    case OpKind::Div: v = av / bv; break;
    case OpKind::Max: v = std::max(av, bv); break;
    default: v = std::min(av, bv); break; // Min
    }
    rf[i] = r.op.relu ? sim::relu(v) : v;
  }
  out = fromFloats(rf);
}

class BinaryOp : public ElementwiseOp {
public:
  BinaryOp(Emitter &e, const Op &op) : ElementwiseOp(e, op), prog_(program(op.kind)) {}
  // int8: the scaled inputs (Add/Sub/Max/Min) or the product (Mul) in
  // int32; fp32 programs: their temps.
  unsigned temps() const override {
    if (isFloat()) return prog_ ? prog_->temps : 0;
    return unsigned(multiplierCount(op_.kind));
  }
  DType tempType() const override { return isFloat() ? DType::F32 : DType::I32; }
  // A program's coefficients follow the per-channel weight.
  std::vector<uint64_t> fixedBytes(int64_t cs) const override {
    auto v = ElementwiseOp::fixedBytes(cs);
    if (hasCoefficients()) v.push_back(kernelFixedBytes(*prog_));
    return v;
  }
  uint16_t loadFixed(const Tile &t, uint16_t wait) override {
    uint16_t id = ElementwiseOp::loadFixed(t, wait);
    if (hasCoefficients()) id = loadKernelCoefficients(e_, *prog_, fixed_.back(), wait);
    return id;
  }
  uint16_t computeOn(const std::vector<LocalTensor> &ins, const LocalTensor &y, const std::vector<LocalTensor> &tmp, int64_t, int64_t,
                     uint16_t wait) override {
    const LocalTensor &a = ins[0];
    const LocalTensor b2 = hasChannelWeights() ? channelWeight(0, y.shape) : ins[1];
    const auto &m = op_.multipliers;
    const EuOp eu = euOf(op_.kind);
    if (prog_) return emitKernel(e_, *prog_, operandsInOrder(ins, y.shape), y, tmp, hasCoefficients() ? fixed_.back() : 0, wait);
    if (isFloat()) return elementwise(eu, y, a.operand(hw_), b2.operand(hw_), 0, op_.relu, wait);
    if (op_.kind == OpKind::Mul) {
      elementwise(EuOp::Mul, tmp[0], a.operand(hw_), b2.operand(hw_), 0, false, wait);
      return elementwise(EuOp::Mul, y, tmp[0].operand(hw_), constant(DType::I16, m[0]), op_.rshift, op_.relu, wait);
    }
    elementwise(EuOp::Mul, tmp[0], a.operand(hw_), constant(DType::I16, m[0]), 0, false, wait);
    elementwise(EuOp::Mul, tmp[1], b2.operand(hw_), constant(DType::I16, m[1]), 0, false, wait);
    return elementwise(eu, y, tmp[0].operand(hw_), tmp[1].operand(hw_), op_.rshift, op_.relu, wait);
  }

private:
  bool hasCoefficients() const { return prog_ && !prog_->polys.empty(); }
  const KernelProgram *prog_;
};

} // namespace

namespace ops {
const OpImpl Add{OpKind::Add, validateBinary, evaluateBinary, slicedAs<BinaryOp>, nullptr, nullptr};
const OpImpl Mul{OpKind::Mul, validateBinary, evaluateBinary, slicedAs<BinaryOp>, nullptr, nullptr};
const OpImpl Max{OpKind::Max, validateBinary, evaluateBinary, slicedAs<BinaryOp>, nullptr, nullptr};
const OpImpl Sub{OpKind::Sub, validateBinary, evaluateBinary, slicedAs<BinaryOp>, nullptr, nullptr};
const OpImpl Min{OpKind::Min, validateBinary, evaluateBinary, slicedAs<BinaryOp>, nullptr, nullptr};
const OpImpl Div{OpKind::Div, validateBinary, evaluateBinary, slicedAs<BinaryOp>, nullptr, nullptr};
const OpImpl Pow{OpKind::Pow, validateBinary, evaluateBinary, slicedAs<BinaryOp>, nullptr, nullptr};
const OpImpl PRelu{OpKind::PRelu, validateBinary, evaluateBinary, slicedAs<BinaryOp>, nullptr, nullptr};
const OpImpl Greater{OpKind::Greater, validateBinary, evaluateBinary, slicedAs<BinaryOp>, nullptr, nullptr};
const OpImpl Less{OpKind::Less, validateBinary, evaluateBinary, slicedAs<BinaryOp>, nullptr, nullptr};
const OpImpl Equal{OpKind::Equal, validateBinary, evaluateBinary, slicedAs<BinaryOp>, nullptr, nullptr};
const OpImpl Where{OpKind::Where, validateBinary, evaluateBinary, slicedAs<BinaryOp>, nullptr, nullptr};
} // namespace ops

} // namespace tpu::backend
