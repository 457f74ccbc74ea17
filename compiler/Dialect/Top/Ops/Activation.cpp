// Evaluate of the element-wise functions of one tensor (Activation.td); their
// shape rule is Top_SameShapeOp's.
#include "compiler/Dialect/Top/ShapeRules.h"
#include "compiler/Dialect/Top/TopOps.h"
#include "kernels/Kernels.h"

namespace top {
namespace {

tpu::Status evaluateUnary(EvalContext &ctx, tpu::kernels::UnaryKind kind, float a = 0, float b = 0) {
  const TensorValue &x = ctx.operand(0);
  tpu::kernels::unary(kind, x.ptr(), ctx.result().ptr(), x.numElements(), a, b);
  return tpu::Status::ok();
}

} // namespace
} // namespace top

#define GET_OP_CLASSES
#include "compiler/Dialect/Top/Ops/Activation.cpp.inc"
