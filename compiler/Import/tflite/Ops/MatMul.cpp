// TFLite FULLY_CONNECTED.
#include "compiler/Import/tflite/TfliteOpImporter.h"

using namespace mlir;

namespace tpu::tflite {

namespace {

// FULLY_CONNECTED: input viewed as [-1, K], weights [N, K], bias [N].
Status fullyConnected(TfliteImporter &im, const Operator &op) {
  if (op.options.weightsFormat != 0) return makeError(op.describe(), ": shuffled weights are not supported");
  auto x = im.nativeOperand(op, 0), w = im.operand(op, 1);
  if (!x) return x.status();
  if (!w) return w.status();
  std::vector<int64_t> xs = shapeOf(*x), ws = shapeOf(*w);
  if (ws.size() != 2 || ws[1] == 0) return makeError(op.describe(), ": weights ", shapeToString(ws), " must be [N, K]");
  int64_t numel = 1;
  for (int64_t d : xs) numel *= d;
  if (numel % ws[1])
    return makeError(op.describe(), ": input ", shapeToString(xs), " is not a multiple of K = ", ws[1]);
  Value a = *x;
  std::string name = im.outName(op);
  if (xs.size() != 2 || xs[1] != ws[1]) {
    auto flat =
        im.build<top::ReshapeOp>(name + "_2d_in", {a}, {im.i64s("shape", {numel / ws[1], ws[1]})}, op.describe());
    if (!flat) return flat.status();
    a = *flat;
  }
  Value bias = im.none();
  if (im.present(op, 2)) {
    auto bv = im.operand(op, 2);
    if (!bv) return bv.status();
    bias = *bv;
  }
  std::vector<int64_t> outShape = {numel / ws[1], ws[0]};
  if (op.options.keepNumDims) {
    outShape = xs;
    outShape.back() = ws[0];
  }
  bool reshapeOut = outShape.size() != 2;
  std::string gemmName = reshapeOut ? name + "_2d" : name;
  auto g = im.build<top::GemmOp>(op.options.activation == Activation::None ? gemmName : gemmName + "_pre_act",
                                 {a, *w, bias}, {im.boolean("transB", true)}, op.describe());
  if (!g) return g.status();
  auto out = im.activate(*g, op.options.activation, gemmName, op);
  if (!out) return out.status();
  if (!reshapeOut) return im.bindNative(op, 0, *out);
  auto r = im.build<top::ReshapeOp>(name, {*out}, {im.i64s("shape", outShape)}, op.describe());
  if (!r) return r.status();
  return im.bindNative(op, 0, *r);
}

} // namespace

void registerMatMulOps(OpTable &t) { t.add(FULLY_CONNECTED, fullyConnected); }

} // namespace tpu::tflite
