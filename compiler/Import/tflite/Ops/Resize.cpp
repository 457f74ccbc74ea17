// TFLite RESIZE_BILINEAR, RESIZE_NEAREST_NEIGHBOR.
#include "compiler/Import/tflite/TfliteOpImporter.h"

using namespace mlir;

namespace tpu::tflite {

namespace {

// RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR to a constant [new_h, new_w].
Status resize(TfliteImporter &im, const Operator &op, bool bilinear) {
  auto x = im.operand(op, 0);
  if (!x) return x.status();
  std::vector<int64_t> xs = shapeOf(*x);
  auto size = im.ints(op, 1, "size");
  if (!size) return size.status();
  if (xs.size() != 4 || size->size() != 2 || (*size)[0] < 1 || (*size)[1] < 1)
    return makeError(op.describe(), ": needs a 4-D input and a size of 2 positive values");
  const Options &o = op.options;
  // TFLite's coordinate rules in the Top (ONNX) vocabulary; TF's half-pixel
  // nearest, floor((y + 0.5) * scale), is round-half-up of the half-pixel coordinate.
  std::string coord = o.alignCorners ? "align_corners" : o.halfPixelCenters ? "half_pixel" : "asymmetric";
  std::string nearest = o.alignCorners || o.halfPixelCenters ? "round_prefer_ceil" : "floor";
  std::vector<int64_t> sizes = {xs[0], xs[1], (*size)[0], (*size)[1]};
  std::vector<double> scales = {1.0, 1.0, double(sizes[2]) / double(xs[2]), double(sizes[3]) / double(xs[3])};
  return im.emit<top::ResizeOp>(op, {*x},
                                {im.str("mode", bilinear ? "linear" : "nearest"),
                                 im.str("coordinate_transformation_mode", coord), im.str("nearest_mode", nearest),
                                 im.f64s("scales", scales), im.i64s("sizes", sizes)});
}

} // namespace

void registerResizeOps(OpTable &t) {
  t.add(RESIZE_NEAREST_NEIGHBOR, [](TfliteImporter &im, const Operator &op) { return resize(im, op, false); });
  t.add(RESIZE_BILINEAR, [](TfliteImporter &im, const Operator &op) { return resize(im, op, true); });
}

} // namespace tpu::tflite
