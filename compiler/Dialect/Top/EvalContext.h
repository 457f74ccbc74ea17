// What a Top op's evaluate() (EvaluateInterface, TopBase.td) reads and
// writes: the fp32 tensors of its operands and results. The Top interpreter
// (compiler/Interpreter) makes one per op it runs; the op's family file
// (Ops/<Family>.cpp) computes the results with kernels.
#pragma once

#include "support/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace top {

// A tensor value: shape plus fp32 data in C order (i64 and i1 tensors hold
// exact integers up to 2^24), shared so a reshape or a weight costs no copy.
struct TensorValue {
  std::vector<int64_t> shape;
  std::shared_ptr<std::vector<float>> values;

  // Zero-filled, of `shape`.
  static TensorValue zeros(std::vector<int64_t> shape);
  int64_t numElements() const { return int64_t(values->size()); }
  const float *ptr() const { return values->data(); }
  float *ptr() { return values->data(); }
};

class EvalContext {
public:
  // `operands` in order (an absent operand has no values), the static shapes
  // of the results, and `label`, the op as errors name it.
  EvalContext(std::vector<TensorValue> operands, std::vector<std::vector<int64_t>> resultShapes, std::string label);

  unsigned numOperands() const { return unsigned(operands_.size()); }
  // False for an absent (top.none) operand.
  bool hasOperand(unsigned i) const { return operands_[i].values != nullptr; }
  const TensorValue &operand(unsigned i) const { return operands_[i]; }

  unsigned numResults() const { return unsigned(results_.size()); }
  const std::vector<int64_t> &resultShape(unsigned i = 0) const { return resultShapes_[i]; }
  // Result i, zero-filled at its type's shape on first use.
  TensorValue &result(unsigned i = 0);
  // Result i is `value` (a reshape shares its input's data).
  void setResult(unsigned i, TensorValue value) { results_[i] = std::move(value); }
  // The results set so far (no values: not produced).
  std::vector<TensorValue> &results() { return results_; }

  // An error naming the op: "<op> '<tensor>': <parts...>".
  template <typename... Args> tpu::Status error(const Args &...parts) const {
    return tpu::makeError(label_, ": ", parts...);
  }

private:
  std::vector<TensorValue> operands_, results_;
  std::vector<std::vector<int64_t>> resultShapes_;
  std::string label_;
};

} // namespace top
