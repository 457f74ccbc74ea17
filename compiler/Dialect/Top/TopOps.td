// Top dialect operations. Conventions (the importer normalises ONNX to these):
// - every attribute is explicit and full length (pads = [begins..., ends...],
//   axes non-negative and sorted), so consumers never re-derive ONNX defaults;
// - constant ONNX inputs (shapes, scales, pads, axes, clip bounds) are attributes;
// - each result's location is the ONNX tensor name (loc("name")).
#ifndef TOP_OPS_TD
#define TOP_OPS_TD

include "compiler/Dialect/Top/TopBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Graph boundary and constants
//===----------------------------------------------------------------------===//

def Top_InputOp : Top_Op<"input", [Pure]> {
  let summary = "Marks a function argument as a named model input";
  let arguments = (ins Top_Tensor:$input);
  let results = (outs Top_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Top_WeightOp : Top_Op<"weight", [Pure]> {
  let summary = "A constant tensor stored in the module's weight file under `name`";
  let arguments = (ins StrAttr:$name);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "$name attr-dict `:` type($output)";
}

def Top_NoneOp : Top_Op<"none", [Pure]> {
  let summary = "An absent optional operand (e.g. a convolution without bias)";
  let results = (outs NoneType:$output);
  let assemblyFormat = "attr-dict";
}

//===----------------------------------------------------------------------===//
// Convolution, normalisation, matrix products
//===----------------------------------------------------------------------===//

def Top_ConvOp : Top_Op<"conv", [Pure]> {
  let summary = "1D/2D convolution (NCH / NCHW), optional fused ReLU";
  let description = [{
    filter: [oc, ic/group, k...]; bias: [oc] or none. pads = [begins..., ends...].
    do_relu applies max(x, 0) and, if relu_limit >= 0, min(x, relu_limit).
  }];
  let arguments = (ins Top_Tensor:$input, Top_Tensor:$filter, Top_TensorOrNone:$bias,
    DenseI64ArrayAttr:$kernel_shape, DenseI64ArrayAttr:$strides,
    DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$dilations,
    DefaultValuedAttr<I64Attr, "1">:$group,
    DefaultValuedAttr<BoolAttr, "false">:$do_relu,
    DefaultValuedAttr<F64Attr, "-1.0">:$relu_limit);
  let results = (outs Top_Tensor:$output);
  let hasVerifier = 1;
}

def Top_ConvTransposeOp : Top_Op<"conv_transpose", [Pure]> {
  let summary = "1D/2D transposed convolution; filter [ic, oc/group, k...]";
  let arguments = (ins Top_Tensor:$input, Top_Tensor:$filter, Top_TensorOrNone:$bias,
    DenseI64ArrayAttr:$kernel_shape, DenseI64ArrayAttr:$strides,
    DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$dilations,
    DenseI64ArrayAttr:$output_padding,
    DefaultValuedAttr<I64Attr, "1">:$group);
  let results = (outs Top_Tensor:$output);
  let hasVerifier = 1;
}

def Top_BatchNormOp : Top_Op<"batch_norm", [Pure]> {
  let summary = "Inference batch normalisation over channel axis 1";
  let arguments = (ins Top_Tensor:$input, Top_Tensor:$scale, Top_Tensor:$bias,
    Top_Tensor:$mean, Top_Tensor:$variance,
    DefaultValuedAttr<F64Attr, "1e-5">:$epsilon);
  let results = (outs Top_Tensor:$output);
}

def Top_LayerNormOp : Top_Op<"layer_norm", [Pure]> {
  let summary = "Normalises over dims [axis, rank), then scale and bias";
  let arguments = (ins Top_Tensor:$input, Top_TensorOrNone:$scale, Top_TensorOrNone:$bias,
    I64Attr:$axis, DefaultValuedAttr<F64Attr, "1e-5">:$epsilon);
  let results = (outs Top_Tensor:$output);
}

def Top_MatMulOp : Top_Op<"matmul", [Pure]> {
  let summary = "numpy.matmul semantics (batch dims broadcast, 1-D operands promoted)";
  let arguments = (ins Top_Tensor:$a, Top_Tensor:$b);
  let results = (outs Top_Tensor:$output);
}

def Top_GemmOp : Top_Op<"gemm", [Pure]> {
  let summary = "alpha * op(A) * op(B) + beta * C, C broadcast to [M, N]";
  let arguments = (ins Top_Tensor:$a, Top_Tensor:$b, Top_TensorOrNone:$c,
    DefaultValuedAttr<F64Attr, "1.0">:$alpha, DefaultValuedAttr<F64Attr, "1.0">:$beta,
    DefaultValuedAttr<BoolAttr, "false">:$transA, DefaultValuedAttr<BoolAttr, "false">:$transB);
  let results = (outs Top_Tensor:$output);
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

// Result shape and element type equal the input's.
class Top_UnaryOp<string mnemonic, string what, dag attrs = (ins)>
    : Top_Op<mnemonic, [Pure]> {
  let summary = what;
  let arguments = !con((ins Top_Tensor:$input), attrs);
  let results = (outs Top_Tensor:$output);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes() { return ::top::inferSameAsInput(getOperation()); }
  }];
}

def Top_ReluOp : Top_UnaryOp<"relu", "max(x, 0)">;
def Top_SigmoidOp : Top_UnaryOp<"sigmoid", "1 / (1 + exp(-x))">;
def Top_SiLUOp : Top_UnaryOp<"silu", "x * sigmoid(x)">;
def Top_TanhOp : Top_UnaryOp<"tanh", "tanh(x)">;
def Top_GeluOp : Top_UnaryOp<"gelu", "0.5 * x * (1 + erf(x / sqrt(2)))">;
def Top_ExpOp : Top_UnaryOp<"exp", "exp(x)">;
def Top_LogOp : Top_UnaryOp<"log", "natural logarithm">;
def Top_SqrtOp : Top_UnaryOp<"sqrt", "square root">;
def Top_NegOp : Top_UnaryOp<"neg", "-x">;
def Top_AbsOp : Top_UnaryOp<"abs", "|x|">;
def Top_ReciprocalOp : Top_UnaryOp<"reciprocal", "1 / x">;
def Top_ErfOp : Top_UnaryOp<"erf", "error function">;
def Top_FloorOp : Top_UnaryOp<"floor", "round towards -inf">;
def Top_CeilOp : Top_UnaryOp<"ceil", "round towards +inf">;
def Top_RoundOp : Top_UnaryOp<"round", "round half to even">;
def Top_SignOp : Top_UnaryOp<"sign", "-1, 0 or 1">;
def Top_SoftplusOp : Top_UnaryOp<"softplus", "log(1 + exp(x))">;
def Top_SoftsignOp : Top_UnaryOp<"softsign", "x / (1 + |x|)">;
def Top_MishOp : Top_UnaryOp<"mish", "x * tanh(softplus(x))">;
def Top_SinOp : Top_UnaryOp<"sin", "sine">;
def Top_CosOp : Top_UnaryOp<"cos", "cosine">;
def Top_HardSwishOp : Top_UnaryOp<"hard_swish", "x * max(0, min(1, x / 6 + 0.5))">;
def Top_LeakyReluOp : Top_UnaryOp<"leaky_relu", "x >= 0 ? x : alpha * x",
    (ins DefaultValuedAttr<F64Attr, "0.01">:$alpha)>;
def Top_EluOp : Top_UnaryOp<"elu", "x >= 0 ? x : alpha * (exp(x) - 1)",
    (ins DefaultValuedAttr<F64Attr, "1.0">:$alpha)>;
def Top_ClipOp : Top_UnaryOp<"clip", "min(max(x, min), max)",
    (ins F64Attr:$min, F64Attr:$max)>;
def Top_HardSigmoidOp : Top_UnaryOp<"hard_sigmoid", "max(0, min(1, alpha * x + beta))",
    (ins DefaultValuedAttr<F64Attr, "0.2">:$alpha, DefaultValuedAttr<F64Attr, "0.5">:$beta)>;
def Top_SoftmaxOp : Top_UnaryOp<"softmax", "exp(x) / sum(exp(x)) along axis",
    (ins I64Attr:$axis)>;
def Top_LogSoftmaxOp : Top_UnaryOp<"log_softmax", "log(softmax(x)) along axis",
    (ins I64Attr:$axis)>;

def Top_CastOp : Top_Op<"cast", [Pure]> {
  let summary = "Converts the element type to `to` (f32, i64 or i1)";
  let arguments = (ins Top_Tensor:$input, TypeAttr:$to);
  let results = (outs Top_Tensor:$output);
}

// numpy broadcasting of both operands.
class Top_BinaryOp<string mnemonic, string what, bit isCompare = 0>
    : Top_Op<mnemonic, [Pure]> {
  let summary = what;
  let arguments = (ins Top_Tensor:$lhs, Top_Tensor:$rhs);
  let results = (outs Top_Tensor:$output);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes() {
      return ::top::inferBroadcast(getOperation(), }] # !if(isCompare, "true", "false") # [{);
    }
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

def Top_WhereOp : Top_Op<"where", [Pure]> {
  let summary = "cond ? x : y with three-way broadcasting";
  let arguments = (ins Top_Tensor:$cond, Top_Tensor:$x, Top_Tensor:$y);
  let results = (outs Top_Tensor:$output);
}

//===----------------------------------------------------------------------===//
// Pooling and reductions
//===----------------------------------------------------------------------===//

class Top_PoolOp<string mnemonic, string what> : Top_Op<mnemonic, [Pure]> {
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
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes() { return ::top::inferPool(getOperation()); }
    ::mlir::LogicalResult $cppClass::verify() { return ::top::verifyWindowAttrs(getOperation()); }
  }];
}

