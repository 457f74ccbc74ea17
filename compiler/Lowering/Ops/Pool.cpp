// Pool family: top.max_pool, top.avg_pool, top.global_avg_pool.

#include "compiler/Lowering/Lowerer.h"

using namespace mlir;

namespace tpu::lowering {

Status Lowerer::lowerPool(Operation *op, bool isMax) {
  Value input = op->getOperand(0), result = op->getResult(0);
  const std::string &name = names_[result];
  auto outShape = shapeOf(result);
  bool global = isa<top::GlobalAvgPoolOp>(op);
  Window w;
  bool countIncludePad = false;
  if (auto p = dyn_cast<top::MaxPoolOp>(op))
    w = {p.getKernelShape(), p.getStrides(), p.getPads(), p.getDilations()}, countIncludePad = p.getCountIncludePad();
  else if (auto p = dyn_cast<top::AvgPoolOp>(op))
    w = {p.getKernelShape(), p.getStrides(), p.getPads(), p.getDilations()}, countIncludePad = p.getCountIncludePad();
  int64_t window = 1;
  if (!global) {
    if (w.kernel.size() != 2) return noLowering(op, "only 2-D pooling (NCHW) is supported");
    if (llvm::any_of(w.dilations, [](int64_t d) { return d != 1; })) return noLowering(op, "dilated pooling");
    bool padded = llvm::any_of(w.pads, [](int64_t p) { return p != 0; });
    if (!isMax && padded && !countIncludePad)
      return noLowering(op, "average pooling with padding must count the padding (count_include_pad)");
    // Ceil mode gives more outputs than floor mode when a last window runs
    // past the padded input: that window averages fewer elements, the back
    // end divides every window by k[0] * k[1].
    auto in = shapeOf(input);
    for (size_t d = 0; d < 2 && !isMax; ++d)
      if (outShape[2 + d] > (in[2 + d] + w.pads[d] + w.pads[d + 2] - w.kernel[d]) / w.strides[d] + 1)
        return noLowering(op, "average pooling whose ceil-mode windows run past the padded input");
    window = w.kernel[0] * w.kernel[1];
  } else {
    auto s = shapeOf(input);
    if (s.size() != 4) return noLowering(op, "global pooling needs NCHW");
    window = s[2] * s[3];
  }
  // The pool op of this kind with the given requantization.
  auto build = [&](Type t, Value x, uint64_t rshift, ArrayRef<int64_t> multipliers) {
    if (global) return make<tpuir::GlobalAvgPoolOp>(name, t, x, false, rshift, multipliers);
    if (isMax) return make<tpuir::MaxPoolOp>(name, t, x, w.kernel, w.strides, w.pads, w.dilations);
    return make<tpuir::AvgPoolOp>(name, t, x, w.kernel, w.strides, w.pads, w.dilations, uint64_t(1), false, rshift,
                                  multipliers);
  };
  Value out;
  bool int8 = wantInt8(name);
  if (int8 && isMax) {
    Value x = i8(input);
    out = build(likeType(x, outShape), x, 0, {});
  } else if (int8) {
    Value x = i8(input);
    const float si = scaleOfValue(x), so = scaleOf(name);
    const double m = double(si) / so / double(window);
    auto r = chooseShift({{m, 255}});
    if (!r || fixedPoint(m, *r) < 1) {
      out_.fallbacks.push_back(name + ": average multiplier does not fit [1, 255] with any right shift");
      int8 = false;
    } else {
      out = build(qType(outShape, name), x, uint64_t(*r), {fixedPoint(m, *r)});
    }
  }
  if (!int8) out = build(f32Type(outShape), f32(input), 0, {});
  (int8 ? vals_[result].i8 : vals_[result].f32) = out;
  return Status::ok();
}

void addPoolLowerings(LoweringTable &t) {
  t.add<top::MaxPoolOp>([](Lowerer &l, top::MaxPoolOp op) { return l.lowerPool(op, true); });
  t.add<top::AvgPoolOp>([](Lowerer &l, top::AvgPoolOp op) { return l.lowerPool(op, false); });
  t.add<top::GlobalAvgPoolOp>([](Lowerer &l, top::GlobalAvgPoolOp op) { return l.lowerPool(op, false); });
}

} // namespace tpu::lowering
