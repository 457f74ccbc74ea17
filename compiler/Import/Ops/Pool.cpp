// ONNX MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool.
#include "compiler/Import/OnnxNodeImporter.h"

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
  const int64_t D = xs[2] + pads[0] + pads[3], H = xs[3] + pads[1] + pads[4];
  if (!isMax && !countIncludePad && (pads[0] || pads[1] || pads[3] || pads[4]))
    return makeError(n.describe(), ": a 3-D average pool that leaves out its depth or height pads is not supported");
  auto windows = [&](int64_t size, int64_t i) { return (size - d[i] * (k[i] - 1) - 1) / s[i] + 1; };
  const int64_t OD = windows(D, 0), OH = windows(H, 1);
  if (OD < 1 || OH < 1) return makeError(n.describe(), ": the window is larger than the padded input");
  if (ceil && ((D - d[0] * (k[0] - 1) - 1) % s[0] || (H - d[1] * (k[1] - 1) - 1) % s[1]))
    return makeError(n.describe(),
                     ": a 3-D pool whose ceil-mode windows run past the depth or height is not supported");
  const int64_t Hp = (H + s[1] - 1) / s[1] * s[1];
  Composer c(im, n);
  Value x = c.input(0);
  if (D != xs[2] || Hp != xs[3])
    x = c.op<top::PadOp>("depth_pad", {x},
                         {im.ints("pads", {0, 0, pads[0], pads[1], 0, 0, 0, pads[3], Hp - xs[3] - pads[1], 0}),
                          im.f64("value", isMax ? double(std::numeric_limits<float>::lowest()) : 0.0)});
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
