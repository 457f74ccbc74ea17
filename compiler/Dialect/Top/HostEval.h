// Top ops that have a host implementation (kernels/HostOps.h, named by the
// op's name): their evaluate() runs it, and the lowering places them in a
// CPU sub-net where the chip has no command for them (docs/codegen.md,
// "CPU sub-nets"). The op's attributes become the host op's by their names.
#pragma once

#include "compiler/Dialect/Top/EvalContext.h"
#include "kernels/HostOps.h"
#include "support/Status.h"

#include "mlir/IR/Operation.h"

namespace top {

// Whether `op` has a host implementation.
bool hasHostOp(mlir::Operation *op);
// The op's attributes as host attributes: integers and booleans, reals,
// their arrays, strings and types (printed, "i64"); another kind of
// attribute is an error naming it.
tpu::Result<tpu::kernels::HostAttrs> hostAttrsOf(mlir::Operation *op);
tpu::Result<tpu::kernels::HostAttrs> hostAttrsOf(llvm::StringRef opName, llvm::ArrayRef<mlir::NamedAttribute> attrs);
// inferShapes() of an op whose shape rule is its host op's: results of the
// element type of operand 0 (the data).
mlir::LogicalResult inferShapesOnHost(mlir::Operation *op);
// evaluate() of an op with a host implementation.
tpu::Status evaluateOnHost(mlir::Operation *op, EvalContext &ctx);

} // namespace top
