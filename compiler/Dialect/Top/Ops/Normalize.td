// Normalisation: top.batch_norm, top.layer_norm, top.softmax, top.log_softmax.
#ifndef TOP_OPS_NORMALIZE_TD
#define TOP_OPS_NORMALIZE_TD

include "compiler/Dialect/Top/TopBase.td"

def Top_BatchNormOp : Top_Op<"batch_norm"> {
  let summary = "Inference batch normalisation over channel axis 1";
  let arguments = (ins Top_Tensor:$input, Top_Tensor:$scale, Top_Tensor:$bias,
    Top_Tensor:$mean, Top_Tensor:$variance,
    DefaultValuedAttr<F64Attr, "1e-5">:$epsilon);
  let results = (outs Top_Tensor:$output);
}

def Top_LayerNormOp : Top_Op<"layer_norm"> {
  let summary = "Normalises over dims [axis, rank), then scale and bias";
  let arguments = (ins Top_Tensor:$input, Top_TensorOrNone:$scale, Top_TensorOrNone:$bias,
    I64Attr:$axis, DefaultValuedAttr<F64Attr, "1e-5">:$epsilon);
  let results = (outs Top_Tensor:$output);
}

// kernels::softmax along `axis`, of the log with `log`.
class Top_SoftmaxKindOp<string mnemonic, string what, bit log, list<Trait> traits = []>
    : Top_SameShapeOp<mnemonic, what, (ins I64Attr:$axis), traits> {
  let evaluateDefinition = [{
    ::tpu::Status $cppClass::evaluate(::top::EvalContext &ctx) {
      return ::top::evaluateSoftmax(ctx, getAxis(), }] # !if(log, "true", "false") # [{);
    }
  }];
}

def Top_SoftmaxOp : Top_SoftmaxKindOp<"softmax", "exp(x) / sum(exp(x)) along axis", 0,
    [Top_BoundedOutputInterface]>;
def Top_LogSoftmaxOp : Top_SoftmaxKindOp<"log_softmax", "log(softmax(x)) along axis", 1>;

#endif // TOP_OPS_NORMALIZE_TD
