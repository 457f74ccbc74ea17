// libFuzzer target: the TFLite reader (compiler/Import/tflite/TfliteModel).
// Bytes -> verified FlatBuffer -> checked model, then the constant decoding
// the importer applies to every constant tensor (real values, integer
// parameters). The MLIR builder is left out for the reason FuzzOnnx.cpp gives.
#include "compiler/Import/tflite/TfliteModel.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto model = tpu::tflite::parseModel(data, size);
  if (!model.isOk()) return 0;
  for (const tpu::tflite::Tensor &t : model->tensors) {
    if (!t.isConstant()) continue;
    if (auto real = tpu::tflite::realValues(t); real.isOk() && real->data.size() != uint64_t(t.numel()) * 4)
      std::abort(); // every element of an accepted constant is decoded
    if (auto ints = tpu::tflite::integerValues(t); ints.isOk() && int64_t(ints->size()) != t.numel()) std::abort();
  }
  for (const tpu::tflite::Operator &op : model->operators)
    for (int32_t i : op.inputs)
      if (i >= int64_t(model->tensors.size())) std::abort(); // the reader checked every index
  return 0;
}
