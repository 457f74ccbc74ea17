// TFLite MAX_POOL_2D, AVERAGE_POOL_2D.
#include "compiler/Import/tflite/TfliteOpImporter.h"

using namespace mlir;

namespace tpu::tflite {

namespace {

template <typename OpT> Status pool(TfliteImporter &im, const Operator &op) {
  const Options &o = op.options;
  auto x = im.operand(op, 0);
  if (!x) return x.status();
  std::vector<int64_t> xs = shapeOf(*x);
  if (xs.size() != 4) return makeError(op.describe(), ": input ", shapeToString(xs), " must be 4-D");
  if (o.filterH < 1 || o.filterW < 1 || o.strideH < 1 || o.strideW < 1)
    return makeError(op.describe(), ": filter sizes and strides must be >= 1");
  auto [pt, pb] = windowPads(o.padding, xs[2], o.filterH, o.strideH, 1);
  auto [pl, pr] = windowPads(o.padding, xs[3], o.filterW, o.strideW, 1);
  // TFLite averages over the valid elements only: count_include_pad false.
  return im.emit<OpT>(op, {*x},
                      {im.i64s("kernel_shape", {o.filterH, o.filterW}), im.i64s("strides", {o.strideH, o.strideW}),
                       im.i64s("pads", {pt, pl, pb, pr}), im.i64s("dilations", {1, 1}), im.boolean("ceil_mode", false),
                       im.boolean("count_include_pad", false)},
                      o.activation);
}

} // namespace

void registerPoolOps(OpTable &t) {
  t.add(MAX_POOL_2D, pool<top::MaxPoolOp>);
  t.add(AVERAGE_POOL_2D, pool<top::AvgPoolOp>);
}

} // namespace tpu::tflite
