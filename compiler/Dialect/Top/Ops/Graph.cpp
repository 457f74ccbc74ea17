// Shape rules and evaluate of the graph boundary and constants (Graph.td).
#include "compiler/Dialect/Top/ShapeRules.h"
#include "compiler/Dialect/Top/TopOps.h"

using namespace mlir;

namespace top {

LogicalResult InputOp::inferShapes() { return inferSameAsInput(getOperation()); }

// The argument's tensor, under the input's name.
tpu::Status InputOp::evaluate(EvalContext &ctx) {
  ctx.setResult(0, ctx.operand(0));
  return tpu::Status::ok();
}

LogicalResult WeightOp::inferShapes() { return success(); } // the type is the stored array's

LogicalResult NoneOp::inferShapes() { return success(); }

} // namespace top

#define GET_OP_CLASSES
#include "compiler/Dialect/Top/Ops/Graph.cpp.inc"
