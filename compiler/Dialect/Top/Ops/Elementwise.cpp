// Shape rules and evaluate of the element-wise ops of several tensors
// (Elementwise.td).
#include "compiler/Dialect/Top/HostEval.h"
#include "compiler/Dialect/Top/ShapeRules.h"
#include "compiler/Dialect/Top/TopOps.h"
#include "kernels/Kernels.h"

#include <cmath>

using namespace mlir;
namespace k = tpu::kernels;

namespace top {
namespace {

// numpy broadcast of both operands; an i1 result for a comparison.
LogicalResult inferBroadcast(Operation *op, bool boolResult) {
  auto a = rankedOperand(op, 0), b = rankedOperand(op, 1);
  if (failed(a) || failed(b)) return failure();
  auto out = k::broadcastShape(toShape(a->getShape()), toShape(b->getShape()));
  if (!out)
    return op->emitOpError() << "cannot broadcast " << shapeStr(a->getShape()) << " with " << shapeStr(b->getShape());
  setResult(op, 0, *out, boolResult ? Type(IntegerType::get(op->getContext(), 1)) : a->getElementType());
  return success();
}

} // namespace

LogicalResult WhereOp::inferShapes() {
  Operation *op = getOperation();
  auto c = rankedOperand(op, 0), x = rankedOperand(op, 1), y = rankedOperand(op, 2);
  if (failed(c) || failed(x) || failed(y)) return failure();
  auto xy = k::broadcastShape(toShape(x->getShape()), toShape(y->getShape()));
  auto all = xy ? k::broadcastShape(toShape(c->getShape()), *xy) : xy;
  if (!all) return emitOpError() << "operands do not broadcast";
  setResult(op, 0, *all, x->getElementType());
  return success();
}

tpu::Status WhereOp::evaluate(EvalContext &ctx) {
  TensorValue &y = ctx.result();
  int64_t n = y.numElements();
  std::vector<float> c(n), a(n), b(n);
  k::broadcastTo(ctx.operand(0).ptr(), ctx.operand(0).shape, c.data(), y.shape);
  k::broadcastTo(ctx.operand(1).ptr(), ctx.operand(1).shape, a.data(), y.shape);
  k::broadcastTo(ctx.operand(2).ptr(), ctx.operand(2).shape, b.data(), y.shape);
  float *dst = y.ptr();
  for (int64_t i = 0; i < n; ++i) dst[i] = c[i] != 0.0f ? a[i] : b[i];
  return tpu::Status::ok();
}

LogicalResult CastOp::inferShapes() {
  auto in = rankedOperand(getOperation(), 0);
  if (failed(in)) return failure();
  setResult(getOperation(), 0, in->getShape(), getTo());
  return success();
}

tpu::Status CastOp::evaluate(EvalContext &ctx) { return evaluateOnHost(*this, ctx); }

} // namespace top

#define GET_OP_CLASSES
#include "compiler/Dialect/Top/Ops/Elementwise.cpp.inc"
