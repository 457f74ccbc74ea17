// The Tpu dialect: BM1684 chip-level ops, one per kind the code generator
// emits (compiler/Backend/Graph.h OpKind), in fp32 or int8. This file is the
// one definition of a chip op: its operands, attributes and result, the
// back-end kind it becomes (BackendOpInterface) and its verifier.
//
// Types: an fp32 tensor is tensor<...xf32> (F16 and BF16: tensor<...xf16>, tensor<...xbf16>, BM1684X only;
// a 16-bit float op computes its fp32 form rounded once, compiler/Backend/Graph.h); an int8 activation is
// tensor<...xi8, SCALE : f32> (the encoding is its scale: real = q * SCALE,
// SCALE = threshold / 127, symmetric). Int8 weights are tensor<...xi8>, int8
// biases tensor<...xi16> (top.weight ops of the module's weight file).
// Requantization is the BM1684 one: exact integer accumulation, + int16 bias,
// (x * multiplier) where the op has one, rounding right shift `rshift`
// (half up), relu, saturation. The formulas per op are docs/quantization.md
// and docs/codegen.md; the Tpu interpreter evaluates them with
// compiler/Backend/QuantRef (the chip's arithmetic, shared with the simulator).
//
// Verification (TpuOps.cpp verifyTpuOp): the operand and result types below,
// rshift in [0, 31], multipliers that fit int32, and then the op exported on
// its own to the back end's graph and checked by Graph::validate: shapes,
// dtypes, multiplier counts and the chip's field limits are the back end's
// (one truth), so a module that verifies is one the code generator takes.
#ifndef TPU_OPS_TD
#define TPU_OPS_TD

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Tpu_Dialect : Dialect {
  let name = "tpu";
  let cppNamespace = "::tpuir";
  let summary = "BM1684 chip-level operations (fp32 and int8 with per-tensor right shift)";
}

def Tpu_BackendOpInterface : OpInterface<"BackendOpInterface"> {
  let cppNamespace = "::tpuir";
  let description = [{
    The code generator's view of a Tpu op (compiler/Backend/Graph.h): its
    back-end kind and the attributes of its backend::Op. The exporter
    (compiler/Export/TpuToGraph.cpp) adds the tensors.
  }];
  let methods = [
    StaticInterfaceMethod<"The back-end op kind this op becomes", "::tpu::backend::OpKind", "getBackendKind">,
    InterfaceMethod<"Sets the kind and attributes of `op` (not its inputs and output)", "::tpu::Status",
                    "exportAttributes", (ins "::tpu::backend::Op &":$op)>,
  ];
}

// A Tpu op: `kind` names its backend::OpKind. Its exportAttributes and
// verifier are shared (TpuOps.cpp exportAttributesOf, verifyTpuOp). An op
// whose kind has parameters of its own sets hasKindParams and defines
// exportParams, which sets them, with its kind (Export/<Kind>.cpp).
class Tpu_Op<string mnemonic, string kind, list<Trait> traits = []>
    : Op<Tpu_Dialect, mnemonic, !listconcat(traits, [Pure, Tpu_BackendOpInterface])> {
  bit hasKindParams = 0;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    static ::tpu::backend::OpKind getBackendKind() { return ::tpu::backend::OpKind::}] # kind # [{; }
    ::tpu::Status exportAttributes(::tpu::backend::Op &op);
    // The parameters of the kind's own (backend::Op::params).
    ::tpu::Status exportParams(::tpu::backend::Op &op);
  }];
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::verify() { return ::tpuir::verifyTpuOp(*this); }
    ::tpu::Status $cppClass::exportAttributes(::tpu::backend::Op &op) {
      return ::tpuir::exportAttributesOf(*this, op);
    }
  }] # !if(hasKindParams, "", [{
    ::tpu::Status $cppClass::exportParams(::tpu::backend::Op &) { return ::tpu::Status::ok(); }
  }]);
}

