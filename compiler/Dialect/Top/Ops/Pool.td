// Pooling: top.max_pool, top.avg_pool (one class, the kernel named in the
// def), top.global_avg_pool, top.global_max_pool.
#ifndef TOP_OPS_POOL_TD
#define TOP_OPS_POOL_TD

include "compiler/Dialect/Top/TopBase.td"

// kernels::pool2d(PoolKind::<kernel>) over the window attributes.
class Top_PoolOp<string mnemonic, string kernel, string what, list<Trait> traits = []>
    : Top_Op<mnemonic, traits> {
  let summary = what;
  let description = [{
    Output size per spatial dim: floor or ceil((in + pb + pe - ((k-1)*d + 1)) / s) + 1;
    in ceil mode a window that would start inside the end padding is dropped.
  }];
  let arguments = (ins Top_Tensor:$input,
    DenseI64ArrayAttr:$kernel_shape, DenseI64ArrayAttr:$strides,
    DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$dilations,
    DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
    DefaultValuedAttr<BoolAttr, "false">:$count_include_pad);
  let results = (outs Top_Tensor:$output);
  let hasVerifier = 1;
  let shapeRuleDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes() { return ::top::inferPool(*this); }
    ::mlir::LogicalResult $cppClass::verify() { return ::top::verifyPool(*this); }
  }];
  let evaluateDefinition = [{
    ::tpu::Status $cppClass::evaluate(::top::EvalContext &ctx) {
      return ::top::evaluatePool(ctx, ::tpu::kernels::PoolKind::}] # kernel # [{, *this);
    }
  }];
}

def Top_MaxPoolOp : Top_PoolOp<"max_pool", "Max", "Max pooling (count_include_pad unused)",
    [Top_CommutesWithChannelScale]>;
def Top_AvgPoolOp : Top_PoolOp<"avg_pool", "Avg", "Average pooling">;

// kernels::globalPool(PoolKind::<kernel>) over all spatial dims.
class Top_GlobalPoolOp<string mnemonic, string kernel, string what> : Top_Op<mnemonic> {
  let summary = what;
  let arguments = (ins Top_Tensor:$input);
  let results = (outs Top_Tensor:$output);
  let shapeRuleDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes() { return ::top::inferGlobalPool(getOperation()); }
  }];
  let evaluateDefinition = [{
    ::tpu::Status $cppClass::evaluate(::top::EvalContext &ctx) {
      return ::top::evaluateGlobalPool(ctx, ::tpu::kernels::PoolKind::}] # kernel # [{);
    }
  }];
}

def Top_GlobalAvgPoolOp : Top_GlobalPoolOp<"global_avg_pool", "Avg",
    "Mean over all spatial dims (keeps them as 1)">;
def Top_GlobalMaxPoolOp : Top_GlobalPoolOp<"global_max_pool", "Max",
    "Max over all spatial dims (keeps them as 1)">;

#endif // TOP_OPS_POOL_TD
