// ONNX binary arithmetic with numpy broadcasting (Add, Sum, Sub, Mul, Div, Max, Min, Pow,
// Mean, Mod), Where, Cast and CastLike. On constant inputs they fold; integer Div and Mod
// round as ONNX says.
#include "compiler/Dialect/Top/WeightStore.h"
#include "compiler/Import/OnnxNodeImporter.h"

using namespace mlir;

namespace tpu::onnx {

namespace {

// Input 0 as the Top dtype `dtype`.
Status castTo(OnnxImporter &im, const Node &n, const std::string &dtype) {
  if (const NpyArray *c = im.constInput(n, 0)) {
    im.bindConst(n.outputs[0], castArray(*c, dtype));
    return Status::ok();
  }
  auto x = im.operand(n, 0);
  if (!x) return x.status();
  Type to = import::elementTypeOf(&im.ctx(), dtype);
  if (cast<TensorType>(x->getType()).getElementType() == to) {
    im.alias(n.outputs[0], n.inputs[0]);
    return Status::ok();
  }
  return unary<top::CastOp>(im, n, {im.attr("to", TypeAttr::get(to))});
}

Status castNode(OnnxImporter &im, const Node &n) {
  std::string dtype = topDtypeOf(int(n.getInt("to", 0)));
  if (dtype.empty()) return makeError(n.describe(), ": cast to ONNX type ", n.getInt("to", 0), " is not supported");
  return castTo(im, n, dtype);
}

// CastLike: to the element type of input 1.
Status castLikeNode(OnnxImporter &im, const Node &n) {
  if (const NpyArray *like = im.constInput(n, 1)) return castTo(im, n, like->dtype);
  auto like = im.operand(n, 1);
  if (!like) return like.status();
  return castTo(im, n, top::dtypeOfElement(cast<TensorType>(like->getType()).getElementType()));
}

bool isInteger(Value v) { return isa<IntegerType>(cast<TensorType>(v.getType()).getElementType()); }

// Integer Div rounds toward zero (ONNX, C): the float quotient of the
// operands as float32, then a cast to i64 (which truncates). Integers up to
// 2^24 are exact in float32, and so is their quotient's integer part.
Status divNode(OnnxImporter &im, const Node &n) {
  if (im.allConst(n)) return binaryHandler<top::DivOp>("Div")(im, n);
  Composer c(im, n);
  Value a = c.input(0), b = c.input(1);
  if (!a || !b) return c.status();
  if (!isInteger(a) || !isInteger(b)) return binaryHandler<top::DivOp>("Div")(im, n);
  Value q = c.op<top::DivOp>("quotient", {c.asF32(0, "lhs_f32"), c.asF32(1, "rhs_f32")});
  c.op<top::CastOp>("", {q}, {im.attr("to", TypeAttr::get(im.b().getI64Type()))});
  return c.status();
}

// Mod folds on constants (shape arithmetic such as padding a size up to a
// multiple). On integer tensors it is a - b * q, q the quotient rounded
// toward -inf (the remainder has the divisor's sign) or, with fmod, toward
// zero (the dividend's sign). A float remainder at run time is refused: that
// formula is not exact on floats.
Status modNode(OnnxImporter &im, const Node &n) {
  bool fmod = n.getInt("fmod", 0) != 0;
  if (im.allConst(n)) {
    if (!fmod && !im.constInput(n, 0)->is<int64_t>()) return makeError(n.describe(), ": Mod of floats needs fmod=1");
    return im.bindConst(n, binaryArray(fmod ? "Fmod" : "Mod", *im.constInput(n, 0), *im.constInput(n, 1)));
  }
  Composer c(im, n);
  Value a = c.input(0), b = c.input(1);
  if (!a || !b) return c.status();
  if (!isInteger(a) || !isInteger(b))
    return makeError(n.describe(), ": Mod of float tensors computed at run time is not supported (integers are)");
  Value q = c.op<top::DivOp>("quotient", {c.asF32(0, "lhs_f32"), c.asF32(1, "rhs_f32")});
  auto i64 = im.attr("to", TypeAttr::get(im.b().getI64Type()));
  Value whole = c.op<top::CastOp>("whole", {fmod ? q : c.op<top::FloorOp>("floor", {q})}, {i64});
  c.op<top::SubOp>("", {a, c.op<top::MulOp>("multiple", {b, whole})});
  return c.status();
}

} // namespace

void registerElementwiseOps(OpTable &t) {
  t.add("Cast", castNode);
  t.add("CastLike", castLikeNode, {2});
  t.add("Mod", modNode, {2});
  t.add("Add", binaryHandler<top::AddOp>("Add"), {2});
  t.add("Sum", binaryHandler<top::AddOp>("Add"));
  t.add("Sub", binaryHandler<top::SubOp>("Sub"), {2});
  t.add("Mul", binaryHandler<top::MulOp>("Mul"), {2});
  t.add("Div", divNode, {2});
  t.add("Max", binaryHandler<top::MaxOp>("Max"));
  t.add("Min", binaryHandler<top::MinOp>("Min"));
  t.add("Pow", binaryHandler<top::PowOp>("Pow"), {2});
  t.add("Mean", [](OnnxImporter &im, const Node &n) -> Status {
    Node sum = n, scale = n;
    sum.outputs = {n.outputs[0] + "_sum"};
    TPU_RETURN_IF_ERROR(binaryHandler<top::AddOp>("Add")(im, sum));
    std::string factor = n.outputs[0] + "_scale";
    im.bindConst(factor, NpyArray::from<float>({}, {1.0f / float(n.inputs.size())}));
    scale.inputs = {sum.outputs[0], factor};
    return binaryHandler<top::MulOp>("Mul")(im, scale);
  });
  t.add("Where", [](OnnxImporter &im, const Node &n) -> Status {
    if (im.allConst(n))
      return im.bindConst(n, whereArray(*im.constInput(n, 0), *im.constInput(n, 1), *im.constInput(n, 2)));
    return multiInputHandler<top::WhereOp>(3, 3)(im, n);
  }, {3});
}

} // namespace tpu::onnx
