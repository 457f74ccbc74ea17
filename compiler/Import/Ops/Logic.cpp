// ONNX comparisons and boolean logic: Equal, Less, Greater, LessOrEqual, GreaterOrEqual,
// Not, And, Or, Xor.
#include "compiler/Import/OnnxNodeImporter.h"

using namespace mlir;

namespace tpu::onnx {

void registerLogicOps(OpTable &t) {
  t.add("Equal", binaryHandler<top::EqualOp>("Equal"), {2});
  t.add("Less", binaryHandler<top::LessOp>("Less"), {2});
  t.add("Greater", binaryHandler<top::GreaterOp>("Greater"), {2});
  // Not(c) = (c == false); a <= b = not(a > b); a >= b = not(a < b). On
  // constants, `foldName` names the ConstFold op.
  auto negated = [](const std::string &foldName, std::function<Value(Composer &, Value, Value)> base) {
    return [foldName, base](OnnxImporter &im, const Node &n) -> Status {
      if (im.allConst(n))
        return im.bindConst(n, n.inputs.size() > 1
                                   ? binaryArray(foldName, *im.constInput(n, 0), *im.constInput(n, 1))
                                   : unaryArray(foldName, *im.constInput(n, 0)));
      Composer c(im, n);
      Value cond = base(c, c.input(0), n.inputs.size() > 1 ? c.input(1) : Value());
      std::string falseName = n.outputs[0] + "_false";
      NpyArray f;
      f.dtype = "bool";
      f.data = {0};
      im.bindConst(falseName, f);
      auto fv = im.value(falseName);
      if (!fv) return fv.status();
      c.op<top::EqualOp>("", {cond, *fv});
      return c.status();
    };
  };
  t.add("Not", negated("Not", [](Composer &, Value x, Value) { return x; }));
  t.add("LessOrEqual",
        negated("LessOrEqual", [](Composer &c, Value a, Value b) { return c.op<top::GreaterOp>("greater", {a, b}); }),
        {2});
  t.add("GreaterOrEqual",
        negated("GreaterOrEqual", [](Composer &c, Value a, Value b) { return c.op<top::LessOp>("less", {a, b}); }),
        {2});
  // Boolean logic from where/equal: a and b = where(a, b, false); a or b =
  // where(a, true, b); a xor b = ((a == b) == false).
  auto logic = [](int kind) {
    return [kind](OnnxImporter &im, const Node &n) -> Status {
      if (im.allConst(n))
        return im.bindConst(n, binaryArray(kind == 0 ? "And" : kind == 1 ? "Or" : "Xor", *im.constInput(n, 0),
                                           *im.constInput(n, 1)));
      Composer c(im, n);
      Value a = c.input(0), b = c.input(1);
      auto boolConst = [&](const std::string &tag, bool v) -> Value {
        NpyArray k;
        k.dtype = "bool";
        k.data = {uint8_t(v)};
        im.bindConst(n.outputs[0] + "_" + tag, k);
        auto r = im.value(n.outputs[0] + "_" + tag);
        return r ? *r : Value();
      };
      if (kind == 0) c.op<top::WhereOp>("", {a, b, boolConst("false", false)});
      else if (kind == 1) c.op<top::WhereOp>("", {a, boolConst("true", true), b});
      else c.op<top::EqualOp>("", {c.op<top::EqualOp>("same", {a, b}), boolConst("false", false)});
      return c.status();
    };
  };
  t.add("And", logic(0), {2});
  t.add("Or", logic(1), {2});
  t.add("Xor", logic(2), {2});
}

} // namespace tpu::onnx
