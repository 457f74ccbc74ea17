// ONNX binary arithmetic with numpy broadcasting (Add, Sum, Sub, Mul, Div, Max, Min, Pow,
// Mean, Mod), Where, Cast and CastLike. On constant inputs they fold.
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

// Mod has no Top op: it is folded where it computes on constants (shape
// arithmetic such as padding a size up to a multiple).
Status modNode(OnnxImporter &im, const Node &n) {
  if (!im.allConst(n))
    return makeError(n.describe(), ": Mod of run-time tensors is not supported (only constant inputs, such as ",
                     "shape arithmetic, are folded)");
  bool fmod = n.getInt("fmod", 0) != 0;
  if (!fmod && !im.constInput(n, 0)->is<int64_t>())
    return makeError(n.describe(), ": Mod of floats needs fmod=1");
  return im.bindConst(n, binaryArray(fmod ? "Fmod" : "Mod", *im.constInput(n, 0), *im.constInput(n, 1)));
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
  t.add("Div", binaryHandler<top::DivOp>("Div"), {2});
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
