// Reduce family: top.reduce_{sum,mean,max,min,prod,l2} on any axes and
// top.global_max_pool (a max over H and W) -> tpu.reduce. INT8: max and min
// keep the input's scale; sum and mean requantize with one uint8
// multiplier m = s_x / (s_y * count) and a right shift; prod and l2, and
// layouts the int8 emitter cannot move (backend::reduceLayout), stay fp32.
// top.softmax / top.log_softmax on any axis -> tpu.softmax / tpu.log_softmax
// (fp32; in INT8 an fp32 island between casts).

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
}

} // namespace tpu::lowering
