// Control flow: top.if, ONNX If whose condition is known only at run time.
#ifndef TOP_OPS_CONTROL_FLOW_TD
#define TOP_OPS_CONTROL_FLOW_TD

include "compiler/Dialect/Top/TopBase.td"

// Both branches are imported and computed (ONNX ops have no side effects);
// this op passes on the value of the branch `cond` takes. That value's shape
// is the branch's, so it comes from the data: the type holds either (docs/
// codegen.md "Shapes from the data"), and only host ops read it. `values` are
// the then and the else value, in that order; a branch whose value is an
// empty constant (torchvision's "no boxes" branch) has its shape in
// then_empty or else_empty instead, since no tensor in DDR can be empty.
// Results have the element type of the values.
def Top_IfOp : Top_HostOp<"if", "The then value where cond (one value) holds, else the else value",
    (ins Top_Tensor:$cond, Variadic<Top_Tensor>:$values, OptionalAttr<DenseI64ArrayAttr>:$then_empty,
         OptionalAttr<DenseI64ArrayAttr>:$else_empty)> {
  let shapeRuleDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes() {
      const size_t want = 2 - size_t(getThenEmpty().has_value()) - size_t(getElseEmpty().has_value());
      if (want == 0 || getValues().size() != want)
        return emitOpError() << "needs " << want << " branch values (besides the empty ones), has " << getValues().size();
      auto t = ::mlir::dyn_cast<::mlir::RankedTensorType>(getValues()[0].getType());
      if (!t) return emitOpError() << "a branch value has no shape";
      return ::top::inferShapesOnHost(getOperation(), t.getElementType());
    }
  }];
}

#endif // TOP_OPS_CONTROL_FLOW_TD
