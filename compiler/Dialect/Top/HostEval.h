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
// element types `elements` (one for all, or one per result), by default the
// element type of operand 0 (the data).
mlir::LogicalResult inferShapesOnHost(mlir::Operation *op, llvm::ArrayRef<mlir::Type> elements = {});
// Whether `v`'s shape is known only at run time: a result of a host op whose
// shapes come from the data (its type holds the most it can be), or of a
// host op reading such a value. Only host ops and graph outputs may read it.
bool shapeFromData(mlir::Value v);
// An error naming the first op that is not a host op and reads a value whose
// shape comes from the data (the importers' last check).
tpu::Status checkShapesFromData(mlir::Operation *root);
// evaluate() of an op with a host implementation.
tpu::Status evaluateOnHost(mlir::Operation *op, EvalContext &ctx);

} // namespace top
