// Shape rule and evaluate of the ops on the shape only (Shape.td; top.shape
// is a host op, set in the td).
#include "compiler/Dialect/Top/HostEval.h"
#include "compiler/Dialect/Top/ShapeRules.h"
#include "compiler/Dialect/Top/TopOps.h"
#include "kernels/Kernels.h"

using namespace mlir;

namespace top {

LogicalResult ReshapeOp::inferShapes() {
  auto in = rankedOperand(getOperation(), 0);
  if (failed(in)) return failure();
  for (int64_t d : getShape())
    if (d < 0) return emitOpError() << "shape " << shapeStr(getShape()) << " must be fully resolved";
  if (tpu::kernels::numElements(toShape(getShape())) != in->getNumElements())
    return emitOpError() << "cannot reshape " << shapeStr(in->getShape()) << " to " << shapeStr(getShape());
  setResult(getOperation(), 0, getShape(), in->getElementType());
  return success();
}

// The input's data under the new shape, shared (no copy).
tpu::Status ReshapeOp::evaluate(EvalContext &ctx) {
  TensorValue t = ctx.operand(0);
  t.shape = ctx.resultShape();
  ctx.setResult(0, std::move(t));
  return tpu::Status::ok();
}

} // namespace top

#define GET_OP_CLASSES
#include "compiler/Dialect/Top/Ops/Shape.cpp.inc"
