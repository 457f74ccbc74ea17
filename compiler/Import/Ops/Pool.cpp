// ONNX MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool.
#include "compiler/Import/OnnxNodeImporter.h"

#include <type_traits>

using namespace mlir;

namespace tpu::onnx {

namespace {

// A 3-D max or average pool as a 2-D pool of every depth plane, then the
// max (or the mean) of KD strided depth slices of the result. Depth pads,
// dilation and ceil-mode windows past the end are refused.
template <typename OpT>
Status pool3d(OnnxImporter &im, const Node &n, const std::vector<int64_t> &xs, const std::vector<int64_t> &k,
              const std::vector<int64_t> &s, const std::vector<int64_t> &d, const std::vector<int64_t> &pads, bool ceil,
              bool countIncludePad) {
  const int64_t N = xs[0], C = xs[1], D = xs[2], H = xs[3], W = xs[4], KD = k[0];
  if (pads[0] || pads[3] || d[0] != 1)
    return makeError(n.describe(), ": a 3-D pool with depth pads or depth dilation is not supported");
  if (D < KD) return makeError(n.describe(), ": the window is deeper than the input");
  const int64_t OD = (D - KD) / s[0] + 1;
  if (ceil && (D - KD) % s[0] != 0)
    return makeError(n.describe(), ": a 3-D pool whose ceil-mode windows run past the depth is not supported");
  Composer c(im, n);
  Value depthMajor = c.op<top::PermuteOp>("depth_major", {c.input(0)}, {im.ints("order", {0, 2, 1, 3, 4})});
  Value planes = c.op<top::ReshapeOp>("depth_planes", {depthMajor}, {im.ints("shape", {N * D, C, H, W})});
  Value pooled = c.op<OpT>("pool_2d", {planes},
                           {im.ints("kernel_shape", {k[1], k[2]}), im.ints("strides", {s[1], s[2]}),
                            im.ints("pads", {pads[1], pads[2], pads[4], pads[5]}), im.ints("dilations", {d[1], d[2]}),
                            im.boolean("ceil_mode", ceil), im.boolean("count_include_pad", countIncludePad)});
  if (!pooled) return c.status();
  auto ps = cast<RankedTensorType>(pooled.getType()).getShape();
  Value byDepth = c.op<top::ReshapeOp>("depth_pooled", {pooled}, {im.ints("shape", {N, D, C, ps[2], ps[3]})});
  Value acc;
  for (int64_t kd = 0; kd < KD; ++kd) {
    Value tap = c.op<top::SliceOp>("depth_tap" + std::to_string(kd), {byDepth},
                                   {im.ints("starts", {0, kd, 0, 0, 0}),
                                    im.ints("ends", {N, kd + (OD - 1) * s[0] + 1, C, ps[2], ps[3]}),
                                    im.ints("steps", {1, s[0], 1, 1, 1})});
    const std::string tag = "depth_acc" + std::to_string(kd);
    if (!acc)
      acc = tap;
    else if constexpr (std::is_same_v<OpT, top::MaxPoolOp>)
      acc = c.op<top::MaxOp>(tag, {acc, tap});
    else
      acc = c.op<top::AddOp>(tag, {acc, tap});
  }
  if constexpr (!std::is_same_v<OpT, top::MaxPoolOp>)
    if (KD > 1) acc = c.op<top::MulOp>("depth_mean", {acc, c.scalar("depth_taps", 1.0f / float(KD))});
  c.op<top::PermuteOp>("", {acc}, {im.ints("order", {0, 2, 1, 3, 4})});
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
