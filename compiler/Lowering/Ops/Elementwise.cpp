// Element-wise family: top.add, top.mul, top.max of two activations ->
// tpu.add / tpu.mul / tpu.max; by a constant (scalar or per channel), and
// chains of such, -> one tpu.affine.

#include "compiler/Lowering/Lowerer.h"

using namespace mlir;

namespace tpu::lowering {

Status Lowerer::lowerBinary(Operation *op) {
  Value lhs = op->getOperand(0), rhs = op->getOperand(1), result = op->getResult(0);
  std::string name = names_[result];
  const bool lhsConst = bool(lhs.getDefiningOp<top::WeightOp>()), rhsConst = bool(rhs.getDefiningOp<top::WeightOp>());
  if (lhsConst && rhsConst) return noLowering(op, "two constant operands (constant folding leaves none)");
  if (lhsConst || rhsConst) {
    if (isa<top::MaxOp>(op)) return noLowering(op, "a constant operand (the chip's max takes two activations)");
    return lowerConstantBinary(op, lhsConst ? rhs : lhs, lhsConst ? lhs : rhs);
  }
  // An (N, C, 1, 1) operand is broadcast over H and W; the chip reads it as
  // the second input (add, mul and max commute).
  auto isChannelBroadcast = [&](Value v) {
    auto s = shapeOf(v), o = shapeOf(result);
    return s.size() == 4 && o.size() == 4 && s[0] == o[0] && s[1] == o[1] && s[2] == 1 && s[3] == 1;
  };
  if (shapeOf(lhs) != shapeOf(result) && shapeOf(rhs) == shapeOf(result) && isChannelBroadcast(lhs))
    std::swap(lhs, rhs);
  if (shapeOf(lhs) != shapeOf(result) || (shapeOf(rhs) != shapeOf(result) && !isChannelBroadcast(rhs)))
    return noLowering(op, "broadcasting other than an (N, C, 1, 1) operand over H and W");
  bool isMul = isa<top::MulOp>(op);
  auto relu = isa<top::AddOp>(op) ? fusibleRelu(result) : nullptr;
  if (relu) result = relu.getOutput();
  const std::string &outName = names_[result];
  auto outShape = shapeOf(result);
  const bool doRelu = bool(relu);
  auto build = [&](Type t, Value a, Value b, uint64_t rshift = 0, ArrayRef<int64_t> m = {}) {
    if (isa<top::AddOp>(op)) return make<tpuir::AddOp>(outName, t, a, b, doRelu, rshift, m);
    if (isMul) return make<tpuir::MulOp>(outName, t, a, b, doRelu, rshift, m);
    return make<tpuir::MaxOp>(outName, t, a, b, doRelu, rshift, m);
  };
  Value out;
  bool int8 = wantInt8(name) && wantInt8(outName);
  if (int8) {
    Value a = i8(lhs), b = i8(rhs);
    const double sa = scaleOfValue(a), sb = scaleOfValue(b), so = scaleOf(outName);
    std::vector<double> factors = isMul ? std::vector<double>{sa * sb / so} : std::vector<double>{sa / so, sb / so};
    auto r = isMul ? chooseShift({{factors[0], 16383}}) : chooseShift({{factors[0], 16383}, {factors[1], 16383}});
    if (!r) {
      out_.fallbacks.push_back(outName + ": element-wise multipliers do not fit int16 with any right shift");
      int8 = false;
    } else {
      std::vector<int64_t> m;
      for (double f : factors) m.push_back(fixedPoint(f, *r));
      out = build(qType(outShape, outName), a, b, uint64_t(*r), m);
    }
  }
  if (!int8) out = build(f32Type(outShape), f32(lhs), f32(rhs));
  if (relu) fused_.insert(relu);
  (int8 ? vals_[result].i8 : vals_[result].f32) = out;
  return Status::ok();
}

// A constant operand of one value (scalar) or one value per channel
// (shape [C, 1, 1] or [1, C, 1, 1] against NCHW): the values, else empty.
namespace {
std::vector<float> channelConstant(const std::vector<float> &values, std::vector<int64_t> shape,
                                   const std::vector<int64_t> &out) {
  if (values.size() == 1) return values;
  if (out.size() < 2 || shape.size() > out.size()) return {};
  shape.insert(shape.begin(), out.size() - shape.size(), 1);
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1 && d != 1) return {};
  return int64_t(values.size()) == out[1] ? values : std::vector<float>{};
}

} // namespace