def Top_MaxPoolOp : Top_PoolOp<"max_pool", "Max pooling (count_include_pad unused)">;
def Top_AvgPoolOp : Top_PoolOp<"avg_pool", "Average pooling">;

class Top_GlobalPoolOp<string mnemonic, string what> : Top_Op<mnemonic, [Pure]> {
  let summary = what;
  let arguments = (ins Top_Tensor:$input);
  let results = (outs Top_Tensor:$output);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes() { return ::top::inferGlobalPool(getOperation()); }
  }];
}

def Top_GlobalAvgPoolOp : Top_GlobalPoolOp<"global_avg_pool", "Mean over all spatial dims (keeps them as 1)">;
def Top_GlobalMaxPoolOp : Top_GlobalPoolOp<"global_max_pool", "Max over all spatial dims (keeps them as 1)">;

class Top_ReduceOp<string mnemonic, string what> : Top_Op<mnemonic, [Pure]> {
  let summary = what;
  let arguments = (ins Top_Tensor:$input, DenseI64ArrayAttr:$axes,
    DefaultValuedAttr<BoolAttr, "true">:$keepdims);
  let results = (outs Top_Tensor:$output);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes() {
      return ::top::inferReduce(getOperation(), getAxes(), getKeepdims());
    }
  }];
}

