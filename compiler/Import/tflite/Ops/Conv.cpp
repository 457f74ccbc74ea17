// TFLite CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV and MediaPipe's custom Convolution2DTransposeBias.
#include "compiler/Import/tflite/TfliteOpImporter.h"

#include <cstring>

using namespace mlir;

namespace tpu::tflite {

namespace {

Status conv(TfliteImporter &im, const Operator &op, bool depthwise) {
  const Options &o = op.options;
  auto x = im.operand(op, 0);
  if (!x) return x.status();
  const Tensor *filter = im.constant(op, 1);
  if (!filter) return makeError(op.describe(), ": the filter must be a constant");
  std::vector<int64_t> xs = shapeOf(*x), ws = filter->shape;
  if (xs.size() != 4 || ws.size() != 4)
    return makeError(op.describe(), ": input ", shapeToString(xs), " and filter ", shapeToString(ws), " must be 4-D");
  if (o.strideH < 1 || o.strideW < 1 || o.dilationH < 1 || o.dilationW < 1)
    return makeError(op.describe(), ": strides and dilations must be >= 1");
  auto real = realValues(*filter);
  if (!real) return Status(real.status()).prefix(op.describe());
  int64_t kh = ws[1], kw = ws[2], group = 1;
  NpyArray oihw;
  if (depthwise) { // [1, kh, kw, ic * multiplier] -> [ic * multiplier, 1, kh, kw], one group per input channel
    group = xs[1];
    oihw = onnx::transposeArray(*real, {3, 0, 1, 2});
  } else { // OHWI -> OIHW
    oihw = onnx::transposeArray(*real, kNhwcToNchw);
    if (ws[3] > 0 && xs[1] % ws[3] == 0) group = xs[1] / ws[3];
  }
  Value filterValue = im.weight(filter->name, std::move(oihw));
  Value bias = im.none();
  if (im.present(op, 2)) {
    auto bv = im.operand(op, 2);
    if (!bv) return bv.status();
    bias = *bv;
  }
  auto [pt, pb] = windowPads(o.padding, xs[2], kh, o.strideH, o.dilationH);
  auto [pl, pr] = windowPads(o.padding, xs[3], kw, o.strideW, o.dilationW);
  return im.emit<top::ConvOp>(op, {*x, filterValue, bias},
                              {im.i64s("kernel_shape", {kh, kw}), im.i64s("strides", {o.strideH, o.strideW}),
                               im.i64s("pads", {pt, pl, pb, pr}), im.i64s("dilations", {o.dilationH, o.dilationW}),
                               im.i64("group", group)},
                              o.activation);
}

// TRANSPOSE_CONV: (output_shape, filter OHWI, input[, bias]); MediaPipe's
// Convolution2DTransposeBias: (input, filter OHWI, bias) with the padding and
// strides as three int32 in custom_options.
Status transposeConv(TfliteImporter &im, const Operator &op, bool customBias) {
  Padding padding = op.options.padding;
  int64_t sh = op.options.strideH, sw = op.options.strideW;
  size_t xi = customBias ? 0 : 2, wi = 1;
  if (customBias) {
    if (op.customOptions.size() < 12)
      return makeError(op.describe(), ": custom options hold ", op.customOptions.size(),
                       " bytes, expected 12 (padding, stride_w, stride_h)");
    int32_t fields[3];
    std::memcpy(fields, op.customOptions.data(), sizeof fields);
    if (fields[0] != 1 && fields[0] != 2) return makeError(op.describe(), ": unknown padding ", fields[0]);
    padding = fields[0] == 1 ? Padding::Same : Padding::Valid; // TfLitePadding: 1 SAME, 2 VALID
    sw = fields[1];
    sh = fields[2];
  }
  if (sh < 1 || sw < 1) return makeError(op.describe(), ": strides must be >= 1");
  auto x = im.operand(op, xi);
  if (!x) return x.status();
  const Tensor *filter = im.constant(op, wi);
  if (!filter || filter->shape.size() != 4) return makeError(op.describe(), ": the filter must be a 4-D constant");
  std::vector<int64_t> xs = shapeOf(*x);
  if (xs.size() != 4) return makeError(op.describe(), ": input ", shapeToString(xs), " must be 4-D");
  auto real = realValues(*filter);
  if (!real) return Status(real.status()).prefix(op.describe());
  int64_t kh = filter->shape[1], kw = filter->shape[2];
  Value w = im.weight(filter->name, onnx::transposeArray(*real, {3, 0, 1, 2})); // OHWI -> IOHW
  Value bias = im.none();
  size_t bi = customBias ? 2 : 3;
  if (im.present(op, bi)) {
    auto bv = im.operand(op, bi);
    if (!bv) return bv.status();
    bias = *bv;
  }
  std::vector<int64_t> outShape; // NHWC
  if (customBias) {
    outShape = im.tensor(op.outputs.at(0)).shape;
  } else {
    auto s = im.ints(op, 0, "output_shape");
    if (!s) return s.status();
    outShape = *s;
  }
  if (outShape.size() != 4) return makeError(op.describe(), ": the output shape must have 4 dims");
  // The scatter covers (in - 1) * s + k; SAME crops total/2 at the start (TFLite), the
  // rest at the end; an output larger than the scatter is extended by output_padding.
  std::vector<int64_t> pads(4, 0), outPad(2, 0);
  int64_t in[2] = {xs[2], xs[3]}, k[2] = {kh, kw}, s[2] = {sh, sw}, target[2] = {outShape[1], outShape[2]};
  for (int d = 0; d < 2; ++d) {
    int64_t total = (in[d] - 1) * s[d] + k[d] - target[d];
    if (total < 0) {
      outPad[d] = -total;
      total = 0;
    }
    if (padding == Padding::Valid && total > 0)
      pads[d + 2] = total; // VALID crops only the end
    else {
      pads[d] = total / 2;
      pads[d + 2] = total - total / 2;
    }
  }
  return im.emit<top::ConvTransposeOp>(op, {*x, w, bias},
                                       {im.i64s("kernel_shape", {kh, kw}), im.i64s("strides", {sh, sw}),
                                        im.i64s("pads", pads), im.i64s("dilations", {1, 1}),
                                        im.i64s("output_padding", outPad), im.i64("group", 1)},
                                       op.options.activation);
}

} // namespace

void registerConvOps(OpTable &t) {
  t.add(CONV_2D, [](TfliteImporter &im, const Operator &op) { return conv(im, op, false); });
  t.add(DEPTHWISE_CONV_2D, [](TfliteImporter &im, const Operator &op) { return conv(im, op, true); });
  t.add(TRANSPOSE_CONV, [](TfliteImporter &im, const Operator &op) { return transposeConv(im, op, false); });
  t.addCustom("Convolution2DTransposeBias",
              [](TfliteImporter &im, const Operator &op) { return transposeConv(im, op, true); });
}

} // namespace tpu::tflite
