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

// Where's shape rule and evaluate are its host op's; the result has x's type.
LogicalResult WhereOp::inferShapes() {
  auto x = rankedOperand(getOperation(), 1);
  if (failed(x)) return failure();
  return inferShapesOnHost(getOperation(), x->getElementType());
}

tpu::Status WhereOp::evaluate(EvalContext &ctx) { return evaluateOnHost(*this, ctx); }

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
