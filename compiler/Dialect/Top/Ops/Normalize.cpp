// Shape rules and evaluate of the normalisations (Normalize.td).
#include "compiler/Dialect/Top/ShapeRules.h"
#include "compiler/Dialect/Top/TopOps.h"
#include "kernels/Kernels.h"
#include "support/Npz.h"

using namespace mlir;
namespace k = tpu::kernels;

namespace top {
namespace {

// softmax / log_softmax along `axis` (negative counts from the end).
tpu::Status evaluateSoftmax(EvalContext &ctx, int64_t axis, bool log) {
  const TensorValue &x = ctx.operand(0);
  const int64_t rank = int64_t(x.shape.size());
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return ctx.error("axis out of range");
  k::softmax(x.ptr(), ctx.result().ptr(), x.shape, axis, log);
  return tpu::Status::ok();
}

} // namespace

LogicalResult BatchNormOp::inferShapes() {
  auto in = rankedOperand(getOperation(), 0);
  if (failed(in)) return failure();
  if (in->getRank() < 2) return emitOpError() << "needs rank >= 2";
  for (unsigned i = 1; i < 5; ++i) {
    auto p = rankedOperand(getOperation(), i);
    if (failed(p)) return failure();
    if (p->getNumElements() != in->getDimSize(1))
      return emitOpError() << "parameter " << i << " needs " << in->getDimSize(1) << " elements";
  }
  return inferSameAsInput(getOperation());
}

tpu::Status BatchNormOp::evaluate(EvalContext &ctx) {
  const TensorValue &x = ctx.operand(0);
  k::batchNorm(x.ptr(), ctx.result().ptr(), x.shape, ctx.operand(1).ptr(), ctx.operand(2).ptr(), ctx.operand(3).ptr(),
               ctx.operand(4).ptr(), static_cast<float>(getEpsilon().convertToDouble()));
  return tpu::Status::ok();
}

LogicalResult LayerNormOp::inferShapes() {
  auto in = rankedOperand(getOperation(), 0);
  if (failed(in)) return failure();
  if (getAxis() < 0 || getAxis() >= in->getRank()) return emitOpError() << "axis out of range";
  return inferSameAsInput(getOperation());
}

tpu::Status LayerNormOp::evaluate(EvalContext &ctx) {
  const TensorValue &x = ctx.operand(0);
  int64_t axis = static_cast<int64_t>(getAxis());
  std::vector<int64_t> normShape(x.shape.begin() + axis, x.shape.end());
  int64_t len = k::numElements(normShape);
  // Scale and bias may broadcast over the normalised dims.
  auto param = [&](unsigned i, std::vector<float> &buf) -> tpu::Result<const float *> {
    if (!ctx.hasOperand(i)) return static_cast<const float *>(nullptr);
    const TensorValue &t = ctx.operand(i);
    if (k::numElements(t.shape) == len && t.shape.size() <= normShape.size()) return t.ptr();
    auto b = k::broadcastShape(t.shape, normShape);
    if (!b || *b != normShape)
      return ctx.error(i == 1 ? "scale " : "bias ", tpu::shapeToString(t.shape),
                       " does not broadcast to the normalised dims ", tpu::shapeToString(normShape));
    buf.resize(len);
    k::broadcastTo(t.ptr(), t.shape, buf.data(), normShape);
    return static_cast<const float *>(buf.data());
  };
  std::vector<float> sb, bb;
  auto scale = param(1, sb);
  if (!scale) return scale.status();
  auto bias = param(2, bb);
  if (!bias) return bias.status();
  k::layerNorm(x.ptr(), ctx.result().ptr(), x.shape, axis, *scale, *bias,
               static_cast<float>(getEpsilon().convertToDouble()));
  return tpu::Status::ok();
}

} // namespace top

#define GET_OP_CLASSES
#include "compiler/Dialect/Top/Ops/Normalize.cpp.inc"
