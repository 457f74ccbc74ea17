// The Top dialect: dialect class, op classes and the shared shape rules.
#pragma once

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "compiler/Dialect/Top/TopDialect.h.inc"
#include "compiler/Dialect/Top/TopInterfaces.h.inc"

namespace top {
// Shape rules shared by op families (TopOps.cpp). Each sets the result types.
mlir::LogicalResult inferSameAsInput(mlir::Operation *op);
mlir::LogicalResult inferBroadcast(mlir::Operation *op, bool boolResult);
mlir::LogicalResult inferPool(mlir::Operation *op);
mlir::LogicalResult inferGlobalPool(mlir::Operation *op);
mlir::LogicalResult inferReduce(mlir::Operation *op, llvm::ArrayRef<int64_t> axes, bool keepdims);
mlir::LogicalResult inferArgReduce(mlir::Operation *op, int64_t axis, bool keepdims);
mlir::LogicalResult verifyWindowAttrs(mlir::Operation *op);

// numpy broadcast of two shapes; nullopt if incompatible.
std::optional<llvm::SmallVector<int64_t>> broadcastShapes(llvm::ArrayRef<int64_t> a,
                                                          llvm::ArrayRef<int64_t> b);

// Name of the weight file attribute on the module.
constexpr const char *kWeightFileAttr = "top.weight_file";
} // namespace top

#define GET_OP_CLASSES
#include "compiler/Dialect/Top/TopOps.h.inc"
