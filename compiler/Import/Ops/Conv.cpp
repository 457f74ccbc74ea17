// ONNX Conv and ConvTranspose.
#include "compiler/Import/OnnxNodeImporter.h"

using namespace mlir;

namespace tpu::onnx {

namespace {

Status convLike(OnnxImporter &im, const Node &n, bool transpose) {
  auto xs = im.shapeOf(n, 0), ws = im.shapeOf(n, 1);
  if (!xs) return xs.status();
  if (!ws) return ws.status();
  if (ws->size() < 3 || xs->size() != ws->size())
    return makeError(n.describe(), ": input ", shapeToString(*xs), " and weight ", shapeToString(*ws),
                     " must both be rank 3 or 4");
  size_t sp = ws->size() - 2;
  auto k = n.getInts("kernel_shape").value_or(std::vector<int64_t>(ws->begin() + 2, ws->end()));
  auto s = intsOr(n, "strides", sp, 1), d = intsOr(n, "dilations", sp, 1);
  if (k.size() != sp || s.size() != sp || d.size() != sp)
    return makeError(n.describe(), ": kernel_shape/strides/dilations need ", sp, " values");
  for (size_t i = 0; i < sp; ++i)
    if (s[i] < 1 || d[i] < 1) return makeError(n.describe(), ": strides and dilations must be >= 1");
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
    for (size_t i = 0; i < sp; ++i)
      target[i] = outShape ? (*outShape)[outShape->size() - sp + i] : (*xs)[i + 2] * s[i];
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
  auto op = im.build<top::ConvTransposeOp>(
      n, {*x, *w, *bias},
      {im.ints("kernel_shape", k), im.ints("strides", s), im.ints("pads", pads), im.ints("dilations", d),
       im.ints("output_padding", outPad), im.i64("group", group)});
  return op ? Status::ok() : op.status();
}

} // namespace

void registerConvOps(OpTable &t) {
  t.add("Conv", [](OnnxImporter &im, const Node &n) { return convLike(im, n, false); }, {2});
  t.add("ConvTranspose", [](OnnxImporter &im, const Node &n) { return convLike(im, n, true); }, {2});
}

} // namespace tpu::onnx
