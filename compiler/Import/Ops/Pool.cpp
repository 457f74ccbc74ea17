// ONNX MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool.
#include "compiler/Import/OnnxNodeImporter.h"

using namespace mlir;

namespace tpu::onnx {

namespace {

template <typename OpT> Status pool(OnnxImporter &im, const Node &n) {
  if (n.outputs.size() > 1 && !n.outputs[1].empty())
    return makeError(n.describe(), ": the Indices output is not supported");
  auto xs = im.shapeOf(n, 0);
  if (!xs) return xs.status();
  auto k = n.getInts("kernel_shape");
  if (!k || xs->size() != k->size() + 2)
    return makeError(n.describe(), ": kernel_shape must give one size per spatial dim of ", shapeToString(*xs));
  size_t sp = k->size();
  auto s = intsOr(n, "strides", sp, 1), d = intsOr(n, "dilations", sp, 1);
  if (s.size() != sp || d.size() != sp) return makeError(n.describe(), ": strides/dilations need ", sp, " values");
  auto pads = windowPads(n, *xs, *k, s, d);
  if (!pads) return pads.status();
  auto x = im.operand(n, 0);
  if (!x) return x.status();
  auto op = im.build<OpT>(n, {*x},
                          {im.ints("kernel_shape", *k), im.ints("strides", s), im.ints("pads", *pads),
                           im.ints("dilations", d), im.boolean("ceil_mode", n.getInt("ceil_mode", 0) != 0),
                           im.boolean("count_include_pad", n.getInt("count_include_pad", 0) != 0)});
  return op ? Status::ok() : op.status();
}

} // namespace

void registerPoolOps(OpTable &t) {
  t.add("MaxPool", pool<top::MaxPoolOp>);
  t.add("AveragePool", pool<top::AvgPoolOp>);
  t.add("GlobalAveragePool", unaryHandler<top::GlobalAvgPoolOp>());
  t.add("GlobalMaxPool", unaryHandler<top::GlobalMaxPoolOp>());
}

} // namespace tpu::onnx
