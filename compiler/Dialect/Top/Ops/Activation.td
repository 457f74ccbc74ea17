// Element-wise functions of one tensor (activations and unary math): one
// class; each op's kernel (kernels::UnaryKind) is named by its host op.
#ifndef TOP_OPS_ACTIVATION_TD
#define TOP_OPS_ACTIVATION_TD

include "compiler/Dialect/Top/TopBase.td"

// y = f(x), kernels::unary through the host op of the same name, which reads
// the op's attributes as the kernel's a and b (kernels::unaryParams).
class Top_UnaryOp<string mnemonic, string what, dag attrs = (ins), list<Trait> traits = []>
    : Top_SameShapeOp<mnemonic, what, attrs, !listconcat(traits, [Top_Pointwise])> {
  let evaluateDefinition = [{
    ::tpu::Status $cppClass::evaluate(::top::EvalContext &ctx) { return ::top::evaluateOnHost(*this, ctx); }
  }];
}

def Top_ReluOp : Top_UnaryOp<"relu", "max(x, 0)", (ins),
    [Top_CommutesWithChannelScale, Top_FusesIntoProducer]>;
def Top_SigmoidOp : Top_UnaryOp<"sigmoid", "1 / (1 + exp(-x))", (ins), [Top_BoundedOutputInterface]>;
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
    (ins F64Attr:$min, F64Attr:$max),
    [Top_BoundedOutputInterface]>;
def Top_HardSigmoidOp : Top_UnaryOp<"hard_sigmoid", "max(0, min(1, alpha * x + beta))",
    (ins DefaultValuedAttr<F64Attr, "0.2">:$alpha, DefaultValuedAttr<F64Attr, "0.5">:$beta), [Top_BoundedOutputInterface]>;

#endif // TOP_OPS_ACTIVATION_TD