Status Lowerer::lowerConstantBinary(Operation *op, Value x, Value constant) {
  Value result = op->getResult(0);
  if (shapeOf(x) != shapeOf(result)) return noLowering(op, "a constant operand broadcasting the activation");
  auto cv = weightValues(constant, "the constant operand", op);
  if (!cv) return noLowering(op, cv.message());
  std::vector<float> c = channelConstant(*cv, shapeOf(constant), shapeOf(result));
  if (c.empty()) return noLowering(op, "a constant operand that is neither a scalar nor one value per channel");
  const bool isMul = isa<top::MulOp>(op);
  std::vector<float> scale = isMul ? c : std::vector<float>{1.0f}, bias = isMul ? std::vector<float>{0.0f} : c;
  return lowerAffine(op, x, scale, bias, result);
}

AffineChain Lowerer::affineChain(Value v, int64_t channels) {
  AffineChain chain{std::vector<double>(size_t(channels), 1.0), std::vector<double>(size_t(channels), 0.0), v, {}};
  while (chain.result.hasOneUse()) {
    Operation *user = *chain.result.getUsers().begin();
    if (user->getNumResults() != 1 || shapeOf(user->getResult(0)) != shapeOf(chain.result)) break;
    std::vector<float> k, b;
    if (auto bn = dyn_cast<top::BatchNormOp>(user)) {
      auto a = batchNormAffine(bn);
      if (!a || bn.getInput() != chain.result) break;
      k = std::move(a->scale), b = std::move(a->bias);
    } else if (isa<top::MulOp, top::AddOp>(user)) {
      Value other = user->getOperand(0) == chain.result ? user->getOperand(1) : user->getOperand(0);
      if (!other.getDefiningOp<top::WeightOp>()) break;
      auto cv = weightValues(other, "the constant operand", user);
      if (!cv) break;
      std::vector<float> c = channelConstant(*cv, shapeOf(other), shapeOf(chain.result));
      if (c.empty()) break;
      if (c.size() == 1) c.assign(size_t(channels), c[0]);
      if (isa<top::MulOp>(user)) k = std::move(c), b.assign(size_t(channels), 0.0f);
      else k.assign(size_t(channels), 1.0f), b = std::move(c);
    } else {
      break;
    }
    for (size_t i = 0; i < size_t(channels); ++i)
      chain.scale[i] *= k[i], chain.bias[i] = chain.bias[i] * k[i] + b[i];
    chain.ops.push_back(user);
    chain.result = user->getResult(0);
  }
  return chain;
}

