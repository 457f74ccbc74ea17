// Shape rules and evaluate of the reductions and the running sum (Reduce.td; arg max/min and top-k are
// host ops).
#include "compiler/Dialect/Top/HostEval.h"
#include "compiler/Dialect/Top/ShapeRules.h"
#include "compiler/Dialect/Top/TopOps.h"
#include "kernels/Kernels.h"

using namespace mlir;
namespace k = tpu::kernels;

namespace top {
namespace {

LogicalResult inferCumSum(Operation *op, int64_t axis) {
  auto in = rankedOperand(op, 0);
  if (failed(in)) return failure();
  if (axis < 0 || axis >= in->getRank()) return op->emitOpError() << "axis must be in [0, " << in->getRank() << ")";
  return inferSameAsInput(op);
}

// Each line along the axis (outer x inner of them) summed in order, in
// double: each output rounds to f32 once.
tpu::Status evaluateCumSum(EvalContext &ctx, int64_t axis, bool exclusive, bool reverse) {
  const TensorValue &x = ctx.operand(0);
  if (axis < 0 || axis >= int64_t(x.shape.size())) return ctx.error("axis ", axis, " out of range");
  const auto [outer, len, inner] = k::splitAtAxis(x.shape, size_t(axis));
  const float *in = x.ptr();
  float *out = ctx.result().ptr();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double sum = 0;
      for (int64_t k = 0; k < len; ++k) {
        const int64_t at = (o * len + (reverse ? len - 1 - k : k)) * inner + i;
        if (exclusive) out[at] = float(sum);
        sum += double(in[at]);
        if (!exclusive) out[at] = float(sum);
      }
    }
  return tpu::Status::ok();
}

} // namespace
} // namespace top

#define GET_OP_CLASSES
#include "compiler/Dialect/Top/Ops/Reduce.cpp.inc"
