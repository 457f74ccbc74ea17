// ONNX ops that move or copy data: Transpose, Concat, Split, Slice, Pad, Gather (and the host ops
// GatherElements, GatherND, ScatterND, ScatterElements, NonZero), Expand,
// Tile, DepthToSpace, SpaceToDepth. On constant inputs they fold.
#include "compiler/Import/OnnxNodeImporter.h"

#include <algorithm>
#include <limits>

using namespace mlir;

namespace tpu::onnx {

namespace {

Status slice(OnnxImporter &im, const Node &n) {
  auto xs = im.shapeOf(n, 0);
  if (!xs) return xs.status();
  std::vector<int64_t> starts, ends, axes, steps;
  if (im.opset() < 10) {
    starts = n.getInts("starts").value_or(std::vector<int64_t>{});
    ends = n.getInts("ends").value_or(std::vector<int64_t>{});
    axes = n.getInts("axes").value_or(std::vector<int64_t>{});
  } else {
    auto s = im.constInts(n, 1, "starts"), e = im.constInts(n, 2, "ends");
    if (!s) return s.status();
    if (!e) return e.status();
    starts = *s;
    ends = *e;
    if (im.present(n, 3)) {
      auto a = im.constInts(n, 3, "axes");
      if (!a) return a.status();
      axes = *a;
    }
    if (im.present(n, 4)) {
      auto st = im.constInts(n, 4, "steps");
      if (!st) return st.status();
      steps = *st;
    }
  }
  auto p = normalizeSlice(*xs, starts, ends, axes, steps);
  if (!p) return Status(p.status()).prefix(n.describe());
  // On a shape that comes from the data the host clamps the slice to the
  // real dims; an index counted from the end or a negative step would need
  // them at import.
  auto fromData = im.shapeFromData(n, 0);
  if (!fromData) return fromData.status();
  if (*fromData) {
    auto negative = [](const std::vector<int64_t> &v) {
      return std::any_of(v.begin(), v.end(), [](int64_t x) { return x < 0; });
    };
    if (negative(starts) || negative(ends) || negative(steps))
      return makeError(n.describe(), ": '", n.inputs[0],
                       "' has a shape that comes from the data; a start or end "
                       "counted from the end, or a negative step, is not supported on it");
  }
  if (const NpyArray *c = im.constInput(n, 0)) {
    im.bindConst(n.outputs[0], sliceArray(*c, *p));
    return Status::ok();
  }
  return unary<top::SliceOp>(im, n, {im.ints("starts", p->starts), im.ints("ends", p->ends), im.ints("steps", p->steps)});
}

Status pad(OnnxImporter &im, const Node &n) {
  std::vector<int64_t> pads;
  double value = 0;
  if (im.opset() < 11) {
    pads = n.getInts("pads").value_or(std::vector<int64_t>{});
    value = n.getFloat("value", 0);
  } else {
    auto p = im.constInts(n, 1, "pads");
    if (!p) return p.status();
    pads = *p;
    if (im.present(n, 2)) {
      auto v = im.constFloats(n, 2, "constant_value");
      if (!v) return v.status();
      if (!v->empty()) value = (*v)[0];
    }
    if (im.present(n, 3)) return makeError(n.describe(), ": the axes input is not supported");
  }
  for (int64_t p : pads)
    if (p < 0) return makeError(n.describe(), ": negative pads are not supported");
  // All-zero pads are the identity in every mode (torch exports one before each AvgPool).
  if (std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p == 0; })) {
    im.alias(n.outputs[0], n.inputs[0]);
    return Status::ok();
  }
  return unary<top::PadOp>(im, n, {im.ints("pads", pads), im.str("mode", n.getString("mode", "constant")),
                                   im.f64("value", value)});
}