// x * scale + bias, scalars (one value each) or per channel; a following
// single-use relu is fused. int8: m = scale * s_x / s_y and b = bias / s_y
// in fixed point with the largest shift that fits int16 / int32.
Status Lowerer::lowerAffine(Operation *op, Value input, std::vector<float> scale, std::vector<float> bias,
                            Value result) {
  const std::string name = names_[op->getResult(0)];
  // The per-channel affine ops behind it (PP-OCR: a learnable scale and
  // shift after a batch norm or a constant mul) compose into this one.
  if (auto s = shapeOf(result); s.size() >= 2) {
    AffineChain chain = affineChain(result, s[1]);
    if (!chain.ops.empty()) {
      const size_t c = size_t(s[1]);
      if (scale.size() == 1) scale.assign(c, scale[0]);
      if (bias.size() == 1) bias.assign(c, bias[0]);
      for (size_t i = 0; i < c; ++i)
        scale[i] = float(scale[i] * chain.scale[i]), bias[i] = float(bias[i] * chain.scale[i] + chain.bias[i]);
      fused_.insert(chain.ops.begin(), chain.ops.end());
      result = chain.result;
    }
  }
  auto uniform = [](const std::vector<float> &v) { return std::all_of(v.begin(), v.end(), [&](float x) { return x == v[0]; }); };
  if (uniform(scale) && uniform(bias)) scale.resize(1), bias.resize(1);
  // int8: a scalar affine whose only user is a table op folds into the table.
  if (scale.size() == 1 && bias.size() == 1 && result.hasOneUse() && wantInt8(name) && wantInt8(names_[result])) {
    Operation *user = *result.getUsers().begin();
    if (isTableOp(user) && wantInt8(names_[user->getResult(0)])) {
      tableInputs_[user] = {input, {scale[0], bias[0]}};
      return Status::ok();
    }
  }
  auto relu = fusibleRelu(result);
  if (relu) result = relu.getOutput();
  const std::string &outName = names_[result];
  auto outShape = shapeOf(result);
  const bool perChannel = scale.size() > 1 || bias.size() > 1;
  if (perChannel) { // both as C values
    const size_t c = size_t(outShape[1]);
    if (scale.size() == 1) scale.assign(c, scale[0]);
    if (bias.size() == 1) bias.assign(c, bias[0]);
  }
  const bool doRelu = bool(relu);
  const llvm::APFloat alpha = f64(perChannel ? 1.0 : scale[0]), beta = f64(perChannel ? 0.0 : bias[0]);
  const std::vector<int64_t> wShape{int64_t(scale.size())};
  Value out;
  bool int8 = wantInt8(name) && wantInt8(outName);
  if (int8) {
    Value x = i8(input);
    const double k = double(scaleOfValue(x)) / scaleOf(outName), so = scaleOf(outName);
    auto r = chooseShift({{maxAbs(scale) * k, 32767}, {maxAbs(bias) / so, 2147483647.0}});
    if (!r) {
      out_.fallbacks.push_back(outName + ": affine scale or offset does not fit int16/int32 with any right shift");
      int8 = false;
    } else {
      std::vector<int16_t> mq(scale.size());
      std::vector<int32_t> bq(bias.size());
      for (size_t i = 0; i < mq.size(); ++i)
        mq[i] = int16_t(clampTo(fixedPoint(double(scale[i]) * k, *r), -32768, 32767)),
        bq[i] = int32_t(clampTo(fixedPoint(double(bias[i]) / so, *r), INT32_MIN, INT32_MAX));
      Value sw = none(), bw = none();
      std::vector<int64_t> multipliers;
      if (perChannel) {
        sw = addWeight(outName + "_scale_i16", NpyArray::from(wShape, mq), b_.getIntegerType(16));
        bw = addWeight(outName + "_bias_i32", NpyArray::from(wShape, bq), b_.getIntegerType(32));
      } else {
        multipliers = {mq[0], bq[0]};
      }
      out = make<tpuir::AffineOp>(outName, qType(outShape, outName), x, sw, bw, alpha, beta, doRelu, uint64_t(*r),
                                  multipliers);
    }
  }
  if (!int8) {
    Value sw = none(), bw = none();
    if (perChannel) {
      sw = addWeight(outName + "_scale", NpyArray::from(wShape, scale), b_.getF32Type());
      bw = addWeight(outName + "_bias", NpyArray::from(wShape, bias), b_.getF32Type());
    }
    Value x = f32(input);
    out = make<tpuir::AffineOp>(outName, f32Type(outShape), x, sw, bw, alpha, beta, doRelu);
  }
  if (relu) fused_.insert(relu);
  (int8 ? vals_[result].i8 : vals_[result].f32) = out;
  return Status::ok();
}

void addElementwiseLowerings(LoweringTable &t) {
  t.add<top::AddOp>([](Lowerer &l, top::AddOp op) { return l.lowerBinary(op); });
  t.add<top::MulOp>([](Lowerer &l, top::MulOp op) { return l.lowerBinary(op); });
  t.add<top::MaxOp>([](Lowerer &l, top::MaxOp op) { return l.lowerBinary(op); });
}

} // namespace tpu::lowering
