// ONNX activations: Relu, Sigmoid, Tanh, Softplus, Softsign, HardSwish, LeakyRelu, Elu,
// HardSigmoid, Clip, PRelu, Selu, Celu, ThresholdedRelu, Shrink, Softmax, LogSoftmax.
#include "compiler/Import/OnnxNodeImporter.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace tpu::onnx {

namespace {

// Softmax/LogSoftmax: before opset 13 the input is viewed as 2-D at `axis`.
template <typename OpT> OpHandler softmaxHandler() {
  return [](OnnxImporter &im, const Node &n) -> Status {
    auto xs = im.shapeOf(n, 0);
    if (!xs) return xs.status();
    int64_t rank = xs->size();
    auto axis = normalizeAxis(n.getInt("axis", im.opset() >= 13 ? -1 : 1), rank);
    if (!axis) return Status(axis.status()).prefix(n.describe());
    bool lastAxis = *axis == rank - 1;
    if (im.opset() >= 13 || lastAxis) return unary<OpT>(im, n, {im.i64("axis", *axis)});
    auto x = im.operand(n, 0);
    if (!x) return x.status();
    auto flat = im.build<top::ReshapeOp>(n, {*x}, {im.ints("shape", flattenShape(*xs, *axis))}, 1,
                                         n.outputs[0] + "_2d");
    if (!flat) return flat.status();
    auto sm = im.build<OpT>(n, {flat->getOutput()}, {im.i64("axis", 1)}, 1, n.outputs[0] + "_2d_out");
    if (!sm) return sm.status();
    auto back = im.build<top::ReshapeOp>(n, {sm->getOutput()}, {im.ints("shape", *xs)});
    return back ? Status::ok() : back.status();
  };
}

// Clip whose min or max is computed at run time: max(x, min), then
// min(., max) (ONNX: a min above the max gives the max), NumPy broadcasting.
Status clipByTensors(OnnxImporter &im, const Node &n) {
  Composer c(im, n);
  Value v = c.input(0);
  const bool hasMax = im.present(n, 2);
  if (im.present(n, 1)) v = c.op<top::MaxOp>(hasMax ? "above_min" : "", {v, c.input(1)});
  if (hasMax) v = c.op<top::MinOp>("", {v, c.input(2)});
  return c.status();
}

Status clip(OnnxImporter &im, const Node &n) {
  double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
  if (im.opset() < 11) {
    lo = n.getFloat("min", lo);
    hi = n.getFloat("max", hi);
  } else if ((im.present(n, 1) && !im.constInput(n, 1)) || (im.present(n, 2) && !im.constInput(n, 2))) {
    return clipByTensors(im, n);
  } else {
    if (im.present(n, 1)) {
      auto v = im.constFloats(n, 1, "min");
      if (!v) return v.status();
      lo = v->at(0);
    }
    if (im.present(n, 2)) {
      auto v = im.constFloats(n, 2, "max");
      if (!v) return v.status();
      hi = v->at(0);
    }
  }
  if (const NpyArray *c = im.constInput(n, 0)) { // shape arithmetic: a clamped size
    auto bound = [&](double v) {
      return c->is<int64_t>() ? NpyArray::from<int64_t>({}, {int64_t(v)}) : NpyArray::from<float>({}, {float(v)});
    };
    Result<NpyArray> r = *c;
    if (std::isfinite(lo)) r = binaryArray("Max", *r, bound(lo));
    if (r && std::isfinite(hi)) r = binaryArray("Min", *r, bound(hi));
    return im.bindConst(n, std::move(r));
  }
  return unary<top::ClipOp>(im, n, {im.f64("min", lo), im.f64("max", hi)});
}

} // namespace

void registerActivationOps(OpTable &t) {
  t.add("Relu", unaryHandler<top::ReluOp>("Relu"));
  t.add("Sigmoid", unaryHandler<top::SigmoidOp>("Sigmoid"));
  t.add("Tanh", unaryHandler<top::TanhOp>("Tanh"));
  t.add("Softplus", unaryHandler<top::SoftplusOp>());
  t.add("Softsign", unaryHandler<top::SoftsignOp>());
  t.add("Mish", unaryHandler<top::MishOp>());
  t.add("HardSwish", unaryHandler<top::HardSwishOp>());
  t.add("LeakyRelu", [](OnnxImporter &im, const Node &n) {
    return unary<top::LeakyReluOp>(im, n, {im.f64("alpha", n.getFloat("alpha", 0.01))});
  });
  t.add("Elu", [](OnnxImporter &im, const Node &n) {
    return unary<top::EluOp>(im, n, {im.f64("alpha", n.getFloat("alpha", 1.0))});
  });
  t.add("HardSigmoid", [](OnnxImporter &im, const Node &n) {
    return unary<top::HardSigmoidOp>(im, n,
                                     {im.f64("alpha", n.getFloat("alpha", 0.2)), im.f64("beta", n.getFloat("beta", 0.5))});
  });
  t.add("Clip", clip);
  t.add("Softmax", softmaxHandler<top::SoftmaxOp>());
  t.add("LogSoftmax", softmaxHandler<top::LogSoftmaxOp>());
  t.add("PRelu", binaryHandler<top::PReluOp>(""), {2});
  t.add("Selu", [](OnnxImporter &im, const Node &n) -> Status {
    Composer c(im, n);
    Value elu = c.op<top::EluOp>("elu", {c.input(0)}, {im.f64("alpha", n.getFloat("alpha", 1.67326319217681884765625))});
    c.op<top::MulOp>("", {elu, c.scalar("gamma", float(n.getFloat("gamma", 1.05070102214813232421875)))});
    return c.status();
  });
  t.add("Celu", [](OnnxImporter &im, const Node &n) -> Status {
    float alpha = float(n.getFloat("alpha", 1.0));
    if (alpha == 0) return makeError(n.describe(), ": alpha must not be 0");
    Composer c(im, n);
    Value scaled = c.op<top::DivOp>("scaled", {c.input(0), c.scalar("alpha", alpha)});
    Value elu = c.op<top::EluOp>("elu", {scaled}, {im.f64("alpha", 1.0)});
    c.op<top::MulOp>("", {elu, c.scalar("alpha_out", alpha)});
    return c.status();
  });
  t.add("ThresholdedRelu", [](OnnxImporter &im, const Node &n) -> Status {
    Composer c(im, n);
    Value x = c.input(0);
    Value above = c.op<top::GreaterOp>("above", {x, c.scalar("alpha", float(n.getFloat("alpha", 1.0)))});
    c.op<top::WhereOp>("", {above, x, c.scalar("zero", 0.0f)});
    return c.status();
  });
  t.add("Shrink", [](OnnxImporter &im, const Node &n) -> Status {
    float lambd = float(n.getFloat("lambd", 0.5)), bias = float(n.getFloat("bias", 0.0));
    Composer c(im, n);
    Value x = c.input(0);
    Value low = c.op<top::LessOp>("below", {x, c.scalar("neg_lambd", -lambd)});
    Value high = c.op<top::GreaterOp>("above", {x, c.scalar("lambd", lambd)});
    Value up = c.op<top::AddOp>("raised", {x, c.scalar("bias", bias)});
    Value down = c.op<top::SubOp>("lowered", {x, c.scalar("bias_sub", bias)});
    Value inner = c.op<top::WhereOp>("upper", {high, down, c.scalar("zero", 0.0f)});
    c.op<top::WhereOp>("", {low, up, inner});
    return c.status();
  });
}

} // namespace tpu::onnx
