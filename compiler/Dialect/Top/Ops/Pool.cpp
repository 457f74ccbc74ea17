// Shape rules, verifiers and evaluate of the pooling ops (Pool.td).
#include "compiler/Dialect/Top/ShapeRules.h"
#include "compiler/Dialect/Top/TopOps.h"
#include "compiler/Dialect/Top/Window.h"
#include "kernels/Kernels.h"

using namespace mlir;
namespace k = tpu::kernels;

namespace top {
namespace {

template <typename PoolOpT> LogicalResult verifyPool(PoolOpT op) {
  return verifyWindow(op, op.getKernelShape(), op.getStrides(), op.getPads(), op.getDilations());
}

template <typename PoolOpT> LogicalResult inferPool(PoolOpT pool) {
  Operation *op = pool;
  auto in = rankedOperand(op, 0);
  if (failed(in)) return failure();
  auto kernel = pool.getKernelShape(), s = pool.getStrides(), p = pool.getPads(), d = pool.getDilations();
  size_t n = kernel.size();
  if (in->getRank() != int64_t(n) + 2)
    return pool.emitOpError() << "input rank " << in->getRank() << " does not match " << n << " spatial dims";
  llvm::SmallVector<int64_t> out(in->getShape());
  for (size_t i = 0; i < n; ++i) {
    out[i + 2] = k::poolOutputSize(out[i + 2], kernel[i], s[i], d[i], p[i], p[i + n], pool.getCeilMode());
    if (out[i + 2] < 1) return pool.emitOpError() << "window larger than padded input";
  }
  setResult(op, 0, out, in->getElementType());
  return success();
}

template <typename PoolOpT> tpu::Status evaluatePool(EvalContext &ctx, k::PoolKind kind, PoolOpT pool) {
  const TensorValue &x = ctx.operand(0);
  TensorValue &y = ctx.result();
  auto p = windowParams<k::PoolParams>(x.shape, y.shape, pool.getKernelShape(), pool.getStrides(), pool.getPads(),
                                       pool.getDilations());
  p.c = x.shape[1];
  p.countIncludePad = pool.getCountIncludePad();
  k::pool2d(kind, x.ptr(), y.ptr(), p);
  return tpu::Status::ok();
}

LogicalResult inferGlobalPool(Operation *op) {
  auto in = rankedOperand(op, 0);
  if (failed(in)) return failure();
  if (in->getRank() < 3) return op->emitOpError() << "needs rank >= 3 (N, C, spatial...)";
  llvm::SmallVector<int64_t> out(in->getShape());
  for (size_t i = 2; i < out.size(); ++i) out[i] = 1;
  setResult(op, 0, out, in->getElementType());
  return success();
}

tpu::Status evaluateGlobalPool(EvalContext &ctx, k::PoolKind kind) {
  const TensorValue &x = ctx.operand(0);
  int64_t nc = x.shape[0] * x.shape[1];
  k::globalPool(kind, x.ptr(), ctx.result().ptr(), nc, nc ? x.numElements() / nc : 0);
  return tpu::Status::ok();
}

} // namespace
} // namespace top

#define GET_OP_CLASSES
#include "compiler/Dialect/Top/Ops/Pool.cpp.inc"
