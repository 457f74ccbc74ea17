// Normalize family: top.batch_norm -> one per-channel tpu.affine (folded into
// a conv before it in fp32, Ops/Conv.cpp).

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

void addNormalizeLowerings(LoweringTable &t) {
  t.add<top::BatchNormOp>([](Lowerer &l, top::BatchNormOp op) { return l.lowerBatchNorm(op); });
}

} // namespace tpu::lowering
