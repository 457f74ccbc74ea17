// TFLite ADD, SUB, MUL, DIV, MAXIMUM, MINIMUM: broadcasting, with the fused activation.
#include "compiler/Import/tflite/TfliteOpImporter.h"

namespace tpu::tflite {

void registerElementwiseOps(OpTable &t) {
  t.add(ADD, binaryHandler<top::AddOp>());
  t.add(SUB, binaryHandler<top::SubOp>());
  t.add(MUL, binaryHandler<top::MulOp>());
  t.add(DIV, binaryHandler<top::DivOp>());
  t.add(MAXIMUM, binaryHandler<top::MaxOp>());
  t.add(MINIMUM, binaryHandler<top::MinOp>());
}

} // namespace tpu::tflite
