#include "compiler/Backend/OpValidation.h"
#include "compiler/Backend/Ops/Window.h"

#include <algorithm>
#include <string>

namespace tpu::backend {

namespace {
// int16 activations reach only the kinds that take them (Graph::validate).
bool integerActivation(DType t) { return isInt8Like(t) || t == DType::I16; }
} // namespace

OpCheck::OpCheck(const Graph &graph, const Op &o)
    : g(graph), op(o), y(graph.tensors[size_t(o.output)]), ys(y.nchw()), int8(integerActivation(y.dtype)) {}

Status OpCheck::needInputs(size_t lo, size_t hi) const {
  if (op.inputs.size() < lo || op.inputs.size() > hi)
    return makeError("takes ", lo == hi ? "" : "between ", lo, hi == lo ? "" : " and ",
                     hi == lo ? "" : std::to_string(hi), " inputs, has ", op.inputs.size());
  return Status::ok();
}

Status OpCheck::needMultipliers(size_t n) const {
  if (int8 && op.multipliers.size() != n)
    return makeError("int8 needs ", n, " multiplier(s), has ", op.multipliers.size());
  return Status::ok();
}

Status OpCheck::sameType(const Tensor &t) const {
  if (integerActivation(t.dtype) != int8)
    return makeError("input '", t.name, "' is ", dtypeName(t.dtype), " but the output is ", dtypeName(y.dtype));
  return Status::ok();
}

Status OpCheck::unaryInput() const {
  TPU_RETURN_IF_ERROR(needInputs(1, 1));
  TPU_RETURN_IF_ERROR(sameType(in(0)));
  if (in(0).nchw() != ys) return makeError("input and output shapes differ");
  return Status::ok();
}

Status OpCheck::weightType(const Tensor &w, const char *what) const {
  // Computed at run time (an activation): fp32 only; the int8 forms need
  // weights quantized at compile time.
  if (!w.isWeight() && (int8 || w.dtype != DType::F32))
    return makeError("weight '", w.name, "' is computed at run time: a ", what, " reads it in fp32 only");
  if (int8 != isInt8Like(w.dtype) || (!int8 && w.dtype != DType::F32))
    return makeError("weight '", w.name, "' dtype ", dtypeName(w.dtype), " does not fit a ", dtypeName(y.dtype), " ",
                     what);
  return Status::ok();
}

Status OpCheck::optionalBias(size_t i) const {
  if (op.inputs.size() <= i) return Status::ok();
  const Tensor &b = in(i);
  // fp32 biases may be computed at run time (read from DDR like a weight).
  if ((!b.isWeight() && int8) || b.numel() != ys[1] || b.dtype != (int8 ? DType::I16 : DType::F32))
    return makeError("bias '", b.name, "' must be a ", int8 ? "int16 weight" : "float32 tensor", " of ", ys[1],
                     " elements");
  return Status::ok();
}

Status fitsInt16(int32_t multiplier) {
  if (multiplier < -32768 || multiplier > 32767) return makeError("multiplier ", multiplier, " does not fit int16");
  return Status::ok();
}

Status checkWindow(const OpCheck &c, const Tensor &x, bool fieldLimits) {
  const WindowParams &w = c.op.params<WindowParams>();
  auto xs = x.nchw();
  const auto &ys = c.ys;
  if (w.kh < 1 || w.kw < 1 || w.strideH < 1 || w.strideW < 1 || w.dilationH < 1 || w.dilationW < 1)
    return makeError("kernel, stride and dilation must be >= 1");
  if (std::min({w.padTop, w.padBottom, w.padLeft, w.padRight}) < 0) return makeError("pads must be >= 0");
  if (fieldLimits && (w.strideH > kMaxStride || w.strideW > kMaxStride))
    return makeError("stride ", w.strideH, "x", w.strideW, " exceeds the hardware's ", kMaxStride);
  if (fieldLimits && std::max({w.padTop, w.padBottom, w.padLeft, w.padRight}) > kMaxPad)
    return makeError("pads must be in [0, ", kMaxPad, "]");
  if (fieldLimits && (w.dilationH > kMaxZeroInsert + 1 || w.dilationW > kMaxZeroInsert + 1))
    return makeError("dilation ", w.dilationH, "x", w.dilationW, " exceeds the hardware's ", kMaxZeroInsert + 1);
  int64_t oh = windowOutput(xs[2], w.kh, w.strideH, w.dilationH, w.padTop, w.padBottom);
  int64_t ow = windowOutput(xs[3], w.kw, w.strideW, w.dilationW, w.padLeft, w.padRight);
  // ceil mode may add one output row/column (more end padding).
  if (ys[2] != oh && ys[2] != oh + 1)
    return makeError("output height ", ys[2], " does not match the window (", oh, ")");
  if (ys[3] != ow && ys[3] != ow + 1)
    return makeError("output width ", ys[3], " does not match the window (", ow, ")");
  if (ys[0] != xs[0]) return makeError("output batch ", ys[0], " differs from input batch ", xs[0]);
  // Ceil mode (pools): the last window must start inside the input or its
  // start padding. (A conv's window may lie in its padding: the bias alone.)
  if (fieldLimits && ((ys[2] - 1) * w.strideH - w.padTop >= xs[2] || (ys[3] - 1) * w.strideW - w.padLeft >= xs[3]))
    return makeError("the last output row/column's window lies entirely in the end padding");
  return Status::ok();
}

Status checkEndPadding(const Graph &g, const Op &op) {
  WindowParams p = effectiveWindow(op, g.tensors[size_t(op.inputs[0])], g.tensors[size_t(op.output)]);
  if (p.padBottom > kMaxPad || p.padRight > kMaxPad)
    return makeError("end padding ", p.padBottom, "/", p.padRight, " (ceil mode included) exceeds ", kMaxPad);
  return Status::ok();
}

} // namespace tpu::backend
