#include "compiler/Dialect/Top/EvalContext.h"

#include "kernels/Kernels.h"

namespace top {

TensorValue TensorValue::zeros(std::vector<int64_t> shape) {
  TensorValue t;
  t.values = std::make_shared<std::vector<float>>(tpu::kernels::numElements(shape));
  t.shape = std::move(shape);
  return t;
}

EvalContext::EvalContext(std::vector<TensorValue> operands, std::vector<std::vector<int64_t>> resultShapes,
                         std::string label)
    : operands_(std::move(operands)), results_(resultShapes.size()), resultShapes_(std::move(resultShapes)),
      label_(std::move(label)) {}

TensorValue &EvalContext::result(unsigned i) {
  TensorValue &r = results_[i];
  if (!r.values) r = TensorValue::zeros(resultShapes_[i]);
  return r;
}

} // namespace top
