// Shape family: top.reshape (a view; int8 keeps the batch, else a
// tpu.move), top.resize (nearest, integer factors: tpu.upsample),
// top.concat (channels of rank <= 4; int8 inputs of another scale get a
// tpu.requant; other axes and constant inputs: tpu.move), top.slice
// (positive steps, rank <= 4: tpu.slice, int8 keeps the scale; negative
// steps: tpu.move).

#include "compiler/Lowering/Lowerer.h"

using namespace mlir;

namespace tpu::lowering {

Status Lowerer::lowerReshape(top::ReshapeOp op) {
  auto outShape = shapeOf(op.getOutput()), inShape = shapeOf(op->getOperand(0));
  if (outShape.empty() || inShape.empty()) return noLowering(op, "a scalar");
  if (outShape[0] != inShape[0] && wantInt8(names_[op.getOutput()])) return lowerReshapeMove(op);
  return lowerSameScale<tpuir::ReshapeOp>(op);
}

Status Lowerer::lowerResize(top::ResizeOp r) {
  Operation *op = r;
  auto outShape = shapeOf(r.getOutput());
  auto scales = r.getScales();
  auto in = shapeOf(r.getInput());
  bool nearestFloor = r.getMode() == "nearest" &&
                      ((r.getCoordinateTransformationMode() == "asymmetric" && r.getNearestMode() == "floor") ||
                       r.getCoordinateTransformationMode() == "half_pixel" ||
                       r.getCoordinateTransformationMode() == "pytorch_half_pixel");
  if (!nearestFloor || in.size() != 4 || outShape[0] != in[0] || outShape[1] != in[1] ||
      outShape[2] % in[2] || outShape[3] % in[3] || (scales.size() == 4 && (scales[0] != 1 || scales[1] != 1)))
    return noLowering(op, "only nearest resizes of H and W by integer factors");
  if (r.getCoordinateTransformationMode() != "asymmetric" && r.getNearestMode() != "round_prefer_floor" &&
      r.getNearestMode() != "round_prefer_ceil")
    return noLowering(op, "only nearest resizes of H and W by integer factors");
  return lowerSameScale<tpuir::UpsampleOp>(op, uint64_t(outShape[2] / in[2]), uint64_t(outShape[3] / in[3]));
}

Status Lowerer::lowerConcat(top::ConcatOp c) {
  Operation *op = c;
  Value result = c.getOutput();
  const std::string name = names_[result];
  auto outShape = shapeOf(result);
  const bool constantInput =
      llvm::any_of(c.getInputs(), [](Value v) { return bool(v.getDefiningOp<top::WeightOp>()); });
  if (c.getAxis() != 1 || outShape.size() > 4 || constantInput) return lowerConcatMove(c);
  std::vector<Value> ins;
  if (wantInt8(name)) {
    auto r = int8AtScaleOf(op, c.getInputs(), name);
    if (!r) return r.status();
    vals_[result].i8 = make<tpuir::ConcatOp>(name, qType(outShape, name), ValueRange(*r));
  } else {
    for (Value v : c.getInputs()) ins.push_back(f32(v));
    vals_[result].f32 = make<tpuir::ConcatOp>(name, f32Type(outShape), ValueRange(ins));
  }
  return Status::ok();
}

Status Lowerer::lowerSlice(top::SliceOp s) {
  Operation *op = s;
  auto inShape = shapeOf(s.getInput()), outShape = shapeOf(s.getOutput());
  if (s.getInput().getDefiningOp<top::WeightOp>()) return noLowering(op, "a constant operand");
  for (int64_t d : outShape)
    if (d < 1) return noLowering(op, "an empty result");
  auto steps = s.getSteps();
  if (inShape.size() > 4 || llvm::any_of(steps, [](int64_t step) { return step < 1; })) return lowerSliceMove(s);
  return lowerSameScale<tpuir::SliceOp>(op, s.getStarts(), steps);
}

void addShapeLowerings(LoweringTable &t) {
  t.add<top::ReshapeOp>([](Lowerer &l, top::ReshapeOp op) { return l.lowerReshape(op); });
  t.add<top::ResizeOp>([](Lowerer &l, top::ResizeOp op) { return l.lowerResize(op); });
  t.add<top::ConcatOp>([](Lowerer &l, top::ConcatOp op) { return l.lowerConcat(op); });
  t.add<top::SliceOp>([](Lowerer &l, top::SliceOp op) { return l.lowerSlice(op); });
}

} // namespace tpu::lowering
