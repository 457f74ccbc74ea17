// Convolutions: top.conv, top.conv_transpose.
#ifndef TOP_OPS_CONV_TD
#define TOP_OPS_CONV_TD

include "compiler/Dialect/Top/TopBase.td"

def Top_ConvOp : Top_Op<"conv", [DeclareOpInterfaceMethods<Top_BoundedOutputInterface, ["hasBoundedOutput"]>]> {
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

def Top_ConvTransposeOp : Top_Op<"conv_transpose"> {
  let summary = "1D/2D transposed convolution; filter [ic, oc/group, k...]";
  let arguments = (ins Top_Tensor:$input, Top_Tensor:$filter, Top_TensorOrNone:$bias,
    DenseI64ArrayAttr:$kernel_shape, DenseI64ArrayAttr:$strides,
    DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$dilations,
    DenseI64ArrayAttr:$output_padding,
    DefaultValuedAttr<I64Attr, "1">:$group);
  let results = (outs Top_Tensor:$output);
  let hasVerifier = 1;
}

#endif // TOP_OPS_CONV_TD
