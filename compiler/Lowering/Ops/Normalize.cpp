// Normalize family: top.batch_norm -> one per-channel tpu.affine (folded into
// a conv before it in fp32, Ops/Conv.cpp), or, when its scale, bias, mean or
// variance is computed at run time, fp32 element-wise ops (tpu.sub, tpu.mul,
// tpu.add, rsqrt as tpu.unary) on [1, C, 1, ...] operands, the constant parts
// folded on the host; top.layer_norm -> tpu.layer_norm
// over the trailing dims, its scale and bias broadcast to the normalized
// elements (fp32; in INT8 an fp32 island between casts).

#include "compiler/Backend/QuantRef.h"
#include "compiler/Lowering/Lowerer.h"

#include <cmath>

using namespace mlir;

namespace tpu::lowering {

Result<ChannelAffine> Lowerer::batchNormAffine(top::BatchNormOp op) {
  auto shape = shapeOf(op.getInput());
  if (shape.size() < 2) return makeError("a batch norm without a channel axis");
  std::vector<std::vector<float>> v;
  for (auto [operand, role] : {std::pair{op.getScale(), "scale"}, std::pair{op.getBias(), "bias"},
                               std::pair{op.getMean(), "mean"}, std::pair{op.getVariance(), "variance"}}) {
    auto w = weightValues(operand, role, op);
    if (!w) return makeError(w.message());
    if (int64_t(w->size()) != shape[1]) return makeError("the ", role, " needs one value per channel");
    v.push_back(std::move(*w));
  }
  const double eps = op.getEpsilon().convertToDouble();
  ChannelAffine a{std::vector<float>(v[0].size()), std::vector<float>(v[0].size())};
  for (size_t c = 0; c < a.scale.size(); ++c) {
    const double k = double(v[0][c]) / std::sqrt(double(v[3][c]) + eps);
    a.scale[c] = float(k), a.bias[c] = float(double(v[1][c]) - double(v[2][c]) * k);
  }
  return a;
}

Status Lowerer::lowerBatchNormOfActivations(top::BatchNormOp op) {
  Value result = op.getOutput();
  const std::string &name = names_[result];
  const auto shape = shapeOf(op.getInput());
  if (shape.size() < 2) return noLowering(op, "a batch norm without a channel axis");
  const int64_t channels = shape[1];
  std::vector<int64_t> perChannel(shape.size(), 1);
  perChannel[1] = channels;
  // Each operand: its values when a weight, else the activation as [1, C, 1, ...].
  struct Operand {
    std::vector<float> values;
    Value v;
  };
  auto operand = [&](Value v, const char *role) -> Result<Operand> {
    if (v.getDefiningOp<top::WeightOp>()) {
      auto w = weightValues(v, role, op);
      if (!w) return w.status();
      if (int64_t(w->size()) != channels) return makeError("the ", role, " needs one value per channel");
      return Operand{w.take(), Value()};
    }
    if (shapeOf(v) != std::vector<int64_t>{channels}) return makeError("the ", role, " needs one value per channel");
    MovePieces p;
    p.add(0, {channels}, 0, {1}, 0, {1});
    return Operand{
        {}, make<tpuir::MoveOp>(name + "_" + role, f32Type(perChannel), ValueRange{f32(v)}, p.values, FloatAttr())};
  };
  Result<Operand> parts[4] = {operand(op.getScale(), "scale"), operand(op.getBias(), "bias"),
                              operand(op.getMean(), "mean"), operand(op.getVariance(), "variance")};
  for (auto &p : parts)
    if (!p) return noLowering(op, p.message());
  Operand &scale = *parts[0], &bias = *parts[1], &mean = *parts[2], &var = *parts[3];
  const double eps = op.getEpsilon().convertToDouble();
  auto asValue = [&](Operand &o, const std::string &role) {
    if (!o.v) o.v = addWeight(name + "_" + role, NpyArray::from(perChannel, o.values), b_.getF32Type());
    return o.v;
  };
  auto add = [&](const std::string &n, const std::vector<int64_t> &s, Value a, Value b) -> Value {
    return make<tpuir::AddOp>(n, f32Type(s), a, b, false, uint64_t(0), ArrayRef<int64_t>{});
  };
  auto mul = [&](const std::string &n, const std::vector<int64_t> &s, Value a, Value b) -> Value {
    return make<tpuir::MulOp>(n, f32Type(s), a, b, false, uint64_t(0), ArrayRef<int64_t>{});
  };
  // k = scale * rsqrt(var + eps), on the host where both are weights.
  Operand k;
  if (!var.v) {
    for (float v : var.values) k.values.push_back(float(1.0 / std::sqrt(double(v) + eps)));
  } else {
    const float e = float(eps);
    Value sum =
        add(name + "_var_eps", perChannel, var.v,
            addWeight(name + "_eps", NpyArray::from(std::vector<int64_t>(shape.size(), 1), &e, 1), b_.getF32Type()));
    k.v = make<tpuir::UnaryOp>(name + "_rsqrt", f32Type(perChannel), sum,
                               llvm::StringRef(backend::unaryName(kernels::UnaryKind::Rsqrt)), f64(0), f64(0));
  }
  if (!k.v && !scale.v) {
    for (size_t c = 0; c < k.values.size(); ++c) k.values[c] *= scale.values[c];
  } else {
    Value activation = k.v ? k.v : scale.v, other = k.v ? asValue(scale, "scale") : asValue(k, "k");
    k = Operand{{}, mul(name + "_k", perChannel, activation, other)};
  }
  Value x = f32(op.getInput());
  Value centred = make<tpuir::SubOp>(name + "_centred", f32Type(shape), x, asValue(mean, "mean"), false, uint64_t(0),
                                     ArrayRef<int64_t>{});
  Value scaled = mul(name + "_scaled", shape, centred, asValue(k, "k"));
  if (wantInt8(name)) out_.fallbacks.push_back(name + ": a batch norm with operands computed at run time runs in fp32");
  vals_[result].f32 = add(name, shape, scaled, asValue(bias, "bias"));
  return Status::ok();
}

Status Lowerer::lowerBatchNorm(top::BatchNormOp op) {
  for (Value v : {op.getScale(), op.getBias(), op.getMean(), op.getVariance()})
    if (!v.getDefiningOp<top::WeightOp>()) return lowerBatchNormOfActivations(op);
  auto a = batchNormAffine(op);
  if (!a) return noLowering(op, a.message());
  return lowerAffine(op, op.getInput(), std::move(a->scale), std::move(a->bias), op.getOutput());
}

Status Lowerer::lowerLayerNorm(top::LayerNormOp op) {
  Value result = op.getOutput();
  const std::string name = names_[result];
  const auto shape = shapeOf(op.getInput());
  if (op.getInput().getDefiningOp<top::WeightOp>()) return noLowering(op, "a constant operand");
  const int64_t axis = int64_t(op.getAxis());
  if (axis < 0 || axis >= int64_t(shape.size())) return noLowering(op, "an axis outside the input's dims");
  const kernels::Shape normShape(shape.begin() + axis, shape.end());
  std::vector<int64_t> axes;
  for (int64_t d = axis; d < int64_t(shape.size()); ++d) axes.push_back(d);
  const int64_t count = kernels::numElements(normShape);
  // The scale and the bias as fp32 weights of the normalized elements (a
  // bias alone gets a scale of ones).
  const bool hasBias = !isa<NoneType>(op.getBias().getType());
  Value params[2] = {none(), none()};
  for (auto [i, operand] : llvm::enumerate(std::array<Value, 2>{op.getScale(), op.getBias()})) {
    const char *role = i == 0 ? "scale" : "bias";
    std::vector<float> full(size_t(count), 1.0f);
    if (!isa<NoneType>(operand.getType())) {
      auto w = weightValues(operand, role, op);
      if (!w) return noLowering(op, w.message());
      // As the Top interpreter reads it: the normalized elements, or a shape
      // that broadcasts to them.
      auto ws = shapeOf(operand);
      auto b = kernels::broadcastShape(ws, normShape);
      if (int64_t(w->size()) == count && ws.size() <= normShape.size()) full = *w;
      else if (b && *b == normShape) kernels::broadcastTo(w->data(), ws, full.data(), normShape);
      else return noLowering(op, std::string("a ") + role + " that does not broadcast to the normalized dims");
    } else if (i == 1 || !hasBias) {
      continue;
    }
    params[i] = addWeight(name + "_" + role, NpyArray::from({count}, full), b_.getF32Type());
  }
  if (wantInt8(name)) out_.fallbacks.push_back(name + ": layer_norm runs in fp32 on the BM1684");
  vals_[result].f32 = make<tpuir::LayerNormOp>(name, f32Type(shapeOf(result)), f32(op.getInput()), params[0], params[1],
                                               axes, f64(op.getEpsilon().convertToDouble()));
  return Status::ok();
}

void addNormalizeLowerings(LoweringTable &t) {
  t.add<top::BatchNormOp>([](Lowerer &l, top::BatchNormOp op) { return l.lowerBatchNorm(op); });
  t.add<top::LayerNormOp>([](Lowerer &l, top::LayerNormOp op) { return l.lowerLayerNorm(op); });
}

} // namespace tpu::lowering