// Activations: fp32, or int8/uint8 with the scale as encoding.
def Tpu_Activation : RankedTensorOf<[F32, F16, BF16, I8, UI8]>;
// An activation or an int8 conv's int16 accumulator (no scale: its channels
// have scales of their own), which a per-channel affine requantizes to int8.
def Tpu_ActivationOrAccumulator : RankedTensorOf<[F32, F16, BF16, I8, UI8, I16]>;
// Weights of a weighted op: fp32 or int8 (filters), fp32 or int16 (biases).
def Tpu_Filter : RankedTensorOf<[F32, F16, BF16, I8]>;
def Tpu_OptionalBias : AnyTypeOf<[RankedTensorOf<[F32, F16, BF16, I16]>, NoneType]>;

// Shared requantization parameters: a fused relu, the int8 right shift and
// multipliers (how many each op takes: compiler/Backend/Graph.h Op).
defvar RequantAttrs = (ins DefaultValuedAttr<BoolAttr, "false">:$do_relu,
                           DefaultValuedAttr<I64Attr, "0">:$rshift,
                           DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$multipliers);

class Tpu_WindowOp<string mnemonic, string kind, string what, dag operands> : Tpu_Op<mnemonic, kind> {
  let hasKindParams = 1;
  let summary = what;
  let description = [{
    pads = [top, left, bottom, right]; the output tensor may be one row or
    column larger than floor mode gives (ceil mode: more end padding).
  }];
  let arguments = !con(operands, (ins DenseI64ArrayAttr:$kernel_shape, DenseI64ArrayAttr:$strides,
      DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$dilations,
      DefaultValuedAttr<I64Attr, "1">:$group), RequantAttrs);
  let results = (outs Tpu_Activation:$output);
}

def Tpu_ConvOp : Tpu_WindowOp<"conv", "Conv",
    "2D convolution (+ bias, relu; int8: rshift; an int16 result is the accumulator of per-channel weights, "
    "an int16 input another conv's accumulator)",
    (ins Tpu_ActivationOrAccumulator:$input, Tpu_Filter:$filter, Tpu_OptionalBias:$bias)> {
  let results = (outs Tpu_ActivationOrAccumulator:$output);
}
def Tpu_ConvTransposeOp : Tpu_WindowOp<"conv_transpose", "ConvTranspose",
    "2D transposed convolution, filter [ic, oc/group, kh, kw] (+ bias, relu; int8: rshift); the output "
    "tensor's extra end rows/columns are the output padding",
    (ins Tpu_Activation:$input, Tpu_Filter:$filter, Tpu_OptionalBias:$bias)>;
def Tpu_MaxPoolOp : Tpu_WindowOp<"max_pool", "Pool", "Max pooling (int8: same scale in and out)",
    (ins Tpu_Activation:$input)>;
def Tpu_AvgPoolOp : Tpu_WindowOp<"avg_pool", "Pool",
    "Average pooling: a window divides by the taps it covers inside the padded input (count_include_pad) "
    "or inside the input (int8: sum * multipliers[0] >> rshift, or with windows covering different tap "
    "counts one multiplier per count: multipliers[taps - 1])",
    (ins Tpu_Activation:$input, DefaultValuedAttr<BoolAttr, "true">:$count_include_pad)>;

class Tpu_SimpleOp<string mnemonic, string kind, string what, dag operands> : Tpu_Op<mnemonic, kind> {
  let summary = what;
  let arguments = !con(operands, RequantAttrs);
  let results = (outs Tpu_Activation:$output);
}

def Tpu_GlobalAvgPoolOp : Tpu_SimpleOp<"global_avg_pool", "GlobalAvgPool",
    "Mean over H and W (int8: sum * multipliers[0] >> rshift)", (ins Tpu_Activation:$input)>;
def Tpu_AddOp : Tpu_SimpleOp<"add", "Add", "lhs + rhs (int8: lhs*m0 + rhs*m1 >> rshift)",
    (ins Tpu_Activation:$lhs, Tpu_Activation:$rhs)>;
