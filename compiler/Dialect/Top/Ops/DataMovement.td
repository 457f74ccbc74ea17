// Ops that move elements: top.permute, top.concat, top.split, top.slice,
// top.pad, top.gather, top.expand, top.tile, top.depth_to_space.
#ifndef TOP_OPS_DATA_MOVEMENT_TD
#define TOP_OPS_DATA_MOVEMENT_TD

include "compiler/Dialect/Top/TopBase.td"

def Top_PermuteOp : Top_Op<"permute", [Top_RankAgnosticMove]> {
  let summary = "Transpose: output dim i is input dim order[i]";
  let arguments = (ins Top_Tensor:$input, DenseI64ArrayAttr:$order);
  let results = (outs Top_Tensor:$output);
  let hasFolder = 1;
}

def Top_ConcatOp : Top_Op<"concat", [Top_RankAgnosticMove, Top_JoinsOperands]> {
  let summary = "Concatenation along a non-negative axis";
  let arguments = (ins Variadic<Top_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Top_Tensor:$output);
}

def Top_SplitOp : Top_Op<"split", [Top_RankAgnosticMove]> {
  let summary = "Splits along axis into pieces of the given sizes";
  let arguments = (ins Top_Tensor:$input, I64Attr:$axis, DenseI64ArrayAttr:$split);
  let results = (outs Variadic<Top_Tensor>:$outputs);
}

def Top_SliceOp : Top_Op<"slice", [Top_RankAgnosticMove]> {
  let summary = "Strided slice, one (start, end, step) per dim, already clamped";
  let description = [{
    For step > 0: 0 <= start <= end <= dim. For step < 0: -1 <= end <= start <= dim-1
    (end = -1 means "through index 0"). Output size = max(0, ceil((end - start) / step)).
  }];
  let arguments = (ins Top_Tensor:$input, DenseI64ArrayAttr:$starts,
    DenseI64ArrayAttr:$ends, DenseI64ArrayAttr:$steps);
  let results = (outs Top_Tensor:$output);
}

def Top_PadOp : Top_Op<"pad", [Top_RankAgnosticMove]> {
  let summary = "Pads with pads = [begins..., ends...]; mode constant, reflect or edge";
  let arguments = (ins Top_Tensor:$input, DenseI64ArrayAttr:$pads,
    DefaultValuedAttr<StrAttr, "\"constant\"">:$mode,
    DefaultValuedAttr<F64Attr, "0.0">:$value);
  let results = (outs Top_Tensor:$output);
  let hasVerifier = 1;
}

def Top_GatherOp : Top_Op<"gather", [Top_RankAgnosticMove]> {
  let summary = "numpy.take(input, indices, axis); negative indices count from the end";
  let arguments = (ins Top_Tensor:$input, Top_Tensor:$indices, I64Attr:$axis);
  let results = (outs Top_Tensor:$output);
}

def Top_GatherElementsOp : Top_HostOp<"gather_elements",
    "ONNX GatherElements: the output has the indices' shape, the index picks along axis",
    (ins Top_Tensor:$input, Top_Tensor:$indices, I64Attr:$axis)>;
def Top_GatherNDOp : Top_HostOp<"gather_nd", "ONNX GatherND: index tuples pick slices (after batch_dims)",
    (ins Top_Tensor:$input, Top_Tensor:$indices, DefaultValuedAttr<I64Attr, "0">:$batch_dims)>;
def Top_ScatterNDOp : Top_HostOp<"scatter_nd",
    "ONNX ScatterND: data with the slices the index tuples name updated (reduction none, add, mul, max, min)",
    (ins Top_Tensor:$input, Top_Tensor:$indices, Top_Tensor:$updates,
         DefaultValuedAttr<StrAttr, "\"none\"">:$reduction)>;
def Top_ScatterElementsOp : Top_HostOp<"scatter_elements",
    "ONNX ScatterElements: data with each update written where its index points along axis",
    (ins Top_Tensor:$input, Top_Tensor:$indices, Top_Tensor:$updates, I64Attr:$axis,
         DefaultValuedAttr<StrAttr, "\"none\"">:$reduction)>;

// ONNX NonZero: the coordinates of the non-zero elements, [rank, count];
// the count comes from the data (docs/codegen.md "Shapes from the data").
def Top_NonZeroOp : Top_IndexHostOp<"nonzero", "Coordinates of the non-zero elements, one row per dim (i64)",
    (ins Top_Tensor:$input)>;

// ONNX Squeeze and Unsqueeze on the host, for a tensor whose shape comes from
// the data (elsewhere they import as top.reshape): the shape rule works on
// the real shape at run time.
def Top_SqueezeOp : Top_HostOp<"squeeze", "Drops the dims of size 1 at axes (all of them without axes), on the host",
    (ins Top_Tensor:$input, DenseI64ArrayAttr:$axes)>;
def Top_UnsqueezeOp : Top_HostOp<"unsqueeze", "Inserts dims of size 1 at axes, on the host",
    (ins Top_Tensor:$input, DenseI64ArrayAttr:$axes)>;
// ONNX Reshape to a shape tensor computed at run time (a Shape of a tensor
// whose shape comes from the data): `bound` is the shape at the bounds.
def Top_DynamicReshapeOp : Top_HostOp<"dynamic_reshape", "ONNX Reshape to a shape computed at run time, on the host",
    (ins Top_Tensor:$input, Top_Tensor:$shape, DenseI64ArrayAttr:$bound,
         DefaultValuedAttr<BoolAttr, "false">:$allowzero)>;
// ONNX ConstantOfShape of a shape computed at run time (a Shape of a tensor
// whose shape comes from the data; a constant shape folds at import):
// `bound` is the shape at the bounds, `value` the fill, an i64 result when
// `integer`.
def Top_ConstantOfShapeOp : Top_HostOp<"constant_of_shape",
    "ONNX ConstantOfShape: a tensor of the shape given at run time filled with value, on the host",
    (ins Top_Tensor:$shape, DenseI64ArrayAttr:$bound, F64Attr:$value,
         DefaultValuedAttr<BoolAttr, "false">:$integer)> {
  let shapeRuleDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes() {
      return ::top::inferShapesOnHost(getOperation(), getInteger() ? ::mlir::Type(::mlir::IntegerType::get(getContext(), 64))
                                                                  : ::mlir::Type(::mlir::Float32Type::get(getContext())));
    }
  }];
}
def Top_FlattenOp : Top_HostOp<"flatten", "ONNX Flatten: the dims before axis and from axis each as one, on the host",
    (ins Top_Tensor:$input, I64Attr:$axis)>;

def Top_ExpandOp : Top_Op<"expand", [Top_RankAgnosticMove]> {
  let summary = "Broadcasts input to the broadcast of its shape and `shape`";
  let arguments = (ins Top_Tensor:$input, DenseI64ArrayAttr:$shape);
  let results = (outs Top_Tensor:$output);
}

def Top_TileOp : Top_Op<"tile", [Top_RankAgnosticMove]> {
  let summary = "Repeats the input `repeats[i]` times along dim i";
  let arguments = (ins Top_Tensor:$input, DenseI64ArrayAttr:$repeats);
  let results = (outs Top_Tensor:$output);
}

def Top_DepthToSpaceOp : Top_Op<"depth_to_space"> {
  let summary = "NCHW rearrangement of channel blocks into space (mode DCR or CRD)";
  let arguments = (ins Top_Tensor:$input, I64Attr:$blocksize,
    DefaultValuedAttr<StrAttr, "\"DCR\"">:$mode);
  let results = (outs Top_Tensor:$output);
}

#endif // TOP_OPS_DATA_MOVEMENT_TD
