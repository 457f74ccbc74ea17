// Verifier, shape rule and evaluate of top.resize (Resize.td).
#include "compiler/Dialect/Top/ShapeRules.h"
#include "compiler/Dialect/Top/TopOps.h"
#include "kernels/Kernels.h"

#include <cmath>

using namespace mlir;
namespace k = tpu::kernels;

namespace top {

LogicalResult ResizeOp::verify() {
  auto m = getMode();
  if (m != "nearest" && m != "linear") return emitOpError() << "unsupported mode '" << m << "'";
  auto c = getCoordinateTransformationMode();
  if (c != "half_pixel" && c != "asymmetric" && c != "align_corners" && c != "pytorch_half_pixel")
    return emitOpError() << "unsupported coordinate_transformation_mode '" << c << "'";
  auto n = getNearestMode();
  if (n != "round_prefer_floor" && n != "round_prefer_ceil" && n != "floor" && n != "ceil")
    return emitOpError() << "unsupported nearest_mode '" << n << "'";
  for (double s : getScales())
    if (!(s > 0)) return emitOpError() << "scales must be > 0";
  return success();
}

LogicalResult ResizeOp::inferShapes() {
  auto in = rankedOperand(getOperation(), 0);
  if (failed(in)) return failure();
  size_t rank = in->getRank();
  if (getScales().size() != rank || (!getSizes().empty() && getSizes().size() != rank))
    return emitOpError() << "scales/sizes need " << rank << " values";
  llvm::SmallVector<int64_t> out;
  for (size_t i = 0; i < rank; ++i) {
    int64_t o = getSizes().empty() ? int64_t(std::floor(in->getDimSize(i) * getScales()[i])) : getSizes()[i];
    if (o < 1) return emitOpError() << "output size " << o << " along dim " << i;
    out.push_back(o);
  }
  setResult(getOperation(), 0, out, in->getElementType());
  return success();
}

tpu::Status ResizeOp::evaluate(EvalContext &ctx) {
  const TensorValue &x = ctx.operand(0);
  TensorValue &y = ctx.result();
  std::vector<double> scales(getScales().begin(), getScales().end());
  if (scales.size() != x.shape.size())
    for (size_t d = 0; d < x.shape.size(); ++d) scales.push_back(double(y.shape[d]) / double(x.shape[d]));
  const k::ResizeParams p = k::resizeParams(getMode(), getCoordinateTransformationMode(), getNearestMode());
  k::resize(x.ptr(), x.shape, y.ptr(), y.shape, scales, p);
  return tpu::Status::ok();
}

} // namespace top

#define GET_OP_CLASSES
#include "compiler/Dialect/Top/Ops/Resize.cpp.inc"