def Tpu_MulOp : Tpu_SimpleOp<"mul", "Mul", "lhs * rhs (int8: lhs*rhs*m0 >> rshift)",
    (ins Tpu_Activation:$lhs, Tpu_Activation:$rhs)>;
def Tpu_MaxOp : Tpu_SimpleOp<"max", "Max", "max(lhs, rhs) (int8: max(lhs*m0, rhs*m1) >> rshift)",
    (ins Tpu_Activation:$lhs, Tpu_Activation:$rhs)>;
def Tpu_ReluOp : Tpu_SimpleOp<"relu", "Relu", "max(x, 0) (int8: same scale)", (ins Tpu_Activation:$input)>;
def Tpu_LeakyReluOp : Tpu_SimpleOp<"leaky_relu", "LeakyRelu",
    "max(x, alpha*x) (int8: max(x, x*m0 >> rshift), same scale)",
    (ins Tpu_Activation:$input, F64Attr:$alpha)> {
  let hasKindParams = 1;
}
def Tpu_ClipOp : Tpu_SimpleOp<"clip", "Clip", "min(max(x, min), max) (int8: integer bounds)",
    (ins Tpu_Activation:$input, F64Attr:$min, F64Attr:$max)> {
  let hasKindParams = 1;
}
def Tpu_SigmoidOp : Tpu_SimpleOp<"sigmoid", "Sigmoid",
    "fp32 1 / (1 + exp(-x)) by the chip's recipe (int8: a lut)", (ins Tpu_Activation:$input)>;
def Tpu_AffineOp : Tpu_SimpleOp<"affine", "Affine",
    "x * alpha + beta (int8: x*m0 + m1 >> rshift), or with scale and bias weights of one value per "
    "channel x * scale[c] + bias[c] (int8: int16 scale, int32 bias, >> rshift; the input may be a conv's "
    "int16 accumulator)",
    (ins Tpu_ActivationOrAccumulator:$input, AnyTypeOf<[RankedTensorOf<[F32, F16, BF16, I16]>, NoneType]>:$scale,
         AnyTypeOf<[RankedTensorOf<[F32, F16, BF16, I32]>, NoneType]>:$bias, F64Attr:$alpha, F64Attr:$beta)> {
  let hasKindParams = 1;
}
def Tpu_LutOp : Tpu_SimpleOp<"lut", "Lut", "int8 table lookup: table[x] (256 entries)",
    (ins Tpu_Activation:$input, RankedTensorOf<[I8, UI8]>:$table)>;
def Tpu_FcOp : Tpu_SimpleOp<"fc", "Fc",
    "x (N, K) times weight [n_out, K]^T + bias; an input (d..., K) gives (d..., n_out) (its leading dims are "
    "the rows); with transposed_input x is (K, N) and read transposed",
    (ins Tpu_Activation:$input, Tpu_Filter:$weight, Tpu_OptionalBias:$bias,
     DefaultValuedAttr<BoolAttr, "false">:$transposed_input)> {
  let hasKindParams = 1;
}
def Tpu_ConcatOp : Tpu_SimpleOp<"concat", "Concat", "Concatenation along channels (int8: one scale)",
    (ins Variadic<Tpu_Activation>:$inputs)>;
def Tpu_UpsampleOp : Tpu_SimpleOp<"upsample", "Upsample", "Nearest upsampling by integer factors",
    (ins Tpu_Activation:$input, I64Attr:$scale_h, I64Attr:$scale_w)> {
  let hasKindParams = 1;
}
def Tpu_SliceOp : Tpu_SimpleOp<"slice", "Slice",
    "Strided slice: per dim, output element i is input element starts[d] + i * steps[d] (steps >= 1; "
    "int8: same scale)",
    (ins Tpu_Activation:$input, DenseI64ArrayAttr:$starts, DenseI64ArrayAttr:$steps)> {
  let hasKindParams = 1;
}
def Tpu_ReshapeOp : Tpu_SimpleOp<"reshape", "Reshape", "Same bytes, new shape (batch kept)",
    (ins Tpu_Activation:$input)>;
