// ONNX MatMul and Gemm.
#include "compiler/Import/OnnxNodeImporter.h"

using namespace mlir;

namespace tpu::onnx {

namespace {

Status gemm(OnnxImporter &im, const Node &n) {
  auto a = im.operand(n, 0), bb = im.operand(n, 1), c = im.operandOrNone(n, 2);
  if (!a) return a.status();
  if (!bb) return bb.status();
  if (!c) return c.status();
  auto op = im.build<top::GemmOp>(n, {*a, *bb, *c},
                                  {im.f64("alpha", n.getFloat("alpha", 1)), im.f64("beta", n.getFloat("beta", 1)),
                                   im.boolean("transA", n.getInt("transA", 0) != 0),
                                   im.boolean("transB", n.getInt("transB", 0) != 0)});
  return op ? Status::ok() : op.status();
}

} // namespace

void registerMatMulOps(OpTable &t) {
  t.add("MatMul", multiInputHandler<top::MatMulOp>(2, 2), {2});
  t.add("Gemm", gemm, {2});
}

} // namespace tpu::onnx
