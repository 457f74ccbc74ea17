// Activation family: top.relu, top.clip, top.leaky_relu (same scale in and
// out) and the element-wise functions: tpu.lut (a 256-entry table) in int8;
// in fp32 sigmoid is tpu.sigmoid, hard_sigmoid and hard_swish affine + clip
// (+ mul), the others tpu.unary (the TIU recipes of compiler/Backend/FloatKernels.h).

#include "compiler/Lowering/Lowerer.h"

using namespace mlir;

namespace tpu::lowering {

namespace {

struct TableFunction {
  TypeID op;
  kernels::UnaryKind kind;
};

// The table functions without parameters (top.hard_sigmoid and top.elu have
// some: addActivationLowerings).
const std::vector<TableFunction> &tableFunctions() {
  using kernels::UnaryKind;
  static const std::vector<TableFunction> fns = {
      {TypeID::get<top::SigmoidOp>(), UnaryKind::Sigmoid},     {TypeID::get<top::TanhOp>(), UnaryKind::Tanh},
      {TypeID::get<top::SiLUOp>(), UnaryKind::SiLU},           {TypeID::get<top::GeluOp>(), UnaryKind::Gelu},
      {TypeID::get<top::ExpOp>(), UnaryKind::Exp},             {TypeID::get<top::HardSwishOp>(), UnaryKind::HardSwish},
      {TypeID::get<top::SoftplusOp>(), UnaryKind::Softplus},   {TypeID::get<top::AbsOp>(), UnaryKind::Abs},
      {TypeID::get<top::NegOp>(), UnaryKind::Neg},             {TypeID::get<top::LogOp>(), UnaryKind::Log},
      {TypeID::get<top::SqrtOp>(), UnaryKind::Sqrt},           {TypeID::get<top::ErfOp>(), UnaryKind::Erf},
      {TypeID::get<top::SoftsignOp>(), UnaryKind::Softsign},   {TypeID::get<top::ReciprocalOp>(), UnaryKind::Reciprocal},
      {TypeID::get<top::FloorOp>(), UnaryKind::Floor},         {TypeID::get<top::CeilOp>(), UnaryKind::Ceil},
      {TypeID::get<top::RoundOp>(), UnaryKind::Round},         {TypeID::get<top::SignOp>(), UnaryKind::Sign},
      {TypeID::get<top::SinOp>(), UnaryKind::Sin},             {TypeID::get<top::CosOp>(), UnaryKind::Cos},
      {TypeID::get<top::MishOp>(), UnaryKind::Mish}};
  return fns;
}

} // namespace

bool isTableOp(Operation *op) {
  const TypeID id = op->getName().getTypeID();
  return llvm::any_of(tableFunctions(), [&](const TableFunction &f) { return f.op == id; }) ||
         isa<top::HardSigmoidOp, top::EluOp>(op);
}

// fp32 hard_sigmoid = clip(x * alpha + beta, 0, 1) (affine, clip); hard_swish
// = x * hard_sigmoid(x) with alpha 1/6, beta 1/2 (affine, clip, mul).
Status Lowerer::lowerHardSigmoidF32(Operation *op, double alpha, double beta, bool timesInput) {
  Value input = op->getOperand(0), result = op->getResult(0);
  const std::string &name = names_[result];
  auto t = f32Type(shapeOf(result));
  Value x = f32(input);
  Value noScale = none(), noBias = none();
  Value a = make<tpuir::AffineOp>(name + "_affine", t, x, noScale, noBias, f64(alpha), f64(beta));
  Value c = make<tpuir::ClipOp>(timesInput ? name + "_clip" : name, t, a, f64(0.0), f64(1.0));
  vals_[result].f32 = timesInput ? make<tpuir::MulOp>(name, t, x, c) : c;
  return Status::ok();
}

Status Lowerer::lowerLut(Operation *op, kernels::UnaryKind kind, float a, float b) {
  Value input = op->getOperand(0), result = op->getResult(0);
  const std::string &name = names_[result];
  if (!wantInt8(name)) {
    if (kind == kernels::UnaryKind::Sigmoid) {
      vals_[result].f32 = make<tpuir::SigmoidOp>(name, f32Type(shapeOf(result)), f32(input));
      return Status::ok();
    }
    if (kind == kernels::UnaryKind::HardSigmoid) return lowerHardSigmoidF32(op, a, b, false);
    if (kind == kernels::UnaryKind::HardSwish) return lowerHardSigmoidF32(op, 1.0 / 6.0, 0.5, true);
    if (!backend::hasUnaryRecipe(kind, a, b)) return noLowering(op, "no fp32 recipe for it on the TIU");
    vals_[result].f32 = make<tpuir::UnaryOp>(name, f32Type(shapeOf(result)), f32(input),
                                             llvm::StringRef(backend::unaryName(kind)), f64(a), f64(b));
    return Status::ok();
  }
  // The table maps the input's byte to the output's code; its entries come
  // from kernels' fp32 function (backend::activationTable). Scalar
  // affines around it (PP-OCR: conv, x * s + b, hard_swish, x * s + b) fold
  // into the table: one rounding instead of three.
  backend::TableAffine before, after;
  auto pre = tableInputs_.find(op);
  if (pre != tableInputs_.end()) input = pre->second.input, before = pre->second.affine;
  if (auto s = shapeOf(result); s.size() >= 2) {
    AffineChain chain = affineChain(result, s[1]);
    auto uniform = [](const std::vector<double> &v) {
      return std::all_of(v.begin(), v.end(), [&](double x) { return x == v[0]; });
    };
    if (!chain.ops.empty() && uniform(chain.scale) && uniform(chain.bias) && wantInt8(names_[chain.result])) {
      after = {float(chain.scale[0]), float(chain.bias[0])};
      fused_.insert(chain.ops.begin(), chain.ops.end());
      result = chain.result;
    }
  }
  const std::string &outName = names_[result];
  RankedTensorType outType = qType(shapeOf(result), outName);
  // A conv's accumulator handed to this hard_swish (Int8Levers::int16Hardswish).
  if (auto h = handoffs_.find(input); h != handoffs_.end() && kind == kernels::UnaryKind::HardSwish && !vals_[input].i8)
    if (Value y = hardSwishFromAccumulator(h->second, outName, outType, after)) {
      vals_[result].i8 = y;
      return Status::ok();
    }
  Value x = i8(input);
  const backend::DType in = isUnsigned(x) ? backend::DType::U8 : backend::DType::I8;
  const backend::DType out = unsignedOf(outName) ? backend::DType::U8 : backend::DType::I8;
  backend::Bytes table =
      backend::activationTable(kind, a, b, in, scaleOfValue(x), out, scaleOf(outName), before, after);
  vals_[result].i8 = lookupTable(outName, outType, x, table, outName + "_table");
  return Status::ok();
}

Value Lowerer::lookupTable(const std::string &name, RankedTensorType type, Value x, const backend::Bytes &table,
                           const std::string &tableName) {
  const backend::DType out = type.getElementType().isUnsignedInteger() ? backend::DType::U8 : backend::DType::I8;
  NpyArray array = NpyArray::fromBytes(backend::dtypeName(out), {256}, table.data(), table.size());
  return make<tpuir::LutOp>(name, type, x, addWeight(tableName, std::move(array), type.getElementType()));
}

// hard_swish(x) = (t - 3) t / 6 + relu(x - 3) with t = clip(x + 3, 0, 6).
// The curved part is a function of t alone: t in uint8 (a step of 6/255,
// where the pre-activation's int8 step is its whole range over 127 or 255)
// feeds the table. The linear part needs only the output's step. Both are
// per-channel affines of the accumulator (the uint8 saturation is the clip);
// their add at the output's scale is exact (multipliers 1, no shift).
Value Lowerer::hardSwishFromAccumulator(const Int16Handoff &h, const std::string &outName, RankedTensorType outType,
                                        const backend::TableAffine &after) {
  if (!(after.scale > 0)) return Value();
  const double st = 6.0 / 255.0, so = *tpuir::scaleOf(outType), k = after.scale;
  const backend::DType out = outType.getElementType().isUnsignedInteger() ? backend::DType::U8 : backend::DType::I8;
  backend::Bytes table = backend::activationTable(kernels::UnaryKind::HardSwish, 0, 0, backend::DType::U8, float(st),
                                                  out, float(so), {1.0f, -3.0f}, after);
  // The table's last entry, hard_swish(3), is rounded once for every x >= 3:
  // the tail takes that error out, or it would shift all of them alike
  // (unless it saturated: the sum then stays there, as the function's would).
  const bool u8 = out == backend::DType::U8;
  const int last = u8 ? int(table[255]) : int(int8_t(table[255]));
  const double lastError = last == (u8 ? 255 : 127) ? 0.0 : last * so - (3 * k + after.shift);
  std::vector<double> fineBias(h.bias), tailBias(h.bias);
  for (double &b : fineBias) b += 3;
  for (double &b : tailBias) b = (b - 3) * k - lastError;
  auto fine = affineIntegers(1 / st, h.step, fineBias, st);
  auto tail = affineIntegers(k / so, h.step, tailBias, so);
  if (!fine || !tail) return Value();
  auto fineType = tpuir::int8Type(outType.getShape(), float(st), ctx_, /*isUnsigned=*/true);
  Value t = int8Affine(outName + "_hsig", fineType, h.acc, *fine, true, f64(1.0), f64(0.0), false);
  Value r = int8Affine(outName + "_tail", outType, h.acc, *tail, true, f64(1.0), f64(0.0), true);
  Value lut = lookupTable(outName + "_curve", outType, t, table, outName + "_table");
  const std::vector<int64_t> ones{1, 1};
  return make<tpuir::AddOp>(outName, outType, lut, r, false, uint64_t(0), ArrayRef<int64_t>(ones));
}

Status Lowerer::lowerClip(top::ClipOp c) {
  return lowerClipRange(c, c.getMin().convertToDouble(), c.getMax().convertToDouble());
}

Status Lowerer::lowerClipRange(Operation *op, double lo, double hi) {
  const std::string name = names_[op->getResult(0)];
  if (wantInt8(name)) {
    Value x = i8(op->getOperand(0));
    float s = scaleOfValue(x);
    lo = double(clampTo(std::lround(std::max(lo, -1e9) / s), lowest(x), highest(x)));
    hi = double(clampTo(std::lround(std::min(hi, 1e9) / s), lowest(x), highest(x)));
  }
  return lowerSameScale<tpuir::ClipOp>(op, f64(lo), f64(hi));
}

Status Lowerer::lowerLeakyRelu(top::LeakyReluOp l) { return lowerLeakySlope(l, l.getAlpha().convertToDouble()); }

Status Lowerer::lowerLeakySlope(Operation *op, double alpha) {
  const std::string name = names_[op->getResult(0)];
  if (alpha < 0 || alpha > 1) return noLowering(op, "a slope outside [0, 1]");
  if (!wantInt8(name)) return lowerSameScale<tpuir::LeakyReluOp>(op, f64(alpha));
  auto r = chooseShift({{alpha, 127}}); // alpha <= 1 always fits with r = 0
  std::vector<int64_t> multiplier{fixedPoint(alpha, *r)};
  return lowerSameScale<tpuir::LeakyReluOp>(op, f64(alpha), false, uint64_t(*r), ArrayRef<int64_t>(multiplier));
}

void addActivationLowerings(LoweringTable &t) {
  for (const TableFunction &f : tableFunctions()) {
    const kernels::UnaryKind kind = f.kind;
    t.add(f.op, [kind](Lowerer &l, Operation *op) { return l.lowerLut(op, kind); });
  }
  t.add<top::HardSigmoidOp>([](Lowerer &l, top::HardSigmoidOp h) {
    return l.lowerLut(h, kernels::UnaryKind::HardSigmoid, float(h.getAlpha().convertToDouble()),
                      float(h.getBeta().convertToDouble()));
  });
  t.add<top::EluOp>([](Lowerer &l, top::EluOp e) {
    return l.lowerLut(e, kernels::UnaryKind::Elu, float(e.getAlpha().convertToDouble()));
  });
  t.add<top::ReluOp>([](Lowerer &l, top::ReluOp op) { return l.lowerSameScale<tpuir::ReluOp>(op); });
  t.add<top::ClipOp>([](Lowerer &l, top::ClipOp op) { return l.lowerClip(op); });
  t.add<top::LeakyReluOp>([](Lowerer &l, top::LeakyReluOp op) { return l.lowerLeakyRelu(op); });
}

} // namespace tpu::lowering
