// ONNX MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool.
#include "compiler/Import/OnnxNodeImporter.h"
#include "kernels/Kernels.h"

#include <limits>
#include <type_traits>

using namespace mlir;

namespace tpu::onnx {

namespace {

// A 3-D max or average pool as a 2-D pool over the depth planes stacked as
// rows, [N, C, D * Hp, W] (each plane padded in height to Hp, a multiple of
// the row stride, so every plane starts a window; the rows whose windows
// straddle two planes are dropped), then the max (or the mean) of its KD
// strided depth taps. Height and depth pads are explicit (a max pads with
// the lowest float, an average with zeros, counted: count_include_pad);
// an average that does not count its pads, or ceil-mode windows, only
// without height and depth pads.
template <typename OpT>
Status pool3d(OnnxImporter &im, const Node &n, const std::vector<int64_t> &xs, const std::vector<int64_t> &k,
              const std::vector<int64_t> &s, const std::vector<int64_t> &d, const std::vector<int64_t> &pads, bool ceil,
              bool countIncludePad) {
  constexpr bool isMax = std::is_same_v<OpT, top::MaxPoolOp>;
  const int64_t N = xs[0], C = xs[1], KD = k[0], W = xs[4];
  if (!isMax && !countIncludePad && (pads[0] || pads[1] || pads[3] || pads[4]))
    return makeError(n.describe(), ": a 3-D average pool that leaves out its depth or height pads is not supported");
  auto windows = [&](size_t i, bool ceilMode) {
    return tpu::kernels::poolOutputSize(xs[i + 2], k[i], s[i], d[i], pads[i], pads[i + 3], ceilMode);
  };
  const int64_t OD = windows(0, false), OH = windows(1, false);
  if (OD < 1 || OH < 1) return makeError(n.describe(), ": the window is larger than the padded input");
  // Whether the ceil-mode count exceeds the floor's (the rounding, before
  // poolOutputSize drops a window that starts in the end padding).
  auto ceilAdds = [&](size_t i) { return (xs[i + 2] + pads[i] + pads[i + 3] - d[i] * (k[i] - 1) - 1) % s[i] != 0; };
  if (ceil && (ceilAdds(0) || ceilAdds(1)))
    return makeError(n.describe(),
                     ": a 3-D pool whose ceil-mode windows run past the depth or height is not supported");
  Composer c(im, n);
  std::vector<int64_t> padded = xs;
  Value x =
      c.depthHeightPadded(c.input(0), padded, pads, s[1], isMax ? double(std::numeric_limits<float>::lowest()) : 0.0);
  const int64_t D = padded[2], Hp = padded[3];
  Value rows = c.op<top::ReshapeOp>("depth_rows", {x}, {im.ints("shape", {N, C, D * Hp, W})});
  Value pooled =
      c.op<OpT>("pool_2d", {rows},
                {im.ints("kernel_shape", {k[1], k[2]}), im.ints("strides", {s[1], s[2]}),
                 im.ints("pads", {0, pads[2], d[1] * (k[1] - 1), pads[5]}), im.ints("dilations", {d[1], d[2]}),
                 im.boolean("ceil_mode", ceil), im.boolean("count_include_pad", countIncludePad)});
  if (!pooled) return c.status();
  const int64_t OW = cast<RankedTensorType>(pooled.getType()).getShape()[3];
  Value planes = c.planeRows("depth_pooled", pooled, N, C, D, Hp / s[1], OH, OW);
  const std::vector<int64_t> shape{N, C, D, OH, OW};
  Value acc;
  for (int64_t kd = 0; kd < KD; ++kd) {
    const std::string tag = KD == 1 ? "" : "depth_tap" + std::to_string(kd);
    Value tap = c.depthTaps(tag, planes, shape, kd * d[0], s[0], OD);
    if (!acc)
      acc = tap;
    else if constexpr (isMax)
      acc = c.op<top::MaxOp>(kd + 1 == KD ? "" : "depth_max" + std::to_string(kd), {acc, tap});
    else
      acc = c.op<top::AddOp>("depth_sum" + std::to_string(kd), {acc, tap});
  }
  if constexpr (!isMax)
    if (KD > 1) c.op<top::MulOp>("", {acc, c.scalar("depth_taps", 1.0f / float(KD))});
  return c.status();
}

template <typename OpT> Status pool(OnnxImporter &im, const Node &n) {
  if (n.outputs.size() > 1 && !n.outputs[1].empty())
    return makeError(n.describe(), ": the Indices output is not supported");
  auto xs = im.shapeOf(n, 0);
  if (!xs) return xs.status();
  auto k = n.getInts("kernel_shape");
  if (!k || xs->size() != k->size() + 2)
    return makeError(n.describe(), ": kernel_shape must give one size per spatial dim of ", shapeToString(*xs));
  size_t sp = k->size();
  auto s = intsOr(n, "strides", sp, 1), d = intsOr(n, "dilations", sp, 1);
  if (s.size() != sp || d.size() != sp) return makeError(n.describe(), ": strides/dilations need ", sp, " values");
  auto pads = windowPads(n, *xs, *k, s, d);
  if (!pads) return pads.status();
  if (sp == 3)
    return pool3d<OpT>(im, n, *xs, *k, s, d, *pads, n.getInt("ceil_mode", 0) != 0,
                       n.getInt("count_include_pad", 0) != 0);
  auto x = im.operand(n, 0);
  if (!x) return x.status();
  auto op = im.build<OpT>(n, {*x},
                          {im.ints("kernel_shape", *k), im.ints("strides", s), im.ints("pads", *pads),
                           im.ints("dilations", d), im.boolean("ceil_mode", n.getInt("ceil_mode", 0) != 0),
                           im.boolean("count_include_pad", n.getInt("count_include_pad", 0) != 0)});
  return op ? Status::ok() : op.status();
}

} // namespace

void registerPoolOps(OpTable &t) {
  t.add("MaxPool", pool<top::MaxPoolOp>);
  t.add("AveragePool", pool<top::AvgPoolOp>);
  t.add("GlobalAveragePool", unaryHandler<top::GlobalAvgPoolOp>());
  t.add("GlobalMaxPool", unaryHandler<top::GlobalMaxPoolOp>());
}

} // namespace tpu::onnx