def Top_ReduceMeanOp : Top_ReduceOp<"reduce_mean", "Mean over axes (sorted, non-negative)">;
def Top_ReduceSumOp : Top_ReduceOp<"reduce_sum", "Sum over axes">;
def Top_ReduceMaxOp : Top_ReduceOp<"reduce_max", "Max over axes">;
def Top_ReduceMinOp : Top_ReduceOp<"reduce_min", "Min over axes">;
def Top_ReduceProdOp : Top_ReduceOp<"reduce_prod", "Product over axes">;
def Top_ReduceL2Op : Top_ReduceOp<"reduce_l2", "sqrt(sum(x^2)) over axes">;

class Top_ArgReduceOp<string mnemonic, string what> : Top_Op<mnemonic, [Pure]> {
  let summary = what;
  let arguments = (ins Top_Tensor:$input, I64Attr:$axis,
    DefaultValuedAttr<BoolAttr, "true">:$keepdims,
    DefaultValuedAttr<BoolAttr, "false">:$select_last_index);
  let results = (outs Top_Tensor:$output);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes() { return ::top::inferArgReduce(getOperation(), getAxis(), getKeepdims()); }
  }];
}

def Top_ArgMaxOp : Top_ArgReduceOp<"arg_max", "Index of the max along axis (i64 result)">;
def Top_ArgMinOp : Top_ArgReduceOp<"arg_min", "Index of the min along axis (i64 result)">;

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Top_ReshapeOp : Top_Op<"reshape", [Pure]> {
  let summary = "Same data, new shape (also what ONNX Flatten/Squeeze/Unsqueeze import to)";
  let arguments = (ins Top_Tensor:$input, DenseI64ArrayAttr:$shape);
  let results = (outs Top_Tensor:$output);
  let hasFolder = 1;
}

