// The Top dialect: framework-level tensor ops in fp32, one op per ONNX concept,
// with every "constant input" of ONNX turned into an attribute by the importer.
#ifndef TOP_BASE_TD
#define TOP_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Top_Dialect : Dialect {
  let name = "top";
  let cppNamespace = "::top";
  let summary = "Framework-level tensor operations (fp32 reference semantics)";
  let description = [{
    Tensors are ranked f32 (i64 for index tensors, i1 for conditions). Constant
    tensors are `top.weight` ops naming an entry of the weight file (an .npz
    named by the module attribute `top.weight_file`), never inlined data.
  }];
  // Structural rewrites (no weight changes) live in TopCanonicalize.cpp.
  let hasCanonicalizer = 1;
}

def Top_ShapeInferInterface : OpInterface<"ShapeInferInterface"> {
  let description = [{
    Computes the result types from the operand types and the attributes and
    stores them on the results. Fails (with an error on the op) when operand
    shapes or attributes are inconsistent. The importer and the shape
    inference pass both call this; it is the only shape rule of an op.
  }];
  let cppNamespace = "::top";
  let methods = [
    InterfaceMethod<"Infers and sets the result types.", "::mlir::LogicalResult", "inferShapes">
  ];
}

class Top_Op<string mnemonic, list<Trait> traits = []>
    : Op<Top_Dialect, mnemonic, !listconcat(traits, [
        DeclareOpInterfaceMethods<Top_ShapeInferInterface>])>;

def Top_Tensor : AnyTypeOf<[AnyRankedTensor, AnyUnrankedTensor]>;
def Top_TensorOrNone : AnyTypeOf<[AnyRankedTensor, AnyUnrankedTensor, NoneType]>;

#endif // TOP_BASE_TD
