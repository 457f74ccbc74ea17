// The Top dialect: dialect class, op interfaces and traits, op classes.
#pragma once

#include "compiler/Dialect/Top/EvalContext.h"
#include "compiler/Dialect/Top/TopTraits.h"

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
// Attributes of the module and of its entry function (not of an op).
constexpr const char *kWeightFileAttr = "top.weight_file";   // module: the weight .npz
constexpr const char *kInputNamesAttr = "top.input_names";   // function: the model's input names
constexpr const char *kOutputNamesAttr = "top.output_names"; // function: the model's output names

// The only reader of `v` when it is an op its producer can apply as it
// writes (FusesIntoProducer: a relu after a conv, fc or add), else null.
mlir::Operation *fusibleActivation(mlir::Value v);

// Every result of `op` from its own evaluate (EvaluateInterface) on
// `operands` (an absent operand has no values), at the results' static
// shapes; errors name the op as `label`. The Top interpreter and the
// importer's shape folding run ops through it.
tpu::Result<std::vector<TensorValue>> evaluateOp(mlir::Operation *op, std::vector<TensorValue> operands,
                                                 std::string label);
} // namespace top

#define GET_OP_CLASSES
#include "compiler/Dialect/Top/TopOps.h.inc"
