// Pointwise chip ops on tensors whose NCHW does not fit the command fields:
// RetinaNet's scores, sigmoid of [14400, 91] (14400 items: a TIU operand's
// n has 12 bits), then flattened to [1310400] (past any field) before the
// threshold compare; and pointwise ops of more than 4 dims (the relu after
// a 3-D convolution). The op runs on a view of the same elements, free
// reshapes around it (the view keeps the op's name + "_flat", the reshape
// back the op's name): [1, c, h, w] for fp32, and [d0, d1, d2 * ... , dlast]
// for a high rank, which keeps dim 0, the 4N batch of an int8 tensor.
#include "compiler/Lowering/Lowerer.h"

#include "compiler/Backend/Graph.h"

using namespace mlir;

namespace tpu::lowering {

namespace {

// [1, c, h, w] with c the largest divisor of n up to the lanes (64) and
// w the largest divisor of n / c within a field, when h then fits too.
std::optional<std::vector<int64_t>> viewOf(int64_t n) {
  int64_t c = 64;
  while (n % c) --c;
  const int64_t m = n / c;
  for (int64_t w = std::min(m, backend::kMaxDim); w >= 1; --w)
    if (m % w == 0) {
      if (m / w > backend::kMaxDim) return std::nullopt;
      return std::vector<int64_t>{1, c, m / w, w};
    }
  return std::nullopt;
}

// The 4-D view of a high-rank shape that keeps dim 0 and dim 1.
std::vector<int64_t> keptBatchView(llvm::ArrayRef<int64_t> shape) {
  int64_t middle = 1;
  for (size_t i = 2; i + 1 < shape.size(); ++i) middle *= shape[i];
  return {shape[0], shape[1], middle, shape.back()};
}

} // namespace

void flattenOversizedPointwise(func::FuncOp fn) {
  OpBuilder b(fn.getContext());
  for (Operation &op : llvm::make_early_inc_range(fn.getBody().front())) {
    auto kind = dyn_cast<tpuir::BackendOpInterface>(&op);
    if (!kind || !backend::pointwiseKind(kind.getBackendKind()) || op.getNumResults() != 1) continue;
    auto outType = cast<RankedTensorType>(op.getResult(0).getType());
    const bool highRank = outType.getRank() > 4;
    std::optional<std::vector<int64_t>> view;
    if (highRank && backend::fitsCommandFields(keptBatchView(outType.getShape())))
      view = keptBatchView(outType.getShape());
    else if (outType.getElementType().isF32() && !backend::fitsCommandFields(outType.getShape().vec()))
      view = viewOf(outType.getNumElements());
    else
      continue;
    // Every operand a tensor of the output's shape or one value; the
    // [1, c, h, w] view only for fp32 (an int8 tensor is stored by batch item).
    bool viewable = bool(view);
    for (Value v : op.getOperands()) {
      auto t = dyn_cast<RankedTensorType>(v.getType());
      viewable &= t && (highRank || t.getElementType().isF32()) &&
                  (t.getShape() == outType.getShape() || t.getNumElements() == 1);
    }
    auto loc = dyn_cast<NameLoc>(op.getLoc());
    if (!viewable || !loc) continue;
    auto viewOfType = [&](Type t) {
      auto rt = cast<RankedTensorType>(t);
      return RankedTensorType::get(*view, rt.getElementType(), rt.getEncoding());
    };
    const std::string name = loc.getName().str();
    b.setInsertionPoint(&op);
    for (OpOperand &use : op.getOpOperands())
      if (cast<RankedTensorType>(use.get().getType()).getShape() == outType.getShape())
        use.set(b.create<tpuir::ReshapeOp>(
                     NameLoc::get(b.getStringAttr(name + "_in" + std::to_string(use.getOperandNumber()) + "_flat")),
                     viewOfType(use.get().getType()), use.get())
                    .getOutput());
    Value result = op.getResult(0);
    result.setType(viewOfType(outType));
    op.setLoc(NameLoc::get(b.getStringAttr(name + "_flat")));
    b.setInsertionPointAfter(&op);
    Value back = b.create<tpuir::ReshapeOp>(NameLoc::get(b.getStringAttr(name)), outType, result).getOutput();
    result.replaceAllUsesExcept(back, back.getDefiningOp());
  }
}

} // namespace tpu::lowering
