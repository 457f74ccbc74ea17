// Element-wise functions of one tensor (activations and unary math): one
// class, the kernel each op is (kernels::UnaryKind) named in its def.
#ifndef TOP_OPS_ACTIVATION_TD
#define TOP_OPS_ACTIVATION_TD

include "compiler/Dialect/Top/TopBase.td"

// y = kernels::unary(UnaryKind::<kernel>, x, a, b); `params` are the op's
// attributes that the kernel takes as a, b.
class Top_UnaryOp<string mnemonic, string kernel, string what, dag attrs = (ins), string params = "",
                  list<Trait> traits = []>
    : Top_SameShapeOp<mnemonic, what, attrs, traits> {
  let evaluateDefinition = [{
    ::tpu::Status $cppClass::evaluate(::top::EvalContext &ctx) {
      return ::top::evaluateUnary(ctx, ::tpu::kernels::UnaryKind::}] # kernel # !if(!empty(params), "", ", " # params)
      # [{);
    }
  }];
}

def Top_ReluOp : Top_UnaryOp<"relu", "Relu", "max(x, 0)", (ins), "",
    [Top_CommutesWithChannelScale, Top_FusesIntoProducer]>;
def Top_SigmoidOp : Top_UnaryOp<"sigmoid", "Sigmoid", "1 / (1 + exp(-x))", (ins), "", [Top_BoundedOutputInterface]>;
def Top_SiLUOp : Top_UnaryOp<"silu", "SiLU", "x * sigmoid(x)">;
def Top_TanhOp : Top_UnaryOp<"tanh", "Tanh", "tanh(x)">;
def Top_GeluOp : Top_UnaryOp<"gelu", "Gelu", "0.5 * x * (1 + erf(x / sqrt(2)))">;
def Top_ExpOp : Top_UnaryOp<"exp", "Exp", "exp(x)">;
def Top_LogOp : Top_UnaryOp<"log", "Log", "natural logarithm">;
def Top_SqrtOp : Top_UnaryOp<"sqrt", "Sqrt", "square root">;
def Top_NegOp : Top_UnaryOp<"neg", "Neg", "-x">;
def Top_AbsOp : Top_UnaryOp<"abs", "Abs", "|x|">;
def Top_ReciprocalOp : Top_UnaryOp<"reciprocal", "Reciprocal", "1 / x">;
def Top_ErfOp : Top_UnaryOp<"erf", "Erf", "error function">;
def Top_FloorOp : Top_UnaryOp<"floor", "Floor", "round towards -inf">;
def Top_CeilOp : Top_UnaryOp<"ceil", "Ceil", "round towards +inf">;
def Top_RoundOp : Top_UnaryOp<"round", "Round", "round half to even">;
def Top_SignOp : Top_UnaryOp<"sign", "Sign", "-1, 0 or 1">;
def Top_SoftplusOp : Top_UnaryOp<"softplus", "Softplus", "log(1 + exp(x))">;
def Top_SoftsignOp : Top_UnaryOp<"softsign", "Softsign", "x / (1 + |x|)">;
def Top_MishOp : Top_UnaryOp<"mish", "Mish", "x * tanh(softplus(x))">;
def Top_SinOp : Top_UnaryOp<"sin", "Sin", "sine">;
def Top_CosOp : Top_UnaryOp<"cos", "Cos", "cosine">;
def Top_HardSwishOp : Top_UnaryOp<"hard_swish", "HardSwish", "x * max(0, min(1, x / 6 + 0.5))">;
def Top_LeakyReluOp : Top_UnaryOp<"leaky_relu", "LeakyRelu", "x >= 0 ? x : alpha * x",
    (ins DefaultValuedAttr<F64Attr, "0.01">:$alpha), "getAlpha().convertToDouble()">;
def Top_EluOp : Top_UnaryOp<"elu", "Elu", "x >= 0 ? x : alpha * (exp(x) - 1)",
    (ins DefaultValuedAttr<F64Attr, "1.0">:$alpha), "getAlpha().convertToDouble()">;
def Top_ClipOp : Top_UnaryOp<"clip", "Clip", "min(max(x, min), max)",
    (ins F64Attr:$min, F64Attr:$max), "getMin().convertToDouble(), getMax().convertToDouble()",
    [Top_BoundedOutputInterface]>;
def Top_HardSigmoidOp : Top_UnaryOp<"hard_sigmoid", "HardSigmoid", "max(0, min(1, alpha * x + beta))",
    (ins DefaultValuedAttr<F64Attr, "0.2">:$alpha, DefaultValuedAttr<F64Attr, "0.5">:$beta),
    "getAlpha().convertToDouble(), getBeta().convertToDouble()", [Top_BoundedOutputInterface]>;

#endif // TOP_OPS_ACTIVATION_TD