Status split(OnnxImporter &im, const Node &n) {
  auto xs = im.shapeOf(n, 0);
  if (!xs) return xs.status();
  auto axis = normalizeAxis(n.getInt("axis", 0), xs->size());
  if (!axis) return Status(axis.status()).prefix(n.describe());
  std::vector<int64_t> sizes;
  if (im.opset() >= 13 && im.present(n, 1)) {
    auto s = im.constInts(n, 1, "split");
    if (!s) return s.status();
    sizes = *s;
  } else if (auto s = n.getInts("split")) {
    sizes = *s;
  } else {
    int64_t parts = n.outputs.size(), d = (*xs)[*axis];
    if (d % parts) return makeError(n.describe(), ": dim ", d, " does not split evenly into ", parts);
    sizes.assign(parts, d / parts);
  }
  if (sizes.size() != n.outputs.size())
    return makeError(n.describe(), ": ", sizes.size(), " split sizes for ", n.outputs.size(), " outputs");
  if (const NpyArray *c = im.constInput(n, 0)) { // a shape split into parts
    SliceParams part{std::vector<int64_t>(xs->size(), 0), *xs, std::vector<int64_t>(xs->size(), 1)};
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (sizes[i] < 0 || sizes[i] > (*xs)[*axis] - part.starts[*axis])
        return makeError(n.describe(), ": split sizes ", shapeToString(sizes), " do not fit dim ", (*xs)[*axis]);
      part.ends[*axis] = part.starts[*axis] + sizes[i];
      im.bindConst(n.outputs[i], sliceArray(*c, part));
      part.starts[*axis] = part.ends[*axis];
    }
    return Status::ok();
  }
  auto x = im.operand(n, 0);
  if (!x) return x.status();
  auto op = im.build<top::SplitOp>(n, {*x}, {im.i64("axis", *axis), im.ints("split", sizes)}, sizes.size());
  return op ? Status::ok() : op.status();
}

Status gather(OnnxImporter &im, const Node &n) {
  if (im.allConst(n)) return im.bindConst(n, gatherArray(*im.constInput(n, 0), *im.constInput(n, 1), n.getInt("axis", 0)));
  auto xs = im.shapeOf(n, 0);
  if (!xs) return xs.status();
  auto axis = normalizeAxis(n.getInt("axis", 0), xs->size());
  if (!axis) return Status(axis.status()).prefix(n.describe());
  auto x = im.operand(n, 0), idx = im.operand(n, 1);
  if (!x) return x.status();
  if (!idx) return idx.status();
  auto op = im.build<top::GatherOp>(n, {*x, *idx}, {im.i64("axis", *axis)});
  return op ? Status::ok() : op.status();
}

// The host ops that index with a tensor (GatherElements, GatherND,
// ScatterND, ScatterElements): operands in order, `attrs`, the axis
// attribute (when `axisName`) normalized against the data's rank.
template <class OpT>
Status indexedHostOp(OnnxImporter &im, const Node &n, size_t operands, std::vector<NamedAttribute> attrs,
                     const char *axisName = nullptr) {
  auto xs = im.shapeOf(n, 0);
  if (!xs) return xs.status();
  if (axisName) {
    auto axis = normalizeAxis(n.getInt(axisName, 0), xs->size());
    if (!axis) return Status(axis.status()).prefix(n.describe());
    attrs.push_back(im.i64(axisName, *axis));
  }
  std::vector<Value> ins;
  for (size_t i = 0; i < operands; ++i) {
    auto v = im.operand(n, i);
    if (!v) return v.status();
    ins.push_back(*v);
  }
  auto op = im.build<OpT>(n, ins, attrs);
  return op ? Status::ok() : op.status();
}

Status concat(OnnxImporter &im, const Node &n) {
  if (im.allConst(n)) {
    std::vector<const NpyArray *> parts;
    for (size_t i = 0; i < n.inputs.size(); ++i)
      if (im.present(n, i)) parts.push_back(im.constInput(n, i));
    return im.bindConst(n, concatArrays(parts, n.getInt("axis", 0)));
  }
  std::vector<Value> ins;
  std::vector<int64_t> rankOf;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (!im.present(n, i)) continue;
    auto s = im.shapeOf(n, i);
    if (!s) return s.status();
    if (std::find(s->begin(), s->end(), 0) != s->end()) continue; // empty parts add nothing
    auto v = im.operand(n, i);
    if (!v) return v.status();
    ins.push_back(*v);
    rankOf.push_back(s->size());
  }
  if (ins.empty()) return makeError(n.describe(), ": all inputs are empty");
  auto axis = normalizeAxis(n.getInt("axis", 0), rankOf[0]);
  if (!axis) return Status(axis.status()).prefix(n.describe());
  auto op = im.build<top::ConcatOp>(n, ins, {im.i64("axis", *axis)});
  return op ? Status::ok() : op.status();
}

// NCHW SpaceToDepth: reshape [N,C,H/b,b,W/b,b] -> permute -> [N, C*b*b, H/b, W/b].
Status spaceToDepth(OnnxImporter &im, const Node &n) {
  auto xs = im.shapeOf(n, 0);
  if (!xs) return xs.status();
  int64_t b = n.getInt("blocksize", 0);
  if (xs->size() != 4 || b < 1 || (*xs)[2] % b || (*xs)[3] % b)
    return makeError(n.describe(), ": needs NCHW input with H and W divisible by blocksize ", b);
  int64_t N = (*xs)[0], C = (*xs)[1], H = (*xs)[2], W = (*xs)[3];
  Composer c(im, n);
  Value blocks = c.op<top::ReshapeOp>("blocks", {c.input(0)}, {im.ints("shape", {N, C, H / b, b, W / b, b})});
  Value moved = c.op<top::PermuteOp>("moved", {blocks}, {im.ints("order", {0, 3, 5, 1, 2, 4})});
  c.op<top::ReshapeOp>("", {moved}, {im.ints("shape", {N, C * b * b, H / b, W / b})});
  return c.status();
}

} // namespace

