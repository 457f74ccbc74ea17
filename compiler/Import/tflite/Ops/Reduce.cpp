// TFLite MEAN, SUM, REDUCE_MAX.
#include "compiler/Import/tflite/TfliteOpImporter.h"

using namespace mlir;

namespace tpu::tflite {

namespace {

// MEAN / SUM / REDUCE_MAX over constant axes; a 4-D input reduces in NCHW
// with kept dims, then drops them in the model's order.
template <typename OpT> Status reduce(TfliteImporter &im, const Operator &op) {
  auto x = im.operand(op, 0);
  if (!x) return x.status();
  std::vector<int64_t> xs = shapeOf(*x);
  auto axes = im.ints(op, 1, "axes");
  if (!axes) return axes.status();
  auto norm = onnx::normalizeAxes(*axes, xs.size());
  if (!norm) return Status(norm.status()).prefix(op.describe());
  bool is4d = xs.size() == 4;
  std::vector<int64_t> topAxes;
  for (int64_t a : *norm) topAxes.push_back(is4d ? kToNchwAxis[a] : a);
  std::sort(topAxes.begin(), topAxes.end());
  bool keep = op.options.keepDims;
  if (!is4d || keep) return im.emit<OpT>(op, {*x}, {im.i64s("axes", topAxes), im.boolean("keepdims", keep)});
  std::string name = im.outName(op);
  auto r =
      im.build<OpT>(name + "_keepdims", {*x}, {im.i64s("axes", topAxes), im.boolean("keepdims", true)}, op.describe());
  if (!r) return r.status();
  auto native = im.toNhwc(*r, name + "_keepdims");
  if (!native) return native.status();
  std::vector<int64_t> shape;
  std::vector<int64_t> ns = shapeOf(*native);
  for (size_t d = 0; d < ns.size(); ++d)
    if (!std::count(norm->begin(), norm->end(), int64_t(d))) shape.push_back(ns[d]);
  auto out = im.build<top::ReshapeOp>(name, {*native}, {im.i64s("shape", shape)}, op.describe());
  if (!out) return out.status();
  return im.bindNative(op, 0, *out);
}

} // namespace

void registerReduceOps(OpTable &t) {
  t.add(MEAN, reduce<top::ReduceMeanOp>);
  t.add(SUM, reduce<top::ReduceSumOp>);
  t.add(REDUCE_MAX, reduce<top::ReduceMaxOp>);
}

} // namespace tpu::tflite
