// Export of tpu.affine (compiler/Backend/Ops/Affine.h).
#include "compiler/Backend/Ops/Affine.h"
#include "compiler/Dialect/Tpu/TpuOps.h"

namespace tpuir {

tpu::Status AffineOp::exportParams(tpu::backend::Op &o) {
  auto &p = o.params<tpu::backend::AffineParams>();
  p.alpha = float(getAlpha().convertToDouble()), p.beta = float(getBeta().convertToDouble());
  return tpu::Status::ok();
}

} // namespace tpuir
