// Helpers of the op families' shape rules (Ops/<Family>.cpp) and the one
// rule several families share. Private to the dialect.
#pragma once

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

#include <string>
#include <vector>

namespace top {

// The ranked type of operand `i`, or an error on the op.
mlir::FailureOr<mlir::RankedTensorType> rankedOperand(mlir::Operation *op, unsigned i);
void setResult(mlir::Operation *op, unsigned i, llvm::ArrayRef<int64_t> shape, mlir::Type elem);
mlir::Type f32Type(mlir::Operation *op);
// "[1,3,224,224]", as the shape errors print shapes.
std::string shapeStr(llvm::ArrayRef<int64_t> shape);
std::vector<int64_t> toShape(llvm::ArrayRef<int64_t> shape);

// Result 0 gets operand 0's type.
mlir::LogicalResult inferSameAsInput(mlir::Operation *op);

} // namespace top
