// ONNX Conv and ConvTranspose.
#include "compiler/Import/OnnxNodeImporter.h"
#include "kernels/Kernels.h"

using namespace mlir;

namespace tpu::onnx {

namespace {

// A 3-D convolution as one 2-D convolution (the chip has no 3-D window),
// in NCDHW order throughout: the input padded in depth and height, each
// depth tap (a strided depth slice) becomes channels c * KD + kd and the
// output depths become row blocks, [N, C * KD, OD * Hp, W]; the filter
// [OC, C/g, KD, KH, KW] read as [OC, C/g * KD, KH, KW] matches (groups stay
// contiguous). The 2-D conv runs over the stacked blocks; each block's last
// rows straddle two depths and are dropped ([N, OC, OD, OH, OW]). Hp is a
// multiple of the row stride, so every block starts a window.
Status conv3d(OnnxImporter &im, const Node &n, const std::vector<int64_t> &xs, const std::vector<int64_t> &ws,
              const std::vector<int64_t> &k, const std::vector<int64_t> &s, const std::vector<int64_t> &d,
              const std::vector<int64_t> &pads, int64_t group) {
  const int64_t N = xs[0], C = xs[1], KD = k[0], W = xs[4];
  auto windows = [&](size_t i) {
    return tpu::kernels::poolOutputSize(xs[i + 2], k[i], s[i], d[i], pads[i], pads[i + 3], false);
  };
  const int64_t OD = windows(0), OH = windows(1), OW = windows(2);
  if (OD < 1 || OH < 1 || OW < 1) return makeError(n.describe(), ": the window is larger than the padded input");
  auto bias = im.operandOrNone(n, 2);
  if (!bias) return bias.status();
  Composer c(im, n);
  std::vector<int64_t> padded = xs;
  Value x = c.depthHeightPadded(c.input(0), padded, pads, s[1], 0.0);
  const int64_t Hp = padded[3];
  // Tap kd as rows [N, C, OD * Hp, W]; stacked along the rows, [N, C, KD *
  // OD * Hp, W] is [N, C * KD, OD * Hp, W] in C order (4-D all the way, so
  // every move's dims fit the command fields).
  std::vector<Value> taps;
  for (int64_t kd = 0; kd < KD; ++kd)
    taps.push_back(c.op<top::ReshapeOp>("depth_tap" + std::to_string(kd) + "_rows",
                                        {c.depthTaps("depth_tap" + std::to_string(kd), x, padded, kd * d[0], s[0], OD)},
                                        {im.ints("shape", {N, C, OD * Hp, W})}));
  Value stacked = KD > 1 ? c.op<top::ConcatOp>("depth_taps", taps, {im.i64("axis", 2)}) : taps[0];
  Value blocks = c.op<top::ReshapeOp>("depth_blocks", {stacked}, {im.ints("shape", {N, C * KD, OD * Hp, W})});
  Value filter = c.reshaped(1, "filter_2d", {ws[0], ws[1] * KD, ws[3], ws[4]});
  Value y = c.op<top::ConvOp>("conv_2d", {blocks, filter, *bias},
                              {im.ints("kernel_shape", {k[1], k[2]}), im.ints("strides", {s[1], s[2]}),
                               im.ints("pads", {0, pads[2], d[1] * (k[1] - 1), pads[5]}),
                               im.ints("dilations", {d[1], d[2]}), im.i64("group", group)});
  c.planeRows("", y, N, ws[0], OD, Hp / s[1], OH, OW);
  return c.status();
}

Status convLike(OnnxImporter &im, const Node &n, bool transpose) {
  auto xs = im.shapeOf(n, 0), ws = im.shapeOf(n, 1);
  if (!xs) return xs.status();
  if (!ws) return ws.status();
  if (ws->size() < 3 || xs->size() != ws->size() || ws->size() > (transpose ? 4 : 5))
    return makeError(n.describe(), ": input ", shapeToString(*xs), " and weight ", shapeToString(*ws),
                     " must both be rank 3 or 4", transpose ? "" : " or 5");
  size_t sp = ws->size() - 2;
  auto k = n.getInts("kernel_shape").value_or(std::vector<int64_t>(ws->begin() + 2, ws->end()));
  auto s = intsOr(n, "strides", sp, 1), d = intsOr(n, "dilations", sp, 1);
  if (k.size() != sp || s.size() != sp || d.size() != sp)
    return makeError(n.describe(), ": kernel_shape/strides/dilations need ", sp, " values");
  for (size_t i = 0; i < sp; ++i)
    if (s[i] < 1 || d[i] < 1) return makeError(n.describe(), ": strides and dilations must be >= 1");
  if (!transpose && sp == 3) { // before the 5-D filter becomes a value of the module
    auto pads = windowPads(n, *xs, k, s, d);
    if (!pads) return pads.status();
    return conv3d(im, n, *xs, *ws, k, s, d, *pads, n.getInt("group", 1));
  }
  auto x = im.operand(n, 0), w = im.operand(n, 1), bias = im.operandOrNone(n, 2);
  if (!x) return x.status();
  if (!w) return w.status();
  if (!bias) return bias.status();
  int64_t group = n.getInt("group", 1);
  if (!transpose) {
    auto pads = windowPads(n, *xs, k, s, d);
    if (!pads) return pads.status();
    auto op = im.build<top::ConvOp>(n, {*x, *w, *bias},
                                    {im.ints("kernel_shape", k), im.ints("strides", s), im.ints("pads", *pads),
                                     im.ints("dilations", d), im.i64("group", group)});
    return op ? Status::ok() : op.status();
  }
  auto outPad = intsOr(n, "output_padding", sp, 0);
  std::vector<int64_t> pads(2 * sp, 0);
  auto outShape = n.getInts("output_shape");
  std::string autoPad = n.getString("auto_pad", "NOTSET");
  if (outShape || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    std::vector<int64_t> target(sp);
    for (size_t i = 0; i < sp; ++i) target[i] = outShape ? (*outShape)[outShape->size() - sp + i] : (*xs)[i + 2] * s[i];
    for (size_t i = 0; i < sp; ++i) {
      int64_t total = s[i] * ((*xs)[i + 2] - 1) + outPad[i] + (k[i] - 1) * d[i] + 1 - target[i];
      if (total < 0) { // the output is larger than the conv transpose covers: extend via output_padding
        outPad[i] -= total;
        total = 0;
      }
      bool lower = autoPad == "SAME_LOWER";
      pads[i] = lower ? total - total / 2 : total / 2;
      pads[i + sp] = total - pads[i];
    }
  } else if (auto p = n.getInts("pads")) {
    if (p->size() != 2 * sp) return makeError(n.describe(), ": pads needs ", 2 * sp, " values");
    pads = *p;
  }
  auto op = im.build<top::ConvTransposeOp>(n, {*x, *w, *bias},
                                           {im.ints("kernel_shape", k), im.ints("strides", s), im.ints("pads", pads),
                                            im.ints("dilations", d), im.ints("output_padding", outPad),
                                            im.i64("group", group)});
  return op ? Status::ok() : op.status();
}

} // namespace

void registerConvOps(OpTable &t) {
  t.add("Conv", [](OnnxImporter &im, const Node &n) { return convLike(im, n, false); }, {2});
  t.add("ConvTranspose", [](OnnxImporter &im, const Node &n) { return convLike(im, n, true); }, {2});
}

} // namespace tpu::onnx
