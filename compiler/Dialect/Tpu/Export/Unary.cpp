// Export of tpu.unary (compiler/Backend/Ops/Unary.h): the function by name.
#include "compiler/Backend/Ops/Unary.h"
#include "compiler/Backend/QuantRef.h"
#include "compiler/Dialect/Tpu/TpuOps.h"

namespace tpuir {

tpu::Status UnaryOp::exportParams(tpu::backend::Op &o) {
  auto fn = tpu::backend::unaryFromName(getFunction().str());
  if (!fn) return tpu::makeError("unknown function '", getFunction().str(), "'");
  auto &p = o.params<tpu::backend::UnaryParams>();
  p.function = *fn;
  p.alpha = float(getAlpha().convertToDouble()), p.beta = float(getBeta().convertToDouble());
  return tpu::Status::ok();
}

} // namespace tpuir
