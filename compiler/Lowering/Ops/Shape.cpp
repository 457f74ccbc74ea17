// Shape family: top.reshape (a view; int8 keeps the batch, else a
// tpu.move), top.resize (nearest by integer factors: tpu.upsample; any other
// nearest or bilinear: tpu.resize), top.concat (channels of rank <= 4; int8
// inputs of another scale get a tpu.requant; other axes and constant inputs:
// tpu.move), top.slice (positive steps, rank <= 4: tpu.slice, int8 keeps the
// scale; negative steps: tpu.move).

#include "compiler/Lowering/Lowerer.h"

using namespace mlir;

namespace tpu::lowering {

Status Lowerer::lowerReshape(top::ReshapeOp op) {
  auto outShape = shapeOf(op.getOutput()), inShape = shapeOf(op->getOperand(0));
  if (outShape.empty() || inShape.empty()) return noLowering(op, "a scalar");
  if (op.getInput().getDefiningOp<top::WeightOp>())
    return noLowering(op, "a reshape of a constant (constant folding leaves none)");
  if (outShape[0] != inShape[0] && wantInt8(names_[op.getOutput()])) return lowerReshapeMove(op);
  return lowerSameScale<tpuir::ReshapeOp>(op);
}

Status Lowerer::lowerResize(top::ResizeOp r) {
  Operation *op = r;
  auto outShape = shapeOf(r.getOutput()), in = shapeOf(r.getInput());
  if (in.size() != 4 || outShape[0] != in[0] || outShape[1] != in[1])
    return noLowering(op, "only resizes of H and W (NCHW)");
  // The coordinate transform's scales (out / in when the op gives sizes).
  std::vector<double> scales(r.getScales().begin(), r.getScales().end());
  if (scales.size() != 4)
    scales = {1.0, 1.0, double(outShape[2]) / double(in[2]), double(outShape[3]) / double(in[3])};
  const std::string coord = r.getCoordinateTransformationMode().str(), nearest = r.getNearestMode().str();
  const bool linear = r.getMode() == "linear";
  // Nearest by integer factors picks source index floor(x / factor) in these modes: tpu.upsample.
  bool floorPick = !linear && ((coord == "asymmetric" && nearest == "floor") ||
                               ((coord == "half_pixel" || coord == "pytorch_half_pixel") &&
                                (nearest == "round_prefer_floor" || nearest == "round_prefer_ceil")));
  if (floorPick && outShape[2] % in[2] == 0 && outShape[3] % in[3] == 0 &&
      scales[2] == double(outShape[2] / in[2]) && scales[3] == double(outShape[3] / in[3]))
    return lowerSameScale<tpuir::UpsampleOp>(op, uint64_t(outShape[2] / in[2]), uint64_t(outShape[3] / in[3]));
  const std::array<double, 2> hw{scales[2], scales[3]};
  if (!linear) return lowerSameScale<tpuir::ResizeOp>(op, r.getMode(), coord, nearest, ArrayRef<double>(hw));
  // Bilinear blends in fp32; in INT8 it is an fp32 island (casts around it).
  vals_[r.getOutput()].f32 = make<tpuir::ResizeOp>(names_[r.getOutput()], f32Type(outShape), f32(r.getInput()),
                                                   r.getMode(), coord, nearest, ArrayRef<double>(hw));
  return Status::ok();
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
  auto inShape = shapeOf(s.getInput());
  if (s.getInput().getDefiningOp<top::WeightOp>()) return noLowering(op, "a constant operand");
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
