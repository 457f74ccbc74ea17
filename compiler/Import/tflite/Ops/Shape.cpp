// TFLite RESHAPE, SQUEEZE, EXPAND_DIMS: reshapes in the model's (NHWC) element order.
#include "compiler/Import/tflite/TfliteOpImporter.h"

using namespace mlir;

namespace tpu::tflite {

namespace {

Status reshapeTo(TfliteImporter &im, const Operator &op, std::vector<int64_t> shape) {
  auto x = im.nativeOperand(op, 0);
  if (!x) return x.status();
  auto target = onnx::reshapeTarget(shapeOf(*x), shape, true);
  if (!target) return Status(target.status()).prefix(op.describe());
  auto r = im.build<top::ReshapeOp>(im.outName(op) + (target->size() == 4 ? "_nhwc" : ""), {*x},
                                    {im.i64s("shape", *target)}, op.describe());
  if (!r) return r.status();
  return im.bindNative(op, 0, *r);
}

// RESHAPE: the shape input (TFLite 2) or the new_shape option (TFLite 1).
Status reshape(TfliteImporter &im, const Operator &op) {
  if (im.present(op, 1)) {
    auto s = im.ints(op, 1, "shape");
    if (!s) return s.status();
    return reshapeTo(im, op, *s);
  }
  return reshapeTo(im, op, op.options.newShape);
}

Status squeeze(TfliteImporter &im, const Operator &op) {
  auto xs = im.nativeShape(op, 0);
  if (!xs) return xs.status();
  std::vector<int64_t> dims = op.options.squeezeDims;
  if (dims.empty())
    for (size_t d = 0; d < xs->size(); ++d)
      if ((*xs)[d] == 1) dims.push_back(d);
  auto shape = onnx::squeezeShape(*xs, dims);
  if (!shape) return Status(shape.status()).prefix(op.describe());
  return reshapeTo(im, op, *shape);
}

Status expandDims(TfliteImporter &im, const Operator &op) {
  auto xs = im.nativeShape(op, 0);
  if (!xs) return xs.status();
  auto axis = im.ints(op, 1, "axis");
  if (!axis) return axis.status();
  if (axis->size() != 1) return makeError(op.describe(), ": the axis must be a scalar");
  int64_t a = (*axis)[0] < 0 ? (*axis)[0] + int64_t(xs->size()) + 1 : (*axis)[0];
  auto shape = onnx::unsqueezeShape(*xs, {a});
  if (!shape) return Status(shape.status()).prefix(op.describe());
  return reshapeTo(im, op, *shape);
}

} // namespace

void registerShapeOps(OpTable &t) {
  t.add(RESHAPE, reshape);
  t.add(SQUEEZE, squeeze);
  t.add(EXPAND_DIMS, expandDims);
}

} // namespace tpu::tflite