void registerDataMovementOps(OpTable &t) {
  t.add("SpaceToDepth", spaceToDepth);
  t.add("Transpose", [](OnnxImporter &im, const Node &n) -> Status {
    auto xs = im.shapeOf(n, 0);
    if (!xs) return xs.status();
    std::vector<int64_t> perm;
    for (int64_t i = xs->size() - 1; i >= 0; --i) perm.push_back(i);
    perm = n.getInts("perm").value_or(perm);
    if (perm.size() != xs->size()) return makeError(n.describe(), ": perm needs ", xs->size(), " entries");
    if (const NpyArray *c = im.constInput(n, 0)) {
      auto norm = normalizeAxes(perm, xs->size());
      if (!norm || norm->size() != perm.size()) return makeError(n.describe(), ": perm is not a permutation");
      im.bindConst(n.outputs[0], transposeArray(*c, perm));
      return Status::ok();
    }
    return unary<top::PermuteOp>(im, n, {im.ints("order", perm)});
  });
  t.add("Concat", concat);
  t.add("Split", split);
  t.add("Slice", slice, {3, 10});
  t.add("Pad", pad, {2, 11});
  t.add("Gather", gather, {2});
  t.add("GatherElements",
        [](OnnxImporter &im, const Node &n) { return indexedHostOp<top::GatherElementsOp>(im, n, 2, {}, "axis"); },
        {2});
  t.add("GatherND",
        [](OnnxImporter &im, const Node &n) {
          return indexedHostOp<top::GatherNDOp>(im, n, 2, {im.i64("batch_dims", n.getInt("batch_dims", 0))});
        },
        {2});
  t.add("ScatterND",
        [](OnnxImporter &im, const Node &n) {
          return indexedHostOp<top::ScatterNDOp>(im, n, 3, {im.str("reduction", n.getString("reduction", "none"))});
        },
        {3});
  t.add("NonZero", [](OnnxImporter &im, const Node &n) { return indexedHostOp<top::NonZeroOp>(im, n, 1, {}); });
  // Scatter (opset 9-10) is ScatterElements without a reduction.
  for (const char *name : {"ScatterElements", "Scatter"})
    t.add(name,
          [](OnnxImporter &im, const Node &n) {
            return indexedHostOp<top::ScatterElementsOp>(
                im, n, 3, {im.str("reduction", n.getString("reduction", "none"))}, "axis");
          },
          {3});
  t.add("Expand", [](OnnxImporter &im, const Node &n) -> Status {
    auto shape = im.constInts(n, 1, "shape");
    if (!shape) return shape.status();
    if (const NpyArray *c = im.constInput(n, 0)) {
      TPU_RETURN_IF_ERROR(checkFoldedSize(n, *shape));
      return im.bindConst(n, expandArray(*c, *shape));
    }
    return unary<top::ExpandOp>(im, n, {im.ints("shape", *shape)});
  }, {2});
  t.add("Tile", [](OnnxImporter &im, const Node &n) -> Status {
    auto r = im.constInts(n, 1, "repeats");
    if (!r) return r.status();
    if (const NpyArray *c = im.constInput(n, 0)) {
      std::vector<int64_t> shape = c->shape;
      for (size_t d = 0; d < shape.size() && d < r->size(); ++d) {
        if ((*r)[d] < 0 || (shape[d] && (*r)[d] > std::numeric_limits<int64_t>::max() / shape[d]))
          return makeError(n.describe(), ": repeats ", shapeToString(*r), " out of range");
        shape[d] *= (*r)[d];
      }
      TPU_RETURN_IF_ERROR(checkFoldedSize(n, shape));
      return im.bindConst(n, tileArray(*c, *r));
    }
    return unary<top::TileOp>(im, n, {im.ints("repeats", *r)});
  }, {2});
  t.add("DepthToSpace", [](OnnxImporter &im, const Node &n) {
    return unary<top::DepthToSpaceOp>(im, n, {im.i64("blocksize", n.getInt("blocksize", 1)),
                                              im.str("mode", n.getString("mode", "DCR"))});
  });
}

} // namespace tpu::onnx
