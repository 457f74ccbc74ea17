// Shape rules and evaluate of the matrix products (Gemm.td).
#include "compiler/Dialect/Top/ShapeRules.h"
#include "compiler/Dialect/Top/TopOps.h"
#include "kernels/Kernels.h"

using namespace mlir;
namespace k = tpu::kernels;

namespace top {

LogicalResult MatMulOp::inferShapes() {
  Operation *op = getOperation();
  auto a = rankedOperand(op, 0), b = rankedOperand(op, 1);
  if (failed(a) || failed(b)) return failure();
  std::vector<int64_t> as = toShape(a->getShape()), bs = toShape(b->getShape());
  if (as.empty() || bs.empty()) return emitOpError() << "operands must not be scalars";
  bool aVec = as.size() == 1, bVec = bs.size() == 1;
  if (aVec) as.insert(as.begin(), 1);
  if (bVec) bs.push_back(1);
  if (as.back() != bs[bs.size() - 2])
    return emitOpError() << "inner dims differ: " << shapeStr(a->getShape()) << " x " << shapeStr(b->getShape());
  auto batch =
      k::broadcastShape(std::vector<int64_t>(as.begin(), as.end() - 2), std::vector<int64_t>(bs.begin(), bs.end() - 2));
  if (!batch) return emitOpError() << "batch dims do not broadcast";
  std::vector<int64_t> out = *batch;
  if (!aVec) out.push_back(as[as.size() - 2]);
  if (!bVec) out.push_back(bs.back());
  setResult(op, 0, out, a->getElementType());
  return success();
}

tpu::Status MatMulOp::evaluate(EvalContext &ctx) {
  const TensorValue &a = ctx.operand(0), &b = ctx.operand(1);
  k::matmul(a.ptr(), a.shape, b.ptr(), b.shape, ctx.result().ptr());
  return tpu::Status::ok();
}

LogicalResult GemmOp::inferShapes() {
  Operation *op = getOperation();
  auto a = rankedOperand(op, 0), b = rankedOperand(op, 1);
  if (failed(a) || failed(b)) return failure();
  if (a->getRank() != 2 || b->getRank() != 2) return emitOpError() << "operands must be 2-D";
  int64_t m = a->getDimSize(getTransA() ? 1 : 0), ka = a->getDimSize(getTransA() ? 0 : 1);
  int64_t kb = b->getDimSize(getTransB() ? 1 : 0), n = b->getDimSize(getTransB() ? 0 : 1);
  if (ka != kb) return emitOpError() << "inner dims differ: " << ka << " vs " << kb;
  if (auto c = dyn_cast<RankedTensorType>(getC().getType())) {
    auto bc = k::broadcastShape(toShape(c.getShape()), {m, n});
    if (!bc || (*bc)[0] != m || (*bc)[1] != n)
      return emitOpError() << "C " << shapeStr(c.getShape()) << " does not broadcast to [" << m << "," << n << "]";
  }
  setResult(op, 0, {m, n}, f32Type(op));
  return success();
}

tpu::Status GemmOp::evaluate(EvalContext &ctx) {
  const TensorValue &a = ctx.operand(0), &b = ctx.operand(1);
  TensorValue &y = ctx.result();
  int64_t m = y.shape[0], n = y.shape[1];
  int64_t kk = a.shape[getTransA() ? 0 : 1];
  std::vector<float> at, bt;
  const float *pa = a.ptr(), *pb = b.ptr();
  if (getTransA()) {
    at.resize(m * kk);
    k::transpose(a.ptr(), a.shape, {1, 0}, at.data());
    pa = at.data();
  }
  if (getTransB()) {
    bt.resize(kk * n);
    k::transpose(b.ptr(), b.shape, {1, 0}, bt.data());
    pb = bt.data();
  }
  k::gemm(m, n, kk, pa, kk, pb, n, y.ptr(), n);
  float alpha = getAlpha().convertToDouble(), beta = getBeta().convertToDouble();
  float *py = y.ptr();
  if (alpha != 1.0f)
    for (int64_t i = 0; i < m * n; ++i) py[i] *= alpha;
  if (ctx.hasOperand(2) && beta != 0.0f) {
    const TensorValue &c = ctx.operand(2);
    std::vector<float> cb(m * n);
    k::broadcastTo(c.ptr(), c.shape, cb.data(), y.shape);
    for (int64_t i = 0; i < m * n; ++i) py[i] += beta * cb[i];
  }
  return tpu::Status::ok();
}

} // namespace top

#define GET_OP_CLASSES
#include "compiler/Dialect/Top/Ops/Gemm.cpp.inc"
