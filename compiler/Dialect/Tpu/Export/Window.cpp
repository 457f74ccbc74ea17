// Export of the window ops (tpu.conv, conv_transpose, max_pool, avg_pool)
// into the back end's WindowParams (compiler/Backend/Ops/Window.h).
#include "compiler/Backend/Ops/Window.h"
#include "compiler/Dialect/Tpu/TpuOps.h"

#include <type_traits>

namespace tpuir {

namespace {

template <class OpT> tpu::Status exportWindow(OpT op, tpu::backend::Op &o) {
  auto k = op.getKernelShape(), s = op.getStrides(), p = op.getPads(), d = op.getDilations();
  if (k.size() != 2) return tpu::makeError("kernel_shape needs 2 values");
  if (s.size() != 2 || p.size() != 4 || d.size() != 2)
    return tpu::makeError("strides, dilations need 2 values and pads 4 (top, left, bottom, right)");
  tpu::backend::WindowParams &w = o.params<tpu::backend::WindowParams>();
  w.kh = k[0], w.kw = k[1];
  w.strideH = s[0], w.strideW = s[1];
  w.dilationH = d[0], w.dilationW = d[1];
  w.padTop = p[0], w.padLeft = p[1], w.padBottom = p[2], w.padRight = p[3];
  w.groups = int64_t(op.getGroup());
  w.isMax = std::is_same_v<OpT, MaxPoolOp>;
  if constexpr (std::is_same_v<OpT, AvgPoolOp>) w.countPad = op.getCountIncludePad();
  return tpu::Status::ok();
}

} // namespace

tpu::Status ConvOp::exportParams(tpu::backend::Op &o) { return exportWindow(*this, o); }
tpu::Status ConvTransposeOp::exportParams(tpu::backend::Op &o) { return exportWindow(*this, o); }
tpu::Status MaxPoolOp::exportParams(tpu::backend::Op &o) { return exportWindow(*this, o); }
tpu::Status AvgPoolOp::exportParams(tpu::backend::Op &o) { return exportWindow(*this, o); }

} // namespace tpuir
