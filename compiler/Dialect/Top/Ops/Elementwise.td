// Element-wise ops of several tensors with numpy broadcasting (top.add ...
// top.greater in one class), and
// top.where, top.cast.
#ifndef TOP_OPS_ELEMENTWISE_TD
#define TOP_OPS_ELEMENTWISE_TD

include "compiler/Dialect/Top/TopBase.td"

// y = lhs <op> rhs, both broadcast (kernels::binary, through the host op of
// the same name); a comparison has an i1 result.
class Top_BinaryOp<string mnemonic, string what, bit isCompare = 0> : Top_Op<mnemonic, [Top_Pointwise]> {
  let summary = what;
  let arguments = (ins Top_Tensor:$lhs, Top_Tensor:$rhs);
  let results = (outs Top_Tensor:$output);
  let shapeRuleDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes() {
      return ::top::inferBroadcast(getOperation(), }] # !if(isCompare, "true", "false") # [{);
    }
  }];
  let evaluateDefinition = [{
    ::tpu::Status $cppClass::evaluate(::top::EvalContext &ctx) { return ::top::evaluateOnHost(*this, ctx); }
  }];
}

def Top_AddOp : Top_BinaryOp<"add", "lhs + rhs">;
def Top_SubOp : Top_BinaryOp<"sub", "lhs - rhs">;
def Top_MulOp : Top_BinaryOp<"mul", "lhs * rhs">;
def Top_DivOp : Top_BinaryOp<"div", "lhs / rhs">;
def Top_MaxOp : Top_BinaryOp<"max", "max(lhs, rhs)">;
def Top_MinOp : Top_BinaryOp<"min", "min(lhs, rhs)">;
def Top_PowOp : Top_BinaryOp<"pow", "lhs ** rhs">;
def Top_PReluOp : Top_BinaryOp<"prelu", "lhs >= 0 ? lhs : rhs * lhs (rhs is the slope)">;
def Top_EqualOp : Top_BinaryOp<"equal", "lhs == rhs (i1 result)", 1>;
def Top_LessOp : Top_BinaryOp<"less", "lhs < rhs (i1 result)", 1>;
def Top_GreaterOp : Top_BinaryOp<"greater", "lhs > rhs (i1 result)", 1>;

def Top_WhereOp : Top_Op<"where"> {
  let summary = "cond ? x : y with three-way broadcasting";
  let arguments = (ins Top_Tensor:$cond, Top_Tensor:$x, Top_Tensor:$y);
  let results = (outs Top_Tensor:$output);
}

def Top_CastOp : Top_Op<"cast"> {
  let summary = "Converts the element type to `to` (f32, i64 or i1)";
  let arguments = (ins Top_Tensor:$input, TypeAttr:$to);
  let results = (outs Top_Tensor:$output);
}

#endif // TOP_OPS_ELEMENTWISE_TD
