// Export of tpu.upsample (compiler/Backend/Ops/Upsample.h).
#include "compiler/Backend/Ops/Upsample.h"
#include "compiler/Dialect/Tpu/TpuOps.h"

namespace tpuir {

tpu::Status UpsampleOp::exportParams(tpu::backend::Op &o) {
  auto &p = o.params<tpu::backend::UpsampleParams>();
  p.scaleH = int64_t(getScaleH()), p.scaleW = int64_t(getScaleW());
  return tpu::Status::ok();
}

} // namespace tpuir
