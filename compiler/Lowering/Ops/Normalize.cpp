// Normalize family: top.batch_norm -> one per-channel tpu.affine (folded into
// a conv before it in fp32, Ops/Conv.cpp); top.layer_norm -> tpu.layer_norm
// over the trailing dims, its scale and bias broadcast to the normalized
// elements (fp32; in INT8 an fp32 island between casts).

#include "compiler/Lowering/Lowerer.h"

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

Status Lowerer::lowerBatchNorm(top::BatchNormOp op) {
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
