// Export of tpu.slice (compiler/Backend/Ops/Slice.h): starts/steps have one
// value per input dim (up to 4), NCHW from the left.
#include "compiler/Backend/Ops/Slice.h"
#include "compiler/Dialect/Tpu/TpuOps.h"

namespace tpuir {

tpu::Status SliceOp::exportParams(tpu::backend::Op &o) {
  auto starts = getStarts(), steps = getSteps();
  const size_t rank = size_t(mlir::cast<mlir::RankedTensorType>(getInput().getType()).getRank());
  if (rank > 4 || starts.size() != rank || steps.size() != rank)
    return tpu::makeError("starts and steps need one value per input dim (rank <= 4)");
  auto &p = o.params<tpu::backend::SliceParams>();
  for (size_t d = 0; d < rank; ++d) p.start[d] = starts[d], p.step[d] = steps[d];
  return tpu::Status::ok();
}

} // namespace tpuir
