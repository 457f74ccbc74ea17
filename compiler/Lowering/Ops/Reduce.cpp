// Reduce family: top.reduce_{sum,mean,max,min,prod,l2} on any axes and
// top.global_max_pool (a max over H and W) -> tpu.reduce. INT8: max and min
// keep the input's scale; sum and mean requantize with one uint8
// multiplier m = s_x / (s_y * count) and a right shift; prod and l2, and
// layouts the int8 emitter cannot move (backend::reduceLayout), stay fp32.
// top.softmax / top.log_softmax on any axis -> tpu.softmax / tpu.log_softmax
// (fp32; in INT8 an fp32 island between casts).
// top.cumsum -> a depthwise tpu.conv of ones along the axis (lowerCumSum),
// fp32 (in INT8 an fp32 island).

#include "compiler/Lowering/Lowerer.h"

using namespace mlir;

namespace tpu::lowering {

namespace {

const char *modeName(backend::ReduceMode m) {
  switch (m) {
  case backend::ReduceMode::Sum: return "sum";
  case backend::ReduceMode::Mean: return "mean";
  case backend::ReduceMode::Max: return "max";
  case backend::ReduceMode::Min: return "min";
  case backend::ReduceMode::Prod: return "prod";
  case backend::ReduceMode::L2: return "l2";
  }
  return "";
}

// The back end's layout check for these shapes in fp32 or int8.
Status layoutFor(llvm::ArrayRef<int64_t> in, llvm::ArrayRef<int64_t> out, const std::array<bool, 4> &axes,
                 backend::DType t) {
  backend::Tensor x, y;
  x.shape.assign(in.begin(), in.end()), y.shape.assign(out.begin(), out.end());
  x.dtype = y.dtype = t;
  return backend::reduceLayout(x, y, axes);
}

} // namespace

Status Lowerer::lowerReduce(Operation *op, backend::ReduceMode mode, ArrayRef<int64_t> axes) {
  Value input = op->getOperand(0), result = op->getResult(0);
  const std::string name = names_[result];
  const auto inShape = shapeOf(input), outShape = shapeOf(result);
  if (input.getDefiningOp<top::WeightOp>()) return noLowering(op, "a constant operand");
  if (inShape.size() > 4) return noLowering(op, "an input of more than 4 dims (the back end holds 1 to 4)");
  std::array<bool, 4> mask{false, false, false, false};
  int64_t count = 1;
  for (int64_t a : axes) mask[size_t(a)] = true, count *= inShape[size_t(a)];
  if (Status st = layoutFor(inShape, outShape, mask, backend::DType::F32); !st) return noLowering(op, st.message());
  const StringRef mname = modeName(mode);
  const bool sumLike = mode == backend::ReduceMode::Sum || mode == backend::ReduceMode::Mean;
  bool int8 = wantInt8(name);
  if (int8 && (mode == backend::ReduceMode::Prod || mode == backend::ReduceMode::L2)) {
    out_.fallbacks.push_back(name + ": the BM1684 has no int8 " + mname.str());
    int8 = false;
  }
  if (int8) {
    if (Status st = layoutFor(inShape, outShape, mask, backend::DType::I8); !st) {
      out_.fallbacks.push_back(name + ": " + st.message());
      int8 = false;
    }
  }
  if (int8 && !sumLike) {
    Value x = i8(input);
    vals_[result].i8 = make<tpuir::ReduceOp>(name, likeType(x, outShape), x, mname, axes);
    return Status::ok();
  }
  if (int8) {
    Value x = i8(input);
    const double m = double(scaleOfValue(x)) / scaleOf(name) / double(mode == backend::ReduceMode::Mean ? count : 1);
    auto r = chooseShift({{m, 255}});
    if (r && fixedPoint(m, *r) >= 1) {
      vals_[result].i8 = make<tpuir::ReduceOp>(name, qType(outShape, name), x, mname, axes, false, uint64_t(*r),
                                               ArrayRef<int64_t>{fixedPoint(m, *r)});
      return Status::ok();
    }
    out_.fallbacks.push_back(name + ": " + mname.str() + " multiplier does not fit [1, 255] with any right shift");
  }
  vals_[result].f32 = make<tpuir::ReduceOp>(name, f32Type(outShape), f32(input), mname, axes);
  return Status::ok();
}

template <class TpuOpT> Status Lowerer::lowerSoftmax(Operation *op, int64_t axis) {
  Value input = op->getOperand(0), result = op->getResult(0);
  const std::string name = names_[result];
  if (input.getDefiningOp<top::WeightOp>()) return noLowering(op, "a constant operand");
  if (wantInt8(name)) out_.fallbacks.push_back(name + ": " + op->getName().stripDialect().str() + " runs in fp32 on the BM1684");
  vals_[result].f32 = make<TpuOpT>(name, f32Type(shapeOf(result)), f32(input), ArrayRef<int64_t>{axis});
  return Status::ok();
}

namespace {

// The running sum as a window: x viewed as (1, outer, L, inner), L the axis,
// moved into a zero-filled (1, outer, 2L - 1, inner) so the padding needs
// no pad fields (the chip's stop at 15), then a depthwise conv with an
// (L, 1) filter of ones gives each output row the L rows ending at it (the
// L rows starting at it when reversed); exclusive zeroes the tap of the row
// itself. A move gives the result its shape back.
Status lowerCumSum(Lowerer &l, top::CumSumOp op) {
  Value input = op.getInput(), result = op.getOutput();
  const std::string name = l.names_[result];
  if (input.getDefiningOp<top::WeightOp>()) return l.noLowering(op, "a constant operand");
  const auto shape = shapeOf(input);
  const auto [outer, len, inner] = kernels::splitAtAxis(shape, size_t(op.getAxis()));
  if (l.wantInt8(name)) l.out_.fallbacks.push_back(name + ": cumsum runs in fp32 on the BM1684");
  const bool reverse = op.getReverse();
  MovePieces pad;
  pad.add(0, {outer, len, inner}, 0, {len * inner, inner, 1}, reverse ? 0 : (len - 1) * inner,
          {(2 * len - 1) * inner, inner, 1});
  Value padded = l.make<tpuir::MoveOp>(name + "_padded", l.f32Type({1, outer, 2 * len - 1, inner}),
                                       ValueRange{l.f32(input)}, pad.values, l.b_.getF64FloatAttr(0.0));
  std::vector<float> taps(size_t(outer * len), 1.0f);
  if (op.getExclusive())
    for (int64_t c = 0; c < outer; ++c) taps[size_t(c * len + (reverse ? 0 : len - 1))] = 0.0f;
  const int64_t kernel[2] = {len, 1}, ones[2] = {1, 1}, pads[4] = {0, 0, 0, 0};
  const WeightPair filter = l.addF32Weights(name, "taps", {outer, 1, len, 1}, taps, {});
  Value sums = l.makeWindowed<tpuir::ConvOp>(name + "_sums", l.f32Type({1, outer, len, inner}), padded, filter.weight,
                                             filter.bias, Window{kernel, ones, pads, ones, outer, false}, 0);
  MovePieces back;
  back.add(0, {outer * len * inner}, 0, {1}, 0, {1});
  l.vals_[result].f32 = l.make<tpuir::MoveOp>(name, l.f32Type(shape), ValueRange{sums}, back.values, FloatAttr());
  return Status::ok();
}

template <class OpT> void addReduce(LoweringTable &t, backend::ReduceMode mode) {
  t.add<OpT>([mode](Lowerer &l, OpT op) { return l.lowerReduce(op, mode, op.getAxes()); });
}
} // namespace

void addReduceLowerings(LoweringTable &t) {
  using backend::ReduceMode;
  addReduce<top::ReduceSumOp>(t, ReduceMode::Sum);
  addReduce<top::ReduceMeanOp>(t, ReduceMode::Mean);
  addReduce<top::ReduceMaxOp>(t, ReduceMode::Max);
  addReduce<top::ReduceMinOp>(t, ReduceMode::Min);
  addReduce<top::ReduceProdOp>(t, ReduceMode::Prod);
  addReduce<top::ReduceL2Op>(t, ReduceMode::L2);
  t.add<top::GlobalMaxPoolOp>([](Lowerer &l, top::GlobalMaxPoolOp op) -> Status {
    if (shapeOf(op.getInput()).size() != 4) return l.noLowering(op, "global pooling needs NCHW");
    return l.lowerReduce(op, ReduceMode::Max, {2, 3});
  });
  t.add<top::SoftmaxOp>(
      [](Lowerer &l, top::SoftmaxOp op) { return l.lowerSoftmax<tpuir::SoftmaxOp>(op, int64_t(op.getAxis())); });
  t.add<top::LogSoftmaxOp>(
      [](Lowerer &l, top::LogSoftmaxOp op) { return l.lowerSoftmax<tpuir::LogSoftmaxOp>(op, int64_t(op.getAxis())); });
  t.add<top::CumSumOp>(lowerCumSum);
}

} // namespace tpu::lowering
