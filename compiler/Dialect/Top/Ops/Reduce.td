// Reductions: top.reduce_* (one class),
// top.arg_max, top.arg_min, and the running sum top.cumsum.
#ifndef TOP_OPS_REDUCE_TD
#define TOP_OPS_REDUCE_TD

include "compiler/Dialect/Top/TopBase.td"

// A reduction over `axes`: shape rule and evaluate are the host op of the same name
// (kernels/HostOps.cpp, kernels::reduce).
class Top_ReduceOp<string mnemonic, string what> : Top_Op<mnemonic> {
  let summary = what;
  let arguments = (ins Top_Tensor:$input, DenseI64ArrayAttr:$axes,
    DefaultValuedAttr<BoolAttr, "true">:$keepdims);
  let results = (outs Top_Tensor:$output);
  let shapeRuleDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes() { return ::top::inferShapesOnHost(getOperation()); }
  }];
  let evaluateDefinition = [{
    ::tpu::Status $cppClass::evaluate(::top::EvalContext &ctx) { return ::top::evaluateOnHost(*this, ctx); }
  }];
}

def Top_ReduceMeanOp : Top_ReduceOp<"reduce_mean", "Mean over axes (sorted, non-negative)">;
def Top_ReduceSumOp : Top_ReduceOp<"reduce_sum", "Sum over axes">;
def Top_ReduceMaxOp : Top_ReduceOp<"reduce_max", "Max over axes">;
def Top_ReduceMinOp : Top_ReduceOp<"reduce_min", "Min over axes">;
def Top_ReduceProdOp : Top_ReduceOp<"reduce_prod", "Product over axes">;
def Top_ReduceL2Op : Top_ReduceOp<"reduce_l2", "sqrt(sum(x^2)) over axes">;

// Host ops (kernels/HostOps.h top.arg_max, top.arg_min).
class Top_ArgReduceOp<string mnemonic, string what> : Top_Op<mnemonic> {
  let summary = what;
  let arguments = (ins Top_Tensor:$input, I64Attr:$axis,
    DefaultValuedAttr<BoolAttr, "true">:$keepdims,
    DefaultValuedAttr<BoolAttr, "false">:$select_last_index);
  let results = (outs Top_Tensor:$output);
  let shapeRuleDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes() {
      return ::top::inferShapesOnHost(getOperation(), ::mlir::IntegerType::get(getContext(), 64));
    }
  }];
  let evaluateDefinition = [{
    ::tpu::Status $cppClass::evaluate(::top::EvalContext &ctx) { return ::top::evaluateOnHost(*this, ctx); }
  }];
}

def Top_ArgMaxOp : Top_ArgReduceOp<"arg_max", "Index of the max along axis (i64 result)">;
def Top_ArgMinOp : Top_ArgReduceOp<"arg_min", "Index of the min along axis (i64 result)">;

// ONNX TopK, a host op: the k largest (or smallest) along `axis`, always
// sorted (ties by the lower index), and their indices (i64). With `k_input`
// (one value computed at run time) k is that value and the attribute its
// bound: the results' shape comes from the data.
def Top_TopKOp : Top_Op<"topk"> {
  let summary = "The k largest or smallest values along an axis and their indices";
  let arguments = (ins Top_Tensor:$input, Optional<Top_Tensor>:$k_input, I64Attr:$k, I64Attr:$axis,
    DefaultValuedAttr<BoolAttr, "true">:$largest, DefaultValuedAttr<BoolAttr, "true">:$sorted);
  let results = (outs Top_Tensor:$values, Top_Tensor:$indices);
  let shapeRuleDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes() {
      auto in = ::mlir::dyn_cast<::mlir::RankedTensorType>(getInput().getType());
      if (!in) return emitOpError() << "needs a ranked input";
      return ::top::inferShapesOnHost(getOperation(), {in.getElementType(), ::mlir::IntegerType::get(getContext(), 64)});
    }
  }];
  let evaluateDefinition = [{
    ::tpu::Status $cppClass::evaluate(::top::EvalContext &ctx) { return ::top::evaluateOnHost(*this, ctx); }
  }];
}

// ONNX CumSum: y[i] = x[0] + ... + x[i] along `axis`; without x[i] when
// `exclusive`, summed from the end when `reverse`.
def Top_CumSumOp : Top_SameShapeOp<"cumsum", "Running sum along an axis",
    (ins I64Attr:$axis, DefaultValuedAttr<BoolAttr, "false">:$exclusive,
         DefaultValuedAttr<BoolAttr, "false">:$reverse)> {
  let shapeRuleDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes() {
      return ::top::inferCumSum(getOperation(), getAxis());
    }
  }];
  let evaluateDefinition = [{
    ::tpu::Status $cppClass::evaluate(::top::EvalContext &ctx) {
      return ::top::evaluateCumSum(ctx, getAxis(), getExclusive(), getReverse());
    }
  }];
}

#endif // TOP_OPS_REDUCE_TD
