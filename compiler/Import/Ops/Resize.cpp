// ONNX Resize and Upsample.
#include "compiler/Import/OnnxNodeImporter.h"

using namespace mlir;

namespace tpu::onnx {

namespace {

Status resize(OnnxImporter &im, const Node &n, bool upsample) {
  auto xs = im.shapeOf(n, 0);
  if (!xs) return xs.status();
  size_t rank = xs->size();
  std::string mode = n.getString("mode", "nearest");
  if (mode == "bilinear") mode = "linear";
  if (mode != "nearest" && mode != "linear")
    return makeError(n.describe(), ": Resize mode '", mode, "' is not supported (nearest, linear)");
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  std::string coord = "half_pixel", nearest = "round_prefer_floor";
  if (upsample || im.opset() < 11) { // Upsample and Resize-10: scales only, asymmetric
    coord = "asymmetric";
    nearest = "floor";
    if (upsample && im.opset() < 9) {
      auto s = n.getFloats("scales");
      if (!s) return makeError(n.describe(), ": needs the scales attribute");
      scales = *s;
    } else {
      auto s = im.constFloats(n, 1, "scales");
      if (!s) return s.status();
      scales = *s;
    }
  } else {
    coord = n.getString("coordinate_transformation_mode", "half_pixel");
    nearest = n.getString("nearest_mode", "round_prefer_floor");
    if (n.getInt("antialias", 0)) return makeError(n.describe(), ": antialias is not supported");
    if (im.present(n, 2) && im.constInput(n, 2) && im.constInput(n, 2)->numel() > 0) {
      scales = toDouble(*im.constInput(n, 2));
    } else if (im.present(n, 3)) {
      auto sz = im.constInts(n, 3, "sizes");
      if (!sz) return sz.status();
      sizes = *sz;
    } else if (im.present(n, 2) && !im.constInput(n, 2)) {
      return makeError(n.describe(), ": input scales must be a constant");
    }
    if (!sizes.empty() && n.getInts("axes")) return makeError(n.describe(), ": the axes attribute is not supported");
    if (sizes.empty() && scales.empty()) return makeError(n.describe(), ": needs scales or sizes");
    if (!sizes.empty()) {
      if (sizes.size() != rank) return makeError(n.describe(), ": sizes needs ", rank, " values");
      for (size_t i = 0; i < rank; ++i) scales.push_back(double(sizes[i]) / double((*xs)[i]));
    }
  }
  if (scales.size() != rank) return makeError(n.describe(), ": scales needs ", rank, " values");
  if (coord == "tf_crop_and_resize" || coord == "tf_half_pixel_for_nn")
    return makeError(n.describe(), ": coordinate_transformation_mode '", coord, "' is not supported");
  return unary<top::ResizeOp>(im, n,
                              {im.str("mode", mode), im.str("coordinate_transformation_mode", coord),
                               im.str("nearest_mode", nearest), im.attr("scales", im.b().getDenseF64ArrayAttr(scales)),
                               im.ints("sizes", sizes)});
}

} // namespace

void registerResizeOps(OpTable &t) {
  t.add("Resize", [](OnnxImporter &im, const Node &n) { return resize(im, n, false); });
  t.add("Upsample", [](OnnxImporter &im, const Node &n) { return resize(im, n, true); });
}

} // namespace tpu::onnx
