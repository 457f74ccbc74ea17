// TFLite QUANTIZE, DEQUANTIZE.
#include "compiler/Import/tflite/TfliteOpImporter.h"

using namespace mlir;

namespace tpu::tflite {

namespace {

// QUANTIZE / DEQUANTIZE: the real values pass through (a constant DEQUANTIZE,
// e.g. of float16 weights, becomes the constant itself).
Status identity(TfliteImporter &im, const Operator &op) {
  if (op.inputs.size() != 1 || op.outputs.size() != 1) return makeError(op.describe(), ": needs 1 input and 1 output");
  if (const Tensor *t = im.constant(op, 0)) {
    auto real = realValues(*t);
    if (!real) return Status(real.status()).prefix(op.describe());
    Tensor f = im.tensor(op.outputs[0]);
    f.type = int8_t(ElementType::Float32);
    f.typeName = "FLOAT32";
    f.quant = {};
    if (real->shape != f.shape)
      return makeError(op.describe(), ": output shape ", shapeToString(f.shape), " differs from the input's ",
                       shapeToString(real->shape));
    f.data = std::move(real->data);
    im.bindConstant(op.outputs[0], std::move(f));
    return Status::ok();
  }
  auto x = im.operand(op, 0);
  if (!x) return x.status();
  im.bind(op.outputs[0], *x);
  return Status::ok();
}

} // namespace

void registerQuantizeOps(OpTable &t) {
  t.add(DEQUANTIZE, identity);
  t.add(QUANTIZE, identity);
}

} // namespace tpu::tflite
