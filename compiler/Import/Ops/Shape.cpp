// ONNX ops on shapes only (no data moves): Reshape, Flatten, Squeeze, Unsqueeze, Identity,
// Dropout (inference), and Shape and Size: constants of the static shapes, host ops of a shape
// that comes from the data.
#include "compiler/Import/OnnxNodeImporter.h"

#include <algorithm>

using namespace mlir;

namespace tpu::onnx {

namespace {

// ONNX Shape's dims [start, end) of a rank-`rank` tensor, clamped.
std::pair<int64_t, int64_t> shapeRange(const Node &n, int64_t rank) {
  int64_t start = n.getInt("start", 0), end = n.getInt("end", rank);
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
  return {start, std::max(start, end)};
}

// Shape and Size fold to constants, except of a shape that comes from the
// data: top.shape gives its dims on the host, when the model runs (a null
// value: the shape is static).
Result<Value> shapeOnHost(OnnxImporter &im, const Node &n, int64_t start, int64_t end, const std::string &outputName) {
  auto fromData = im.shapeFromData(n, 0);
  if (!fromData) return fromData.status();
  if (!*fromData) return Value();
  auto x = im.operand(n, 0);
  if (!x) return x.status();
  auto op = im.build<top::ShapeOp>(n, {*x}, {im.i64("start", start), im.i64("end", end)}, 1, outputName);
  if (!op) return op.status();
  return op->getOutput();
}

Status reshapeTo(OnnxImporter &im, const Node &n, Result<std::vector<int64_t>> shape) {
  if (!shape) return Status(shape.status()).prefix(n.describe());
  if (const NpyArray *c = im.constInput(n, 0)) {
    im.bindConst(n.outputs[0], reshapeArray(*c, shape.take()));
    return Status::ok();
  }
  return unary<top::ReshapeOp>(im, n, {im.ints("shape", *shape)});
}

// A Reshape of a tensor whose shape comes from the data, or to a shape
// computed at run time from such shapes (torchvision reshapes clipped boxes
// to another tensor's Shape), runs on the host: 0 and -1 resolve on the real
// shapes; its result's bound is the target with every shape at its bound. A
// shape computed from anything else keeps constInts' error.
Status dynamicReshape(OnnxImporter &im, const Node &n, const std::vector<int64_t> &xs) {
  auto shape = im.operand(n, 1);
  if (!shape) return shape.status();
  auto target = im.intsAtBounds(*shape);
  if (!target) return im.constInts(n, 1, "shape").status();
  const bool allowzero = n.getInt("allowzero", 0) != 0;
  auto bound = reshapeTarget(xs, *target, allowzero);
  if (!bound) return Status(bound.status()).prefix(n.describe());
  auto x = im.operand(n, 0);
  if (!x) return x.status();
  auto op =
      im.build<top::DynamicReshapeOp>(n, {*x, *shape}, {im.ints("bound", *bound), im.boolean("allowzero", allowzero)});
  return op ? Status::ok() : op.status();
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
      // Of a shape from the data (NMS rows), or to one computed at run time: on the host.
      auto fromData = im.shapeFromData(n, 0);
      if (!fromData) return fromData.status();
      if (*fromData || !im.constInput(n, 1)) return dynamicReshape(im, n, *xs);
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
    if (axis < 0) axis += rank;
    // A shape from the data (NMS rows) keeps its rule to the host.
    auto fromData = im.shapeFromData(n, 0);
    if (!fromData) return fromData.status();
    if (*fromData) return unary<top::FlattenOp>(im, n, {im.i64("axis", axis)});
    return reshapeTo(im, n, flattenShape(*xs, axis));
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
      auto fromData = im.shapeFromData(n, 0);
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
    auto xs = im.shapeOf(n, 0);
    if (!xs) return xs.status();
    auto [start, end] = shapeRange(n, int64_t(xs->size()));
    auto onHost = shapeOnHost(im, n, start, end, "");
    if (!onHost || *onHost) return onHost.status();
    std::vector<int64_t> dims(xs->begin() + start, xs->begin() + end);
    im.bindConst(n.outputs[0], NpyArray::from<int64_t>({int64_t(dims.size())}, dims));
    return Status::ok();
  });
  t.add("Size", [](OnnxImporter &im, const Node &n) -> Status {
    auto xs = im.shapeOf(n, 0);
    if (!xs) return xs.status();
    const int64_t rank = int64_t(xs->size());
    auto onHost = shapeOnHost(im, n, 0, rank, n.outputs[0] + "_dims");
    if (!onHost) return onHost.status();
    if (*onHost) {
      auto op = im.build<top::ReduceProdOp>(n, {*onHost}, {im.ints("axes", {0}), im.boolean("keepdims", false)});
      return op ? Status::ok() : op.status();
    }
    int64_t total = 1;
    for (int64_t d : *xs) total *= d;
    im.bindConst(n.outputs[0], NpyArray::from<int64_t>({}, {total}));
    return Status::ok();
  });
}

} // namespace tpu::onnx
