// ONNX unary math: Exp, Log, Sqrt, Neg, Abs, Reciprocal, Floor, Ceil, Erf, Round, Sign and
// the trigonometric and hyperbolic functions.
#include "compiler/Import/OnnxNodeImporter.h"

using namespace mlir;

namespace tpu::onnx {

void registerMathOps(OpTable &t) {
  t.add("Exp", unaryHandler<top::ExpOp>("Exp"));
  t.add("Log", unaryHandler<top::LogOp>("Log"));
  t.add("Sqrt", unaryHandler<top::SqrtOp>("Sqrt"));
  t.add("Neg", unaryHandler<top::NegOp>("Neg"));
  t.add("Abs", unaryHandler<top::AbsOp>("Abs"));
  t.add("Reciprocal", unaryHandler<top::ReciprocalOp>("Reciprocal"));
  t.add("Floor", unaryHandler<top::FloorOp>("Floor"));
  t.add("Ceil", unaryHandler<top::CeilOp>("Ceil"));
  t.add("Erf", unaryHandler<top::ErfOp>());
  t.add("Round", unaryHandler<top::RoundOp>("Round"));
  t.add("Sign", unaryHandler<top::SignOp>("Sign"));
  t.add("Sin", unaryHandler<top::SinOp>());
  t.add("Cos", unaryHandler<top::CosOp>());
  t.add("Tan", [](OnnxImporter &im, const Node &n) -> Status {
    Composer c(im, n);
    Value x = c.input(0);
    c.op<top::DivOp>("", {c.op<top::SinOp>("sin", {x}), c.op<top::CosOp>("cos", {x})});
    return c.status();
  });
  t.add("Sinh", [](OnnxImporter &im, const Node &n) -> Status { // (e^x - e^-x) / 2
    Composer c(im, n);
    Value x = c.input(0);
    Value ep = c.op<top::ExpOp>("exp", {x}), en = c.op<top::ExpOp>("exp_neg", {c.op<top::NegOp>("neg", {x})});
    c.op<top::MulOp>("", {c.op<top::SubOp>("diff", {ep, en}), c.scalar("half", 0.5f)});
    return c.status();
  });
  t.add("Cosh", [](OnnxImporter &im, const Node &n) -> Status { // (e^x + e^-x) / 2
    Composer c(im, n);
    Value x = c.input(0);
    Value ep = c.op<top::ExpOp>("exp", {x}), en = c.op<top::ExpOp>("exp_neg", {c.op<top::NegOp>("neg", {x})});
    c.op<top::MulOp>("", {c.op<top::AddOp>("sum", {ep, en}), c.scalar("half", 0.5f)});
    return c.status();
  });
  auto archyp = [](float sign) { // asinh: log(x + sqrt(x^2 + 1)), acosh: log(x + sqrt(x^2 - 1))
    return [sign](OnnxImporter &im, const Node &n) -> Status {
      Composer c(im, n);
      Value x = c.input(0);
      Value r = c.op<top::SqrtOp>("root", {c.op<top::AddOp>("shifted", {c.op<top::MulOp>("square", {x, x}),
                                                                         c.scalar("one", sign)})});
      c.op<top::LogOp>("", {c.op<top::AddOp>("arg", {x, r})});
      return c.status();
    };
  };
  t.add("Asinh", archyp(1.0f));
  t.add("Acosh", archyp(-1.0f));
  t.add("Atanh", [](OnnxImporter &im, const Node &n) -> Status { // log((1 + x) / (1 - x)) / 2
    Composer c(im, n);
    Value x = c.input(0), one = c.scalar("one", 1.0f);
    Value q = c.op<top::DivOp>("ratio", {c.op<top::AddOp>("num", {one, x}), c.op<top::SubOp>("den", {one, x})});
    c.op<top::MulOp>("", {c.op<top::LogOp>("log", {q}), c.scalar("half", 0.5f)});
    return c.status();
  });
}

} // namespace tpu::onnx
