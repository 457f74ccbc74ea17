// ONNX ops on shapes only (no data moves): Reshape, Flatten, Squeeze, Unsqueeze, Identity,
// Dropout (inference), and Shape and Size, constants of the static shapes (refused on a shape
// that comes from the data).
#include "compiler/Dialect/Top/HostEval.h"
#include "compiler/Import/OnnxNodeImporter.h"

#include <algorithm>

using namespace mlir;

namespace tpu::onnx {

namespace {

// Whether input 0's shape comes from the data (a NonMaxSuppression or
// NonZero result, or a host op's reading one): its type holds only the most
// it can be.
Result<bool> inputShapeFromData(OnnxImporter &im, const Node &n) {
  if (im.constInput(n, 0)) return false;
  auto v = im.operand(n, 0);
  if (!v) return v.status();
  return top::shapeFromData(*v);
}

// The static shape of input 0 for Shape and Size, which fold to constants:
// refused when it comes from the data (folding the bound would be wrong).
Result<std::vector<int64_t>> foldableShape(OnnxImporter &im, const Node &n) {
  auto fromData = inputShapeFromData(im, n);
  if (!fromData) return fromData.status();
  if (*fromData)
    return makeError(n.describe(), ": the shape of '", n.inputs[0],
                     "' comes from the data (it is known only when the model runs); no host op computes Shape or "
                     "Size yet");
  return im.shapeOf(n, 0);
}

Status reshapeTo(OnnxImporter &im, const Node &n, Result<std::vector<int64_t>> shape) {
  if (!shape) return Status(shape.status()).prefix(n.describe());
  if (const NpyArray *c = im.constInput(n, 0)) {
    im.bindConst(n.outputs[0], reshapeArray(*c, shape.take()));
    return Status::ok();
  }
  return unary<top::ReshapeOp>(im, n, {im.ints("shape", *shape)});
}

} // namespace

void registerShapeOps(OpTable &t) {
  t.add("Reshape", [](OnnxImporter &im, const Node &n) -> Status {
    auto xs = im.shapeOf(n, 0);
    if (!xs) return xs.status();
    std::vector<int64_t> shape;
    if (im.opset() < 5) {
      shape = n.getInts("shape").value_or(std::vector<int64_t>{});
    } else {
      auto s = im.constInts(n, 1, "shape");
      if (!s) return s.status();
      shape = *s;
    }
    return reshapeTo(im, n, reshapeTarget(*xs, shape, n.getInt("allowzero", 0) != 0));
  }, {2, 5});
  t.add("Flatten", [](OnnxImporter &im, const Node &n) -> Status {
    auto xs = im.shapeOf(n, 0);
    if (!xs) return xs.status();
    int64_t axis = n.getInt("axis", 1), rank = xs->size();
    if (axis < -rank || axis > rank) return makeError(n.describe(), ": axis ", axis, " out of range");
    return reshapeTo(im, n, flattenShape(*xs, axis < 0 ? axis + rank : axis));
  });
  auto squeezeLike = [](bool squeeze) {
    return [squeeze](OnnxImporter &im, const Node &n) -> Status {
      auto xs = im.shapeOf(n, 0);
      if (!xs) return xs.status();
      std::vector<int64_t> axes;
      if (im.opset() >= 13) {
        if (im.present(n, 1)) {
          auto a = im.constInts(n, 1, "axes");
          if (!a) return a.status();
          axes = *a;
        }
      } else {
        axes = n.getInts("axes").value_or(std::vector<int64_t>{});
      }
      // A shape from the data (NMS rows) keeps its rule to the host.
      auto fromData = inputShapeFromData(im, n);
      if (!fromData) return fromData.status();
      if (*fromData)
        return squeeze ? unary<top::SqueezeOp>(im, n, {im.ints("axes", axes)})
                       : unary<top::UnsqueezeOp>(im, n, {im.ints("axes", axes)});
      return reshapeTo(im, n, squeeze ? squeezeShape(*xs, axes) : unsqueezeShape(*xs, axes));
    };
  };
  t.add("Squeeze", squeezeLike(true));
  t.add("Unsqueeze", squeezeLike(false));
  t.add("Identity", [](OnnxImporter &im, const Node &n) -> Status {
    im.alias(n.outputs[0], n.inputs.at(0));
    return Status::ok();
  });
  t.add("Dropout", [](OnnxImporter &im, const Node &n) -> Status {
    TPU_RETURN_IF_ERROR(onlyFirstOutput(n));
    im.alias(n.outputs[0], n.inputs.at(0));
    return Status::ok();
  });
  t.add("Shape", [](OnnxImporter &im, const Node &n) -> Status {
    auto xs = foldableShape(im, n);
    if (!xs) return xs.status();
    int64_t rank = xs->size();
    int64_t start = n.getInt("start", 0), end = n.getInt("end", rank);
    start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
    end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
    std::vector<int64_t> dims(xs->begin() + start, xs->begin() + std::max(start, end));
    im.bindConst(n.outputs[0], NpyArray::from<int64_t>({int64_t(dims.size())}, dims));
    return Status::ok();
  });
  t.add("Size", [](OnnxImporter &im, const Node &n) -> Status {
    auto xs = foldableShape(im, n);
    if (!xs) return xs.status();
    int64_t total = 1;
    for (int64_t d : *xs) total *= d;
    im.bindConst(n.outputs[0], NpyArray::from<int64_t>({}, {total}));
    return Status::ok();
  });
}

} // namespace tpu::onnx
