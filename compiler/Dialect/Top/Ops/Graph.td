// The graph boundary and constants: top.input, top.weight, top.none.
#ifndef TOP_OPS_GRAPH_TD
#define TOP_OPS_GRAPH_TD

include "compiler/Dialect/Top/TopBase.td"

def Top_InputOp : Top_Op<"input"> {
  let summary = "Marks a function argument as a named model input";
  let arguments = (ins Top_Tensor:$input);
  let results = (outs Top_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Top_WeightOp : Top_ConstantOp<"weight"> {
  let summary = "A constant tensor stored in the module's weight file under `name`";
  let arguments = (ins StrAttr:$name);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "$name attr-dict `:` type($output)";
}

def Top_NoneOp : Top_ConstantOp<"none"> {
  let summary = "An absent optional operand (e.g. a convolution without bias)";
  let results = (outs NoneType:$output);
  let assemblyFormat = "attr-dict";
}

#endif // TOP_OPS_GRAPH_TD