def Tpu_CastOp : Tpu_SimpleOp<"cast", "Cast",
    "fp32 -> int8 (round half to even of x / scale, saturated) or int8 -> fp32 (q * scale); fp32 <-> f16/bf16 (round to nearest even, widen)",
    (ins Tpu_Activation:$input)>;
def Tpu_RequantOp : Tpu_SimpleOp<"requant", "Requant", "int8 -> int8 with another scale: x*m0 >> rshift",
    (ins Tpu_Activation:$input)>;
def Tpu_MoveOp : Tpu_SimpleOp<"move", "Move",
    "Strided copies of input boxes into the output, after a fill with `fill` when given (int8: same scale, "
    "the fill an integer); `pieces` holds 15 values per box: input index, 4 sizes, source offset, 4 source "
    "strides, destination offset, 4 destination strides (elements of the C-order tensors)",
    (ins Variadic<Tpu_Activation>:$inputs, DenseI64ArrayAttr:$pieces, OptionalAttr<F64Attr>:$fill)> {
  let hasKindParams = 1;
}
def Tpu_ReduceOp : Tpu_SimpleOp<"reduce", "Reduce",
    "mode (sum, mean, max, min, prod, l2) over the input dims `axes`; the result holds the kept elements in "
    "C order, in any shape of that count (int8: sum and mean sum x*m0 >> rshift, max and min keep the scale; "
    "prod and l2 are fp32 only)",
    (ins Tpu_Activation:$input, StrAttr:$mode, DenseI64ArrayAttr:$axes)> {
  let hasKindParams = 1;
}
def Tpu_LayerNormOp : Tpu_SimpleOp<"layer_norm", "LayerNorm",
    "fp32 (x - mean) / sqrt(var + epsilon) over the input dims `axes`, then * scale + bias (weights of the "
    "normalized elements in C order; a bias needs a scale)",
    (ins Tpu_Activation:$input, AnyTypeOf<[RankedTensorOf<[F32, F16, BF16]>, NoneType]>:$scale,
         AnyTypeOf<[RankedTensorOf<[F32, F16, BF16]>, NoneType]>:$bias, DenseI64ArrayAttr:$axes, F64Attr:$epsilon)> {
  let hasKindParams = 1;
}
def Tpu_UnaryOp : Tpu_SimpleOp<"unary", "Unary",
    "fp32 function `function` (exp, log, tanh, erf, sin, ...; compiler/Backend/FloatKernels.h) as a program of "
    "TIU commands, parameters alpha and beta where it has them (int8: a lut)",
    (ins Tpu_Activation:$input, StrAttr:$function, DefaultValuedAttr<F64Attr, "0.0">:$alpha,
         DefaultValuedAttr<F64Attr, "0.0">:$beta)> {
  let hasKindParams = 1;
}
// Binary element-wise ops with NumPy broadcasting of either operand (int8:
// operands of the result's rank); an fp32 operand may be a weight of any
// broadcast shape.
def Tpu_SubOp : Tpu_SimpleOp<"sub", "Sub", "lhs - rhs (int8: lhs*m0 - rhs*m1 >> rshift)",
    (ins Tpu_Activation:$lhs, Tpu_Activation:$rhs)>;
def Tpu_MinOp : Tpu_SimpleOp<"min", "Min", "min(lhs, rhs) (int8: min(lhs*m0, rhs*m1) >> rshift)",
    (ins Tpu_Activation:$lhs, Tpu_Activation:$rhs)>;
def Tpu_DivOp : Tpu_SimpleOp<"div", "Div", "lhs / rhs (fp32 only)", (ins Tpu_Activation:$lhs, Tpu_Activation:$rhs)>;
def Tpu_PowOp : Tpu_SimpleOp<"pow", "Pow", "lhs ** rhs: exp(rhs * log|lhs|) with the sign of an odd integer power (fp32 only)",
    (ins Tpu_Activation:$lhs, Tpu_Activation:$rhs)>;
