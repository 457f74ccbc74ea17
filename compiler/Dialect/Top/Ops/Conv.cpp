// Shape rules, verifiers and evaluate of the convolutions (Conv.td).
#include "compiler/Dialect/Top/ShapeRules.h"
#include "compiler/Dialect/Top/TopOps.h"
#include "compiler/Dialect/Top/Window.h"
#include "kernels/Kernels.h"

using namespace mlir;
namespace k = tpu::kernels;

namespace top {
namespace {

// The kernels' parameters of a conv or conv_transpose op evaluated on `ctx`.
template <typename OpT> k::ConvParams convParams(OpT op, EvalContext &ctx) {
  const std::vector<int64_t> &in = ctx.operand(0).shape, &out = ctx.resultShape();
  auto p = windowParams<k::ConvParams>(in, out, op.getKernelShape(), op.getStrides(), op.getPads(), op.getDilations());
  p.ic = in[1];
  p.oc = out[1];
  p.groups = static_cast<int64_t>(op.getGroup());
  return p;
}

} // namespace

LogicalResult ConvOp::verify() {
  return verifyWindow(getOperation(), getKernelShape(), getStrides(), getPads(), getDilations());
}

LogicalResult ConvOp::inferShapes() {
  Operation *op = getOperation();
  auto in = rankedOperand(op, 0), w = rankedOperand(op, 1);
  if (failed(in) || failed(w)) return failure();
  size_t n = getKernelShape().size();
  int64_t g = getGroup();
  if (in->getRank() != int64_t(n) + 2 || w->getRank() != int64_t(n) + 2)
    return emitOpError() << "input " << shapeStr(in->getShape()) << " and filter " << shapeStr(w->getShape())
                         << " must have rank " << n + 2;
  int64_t ic = in->getDimSize(1), oc = w->getDimSize(0);
  if (g < 1 || ic % g || oc % g || w->getDimSize(1) * g != ic)
    return emitOpError() << "filter " << shapeStr(w->getShape()) << " does not fit " << ic << " input channels in " << g
                         << " groups";
  for (size_t i = 0; i < n; ++i)
    if (w->getDimSize(i + 2) != getKernelShape()[i]) return emitOpError() << "kernel_shape differs from filter";
  if (auto b = dyn_cast<RankedTensorType>(getBias().getType()))
    if (b.getNumElements() != oc) return emitOpError() << "bias needs " << oc << " elements";
  llvm::SmallVector<int64_t> out{in->getDimSize(0), oc};
  for (size_t i = 0; i < n; ++i) {
    int64_t o = k::poolOutputSize(in->getDimSize(i + 2), getKernelShape()[i], getStrides()[i], getDilations()[i],
                                  getPads()[i], getPads()[i + n], false);
    if (o < 1) return emitOpError() << "kernel larger than padded input";
    out.push_back(o);
  }
  setResult(op, 0, out, f32Type(op));
  return success();
}

bool ConvOp::hasBoundedOutput() { return getDoRelu() && getReluLimit().convertToDouble() >= 0; }

tpu::Status ConvOp::evaluate(EvalContext &ctx) {
  const TensorValue &x = ctx.operand(0), &w = ctx.operand(1);
  TensorValue &y = ctx.result();
  k::conv2d(x.ptr(), w.ptr(), ctx.hasOperand(2) ? ctx.operand(2).ptr() : nullptr, y.ptr(), convParams(*this, ctx));
  if (getDoRelu()) {
    double limit = getReluLimit().convertToDouble();
    if (limit >= 0)
      k::unary(k::UnaryKind::Clip, y.ptr(), y.ptr(), y.numElements(), 0.0f, static_cast<float>(limit));
    else
      k::unary(k::UnaryKind::Relu, y.ptr(), y.ptr(), y.numElements());
  }
  return tpu::Status::ok();
}

LogicalResult ConvTransposeOp::verify() {
  auto k = getKernelShape();
  if (failed(verifyWindow(getOperation(), k, getStrides(), getPads(), getDilations()))) return failure();
  if (getOutputPadding().size() != k.size()) return emitOpError() << "output_padding needs " << k.size() << " values";
  return success();
}

LogicalResult ConvTransposeOp::inferShapes() {
  Operation *op = getOperation();
  auto in = rankedOperand(op, 0), w = rankedOperand(op, 1);
  if (failed(in) || failed(w)) return failure();
  size_t n = getKernelShape().size();
  int64_t g = getGroup();
  if (in->getRank() != int64_t(n) + 2 || w->getRank() != int64_t(n) + 2)
    return emitOpError() << "input and filter must have rank " << n + 2;
  if (g < 1 || w->getDimSize(0) != in->getDimSize(1) || in->getDimSize(1) % g)
    return emitOpError() << "filter " << shapeStr(w->getShape()) << " does not fit input " << shapeStr(in->getShape())
                         << " with group " << g;
  llvm::SmallVector<int64_t> out{in->getDimSize(0), w->getDimSize(1) * g};
  for (size_t i = 0; i < n; ++i) {
    int64_t o = (in->getDimSize(i + 2) - 1) * getStrides()[i] - getPads()[i] - getPads()[i + n] +
                getDilations()[i] * (getKernelShape()[i] - 1) + 1 + getOutputPadding()[i];
    if (o < 1) return emitOpError() << "output size " << o << " along spatial dim " << i;
    out.push_back(o);
  }
  setResult(op, 0, out, f32Type(op));
  return success();
}

tpu::Status ConvTransposeOp::evaluate(EvalContext &ctx) {
  const TensorValue &x = ctx.operand(0), &w = ctx.operand(1);
  TensorValue &y = ctx.result();
  k::convTranspose2d(x.ptr(), w.ptr(), ctx.hasOperand(2) ? ctx.operand(2).ptr() : nullptr, y.ptr(),
                     convParams(*this, ctx));
  return tpu::Status::ok();
}

} // namespace top

#define GET_OP_CLASSES
#include "compiler/Dialect/Top/Ops/Conv.cpp.inc"
