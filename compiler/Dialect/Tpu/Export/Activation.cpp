// Export of tpu.leaky_relu and tpu.clip (compiler/Backend/Ops/Activation.h).
#include "compiler/Backend/Ops/Activation.h"
#include "compiler/Dialect/Tpu/TpuOps.h"

namespace tpuir {

tpu::Status LeakyReluOp::exportParams(tpu::backend::Op &o) {
  o.params<tpu::backend::LeakyReluParams>().alpha = float(getAlpha().convertToDouble());
  return tpu::Status::ok();
}

tpu::Status ClipOp::exportParams(tpu::backend::Op &o) {
  auto &p = o.params<tpu::backend::ClipParams>();
  p.min = float(getMin().convertToDouble()), p.max = float(getMax().convertToDouble());
  return tpu::Status::ok();
}

} // namespace tpuir
