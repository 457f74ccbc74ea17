// Export of the reducing ops (tpu.reduce, layer_norm, softmax, log_softmax)
// into their parameters (compiler/Backend/Ops/Reduce.h).
#include "compiler/Backend/Ops/Reduce.h"
#include "compiler/Dialect/Tpu/TpuOps.h"

#include "llvm/ADT/STLExtras.h"

#include <iterator>
#include <utility>

namespace tpuir {

namespace {

// Axes of the input (rank <= 4) are its NCHW dims from the left.
template <class OpT> tpu::Status exportAxes(OpT op, tpu::backend::ReduceAxes &axes) {
  const int64_t rank = mlir::cast<mlir::RankedTensorType>(op.getInput().getType()).getRank();
  for (int64_t a : op.getAxes()) {
    if (a < 0 || a >= rank || rank > 4)
      return tpu::makeError("axis ", a, " is not a dim of the rank-", rank, " input (rank <= 4)");
    axes[size_t(a)] = true;
  }
  return tpu::Status::ok();
}

} // namespace

// The mode by name.
tpu::Status ReduceOp::exportParams(tpu::backend::Op &o) {
  using tpu::backend::ReduceMode;
  static const std::pair<const char *, ReduceMode> kModes[] = {{"sum", ReduceMode::Sum},   {"mean", ReduceMode::Mean},
                                                               {"max", ReduceMode::Max},   {"min", ReduceMode::Min},
                                                               {"prod", ReduceMode::Prod}, {"l2", ReduceMode::L2}};
  auto mode = llvm::find_if(kModes, [&](const auto &m) { return getMode() == m.first; });
  if (mode == std::end(kModes))
    return tpu::makeError("mode '", getMode().str(), "' is not sum, mean, max, min, prod or l2");
  auto &p = o.params<tpu::backend::ReduceParams>();
  p.mode = mode->second;
  return exportAxes(*this, p.axes);
}

tpu::Status SoftmaxOp::exportParams(tpu::backend::Op &o) {
  return exportAxes(*this, o.params<tpu::backend::SoftmaxParams>().axes);
}

tpu::Status LogSoftmaxOp::exportParams(tpu::backend::Op &o) {
  return exportAxes(*this, o.params<tpu::backend::SoftmaxParams>().axes);
}

tpu::Status LayerNormOp::exportParams(tpu::backend::Op &o) {
  if (mlir::isa<mlir::NoneType>(getScale().getType()) && !mlir::isa<mlir::NoneType>(getBias().getType()))
    return tpu::makeError("a bias without a scale (give a scale of ones)");
  auto &p = o.params<tpu::backend::LayerNormParams>();
  p.epsilon = float(getEpsilon().convertToDouble());
  return exportAxes(*this, p.axes);
}

} // namespace tpuir
