// TFLite LOGISTIC, TANH, RELU, RELU6, LEAKY_RELU, PRELU, HARD_SWISH, SOFTMAX.
#include "compiler/Import/tflite/TfliteOpImporter.h"

using namespace mlir;

namespace tpu::tflite {

namespace {

// SOFTMAX over the last (model) axis, logits scaled by beta.
Status softmax(TfliteImporter &im, const Operator &op) {
  auto x = im.operand(op, 0);
  if (!x) return x.status();
  size_t rank = shapeOf(*x).size();
  if (rank == 0) return makeError(op.describe(), ": needs a non-scalar input");
  Value logits = *x;
  if (op.options.beta != 1.0f) {
    Value beta = im.weight(im.outName(op) + "_beta", NpyArray::from({1}, std::vector<float>{op.options.beta}));
    auto scaled = im.build<top::MulOp>(im.outName(op) + "_scaled", {logits, beta}, {}, op.describe());
    if (!scaled) return scaled.status();
    logits = *scaled;
  }
  return im.emit<top::SoftmaxOp>(op, {logits}, {im.i64("axis", rank == 4 ? 1 : int64_t(rank) - 1)});
}

Status prelu(TfliteImporter &im, const Operator &op) {
  size_t rank = im.rankOf(op, 0);
  auto x = im.operand(op, 0), slope = im.broadcastOperand(op, 1, rank);
  if (!x) return x.status();
  if (!slope) return slope.status();
  return im.emit<top::PReluOp>(op, {*x, *slope}, {});
}

} // namespace

void registerActivationOps(OpTable &t) {
  t.add(LOGISTIC, unaryHandler<top::SigmoidOp>());
  t.add(TANH, unaryHandler<top::TanhOp>());
  t.add(RELU, unaryHandler<top::ReluOp>());
  t.add(RELU6, unaryHandler<top::ClipOp>([](TfliteImporter &im, const Operator &) {
          return std::vector<NamedAttribute>{im.f64("min", 0.0), im.f64("max", 6.0)};
        }));
  t.add(LEAKY_RELU, unaryHandler<top::LeakyReluOp>([](TfliteImporter &im, const Operator &op) {
          return std::vector<NamedAttribute>{im.f64("alpha", op.options.alpha)};
        }));
  t.add(PRELU, prelu);
  t.add(HARD_SWISH, unaryHandler<top::HardSwishOp>());
  t.add(SOFTMAX, softmax);
}

} // namespace tpu::tflite
