// Export of tpu.fc (compiler/Backend/Ops/Fc.h).
#include "compiler/Backend/Ops/Fc.h"
#include "compiler/Dialect/Tpu/TpuOps.h"

namespace tpuir {

tpu::Status FcOp::exportParams(tpu::backend::Op &o) {
  o.params<tpu::backend::FcParams>().transposedInput = getTransposedInput();
  return tpu::Status::ok();
}

} // namespace tpuir
