// Matrix products: top.matmul, top.gemm.
#ifndef TOP_OPS_GEMM_TD
#define TOP_OPS_GEMM_TD

include "compiler/Dialect/Top/TopBase.td"

def Top_MatMulOp : Top_Op<"matmul"> {
  let summary = "numpy.matmul semantics (batch dims broadcast, 1-D operands promoted)";
  let arguments = (ins Top_Tensor:$a, Top_Tensor:$b);
  let results = (outs Top_Tensor:$output);
}

def Top_GemmOp : Top_Op<"gemm"> {
  let summary = "alpha * op(A) * op(B) + beta * C, C broadcast to [M, N]";
  let arguments = (ins Top_Tensor:$a, Top_Tensor:$b, Top_TensorOrNone:$c,
    DefaultValuedAttr<F64Attr, "1.0">:$alpha, DefaultValuedAttr<F64Attr, "1.0">:$beta,
    DefaultValuedAttr<BoolAttr, "false">:$transA, DefaultValuedAttr<BoolAttr, "false">:$transB);
  let results = (outs Top_Tensor:$output);
}

#endif // TOP_OPS_GEMM_TD
