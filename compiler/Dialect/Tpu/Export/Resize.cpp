// Export of tpu.resize (compiler/Backend/Ops/Resize.h): the H and W tables
// from the ONNX attributes (one truth: kernels::resizeTaps).
#include "compiler/Backend/Ops/Resize.h"
#include "compiler/Dialect/Tpu/TpuOps.h"

namespace tpuir {

tpu::Status ResizeOp::exportParams(tpu::backend::Op &o) {
  auto in = mlir::cast<mlir::RankedTensorType>(getInput().getType()).getShape();
  auto out = mlir::cast<mlir::RankedTensorType>(getOutput().getType()).getShape();
  auto scales = getScales();
  if (in.size() != 4 || out.size() != 4 || scales.size() != 2)
    return tpu::makeError("needs NCHW input and output and scales for H and W");
  const auto p = tpu::kernels::resizeParams(getMode(), getCoordinateTransformationMode(), getNearestMode());
  auto &taps = o.params<tpu::backend::ResizeParams>();
  taps.h = tpu::kernels::resizeTaps(in[2], out[2], scales[0], p);
  taps.w = tpu::kernels::resizeTaps(in[3], out[3], scales[1], p);
  return tpu::Status::ok();
}

} // namespace tpuir
