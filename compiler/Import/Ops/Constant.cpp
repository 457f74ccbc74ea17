// ONNX ops whose output is a constant the importer computes: Constant, ConstantOfShape,
// Range, EyeLike, and Trilu (its band mask).
#include "compiler/Dialect/Top/WeightStore.h"
#include "compiler/Import/OnnxNodeImporter.h"

#include <cmath>

using namespace mlir;

namespace tpu::onnx {

namespace {

Status constantNode(OnnxImporter &im, const Node &n) {
  if (const Attribute *a = n.attr("value"); a && a->tensor) {
    im.bindConst(n.outputs[0], *a->tensor);
  } else if (auto f = n.attr("value_float")) {
    im.bindConst(n.outputs[0], NpyArray::from<float>({}, {float(f->f)}));
  } else if (auto fs = n.attr("value_floats")) {
    std::vector<float> v(fs->floats.begin(), fs->floats.end());
    im.bindConst(n.outputs[0], NpyArray::from<float>({int64_t(v.size())}, v));
  } else if (auto i = n.attr("value_int")) {
    im.bindConst(n.outputs[0], NpyArray::from<int64_t>({}, {i->i}));
  } else if (auto is = n.attr("value_ints")) {
    im.bindConst(n.outputs[0], NpyArray::from<int64_t>({int64_t(is->ints.size())}, is->ints));
  } else {
    return makeError(n.describe(), ": only tensor, float(s) and int(s) values are supported");
  }
  return Status::ok();
}

} // namespace

void registerConstantOps(OpTable &t) {
  t.add("Trilu", [](OnnxImporter &im, const Node &n) -> Status { // x where the band mask holds, else 0
    auto xs = im.shapeOf(n, 0);
    if (!xs) return xs.status();
    if (xs->size() < 2) return makeError(n.describe(), ": needs rank >= 2");
    int64_t k = 0;
    if (im.present(n, 1)) {
      auto kv = im.constInts(n, 1, "k");
      if (!kv) return kv.status();
      if (kv->size() != 1) return makeError(n.describe(), ": k must be a scalar");
      k = (*kv)[0];
    }
    bool upper = n.getInt("upper", 1) != 0;
    int64_t rows = (*xs)[xs->size() - 2], cols = (*xs)[xs->size() - 1];
    TPU_RETURN_IF_ERROR(checkFoldedSize(n, {rows, cols}));
    NpyArray mask;
    mask.dtype = "bool";
    mask.shape = {rows, cols};
    mask.data.resize(rows * cols);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) mask.data[i * cols + j] = upper ? j - i >= k : j - i <= k;
    std::string maskName = n.outputs[0] + "_mask";
    im.bindConst(maskName, mask);
    if (const NpyArray *x = im.constInput(n, 0)) {
      NpyArray zero = castArray(NpyArray::from<float>({}, {0.0f}), x->dtype);
      return im.bindConst(n, whereArray(mask, *x, zero));
    }
    Composer c(im, n);
    Value x = c.input(0);
    auto maskValue = im.value(maskName);
    if (!maskValue) return maskValue.status();
    bool isInt = cast<TensorType>(x.getType()).getElementType().isInteger(64);
    std::string zeroName = n.outputs[0] + "_zero";
    im.bindConst(zeroName, isInt ? NpyArray::from<int64_t>({}, {0}) : NpyArray::from<float>({}, {0.0f}));
    auto zero = im.value(zeroName);
    if (!zero) return zero.status();
    c.op<top::WhereOp>("", {*maskValue, x, *zero});
    return c.status();
  });
  t.add("EyeLike", [](OnnxImporter &im, const Node &n) -> Status {
    auto xs = im.shapeOf(n, 0);
    if (!xs) return xs.status();
    if (xs->size() != 2) return makeError(n.describe(), ": needs a 2-D input");
    std::string dtype = n.attr("dtype") ? topDtypeOf(int(n.getInt("dtype", 1))) : std::string();
    if (dtype.empty()) {
      auto v = im.operand(n, 0);
      if (!v) return v.status();
      dtype = top::dtypeOfElement(cast<TensorType>(v->getType()).getElementType());
    }
    int64_t rows = (*xs)[0], cols = (*xs)[1], k = n.getInt("k", 0);
    TPU_RETURN_IF_ERROR(checkFoldedSize(n, {rows, cols}));
    std::vector<float> eye(rows * cols, 0.0f);
    for (int64_t i = 0; i < rows; ++i)
      if (i + k >= 0 && i + k < cols) eye[i * cols + i + k] = 1.0f;
    im.bindConst(n.outputs[0], castArray(NpyArray::from<float>({rows, cols}, eye), dtype));
    return Status::ok();
  });
  t.add("Constant", constantNode, {0});
  t.add("ConstantOfShape", [](OnnxImporter &im, const Node &n) -> Status {
    const Attribute *v = n.attr("value");
    NpyArray fillv = v && v->tensor ? *v->tensor : NpyArray::from<float>({1}, {0.0f});
    if (fillv.numel() != 1) return makeError(n.describe(), ": value must have one element");
    auto shape = im.constInts(n, 0, "shape");
    if (!shape) {
      // A shape computed at run time from shapes that come from the data
      // (SSDLite's per-class labels): on the host, bounded by the shape at
      // the bounds. A shape computed from anything else keeps the error.
      auto operand = im.operand(n, 0);
      if (!operand) return shape.status();
      auto bound = im.intsAtBounds(*operand);
      if (!bound) return shape.status();
      const bool integer = fillv.dtype != "float32" && fillv.dtype != "float64" && fillv.dtype != "float16";
      auto op = im.build<top::ConstantOfShapeOp>(
          n, {*operand},
          {im.ints("bound", *bound), im.f64("value", toDouble(fillv)[0]), im.boolean("integer", integer)});
      return op ? Status::ok() : op.status();
    }
    TPU_RETURN_IF_ERROR(checkFoldedSize(n, *shape));
    return im.bindConst(n, expandArray(reshapeArray(fillv, {}), *shape));
  });
  t.add("Range", [](OnnxImporter &im, const Node &n) -> Status {
    if (!im.allConst(n)) return makeError(n.describe(), ": start, limit and delta must be constants");
    auto s = toDouble(*im.constInput(n, 0)), l = toDouble(*im.constInput(n, 1)), d = toDouble(*im.constInput(n, 2));
    if (s.empty() || l.empty() || d.empty() || d[0] == 0) return makeError(n.describe(), ": bad range");
    int64_t count = std::max<int64_t>(0, int64_t(std::ceil((l[0] - s[0]) / d[0])));
    if (count > (1 << 26)) return makeError(n.describe(), ": range of ", count, " elements is too large");
    NpyArray r;
    if (im.constInput(n, 0)->is<int64_t>()) {
      std::vector<int64_t> v(count);
      for (int64_t i = 0; i < count; ++i) v[i] = int64_t(s[0]) + i * int64_t(d[0]);
      r = NpyArray::from<int64_t>({count}, v);
    } else {
      std::vector<float> v(count);
      for (int64_t i = 0; i < count; ++i) v[i] = float(s[0] + i * d[0]);
      r = NpyArray::from<float>({count}, v);
    }
    im.bindConst(n.outputs[0], std::move(r));
    return Status::ok();
  }, {3});
}

} // namespace tpu::onnx
