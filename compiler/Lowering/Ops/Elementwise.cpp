// Element-wise family: top.add, sub, mul, max, min, div, pow, prelu of two
// activations (NumPy broadcasting) -> the tpu op of the same name; by a
// scalar or per-channel constant, and chains of such, -> one tpu.affine (or
// clip, leaky_relu, ...: lowerConstantBinary); by another constant -> the op
// with an fp32 weight operand.

#include "compiler/Lowering/Lowerer.h"

using namespace mlir;

namespace tpu::lowering {

namespace {

BinaryFn binaryFnOf(Operation *op) {
  if (isa<top::AddOp>(op)) return BinaryFn::Add;
  if (isa<top::SubOp>(op)) return BinaryFn::Sub;
  if (isa<top::MulOp>(op)) return BinaryFn::Mul;
  if (isa<top::MaxOp>(op)) return BinaryFn::Max;
  if (isa<top::MinOp>(op)) return BinaryFn::Min;
  if (isa<top::DivOp>(op)) return BinaryFn::Div;
  if (isa<top::PowOp>(op)) return BinaryFn::Pow;
  if (isa<top::GreaterOp>(op)) return BinaryFn::Greater;
  if (isa<top::LessOp>(op)) return BinaryFn::Less;
  if (isa<top::EqualOp>(op)) return BinaryFn::Equal;
  return BinaryFn::PRelu;
}

// The int8 forms the chip has: Add/Sub/Max/Min scale each input, Mul the product.
bool hasInt8Form(BinaryFn fn) {
  return fn == BinaryFn::Add || fn == BinaryFn::Sub || fn == BinaryFn::Mul || fn == BinaryFn::Max || fn == BinaryFn::Min;
}

// A constant operand of one value (scalar) or one value per channel
// (shape [C, 1, 1] or [1, C, 1, 1] against NCHW): the values, else empty.
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

Status Lowerer::lowerBinary(Operation *op) {
  Value lhs = op->getOperand(0), rhs = op->getOperand(1), result = op->getResult(0);
  // A quotient rounded to an integer (ONNX integer Div and Mod: a floor or
  // a cast to an integer type reads it) runs on the host: the chip divides
  // by a constant as a multiply by its reciprocal, which can land just
  // under an integer quotient.
  if (isa<top::DivOp>(op) && llvm::any_of(result.getUsers(), [](Operation *u) {
        auto cast = dyn_cast<top::CastOp>(u);
        return isa<top::FloorOp>(u) ||
               (cast && isa<IntegerType>(mlir::cast<RankedTensorType>(cast.getOutput().getType()).getElementType()));
      }))
    return lowerOnHostOr(op, noLowering(op, "a quotient rounded to an integer (the chip's division is not exact)"));
  if (shapeOf(result).size() > 4 && !highRankPointwise(op)) return noLowering(op, "more than 4 dims");
  const bool lhsConst = bool(lhs.getDefiningOp<top::WeightOp>()), rhsConst = bool(rhs.getDefiningOp<top::WeightOp>());
  if (lhsConst && rhsConst) return noLowering(op, "two constant operands (constant folding leaves none)");
  if (lhsConst || rhsConst) return lowerConstantBinary(op, lhsConst ? rhs : lhs, lhsConst ? lhs : rhs);
  const BinaryFn fn = binaryFnOf(op);
  // An (N, C, 1, 1) operand of add, mul and max goes second (they commute).
  auto isChannelBroadcast = [&](Value v) {
    auto s = shapeOf(v), o = shapeOf(result);
    return s.size() == 4 && o.size() == 4 && s[0] == o[0] && s[1] == o[1] && s[2] == 1 && s[3] == 1;
  };
  if ((fn == BinaryFn::Add || fn == BinaryFn::Mul || fn == BinaryFn::Max) && shapeOf(lhs) != shapeOf(result) &&
      shapeOf(rhs) == shapeOf(result) && isChannelBroadcast(lhs))
    std::swap(lhs, rhs);
  return lowerElementwise(op, fn, lhs, rhs);
}

Status Lowerer::lowerElementwise(Operation *op, BinaryFn fn, Value lhs, Value rhs) {
  Value result = op->getResult(0);
  const std::string name = names_[result];
  auto relu = fn == BinaryFn::Add ? fusibleRelu(result) : nullptr;
  if (relu) result = relu->getResult(0);
  const std::string &outName = names_[result];
  auto outShape = shapeOf(result);
  const bool doRelu = bool(relu);
  auto build = [&](Type t, Value a, Value b, uint64_t rshift = 0, ArrayRef<int64_t> m = {}) {
    switch (fn) {
    case BinaryFn::Add: return make<tpuir::AddOp>(outName, t, a, b, doRelu, rshift, m);
    case BinaryFn::Sub: return make<tpuir::SubOp>(outName, t, a, b, doRelu, rshift, m);
    case BinaryFn::Mul: return make<tpuir::MulOp>(outName, t, a, b, doRelu, rshift, m);
    case BinaryFn::Max: return make<tpuir::MaxOp>(outName, t, a, b, doRelu, rshift, m);
    case BinaryFn::Min: return make<tpuir::MinOp>(outName, t, a, b, doRelu, rshift, m);
    case BinaryFn::Div: return make<tpuir::DivOp>(outName, t, a, b);
    case BinaryFn::Pow: return make<tpuir::PowOp>(outName, t, a, b);
    case BinaryFn::PRelu: return make<tpuir::PReluOp>(outName, t, a, b);
    case BinaryFn::Greater: return make<tpuir::GreaterOp>(outName, t, a, b);
    case BinaryFn::Less: return make<tpuir::LessOp>(outName, t, a, b);
    case BinaryFn::Equal: return make<tpuir::EqualOp>(outName, t, a, b);
    }
    return Value();
  };
  // A weight operand (built by lowerConstantBinary) is fp32 already.
  auto isWeight = [](Value v) { return bool(v.getDefiningOp<top::WeightOp>()); };
  auto fp32 = [&](Value v) { return isWeight(v) ? v : f32(v); };
  Value out;
  bool int8 = wantInt8(name) && wantInt8(outName);
  if (int8 && (!hasInt8Form(fn) || isWeight(lhs) || isWeight(rhs) || shapeOf(lhs).size() != outShape.size() ||
               shapeOf(rhs).size() != outShape.size())) {
    // The chip has no int8 form of it: an fp32 island between casts.
    out_.fallbacks.push_back(outName + ": " + op->getName().getStringRef().str() +
                             " has no int8 form for these operands (runs in fp32 between casts)");
    int8 = false;
  }
  if (int8) {
    Value a = i8(lhs), b = i8(rhs);
    const double sa = scaleOfValue(a), sb = scaleOfValue(b), so = scaleOf(outName);
    const bool isMul = fn == BinaryFn::Mul;
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
  if (!int8) out = build(f32Type(outShape), fp32(lhs), fp32(rhs));
  if (relu) fused_.insert(relu);
  (int8 ? vals_[result].i8 : vals_[result].f32) = out;
  return Status::ok();
}

// One operand constant: a scalar or per-channel constant of add, sub, mul
// and x / c is an affine; max/min with a scalar a clip, prelu with a scalar
// slope in [0, 1] a leaky_relu, pow by 2, 0.5 or -1 a mul, sqrt or
// reciprocal; anything else the op with an fp32 weight operand.
Status Lowerer::lowerConstantBinary(Operation *op, Value x, Value constant) {
  Value result = op->getResult(0);
  const BinaryFn fn = binaryFnOf(op);
  const bool constFirst = op->getOperand(0) == constant;
  auto cv = weightValues(constant, "the constant operand", op);
  if (!cv) return noLowering(op, cv.message());
  const std::vector<float> c = shapeOf(x) == shapeOf(result) ? channelConstant(*cv, shapeOf(constant), shapeOf(result))
                                                            : std::vector<float>{};
  const bool scalar = c.size() == 1;
  auto map = [&](float k, float b) {
    std::vector<float> r(c.size());
    for (size_t i = 0; i < c.size(); ++i) r[i] = k * c[i] + b;
    return r;
  };
  auto inverse = [&] {
    std::vector<float> r(c.size());
    for (size_t i = 0; i < c.size(); ++i) r[i] = 1.0f / c[i];
    return r;
  };
  if (!c.empty()) {
    switch (fn) {
    case BinaryFn::Add: return lowerAffine(op, x, {1.0f}, c, result);
    case BinaryFn::Mul: return lowerAffine(op, x, c, {0.0f}, result);
    case BinaryFn::Sub: return constFirst ? lowerAffine(op, x, {-1.0f}, c, result) : lowerAffine(op, x, {1.0f}, map(-1, 0), result);
    case BinaryFn::Div:
      if (!constFirst) return lowerAffine(op, x, inverse(), {0.0f}, result);
      break;
    case BinaryFn::Max:
      if (scalar && !constFirst) return lowerClipRange(op, c[0], 1e30);
      break;
    case BinaryFn::Min:
      if (scalar && !constFirst) return lowerClipRange(op, -1e30, c[0]);
      break;
    case BinaryFn::PRelu:
      if (scalar && c[0] >= 0 && c[0] <= 1) return lowerLeakySlope(op, c[0]);
      break;
    case BinaryFn::Pow:
      if (!scalar || constFirst) break;
      if (c[0] == 2.0f) return lowerElementwise(op, BinaryFn::Mul, x, x);
      if (c[0] == 0.5f) return lowerLut(op, kernels::UnaryKind::Sqrt);
      if (c[0] == -1.0f) return lowerLut(op, kernels::UnaryKind::Reciprocal);
      break;
    default: break;
    }
  }
  auto w = broadcastWeight(op, constant, constFirst ? "lhs" : "rhs");
  if (!w) return noLowering(op, w.message());
  return constFirst ? lowerElementwise(op, fn, *w, x) : lowerElementwise(op, fn, x, *w);
}

Result<Value> Lowerer::broadcastWeight(Operation *op, Value constant, const std::string &role) {
  auto cv = weightValues(constant, "the constant operand", op);
  if (!cv) return cv.status();
  const size_t rank = shapeOf(op->getResult(0)).size();
  std::vector<int64_t> shape = shapeOf(constant);
  shape.insert(shape.begin(), rank - std::min(shape.size(), rank), 1);
  return addWeight(names_[op->getResult(0)] + "_" + role, NpyArray::from(shape, *cv), b_.getF32Type());
}

Status Lowerer::lowerWhere(top::WhereOp op) {
  Value result = op.getOutput();
  const std::string &name = names_[result];
  if (shapeOf(result).size() > 4) return noLowering(op, "more than 4 dims");
  const char *roles[] = {"cond", "x", "y"};
  std::vector<Value> in;
  for (auto [k, v] : llvm::enumerate(op->getOperands())) {
    if (v.getDefiningOp<top::WeightOp>()) {
      auto w = broadcastWeight(op, v, roles[k]);
      if (!w) return noLowering(op, w.message());
      in.push_back(*w);
      continue;
    }
    in.push_back(f32(v));
  }
  if (llvm::all_of(in, [](Value v) { return bool(v.getDefiningOp<top::WeightOp>()); }))
    return noLowering(op, "constant operands only (constant folding leaves none)");
  if (wantInt8(name)) out_.fallbacks.push_back(name + ": top.where has no int8 form (runs in fp32 between casts)");
  vals_[result].f32 = make<tpuir::WhereOp>(name, f32Type(shapeOf(result)), in[0], in[1], in[2]);
  return Status::ok();
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
  if (relu) result = relu->getResult(0);
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
    const double so = scaleOf(outName);
    if (auto a = affineIntegers(double(scaleOfValue(x)) / so, {scale.begin(), scale.end()}, {bias.begin(), bias.end()}, so)) {
      out = int8Affine(outName, qType(outShape, outName), x, *a, perChannel, alpha, beta, doRelu);
    } else {
      out_.fallbacks.push_back(outName + ": affine scale or offset does not fit int16/int32 with any right shift");
      int8 = false;
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

Value Lowerer::int8Affine(const std::string &outName, RankedTensorType outType, Value x, const AffineIntegers &a,
                          bool perChannel, const llvm::APFloat &alpha, const llvm::APFloat &beta, bool doRelu) {
  Value sw = none(), bw = none();
  std::vector<int64_t> multipliers;
  if (perChannel) {
    const std::vector<int64_t> wShape{int64_t(a.multipliers.size())};
    sw = addWeight(outName + "_scale_i16", NpyArray::from(wShape, a.multipliers), b_.getIntegerType(16));
    bw = addWeight(outName + "_bias_i32", NpyArray::from(wShape, a.offsets), b_.getIntegerType(32));
  } else {
    multipliers = {a.multipliers[0], a.offsets[0]};
  }
  return make<tpuir::AffineOp>(outName, outType, x, sw, bw, alpha, beta, doRelu, uint64_t(a.rshift), multipliers);
}

void addElementwiseLowerings(LoweringTable &t) {
  t.add<top::AddOp>([](Lowerer &l, top::AddOp op) { return l.lowerBinary(op); });
  t.add<top::MulOp>([](Lowerer &l, top::MulOp op) { return l.lowerBinary(op); });
  t.add<top::MaxOp>([](Lowerer &l, top::MaxOp op) { return l.lowerBinary(op); });
  t.add<top::SubOp>([](Lowerer &l, top::SubOp op) { return l.lowerBinary(op); });
  t.add<top::MinOp>([](Lowerer &l, top::MinOp op) { return l.lowerBinary(op); });
  t.add<top::DivOp>([](Lowerer &l, top::DivOp op) { return l.lowerBinary(op); });
  t.add<top::PowOp>([](Lowerer &l, top::PowOp op) { return l.lowerBinary(op); });
  t.add<top::PReluOp>([](Lowerer &l, top::PReluOp op) { return l.lowerBinary(op); });
  t.add<top::GreaterOp>([](Lowerer &l, top::GreaterOp op) { return l.lowerBinary(op); });
  t.add<top::LessOp>([](Lowerer &l, top::LessOp op) { return l.lowerBinary(op); });
  t.add<top::EqualOp>([](Lowerer &l, top::EqualOp op) { return l.lowerBinary(op); });
  t.add<top::WhereOp>([](Lowerer &l, top::WhereOp op) { return l.lowerWhere(op); });
}

} // namespace tpu::lowering
