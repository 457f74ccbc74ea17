// Export of tpu.cpu (compiler/Backend/Ops/Cpu.h): the host call of its Top
// op, whose result shapes the host op's own shape rule gives.
#include "compiler/Backend/Ops/Cpu.h"
#include "compiler/Dialect/Top/HostEval.h"
#include "compiler/Dialect/Tpu/TpuOps.h"

namespace tpuir {

tpu::Status CpuOp::exportAttributes(tpu::backend::Op &o) {
  o.kind = getBackendKind();
  const tpu::kernels::HostOp *host = tpu::kernels::findHostOp(getOpName());
  if (!host) return tpu::makeError("'", getOpName().str(), "' is not a host op");
  auto attrs = top::hostAttrsOf(getOpName(), getParams().getValue());
  if (!attrs) return attrs.status();
  std::vector<tpu::kernels::Shape> inputs;
  for (mlir::Value v : getInputs()) {
    auto s = mlir::cast<mlir::RankedTensorType>(v.getType()).getShape();
    inputs.emplace_back(s.begin(), s.end());
  }
  auto shapes = host->inferShapes(*attrs, inputs);
  if (!shapes) return tpu::Status(shapes.status()).prefix(std::string(host->name));
  if (getResult() < 0 || uint64_t(getResult()) >= shapes->size())
    return tpu::makeError(host->name, " has ", shapes->size(), " results, not ", getResult() + 1);
  auto &call = o.params<tpu::backend::CpuParams>().call;
  call.code = host->code;
  call.attrs = attrs.take();
  call.resultShapes = shapes.take();
  call.result = uint32_t(getResult());
  return tpu::Status::ok();
}

} // namespace tpuir
