// The Tpu dialect: BM1684 chip-level ops, one per kind the code generator
// emits (compiler/Backend/Graph.h OpKind), in fp32 or int8.
//
// Types: an fp32 tensor is tensor<...xf32>; an int8 activation is
// tensor<...xi8, SCALE : f32> (the encoding is its scale: real = q * SCALE,
// SCALE = threshold / 127, symmetric). Int8 weights are tensor<...xi8>, int8
// biases tensor<...xi16> (top.weight ops of the module's weight file).
// Requantization is the BM1684 one: exact integer accumulation, + int16 bias,
// (x * multiplier) where the op has one, rounding right shift `rshift`
// (half up), relu, saturation. The formulas per op are docs/quantization.md
// and docs/codegen.md; the Tpu interpreter evaluates them with
// compiler/Backend/QuantRef (the chip's arithmetic, shared with the simulator).
#ifndef TPU_OPS_TD
#define TPU_OPS_TD

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Tpu_Dialect : Dialect {
  let name = "tpu";
  let cppNamespace = "::tpuir";
  let summary = "BM1684 chip-level operations (fp32 and int8 with per-tensor right shift)";
}

class Tpu_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tpu_Dialect, mnemonic, !listconcat(traits, [Pure])>;

def Tpu_Tensor : AnyTypeOf<[AnyRankedTensor]>;
def Tpu_TensorOrNone : AnyTypeOf<[AnyRankedTensor, NoneType]>;

// Shared int8 requantization parameters.
defvar RequantAttrs = (ins DefaultValuedAttr<I64Attr, "0">:$rshift,
                           DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$multipliers);

class Tpu_WindowOp<string mnemonic, string what, dag extra> : Tpu_Op<mnemonic> {
  let summary = what;
  let description = [{
    pads = [top, left, bottom, right]; the output tensor may be one row or
    column larger than floor mode gives (ceil mode: more end padding).
  }];
  let arguments = !con(extra, (ins DenseI64ArrayAttr:$kernel_shape, DenseI64ArrayAttr:$strides,
      DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$dilations,
      DefaultValuedAttr<I64Attr, "1">:$group,
      DefaultValuedAttr<BoolAttr, "false">:$do_relu), RequantAttrs);
  let results = (outs Tpu_Tensor:$output);
}

def Tpu_ConvOp : Tpu_WindowOp<"conv", "2D convolution (+ bias, relu; int8: rshift)",
    (ins Tpu_Tensor:$input, Tpu_Tensor:$filter, Tpu_TensorOrNone:$bias)>;
def Tpu_ConvTransposeOp : Tpu_WindowOp<"conv_transpose",
    "2D transposed convolution, filter [ic, oc, kh, kw], group 1 (+ bias, relu; int8: rshift); the output "
    "tensor's extra end rows/columns are the output padding",
    (ins Tpu_Tensor:$input, Tpu_Tensor:$filter, Tpu_TensorOrNone:$bias)>;
def Tpu_MaxPoolOp : Tpu_WindowOp<"max_pool", "Max pooling (int8: same scale in and out)",
    (ins Tpu_Tensor:$input)>;
def Tpu_AvgPoolOp : Tpu_WindowOp<"avg_pool",
    "Average pooling (padding counts; int8: sum * multipliers[0] >> rshift)", (ins Tpu_Tensor:$input)>;

class Tpu_SimpleOp<string mnemonic, string what, dag operands> : Tpu_Op<mnemonic> {
  let summary = what;
  let arguments = !con(operands, (ins DefaultValuedAttr<BoolAttr, "false">:$do_relu), RequantAttrs);
  let results = (outs Tpu_Tensor:$output);
}

def Tpu_GlobalAvgPoolOp : Tpu_SimpleOp<"global_avg_pool",
    "Mean over H and W (int8: sum * multipliers[0] >> rshift)", (ins Tpu_Tensor:$input)>;
def Tpu_AddOp : Tpu_SimpleOp<"add", "lhs + rhs (int8: lhs*m0 + rhs*m1 >> rshift)",
    (ins Tpu_Tensor:$lhs, Tpu_Tensor:$rhs)>;
def Tpu_MulOp : Tpu_SimpleOp<"mul", "lhs * rhs (int8: lhs*rhs*m0 >> rshift)",
    (ins Tpu_Tensor:$lhs, Tpu_Tensor:$rhs)>;
def Tpu_MaxOp : Tpu_SimpleOp<"max", "max(lhs, rhs) (int8: max(lhs*m0, rhs*m1) >> rshift)",
    (ins Tpu_Tensor:$lhs, Tpu_Tensor:$rhs)>;
def Tpu_ReluOp : Tpu_SimpleOp<"relu", "max(x, 0) (int8: same scale)", (ins Tpu_Tensor:$input)>;
def Tpu_LeakyReluOp : Tpu_SimpleOp<"leaky_relu",
    "max(x, alpha*x) (int8: max(x, x*m0 >> rshift), same scale)",
    (ins Tpu_Tensor:$input, F64Attr:$alpha)>;
def Tpu_ClipOp : Tpu_SimpleOp<"clip", "min(max(x, min), max) (int8: integer bounds)",
    (ins Tpu_Tensor:$input, F64Attr:$min, F64Attr:$max)>;
def Tpu_SigmoidOp : Tpu_SimpleOp<"sigmoid", "fp32 1 / (1 + exp(-x)) by the chip's recipe (int8: a lut)",
    (ins Tpu_Tensor:$input)>;
def Tpu_AffineOp : Tpu_SimpleOp<"affine",
    "x * alpha + beta (int8: x*m0 + m1 >> rshift), or with scale and bias weights of one value per "
    "channel x * scale[c] + bias[c] (int8: int16 scale, int32 bias, >> rshift)",
    (ins Tpu_Tensor:$input, Tpu_TensorOrNone:$scale, Tpu_TensorOrNone:$bias, F64Attr:$alpha, F64Attr:$beta)>;
def Tpu_LutOp : Tpu_SimpleOp<"lut", "int8 table lookup: table[x] (256 entries)",
    (ins Tpu_Tensor:$input, Tpu_Tensor:$table)>;
def Tpu_FcOp : Tpu_SimpleOp<"fc", "x (N, K) times weight [n_out, K]^T + bias",
    (ins Tpu_Tensor:$input, Tpu_Tensor:$weight, Tpu_TensorOrNone:$bias)>;
def Tpu_ConcatOp : Tpu_SimpleOp<"concat", "Concatenation along channels (int8: one scale)",
    (ins Variadic<Tpu_Tensor>:$inputs)>;
def Tpu_UpsampleOp : Tpu_SimpleOp<"upsample", "Nearest upsampling by integer factors",
    (ins Tpu_Tensor:$input, I64Attr:$scale_h, I64Attr:$scale_w)>;
def Tpu_ReshapeOp : Tpu_SimpleOp<"reshape", "Same bytes, new shape (batch kept)",
    (ins Tpu_Tensor:$input)>;
def Tpu_CastOp : Tpu_SimpleOp<"cast",
    "fp32 -> int8 (round half to even of x / scale, saturated) or int8 -> fp32 (q * scale)",
    (ins Tpu_Tensor:$input)>;
def Tpu_RequantOp : Tpu_SimpleOp<"requant", "int8 -> int8 with another scale: x*m0 >> rshift",
    (ins Tpu_Tensor:$input)>;

#endif // TPU_OPS_TD
