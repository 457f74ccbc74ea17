#include "compiler/Dialect/Top/ShapeRules.h"

using namespace mlir;

namespace top {

FailureOr<RankedTensorType> rankedOperand(Operation *op, unsigned i) {
  auto t = dyn_cast<RankedTensorType>(op->getOperand(i).getType());
  if (!t) return op->emitOpError() << "operand " << i << " has no known shape", failure();
  return t;
}

void setResult(Operation *op, unsigned i, ArrayRef<int64_t> shape, Type elem) {
  op->getResult(i).setType(RankedTensorType::get(shape, elem));
}

Type f32Type(Operation *op) { return Float32Type::get(op->getContext()); }

std::string shapeStr(ArrayRef<int64_t> s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
  return r + "]";
}

std::vector<int64_t> toShape(ArrayRef<int64_t> shape) { return std::vector<int64_t>(shape.begin(), shape.end()); }

LogicalResult inferSameAsInput(Operation *op) {
  auto in = rankedOperand(op, 0);
  if (failed(in)) return failure();
  op->getResult(0).setType(*in);
  return success();
}

} // namespace top
