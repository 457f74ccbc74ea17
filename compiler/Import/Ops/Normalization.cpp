// ONNX BatchNormalization, LayerNormalization, InstanceNormalization, LpNormalization,
// MeanVarianceNormalization.
#include "compiler/Import/OnnxNodeImporter.h"

using namespace mlir;

namespace tpu::onnx {

namespace {

// Instance normalisation: per (n, c) over the spatial dims, then scale[c], bias[c].
Status instanceNorm(OnnxImporter &im, const Node &n) {
  auto xs = im.shapeOf(n, 0);
  if (!xs) return xs.status();
  if (xs->size() < 3) return makeError(n.describe(), ": needs an input of rank >= 3");
  std::vector<int64_t> axes, param{(*xs)[1]};
  for (size_t i = 2; i < xs->size(); ++i) {
    axes.push_back(i);
    param.push_back(1);
  }
  Composer c(im, n);
  std::vector<NamedAttribute> reduce{im.ints("axes", axes), im.boolean("keepdims", true)};
  Value x = c.input(0);
  Value mean = c.op<top::ReduceMeanOp>("mean", {x}, reduce);
  Value d = c.op<top::SubOp>("centered", {x, mean});
  Value var = c.op<top::ReduceMeanOp>("variance", {c.op<top::MulOp>("square", {d, d})}, reduce);
  Value sd = c.op<top::SqrtOp>("stddev", {c.op<top::AddOp>("variance_eps", {var, c.scalar("epsilon", float(n.getFloat("epsilon", 1e-5)))})});
  Value norm = c.op<top::DivOp>("normalized", {d, sd});
  Value scale = c.reshaped(1, "scale", param), bias = c.reshaped(2, "bias", param);
  c.op<top::AddOp>("", {c.op<top::MulOp>("scaled", {norm, scale}), bias});
  return c.status();
}

// LayerNormalization whose Mean / InvStdDev outputs are used: spelled out in
// primitive ops so that those tensors exist (top.layer_norm has one result).
Status layerNormWithStatistics(OnnxImporter &im, const Node &n, int64_t axis, int64_t rank) {
  std::vector<int64_t> axes;
  for (int64_t i = axis; i < rank; ++i) axes.push_back(i);
  const std::string &out = n.outputs[0];
  auto name = [&](size_t i, const std::string &suffix) {
    return i < n.outputs.size() && !n.outputs[i].empty() ? n.outputs[i] : out + suffix;
  };
  auto x = im.operand(n, 0);
  if (!x) return x.status();
  std::vector<NamedAttribute> reduce{im.ints("axes", axes), im.boolean("keepdims", true)};
  auto step = [&](auto op, const std::string &result) -> Result<Value> {
    if (!op) return op.status();
    im.bind(result, op->getOutput());
    return op->getOutput();
  };
  auto mean = step(im.build<top::ReduceMeanOp>(n, {*x}, reduce, 1, name(1, "_mean")), name(1, "_mean"));
  if (!mean) return mean.status();
  auto centered = step(im.build<top::SubOp>(n, {*x, *mean}, {}, 1, out + "_centered"), "");
  if (!centered) return centered.status();
  auto square = step(im.build<top::MulOp>(n, {*centered, *centered}, {}, 1, out + "_square"), "");
  if (!square) return square.status();
  auto var = step(im.build<top::ReduceMeanOp>(n, {*square}, reduce, 1, out + "_variance"), "");
  if (!var) return var.status();
  std::string epsName = out + "_epsilon";
  im.bindConst(epsName, NpyArray::from<float>({}, {float(n.getFloat("epsilon", 1e-5))}));
  auto eps = im.value(epsName);
  if (!eps) return eps.status();
  auto varEps = step(im.build<top::AddOp>(n, {*var, *eps}, {}, 1, out + "_variance_eps"), "");
  if (!varEps) return varEps.status();
  auto stddev = step(im.build<top::SqrtOp>(n, {*varEps}, {}, 1, out + "_stddev"), "");
  if (!stddev) return stddev.status();
  auto inv = step(im.build<top::ReciprocalOp>(n, {*stddev}, {}, 1, name(2, "_inv_stddev")), name(2, "_inv_stddev"));
  if (!inv) return inv.status();
  bool hasBias = im.present(n, 2);
  auto normalized = step(im.build<top::MulOp>(n, {*centered, *inv}, {}, 1, out + "_normalized"), "");
  if (!normalized) return normalized.status();
  auto scale = im.operand(n, 1);
  if (!scale) return scale.status();
  auto scaled = step(im.build<top::MulOp>(n, {*normalized, *scale}, {}, 1, hasBias ? out + "_scaled" : out),
                     hasBias ? "" : out);
  if (!scaled || !hasBias) return scaled ? Status::ok() : scaled.status();
  auto bias = im.operand(n, 2);
  if (!bias) return bias.status();
  auto y = step(im.build<top::AddOp>(n, {*scaled, *bias}, {}, 1, out), out);
  return y ? Status::ok() : y.status();
}

} // namespace

void registerNormalizationOps(OpTable &t) {
  t.add("BatchNormalization", [](OnnxImporter &im, const Node &n) -> Status {
    TPU_RETURN_IF_ERROR(onlyFirstOutput(n));
    if (n.getInt("training_mode", 0)) return makeError(n.describe(), ": training_mode is not supported");
    return multiInputHandler<top::BatchNormOp>(5, 5, [](OnnxImporter &im, const Node &n) {
      return std::vector<NamedAttribute>{im.f64("epsilon", n.getFloat("epsilon", 1e-5))};
    })(im, n);
  }, {5});
  t.add("LayerNormalization", [](OnnxImporter &im, const Node &n) -> Status {
    auto xs = im.shapeOf(n, 0);
    if (!xs) return xs.status();
    auto axis = normalizeAxis(n.getInt("axis", -1), xs->size());
    if (!axis) return Status(axis.status()).prefix(n.describe());
    int64_t ax = *axis;
    if ((n.outputs.size() > 1 && !n.outputs[1].empty()) || (n.outputs.size() > 2 && !n.outputs[2].empty()))
      return layerNormWithStatistics(im, n, ax, xs->size());
    return multiInputHandler<top::LayerNormOp>(1, 3, [ax](OnnxImporter &im, const Node &n) {
      return std::vector<NamedAttribute>{im.i64("axis", ax), im.f64("epsilon", n.getFloat("epsilon", 1e-5))};
    })(im, n);
  }, {2});
  t.add("LpNormalization", [](OnnxImporter &im, const Node &n) -> Status {
    auto xs = im.shapeOf(n, 0);
    if (!xs) return xs.status();
    auto axis = normalizeAxis(n.getInt("axis", -1), xs->size());
    if (!axis) return Status(axis.status()).prefix(n.describe());
    int64_t p = n.getInt("p", 2);
    if (p != 1 && p != 2) return makeError(n.describe(), ": p must be 1 or 2");
    Composer c(im, n);
    Value x = c.input(0);
    std::vector<NamedAttribute> reduce{im.ints("axes", {*axis}), im.boolean("keepdims", true)};
    Value norm = p == 2 ? c.op<top::ReduceL2Op>("norm", {x}, reduce)
                        : c.op<top::ReduceSumOp>("norm", {c.op<top::AbsOp>("abs", {x})}, reduce);
    c.op<top::DivOp>("", {x, norm});
    return c.status();
  });
  t.add("MeanVarianceNormalization", [](OnnxImporter &im, const Node &n) -> Status { // (x - E x) / (std + 1e-9)
    auto xs = im.shapeOf(n, 0);
    if (!xs) return xs.status();
    auto axes = normalizeAxes(n.getInts("axes").value_or(std::vector<int64_t>{0, 2, 3}), xs->size());
    if (!axes) return Status(axes.status()).prefix(n.describe());
    Composer c(im, n);
    std::vector<NamedAttribute> reduce{im.ints("axes", *axes), im.boolean("keepdims", true)};
    Value x = c.input(0);
    Value d = c.op<top::SubOp>("centered", {x, c.op<top::ReduceMeanOp>("mean", {x}, reduce)});
    Value sd = c.op<top::SqrtOp>("stddev", {c.op<top::ReduceMeanOp>("variance", {c.op<top::MulOp>("square", {d, d})}, reduce)});
    c.op<top::DivOp>("", {d, c.op<top::AddOp>("stddev_eps", {sd, c.scalar("epsilon", 1e-9f)})});
    return c.status();
  });
  t.add("InstanceNormalization", instanceNorm, {3});
}

} // namespace tpu::onnx