def Top_PermuteOp : Top_Op<"permute", [Pure]> {
  let summary = "Transpose: output dim i is input dim order[i]";
  let arguments = (ins Top_Tensor:$input, DenseI64ArrayAttr:$order);
  let results = (outs Top_Tensor:$output);
  let hasFolder = 1;
}

def Top_ConcatOp : Top_Op<"concat", [Pure]> {
  let summary = "Concatenation along a non-negative axis";
  let arguments = (ins Variadic<Top_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Top_Tensor:$output);
}

def Top_SplitOp : Top_Op<"split", [Pure]> {
  let summary = "Splits along axis into pieces of the given sizes";
  let arguments = (ins Top_Tensor:$input, I64Attr:$axis, DenseI64ArrayAttr:$split);
  let results = (outs Variadic<Top_Tensor>:$outputs);
}

def Top_SliceOp : Top_Op<"slice", [Pure]> {
  let summary = "Strided slice, one (start, end, step) per dim, already clamped";
  let description = [{
    For step > 0: 0 <= start <= end <= dim. For step < 0: -1 <= end <= start <= dim-1
    (end = -1 means "through index 0"). Output size = max(0, ceil((end - start) / step)).
  }];
  let arguments = (ins Top_Tensor:$input, DenseI64ArrayAttr:$starts,
    DenseI64ArrayAttr:$ends, DenseI64ArrayAttr:$steps);
  let results = (outs Top_Tensor:$output);
}

def Top_PadOp : Top_Op<"pad", [Pure]> {
  let summary = "Pads with pads = [begins..., ends...]; mode constant, reflect or edge";
  let arguments = (ins Top_Tensor:$input, DenseI64ArrayAttr:$pads,
    DefaultValuedAttr<StrAttr, "\"constant\"">:$mode,
    DefaultValuedAttr<F64Attr, "0.0">:$value);
  let results = (outs Top_Tensor:$output);
  let hasVerifier = 1;
}

def Top_ResizeOp : Top_Op<"resize", [Pure]> {
  let summary = "Nearest or linear resize of any dims";
  let description = [{
    `scales` (one per dim) drive the coordinate transform x_in = f(x_out, scale);
    `sizes`, when not empty, is the output shape, else out = floor(in * scale).
    coordinate_transformation_mode: half_pixel, asymmetric, align_corners,
    pytorch_half_pixel; nearest_mode: round_prefer_floor, round_prefer_ceil,
    floor, ceil.
  }];
  let arguments = (ins Top_Tensor:$input,
    DefaultValuedAttr<StrAttr, "\"nearest\"">:$mode,
    DefaultValuedAttr<StrAttr, "\"half_pixel\"">:$coordinate_transformation_mode,
    DefaultValuedAttr<StrAttr, "\"round_prefer_floor\"">:$nearest_mode,
    DenseF64ArrayAttr:$scales, DenseI64ArrayAttr:$sizes);
  let results = (outs Top_Tensor:$output);
  let hasVerifier = 1;
}

def Top_GatherOp : Top_Op<"gather", [Pure]> {
  let summary = "numpy.take(input, indices, axis); negative indices count from the end";
  let arguments = (ins Top_Tensor:$input, Top_Tensor:$indices, I64Attr:$axis);
  let results = (outs Top_Tensor:$output);
}

def Top_ExpandOp : Top_Op<"expand", [Pure]> {
  let summary = "Broadcasts input to the broadcast of its shape and `shape`";
  let arguments = (ins Top_Tensor:$input, DenseI64ArrayAttr:$shape);
  let results = (outs Top_Tensor:$output);
}

def Top_TileOp : Top_Op<"tile", [Pure]> {
  let summary = "Repeats the input `repeats[i]` times along dim i";
  let arguments = (ins Top_Tensor:$input, DenseI64ArrayAttr:$repeats);
  let results = (outs Top_Tensor:$output);
}

def Top_DepthToSpaceOp : Top_Op<"depth_to_space", [Pure]> {
  let summary = "NCHW rearrangement of channel blocks into space (mode DCR or CRD)";
  let arguments = (ins Top_Tensor:$input, I64Attr:$blocksize,
    DefaultValuedAttr<StrAttr, "\"DCR\"">:$mode);
  let results = (outs Top_Tensor:$output);
}

#endif // TOP_OPS_TD
