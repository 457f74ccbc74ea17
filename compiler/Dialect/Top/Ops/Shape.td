// Ops on the shape only (no element moves): top.reshape.
#ifndef TOP_OPS_SHAPE_TD
#define TOP_OPS_SHAPE_TD

include "compiler/Dialect/Top/TopBase.td"

def Top_ReshapeOp : Top_Op<"reshape", [Top_RankAgnosticMove]> {
  let summary = "Same data, new shape (also what ONNX Flatten/Squeeze/Unsqueeze import to)";
  let arguments = (ins Top_Tensor:$input, DenseI64ArrayAttr:$shape);
  let results = (outs Top_Tensor:$output);
  let hasFolder = 1;
}

#endif // TOP_OPS_SHAPE_TD
