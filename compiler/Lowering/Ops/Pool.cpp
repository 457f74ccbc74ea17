// Pool family: top.max_pool, top.avg_pool, top.global_avg_pool.

#include "compiler/Lowering/Lowerer.h"

#include "compiler/Backend/Ops/Window.h"

using namespace mlir;

namespace tpu::lowering {

Status Lowerer::lowerPool(Operation *op, bool isMax) {
  Value input = op->getOperand(0), result = op->getResult(0);
  const std::string &name = names_[result];
  auto outShape = shapeOf(result);
  bool global = isa<top::GlobalAvgPoolOp>(op);
  std::optional<SpatialWindow> w; // a 1-D pool is the 2-D one over (N, C, L, 1)
  bool countIncludePad = true;
  if (auto p = dyn_cast<top::MaxPoolOp>(op))
    w.emplace(p.getKernelShape(), p.getStrides(), p.getPads(), p.getDilations());
  else if (auto p = dyn_cast<top::AvgPoolOp>(op))
    w.emplace(p.getKernelShape(), p.getStrides(), p.getPads(), p.getDilations()), countIncludePad = p.getCountIncludePad();
  // One window over the whole unpadded input is a global pool, whatever its
  // stride (the chip's window strides stop at 15; MediaPipe's selfie
  // segmentation pools 64x64 with stride 64).
  if (w && !isMax) {
    auto in = shapeOf(input);
    global = in.size() == 4 && outShape.size() == 4 && outShape[2] == 1 && outShape[3] == 1 &&
             w->kernel == llvm::SmallVector<int64_t>{in[2], in[3]} && llvm::all_of(w->pads, [](int64_t p) { return p == 0; }) &&
             llvm::all_of(w->dilations, [](int64_t d) { return d == 1; });
  }
  // The int8 multiplier of a window covering t taps is m / t: one for all
  // windows when they cover the same count, else one per count.
  std::vector<int64_t> windowTaps; // taps - 1 -> whether a window covers that many
  if (!global) {
    auto in = shapeOf(input);
    const int64_t inW = in.size() > 3 ? in[3] : 1, outW = outShape.size() > 3 ? outShape[3] : 1;
    auto rows = backend::averageTaps(in[2], outShape[2], w->kernel[0], w->strides[0], w->dilations[0], w->pads[0],
                                     w->pads[2], countIncludePad);
    auto cols = backend::averageTaps(inW, outW, w->kernel[1], w->strides[1], w->dilations[1], w->pads[1], w->pads[3],
                                     countIncludePad);
    windowTaps.assign(size_t(w->kernel[0] * w->kernel[1]), 0);
    for (int64_t r : rows)
      for (int64_t c : cols)
        if (r * c > 0) windowTaps[size_t(r * c - 1)] = 1;
  } else {
    auto s = shapeOf(input);
    if (s.size() != 4) return noLowering(op, "global pooling needs NCHW");
    windowTaps.assign(size_t(s[2] * s[3]), 0);
    windowTaps.back() = 1;
  }
  const bool uniform = llvm::count(windowTaps, 1) == 1;
  // The pool op of this kind with the given requantization.
  auto build = [&](Type t, Value x, uint64_t rshift, ArrayRef<int64_t> multipliers) {
    if (global) return make<tpuir::GlobalAvgPoolOp>(name, t, x, false, rshift, multipliers);
    if (isMax) return make<tpuir::MaxPoolOp>(name, t, x, w->kernel, w->strides, w->pads, w->dilations);
    return make<tpuir::AvgPoolOp>(name, t, x, countIncludePad, w->kernel, w->strides, w->pads, w->dilations,
                                  uint64_t(1), false, rshift, multipliers);
  };
  Value out;
  bool int8 = wantInt8(name);
  if (int8 && isMax) {
    Value x = i8(input);
    out = build(likeType(x, outShape), x, 0, {});
  } else if (int8) {
    Value x = i8(input);
    const double m = double(scaleOfValue(x)) / scaleOf(name);
    // The fewest taps give the largest multiplier: it bounds the shift.
    const int64_t fewest = int64_t(llvm::find(windowTaps, 1) - windowTaps.begin()) + 1;
    const int64_t most = int64_t(windowTaps.rend() - llvm::find(llvm::reverse(windowTaps), 1));
    auto r = chooseShift({{m / double(fewest), 255}});
    if (!r || fixedPoint(m / double(most), *r) < 1) {
      out_.fallbacks.push_back(name + ": average multiplier does not fit [1, 255] with any right shift");
      int8 = false;
    } else {
      std::vector<int64_t> multipliers;
      if (uniform)
        multipliers = {fixedPoint(m / double(fewest), *r)};
      else
        for (size_t t = 0; t < windowTaps.size(); ++t)
          multipliers.push_back(windowTaps[t] ? fixedPoint(m / double(t + 1), *r) : 0);
      out = build(qType(outShape, name), x, uint64_t(*r), multipliers);
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