def Tpu_PReluOp : Tpu_SimpleOp<"prelu", "PRelu", "lhs >= 0 ? lhs : lhs * slope (fp32 only)",
    (ins Tpu_Activation:$lhs, Tpu_Activation:$slope)>;
def Tpu_ResizeOp : Tpu_SimpleOp<"resize", "Resize",
    "Resize of H and W with the ONNX mode (nearest, linear), coordinate_transformation_mode, nearest_mode "
    "and the H, W scales (int8: nearest only, same scale)",
    (ins Tpu_Activation:$input, StrAttr:$mode, StrAttr:$coordinate_transformation_mode, StrAttr:$nearest_mode,
     DenseF64ArrayAttr:$scales)> {
  let hasKindParams = 1;
}
def Tpu_GreaterOp : Tpu_SimpleOp<"greater", "Greater", "lhs > rhs as 1.0 / 0.0 (fp32 only)",
    (ins Tpu_Activation:$lhs, Tpu_Activation:$rhs)>;
def Tpu_LessOp : Tpu_SimpleOp<"less", "Less", "lhs < rhs as 1.0 / 0.0 (fp32 only)",
    (ins Tpu_Activation:$lhs, Tpu_Activation:$rhs)>;
def Tpu_EqualOp : Tpu_SimpleOp<"equal", "Equal", "lhs == rhs as 1.0 / 0.0 (fp32 only)",
    (ins Tpu_Activation:$lhs, Tpu_Activation:$rhs)>;
def Tpu_WhereOp : Tpu_SimpleOp<"where", "Where", "cond != 0 ? x : y, NumPy broadcasting (fp32 only)",
    (ins Tpu_Activation:$cond, Tpu_Activation:$x, Tpu_Activation:$y)>;
class Tpu_SoftmaxLikeOp<string mnemonic, string kind, string what>
    : Tpu_SimpleOp<mnemonic, kind, what # " over the input dims `axes` (fp32; exp and log by the kernel library)",
                   (ins Tpu_Activation:$input, DenseI64ArrayAttr:$axes)> {
  let hasKindParams = 1;
}
def Tpu_SoftmaxOp : Tpu_SoftmaxLikeOp<"softmax", "Softmax", "exp(x - max) / sum(exp(x - max))">;
def Tpu_LogSoftmaxOp : Tpu_SoftmaxLikeOp<"log_softmax", "LogSoftmax", "(x - max) - log(sum(exp(x - max)))">;
def Tpu_MatMulOp : Tpu_SimpleOp<"matmul", "MatMul",
    "lhs [..., M, K] times rhs [..., K, N], two activations with equal leading dims (fp32 only)",
    (ins Tpu_Activation:$lhs, Tpu_Activation:$rhs)>;

// An op the chip has no command for, run by the host in a CPU sub-net
// (kernels/HostOps.h): the Top op `op_name` with the Top op's attributes
// `params`, writing its result number `result` (an op of several results
// becomes one tpu.cpu per result the model reads). Tensors are fp32, or i32
// for integer ones (indices). Export/Cpu.cpp.
def Tpu_CpuOp : Op<Tpu_Dialect, "cpu", [Pure, Tpu_BackendOpInterface]> {
  let summary = "A host op, run in a CPU sub-net";
  let arguments = (ins Variadic<RankedTensorOf<[F32, I32]>>:$inputs, StrAttr:$op_name, DictionaryAttr:$params,
      DefaultValuedAttr<I64Attr, "0">:$result);
  let results = (outs RankedTensorOf<[F32, I32]>:$output);
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    static ::tpu::backend::OpKind getBackendKind() { return ::tpu::backend::OpKind::Cpu; }
    ::tpu::Status exportAttributes(::tpu::backend::Op &op);
  }];
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::verify() { return ::tpuir::verifyTpuOp(*this); }
  }];
}

#endif // TPU_OPS_TD
