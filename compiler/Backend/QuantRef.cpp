#include "compiler/Backend/QuantRef.h"

#include "arith/IntArith.h"
#include "compiler/Backend/OpRegistry.h"
#include "compiler/Backend/ReferenceEval.h"
#include "kernels/Kernels.h"

namespace tpu::backend {

int64_t quantizeValue(float x, float scale, DType out) {
  float inv = 1.0f / scale;
  return sim::fp32ToInt(x * inv, refPrec(out), refSigned(out));
}

Bytes activationTable(kernels::UnaryKind kind, float a, float b, DType in, float inScale, DType out,
                      float outScale, TableAffine before, TableAffine after) {
  std::vector<float> x(256), y(256);
  for (int i = 0; i < 256; ++i) {
    float v = float(in == DType::U8 ? i : int(int8_t(uint8_t(i)))) * inScale;
    x[size_t(i)] = v * before.scale + before.shift;
  }
  kernels::unary(kind, x.data(), y.data(), 256, a, b);
  Bytes t(256);
  for (size_t i = 0; i < 256; ++i) t[i] = uint8_t(quantizeValue(y[i] * after.scale + after.shift, outScale, out));
  return t;
}

Status evalOp(const Graph &g, const Op &op, const std::vector<const Bytes *> &inputs, Bytes &out,
              std::vector<kernels::Shape> *shapes) {
  if (inputs.size() != op.inputs.size())
    return makeError(opKindName(op.kind), " '", op.name, "': ", inputs.size(), " values for ",
                     op.inputs.size(), " inputs");
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i] || inputs[i]->size() != g.tensors[op.inputs[i]].bytes())
      return makeError(opKindName(op.kind), " '", op.name, "': value of input '",
                       g.tensors[op.inputs[i]].name, "' has the wrong size");
  if (isHalfOp(g, op)) { // its fp32 form on the widened inputs, the result rounded once
    const Graph wide = widenedOp(g, op);
    std::vector<Bytes> values(inputs.size());
    std::vector<const Bytes *> in;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const DType t = g.tensors[size_t(op.inputs[i])].dtype;
      if (isHalf(t)) values[i] = widenHalf(*inputs[i], t);
      in.push_back(isHalf(t) ? &values[i] : inputs[i]);
    }
    Bytes wideOut;
    TPU_RETURN_IF_ERROR(evalOp(wide, wide.ops[0], in, wideOut, nullptr));
    out = roundToHalf(wideOut, g.tensors[size_t(op.output)].dtype);
    return Status::ok();
  }
  const OpImpl &impl = opImpl(op.kind);
  if (impl.runsOnHost()) {
    RefArgs args(g, op, inputs);
    args.shapes = shapes;
    Status st = impl.evaluateOnHost(args, out);
    return st ? st : st.prefix(std::string(opKindName(op.kind)) + " '" + op.name + "'");
  }
  impl.evaluate(RefArgs(g, op, inputs), out);
  return Status::ok();
}

Result<std::vector<Bytes>> evalGraph(const Graph &g, const std::vector<Bytes> &inputs,
                                     std::vector<kernels::Shape> *shapes) {
  TPU_RETURN_IF_ERROR(g.validate());
  if (inputs.size() != g.inputs.size())
    return makeError("graph '", g.name, "' has ", g.inputs.size(), " inputs, ", inputs.size(), " values given");
  std::vector<Bytes> values(g.tensors.size());
  for (size_t t = 0; t < g.tensors.size(); ++t)
    if (g.tensors[t].isWeight()) values[t] = g.tensors[t].data;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor &t = g.tensors[g.inputs[i]];
    if (inputs[i].size() != t.bytes())
      return makeError("input '", t.name, "': ", inputs[i].size(), " bytes, ", t.bytes(), " expected");
    values[g.inputs[i]] = inputs[i];
  }
  std::vector<kernels::Shape> real;
  for (const Tensor &t : g.tensors) real.push_back(t.shape);
  for (const Op &op : g.ops) {
    std::vector<const Bytes *> in;
    for (int t : op.inputs) in.push_back(&values[t]);
    TPU_RETURN_IF_ERROR(evalOp(g, op, in, values[op.output], &real));
  }
  if (shapes) *shapes = std::move(real);
  return values;
}

} // namespace tpu::backend
