// Ops on the shape only (no element moves): top.reshape, and top.shape of a
// shape that comes from the data.
#ifndef TOP_OPS_SHAPE_TD
#define TOP_OPS_SHAPE_TD

include "compiler/Dialect/Top/TopBase.td"

def Top_ReshapeOp : Top_Op<"reshape", [Top_RankAgnosticMove]> {
  let summary = "Same data, new shape (also what ONNX Flatten/Squeeze/Unsqueeze import to)";
  let arguments = (ins Top_Tensor:$input, DenseI64ArrayAttr:$shape);
  let results = (outs Top_Tensor:$output);
  let hasFolder = 1;
}

// ONNX Shape of a tensor whose shape is known only at run time (a static
// shape folds to a constant at import): dims [start, end) as i64 values.
def Top_ShapeOp : Top_IndexHostOp<"shape", "The dims [start, end) of the input's real shape, as values",
    (ins Top_Tensor:$input, I64Attr:$start, I64Attr:$end)>;

#endif // TOP_OPS_SHAPE_TD
