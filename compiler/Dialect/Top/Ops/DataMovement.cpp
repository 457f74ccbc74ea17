// Verifiers, shape rules and evaluate of the ops that move elements
// (DataMovement.td).
#include "compiler/Dialect/Top/HostEval.h"
#include "compiler/Dialect/Top/ShapeRules.h"
#include "compiler/Dialect/Top/TopOps.h"
#include "kernels/Kernels.h"

#include <algorithm>

using namespace mlir;
namespace k = tpu::kernels;

namespace top {

// The shape rules of permute and concat are their host ops' (kernels/HostOps.cpp).
LogicalResult PermuteOp::inferShapes() { return inferShapesOnHost(getOperation()); }

tpu::Status PermuteOp::evaluate(EvalContext &ctx) { return evaluateOnHost(*this, ctx); }

LogicalResult ConcatOp::inferShapes() { return inferShapesOnHost(getOperation()); }

tpu::Status ConcatOp::evaluate(EvalContext &ctx) { return evaluateOnHost(*this, ctx); }

// Split's shape rule and evaluate are its host op's, once the sizes cover
// the axis exactly (the host clamps them to a dim that came out smaller).
LogicalResult SplitOp::inferShapes() {
  auto in = rankedOperand(getOperation(), 0);
  if (failed(in)) return failure();
  int64_t axis = getAxis();
  if (axis < 0 || axis >= in->getRank()) return emitOpError() << "axis out of range";
  if (getSplit().size() != getNumResults()) return emitOpError() << "split needs one size per result";
  int64_t total = 0;
  for (int64_t s : getSplit()) total += s < 0 ? -1 << 30 : s;
  if (total != in->getDimSize(axis))
    return emitOpError() << "split sizes " << shapeStr(getSplit()) << " do not sum to " << in->getDimSize(axis);
  return inferShapesOnHost(getOperation());
}

tpu::Status SplitOp::evaluate(EvalContext &ctx) { return evaluateOnHost(*this, ctx); }

LogicalResult SliceOp::inferShapes() {
  auto in = rankedOperand(getOperation(), 0);
  if (failed(in)) return failure();
  size_t rank = in->getRank();
  if (getStarts().size() != rank || getEnds().size() != rank || getSteps().size() != rank)
    return emitOpError() << "starts/ends/steps need " << rank << " values";
  llvm::SmallVector<int64_t> out;
  for (size_t i = 0; i < rank; ++i) {
    int64_t s = getStarts()[i], e = getEnds()[i], st = getSteps()[i], d = in->getDimSize(i);
    bool ok = st > 0 ? (0 <= s && s <= d && 0 <= e && e <= d) : st < 0 && (-1 <= s && s < d && -1 <= e && e < d);
    if (!ok)
      return emitOpError() << "dim " << i << ": start " << s << " end " << e << " step " << st
                           << " not clamped to size " << d;
    int64_t n = st > 0 ? (e - s + st - 1) / st : (s - e + (-st) - 1) / (-st);
    out.push_back(std::max<int64_t>(0, n));
  }
  setResult(getOperation(), 0, out, in->getElementType());
  return success();
}

tpu::Status SliceOp::evaluate(EvalContext &ctx) { return evaluateOnHost(*this, ctx); }

LogicalResult PadOp::verify() {
  auto m = getMode();
  if (m != "constant" && m != "reflect" && m != "edge") return emitOpError() << "unknown mode '" << m << "'";
  return success();
}

LogicalResult PadOp::inferShapes() {
  auto in = rankedOperand(getOperation(), 0);
  if (failed(in)) return failure();
  size_t rank = in->getRank();
  if (getPads().size() != 2 * rank) return emitOpError() << "pads needs " << 2 * rank << " values";
  llvm::SmallVector<int64_t> out;
  for (size_t i = 0; i < rank; ++i) {
    int64_t o = in->getDimSize(i) + getPads()[i] + getPads()[i + rank];
    if (o < 0) return emitOpError() << "negative output size along dim " << i;
    if (getMode() == "reflect" && (getPads()[i] >= in->getDimSize(i) || getPads()[i + rank] >= in->getDimSize(i)))
      return emitOpError() << "reflect pad must be smaller than the dim";
    out.push_back(o);
  }
  setResult(getOperation(), 0, out, in->getElementType());
  return success();
}

tpu::Status PadOp::evaluate(EvalContext &ctx) {
  const TensorValue &x = ctx.operand(0);
  TensorValue &y = ctx.result();
  size_t rank = x.shape.size();
  auto pads = getPads();
  k::PadMode mode = getMode() == "reflect" ? k::PadMode::Reflect
                    : getMode() == "edge"  ? k::PadMode::Edge
                                           : k::PadMode::Constant;
  if (mode != k::PadMode::Constant)
    for (size_t d = 0; d < rank; ++d)
      if (x.shape[d] == 0 && y.shape[d] != 0) return ctx.error("cannot ", getMode().str(), "-pad an empty dimension");
  k::pad(x.ptr(), x.shape, std::vector<int64_t>(pads.begin(), pads.begin() + rank),
         std::vector<int64_t>(pads.begin() + rank, pads.end()), mode, static_cast<float>(getValue().convertToDouble()),
         y.ptr());
  return tpu::Status::ok();
}

LogicalResult GatherOp::inferShapes() {
  auto in = rankedOperand(getOperation(), 0), idx = rankedOperand(getOperation(), 1);
  if (failed(in) || failed(idx)) return failure();
  int64_t axis = getAxis();
  if (axis < 0 || axis >= in->getRank()) return emitOpError() << "axis out of range";
  if (!idx->getElementType().isInteger(64)) return emitOpError() << "indices must be i64";
  llvm::SmallVector<int64_t> out(in->getShape().take_front(axis));
  out.append(idx->getShape().begin(), idx->getShape().end());
  out.append(in->getShape().begin() + axis + 1, in->getShape().end());
  setResult(getOperation(), 0, out, in->getElementType());
  return success();
}

// Negative indices count from the end; one out of range is an error.
tpu::Status GatherOp::evaluate(EvalContext &ctx) { return evaluateOnHost(*this, ctx); }

LogicalResult ExpandOp::inferShapes() {
  auto in = rankedOperand(getOperation(), 0);
  if (failed(in)) return failure();
  auto out = k::broadcastShape(toShape(in->getShape()), toShape(getShape()));
  if (!out) return emitOpError() << "cannot expand " << shapeStr(in->getShape()) << " to " << shapeStr(getShape());
  setResult(getOperation(), 0, *out, in->getElementType());
  return success();
}

tpu::Status ExpandOp::evaluate(EvalContext &ctx) {
  const TensorValue &x = ctx.operand(0);
  TensorValue &y = ctx.result();
  k::broadcastTo(x.ptr(), x.shape, y.ptr(), y.shape);
  return tpu::Status::ok();
}

LogicalResult TileOp::inferShapes() {
  auto in = rankedOperand(getOperation(), 0);
  if (failed(in)) return failure();
  if (int64_t(getRepeats().size()) != in->getRank()) return emitOpError() << "repeats needs one value per dim";
  llvm::SmallVector<int64_t> out;
  for (int64_t i = 0; i < in->getRank(); ++i) {
    if (getRepeats()[i] < 0) return emitOpError() << "repeats must be >= 0";
    out.push_back(in->getDimSize(i) * getRepeats()[i]);
  }
  setResult(getOperation(), 0, out, in->getElementType());
  return success();
}

tpu::Status TileOp::evaluate(EvalContext &ctx) {
  const TensorValue &x = ctx.operand(0);
  TensorValue &y = ctx.result();
  if (y.numElements() == 0) return tpu::Status::ok();
  k::tile(x.ptr(), x.shape, toShape(getRepeats()), y.ptr());
  return tpu::Status::ok();
}

LogicalResult DepthToSpaceOp::inferShapes() {
  auto in = rankedOperand(getOperation(), 0);
  if (failed(in)) return failure();
  int64_t b = getBlocksize();
  if (in->getRank() != 4 || b < 1 || in->getDimSize(1) % (b * b))
    return emitOpError() << "needs NCHW input with C divisible by blocksize^2";
  if (getMode() != "DCR" && getMode() != "CRD") return emitOpError() << "mode must be DCR or CRD";
  setResult(getOperation(), 0,
            {in->getDimSize(0), in->getDimSize(1) / (b * b), in->getDimSize(2) * b, in->getDimSize(3) * b},
            in->getElementType());
  return success();
}

// A transpose of the input viewed as [n, b, b, c, h, w] (DCR: channels are
// (b1, b2, c)) or [n, c, b, b, h, w] (CRD) into [n, c, h, b1, w, b2].
tpu::Status DepthToSpaceOp::evaluate(EvalContext &ctx) {
  const TensorValue &x = ctx.operand(0);
  int64_t b = static_cast<int64_t>(getBlocksize()), n = x.shape[0], c = x.shape[1] / (b * b), h = x.shape[2],
          w = x.shape[3];
  bool dcr = getMode() == "DCR";
  std::vector<int64_t> split = dcr ? std::vector<int64_t>{n, b, b, c, h, w} : std::vector<int64_t>{n, c, b, b, h, w};
  std::vector<int64_t> perm = dcr ? std::vector<int64_t>{0, 3, 4, 1, 5, 2} : std::vector<int64_t>{0, 1, 4, 2, 5, 3};
  k::transpose(x.ptr(), split, perm, ctx.result().ptr());
  return tpu::Status::ok();
}

} // namespace top

#define GET_OP_CLASSES
#include "compiler/Dialect/Top/Ops/DataMovement.cpp.inc"
