// The Top dialect: framework-level tensor ops in fp32, one op per ONNX concept,
// with every "constant input" of ONNX turned into an attribute by the importer.
// This file holds what the op families (Ops/<Family>.td) share: the dialect,
// the op interfaces and traits passes ask instead of naming ops, and the op
// base classes.
#ifndef TOP_BASE_TD
#define TOP_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

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

//===----------------------------------------------------------------------===//
// Interfaces
//===----------------------------------------------------------------------===//

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

def Top_EvaluateInterface : OpInterface<"EvaluateInterface"> {
  let description = [{
    The op's fp32 reference semantics: computes its result tensors from its
    operand tensors (EvalContext.h) with the kernels of kernels. The
    Top interpreter is a loop calling it; it may trust the shapes (the
    interpreter re-checks them with the shape rule first) and returns an
    error naming the op (EvalContext::error) for what only the data shows
    (an index out of range).
  }];
  let cppNamespace = "::top";
  let methods = [
    InterfaceMethod<"Computes the results.", "::tpu::Status", "evaluate", (ins "::top::EvalContext &":$ctx)>
  ];
}

def Top_BoundedOutputInterface : OpInterface<"BoundedOutputInterface"> {
  let description = [{
    Ops whose output range the op itself bounds (sigmoid, softmax, clip, a conv
    with a relu limit). Calibration keeps such an output's observed maximum as
    its threshold: clipping it below what it reaches cuts real values (PP-OCR's
    probability map at 0.063 is an empty detection).
  }];
  let cppNamespace = "::top";
  let methods = [
    InterfaceMethod<"Whether this op's output is bounded.", "bool", "hasBoundedOutput", (ins), "",
                    "return true;">
  ];
}

//===----------------------------------------------------------------------===//
// Traits (TopTraits.h)
//===----------------------------------------------------------------------===//

class Top_Trait<string name> : NativeOpTrait<name> {
  let cppNamespace = "::top::OpTrait";
}

// The result is known before any run (a weight, an absent operand): no
// activation tensor, nothing to evaluate, calibrate or lower on its own.
def Top_Constant : Top_Trait<"Constant">;
// Only moves elements (no arithmetic) and reads its operands as C-order
// tensors of any rank: no dim is taken for N, C, H or W.
def Top_RankAgnosticMove : Top_Trait<"RankAgnosticMove">;
// The output is the operands' elements side by side: INT8 operands that feed
// only such ops share the output's scale, so the op copies bytes.
def Top_JoinsOperands : Top_Trait<"JoinsOperands">;
// f(s * x) = s * f(x) for a positive scale s per channel (axis 1), so
// cross-layer equalization may scale through the op.
def Top_CommutesWithChannelScale : Top_Trait<"CommutesWithChannelScale">;
// The chip's conv, fc and add apply it as they write their output (do_relu):
// a single-use one after such an op is fused into it (fusibleActivation).
def Top_FusesIntoProducer : Top_Trait<"FusesIntoProducer">;
// Each result element comes from the operands' elements at its index (after
// broadcasting): the op runs on any view of same-shaped operands that keeps
// the element order (a 5-D relu on a 4-D view, compiler/Lowering/FlatViews.cpp).
def Top_Pointwise : Top_Trait<"Pointwise">;

//===----------------------------------------------------------------------===//
// Op classes
//===----------------------------------------------------------------------===//

def Top_Tensor : AnyTypeOf<[AnyRankedTensor, AnyUnrankedTensor]>;
def Top_TensorOrNone : AnyTypeOf<[AnyRankedTensor, AnyUnrankedTensor, NoneType]>;

// An executable op: a shape rule and an evaluate. An op class that gives its
// ops one shape rule or one evaluate (from the kernel kind it carries) sets
// `shapeRuleDefinition` / `evaluateDefinition`; the rest are written in the
// op's family file.
class Top_Op<string mnemonic, list<Trait> traits = []>
    : Op<Top_Dialect, mnemonic, !listconcat(traits, [Pure,
        DeclareOpInterfaceMethods<Top_ShapeInferInterface>,
        DeclareOpInterfaceMethods<Top_EvaluateInterface>])> {
  code shapeRuleDefinition = "";
  code evaluateDefinition = "";
  let extraClassDefinition = shapeRuleDefinition # evaluateDefinition;
}

// A constant: the interpreter binds its value before the run.
class Top_ConstantOp<string mnemonic>
    : Op<Top_Dialect, mnemonic, [Pure, Top_Constant, DeclareOpInterfaceMethods<Top_ShapeInferInterface>]>;

// Result shape and element type equal the input's.
class Top_SameShapeOp<string mnemonic, string what, dag attrs = (ins), list<Trait> traits = []>
    : Top_Op<mnemonic, traits> {
  let summary = what;
  let arguments = !con((ins Top_Tensor:$input), attrs);
  let results = (outs Top_Tensor:$output);
  let shapeRuleDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes() { return ::top::inferSameAsInput(getOperation()); }
  }];
}

// Host ops (kernels/HostOps.h): their shape rule and evaluation are the
// host op's, so the chip path (a CPU sub-net) and the interpreter agree.
// Results have the element type of operand 0 (the data).
class Top_HostOp<string mnemonic, string what, dag args> : Top_Op<mnemonic> {
  let summary = what;
  let arguments = args;
  let results = (outs Top_Tensor:$output);
  let shapeRuleDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes() { return ::top::inferShapesOnHost(getOperation()); }
  }];
  let evaluateDefinition = [{
    ::tpu::Status $cppClass::evaluate(::top::EvalContext &ctx) { return ::top::evaluateOnHost(*this, ctx); }
  }];
}
// A host op whose results are indices (i64).
class Top_IndexHostOp<string mnemonic, string what, dag args> : Top_HostOp<mnemonic, what, args> {
  let shapeRuleDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes() {
      return ::top::inferShapesOnHost(getOperation(), ::mlir::IntegerType::get(getContext(), 64));
    }
  }];
}

#endif // TOP_BASE_TD
