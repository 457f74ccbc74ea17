#include "compiler/Backend/Graph.h"

#include <algorithm>

namespace tpu::backend {

unsigned dtypeBytes(DType t) {
  switch (t) {
  case DType::F32: case DType::I32: return 4;
  case DType::I16: return 2;
  case DType::I8: case DType::U8: return 1;
  }
  return 0;
}

const char *dtypeName(DType t) {
  switch (t) {
  case DType::F32: return "float32";
  case DType::I8: return "int8";
  case DType::U8: return "uint8";
  case DType::I16: return "int16";
  case DType::I32: return "int32";
  }
  return "?";
}

bool isInt8Like(DType t) { return t == DType::I8 || t == DType::U8; }

std::array<int64_t, 4> Tensor::nchw() const {
  std::array<int64_t, 4> s{1, 1, 1, 1};
  for (size_t i = 0; i < shape.size() && i < 4; ++i) s[i] = shape[i];
  return s;
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

const char *opKindName(OpKind k) {
  switch (k) {
  case OpKind::Conv: return "Conv";
  case OpKind::Pool: return "Pool";
  case OpKind::GlobalAvgPool: return "GlobalAvgPool";
  case OpKind::Add: return "Add";
  case OpKind::Mul: return "Mul";
  case OpKind::Max: return "Max";
  case OpKind::Relu: return "Relu";
  case OpKind::LeakyRelu: return "LeakyRelu";
  case OpKind::Clip: return "Clip";
  case OpKind::Lut: return "Lut";
  case OpKind::Fc: return "Fc";
  case OpKind::Concat: return "Concat";
  case OpKind::Upsample: return "Upsample";
  case OpKind::Reshape: return "Reshape";
  case OpKind::Cast: return "Cast";
  case OpKind::Requant: return "Requant";
  case OpKind::Affine: return "Affine";
  case OpKind::Sigmoid: return "Sigmoid";
  case OpKind::ConvTranspose: return "ConvTranspose";
  }
  return "?";
}

int64_t windowOutput(int64_t in, int64_t k, int64_t stride, int64_t dilation, int64_t padA,
                     int64_t padB) {
  int64_t ke = (k - 1) * dilation + 1;
  int64_t padded = in + padA + padB;
  if (padded < ke || stride < 1) return 0;
  return (padded - ke) / stride + 1;
}

namespace {

// Hardware limits of the fields the emitters fill (isa/tables/tiu_fields.def).
constexpr int64_t kMaxPad = 15, kMaxStride = 15, kMaxDim = 65535;

Status checkWindowOp(const Graph &g, const Op &op, const Tensor &x, const Tensor &y) {
  const WindowParams &w = op.window;
  auto xs = x.nchw(), ys = y.nchw();
  if (w.kh < 1 || w.kw < 1 || w.strideH < 1 || w.strideW < 1 || w.dilationH < 1 ||
      w.dilationW < 1)
    return makeError("kernel, stride and dilation must be >= 1");
  if (w.strideH > kMaxStride || w.strideW > kMaxStride)
    return makeError("stride ", w.strideH, "x", w.strideW, " exceeds the hardware's ", kMaxStride);
  if (std::min({w.padTop, w.padBottom, w.padLeft, w.padRight}) < 0 ||
      std::max({w.padTop, w.padBottom, w.padLeft, w.padRight}) > kMaxPad)
    return makeError("pads must be in [0, ", kMaxPad, "]");
  int64_t oh = windowOutput(xs[2], w.kh, w.strideH, w.dilationH, w.padTop, w.padBottom);
  int64_t ow = windowOutput(xs[3], w.kw, w.strideW, w.dilationW, w.padLeft, w.padRight);
  // ceil mode may add one output row/column (more end padding).
  if (ys[2] != oh && ys[2] != oh + 1)
    return makeError("output height ", ys[2], " does not match the window (", oh, ")");
  if (ys[3] != ow && ys[3] != ow + 1)
    return makeError("output width ", ys[3], " does not match the window (", ow, ")");
  if (ys[0] != xs[0]) return makeError("output batch ", ys[0], " differs from input batch ", xs[0]);
  // Ceil mode: the last window must start inside the input or its start padding.
  if ((ys[2] - 1) * w.strideH - w.padTop >= xs[2] || (ys[3] - 1) * w.strideW - w.padLeft >= xs[3])
    return makeError("the last output row/column's window lies entirely in the end padding");
  (void)g;
  return Status::ok();
}

Status checkOp(const Graph &g, const Op &op) {
  auto in = [&](size_t i) -> const Tensor & { return g.tensors[op.inputs[i]]; };
  const Tensor &y = g.tensors[op.output];
  auto needInputs = [&](size_t lo, size_t hi) -> Status {
    if (op.inputs.size() < lo || op.inputs.size() > hi)
      return makeError("takes ", lo == hi ? "" : "between ", lo, hi == lo ? "" : " and ",
                       hi == lo ? "" : std::to_string(hi), " inputs, has ", op.inputs.size());
    return Status::ok();
  };
  auto needMultipliers = [&](size_t n) -> Status {
    if (isInt8Like(y.dtype) && op.multipliers.size() != n)
      return makeError("int8 needs ", n, " multiplier(s), has ", op.multipliers.size());
    return Status::ok();
  };
  if (op.rshift > 31) return makeError("rshift ", op.rshift, " exceeds 31");
  for (int t : op.inputs)
    if (g.tensors[t].isWeight() && (op.kind != OpKind::Conv && op.kind != OpKind::ConvTranspose && op.kind != OpKind::Fc &&
                                    op.kind != OpKind::Lut && op.kind != OpKind::Add && op.kind != OpKind::Mul &&
                                    op.kind != OpKind::Max && op.kind != OpKind::Affine))
      return makeError("input '", g.tensors[t].name, "' is a weight; ", opKindName(op.kind),
                       " takes activations");
  auto ys = y.nchw();
  for (int64_t d : ys)
    if (d < 1 || d > kMaxDim) return makeError("output dimension ", d, " is outside [1, ", kMaxDim, "]");
  bool int8 = isInt8Like(y.dtype);
  if (!int8 && y.dtype != DType::F32)
    return makeError("output dtype ", dtypeName(y.dtype), " is not an activation type (float32, int8, uint8)");
  auto sameType = [&](const Tensor &t) -> Status {
    if (op.kind == OpKind::Cast) return Status::ok();
    if (isInt8Like(t.dtype) != int8)
      return makeError("input '", t.name, "' is ", dtypeName(t.dtype), " but the output is ",
                       dtypeName(y.dtype));
    return Status::ok();
  };
  switch (op.kind) {
  case OpKind::Conv: {
    TPU_RETURN_IF_ERROR(needInputs(2, 3));
    const Tensor &x = in(0), &w = in(1);
    TPU_RETURN_IF_ERROR(sameType(x));
    TPU_RETURN_IF_ERROR(checkWindowOp(g, op, x, y));
    auto xs = x.nchw();
    int64_t groups = op.window.groups;
    if (groups < 1 || xs[1] % groups || ys[1] % groups)
      return makeError("groups ", groups, " must divide input channels ", xs[1], " and output channels ", ys[1]);
    if (!w.isWeight()) return makeError("weight '", w.name, "' has no data");
    std::vector<int64_t> want{ys[1], xs[1] / groups, op.window.kh, op.window.kw};
    if (w.shape != want) return makeError("weight '", w.name, "' shape does not match [oc, ic/groups, kh, kw]");
    if (int8 != isInt8Like(w.dtype) || (!int8 && w.dtype != DType::F32))
      return makeError("weight '", w.name, "' dtype ", dtypeName(w.dtype), " does not fit a ", dtypeName(y.dtype), " conv");
    if (op.inputs.size() == 3) {
      const Tensor &b = in(2);
      if (!b.isWeight() || b.numel() != ys[1])
        return makeError("bias '", b.name, "' must be a weight of ", ys[1], " elements");
      if (b.dtype != (int8 ? DType::I16 : DType::F32))
        return makeError("bias '", b.name, "' must be ", int8 ? "int16" : "float32");
    }
    return Status::ok();
  }
  case OpKind::ConvTranspose: {
    TPU_RETURN_IF_ERROR(needInputs(2, 3));
    const Tensor &x = in(0), &w = in(1);
    TPU_RETURN_IF_ERROR(sameType(x));
    const WindowParams &p = op.window;
    auto xs = x.nchw();
    if (p.groups != 1) return makeError("only groups = 1 is supported");
    if (p.kh < 1 || p.kw < 1 || p.strideH < 1 || p.strideW < 1 || p.dilationH < 1 || p.dilationW < 1)
      return makeError("kernel, stride and dilation must be >= 1");
    if (p.strideH > 16 || p.strideW > 16) return makeError("stride exceeds 16");
    TransposedPads tp = transposedPads(op, x, y);
    if (std::min({tp.top, tp.bottom, tp.left, tp.right}) < 0 || std::max({tp.top, tp.bottom, tp.left, tp.right}) > 15)
      return makeError("pads and output size give equivalent conv pads ", tp.top, "/", tp.bottom, "/", tp.left, "/",
                       tp.right, " outside [0, 15]");
    if (ys[0] != xs[0]) return makeError("output batch differs from input batch");
    // Every output row's window then holds at least one input row (slicing needs it).
    const int64_t keH = (p.kh - 1) * p.dilationH, keW = (p.kw - 1) * p.dilationW;
    if (keH + 1 < p.strideH || keW + 1 < p.strideW) return makeError("kernel extent smaller than the stride");
    if (tp.bottom > keH || tp.right > keW) return makeError("output padding larger than the end pad");
    if (!w.isWeight() || w.shape != std::vector<int64_t>{xs[1], ys[1], p.kh, p.kw})
      return makeError("weight '", w.name, "' shape does not match [ic, oc, kh, kw]");
    if (int8 != isInt8Like(w.dtype) || (!int8 && w.dtype != DType::F32))
      return makeError("weight '", w.name, "' dtype ", dtypeName(w.dtype), " does not fit");
    if (op.inputs.size() == 3) {
      const Tensor &b = in(2);
      if (!b.isWeight() || b.numel() != ys[1] || b.dtype != (int8 ? DType::I16 : DType::F32))
        return makeError("bias '", b.name, "' must be a ", int8 ? "int16" : "float32", " weight of ", ys[1], " elements");
    }
    return Status::ok();
  }
  case OpKind::Pool: {
    TPU_RETURN_IF_ERROR(needInputs(1, 1));
    TPU_RETURN_IF_ERROR(sameType(in(0)));
    TPU_RETURN_IF_ERROR(checkWindowOp(g, op, in(0), y));
    if (in(0).nchw()[1] != ys[1]) return makeError("pooling changes the channel count");
    if (op.window.dilationH != 1 || op.window.dilationW != 1) return makeError("pooling takes no dilation");
    if (!op.window.isMax) TPU_RETURN_IF_ERROR(needMultipliers(1));
    if (int8 && !op.window.isMax && (op.multipliers[0] < 0 || op.multipliers[0] > 255))
      return makeError("average multiplier ", op.multipliers[0], " is outside [0, 255]");
    return Status::ok();
  }
  case OpKind::GlobalAvgPool: {
    TPU_RETURN_IF_ERROR(needInputs(1, 1));
    TPU_RETURN_IF_ERROR(sameType(in(0)));
    auto xs = in(0).nchw();
    if (ys[0] != xs[0] || ys[1] != xs[1] || ys[2] != 1 || ys[3] != 1)
      return makeError("output must be (N, C, 1, 1) of the input");
    TPU_RETURN_IF_ERROR(needMultipliers(1));
    if (int8 && (op.multipliers[0] < 0 || op.multipliers[0] > 255))
      return makeError("average multiplier ", op.multipliers[0], " is outside [0, 255]");
    return Status::ok();
  }
  case OpKind::Add: case OpKind::Mul: case OpKind::Max: {
    TPU_RETURN_IF_ERROR(needInputs(2, 2));
    if (in(0).isWeight()) return makeError("the first input must be an activation");
    if (in(1).isWeight()) {
      // A per-channel constant: C values ([C] or [1, C, 1, 1]) of the activation type.
      const Tensor &w = in(1);
      if (w.numel() != ys[1] || (w.shape.size() != 1 && w.shape != std::vector<int64_t>{1, ys[1], 1, 1}))
        return makeError("weight '", w.name, "' must hold one value per channel ([", ys[1], "] or [1, ", ys[1], ", 1, 1])");
      if (w.dtype != (int8 ? DType::I8 : DType::F32))
        return makeError("weight '", w.name, "' must be ", int8 ? "int8" : "float32");
      if (in(0).nchw() != ys) return makeError("input and output shapes differ");
      TPU_RETURN_IF_ERROR(needMultipliers(op.kind == OpKind::Mul ? 1 : 2));
      return Status::ok();
    }
    for (size_t i = 0; i < 2; ++i) {
      TPU_RETURN_IF_ERROR(sameType(in(i)));
      auto xs = in(i).nchw();
      // The second input may be (N, C, 1, 1), broadcast over H and W.
      bool bcast = i == 1 && xs[0] == ys[0] && xs[1] == ys[1] && xs[2] == 1 && xs[3] == 1;
      if (xs != ys && !bcast)
        return makeError("input '", in(i).name, "' shape differs from the output's (only the second input may be (N, C, 1, 1))");
    }
    TPU_RETURN_IF_ERROR(needMultipliers(op.kind == OpKind::Mul ? 1 : 2));
    for (int32_t m : op.multipliers)
      if (m < -32768 || m > 32767) return makeError("multiplier ", m, " does not fit int16");
    return Status::ok();
  }
  case OpKind::Affine:
    if (op.inputs.size() == 3) {
      // Per channel: scale and bias weights of C values ([C] or [1, C, 1, 1]).
      TPU_RETURN_IF_ERROR(sameType(in(0)));
      if (in(0).isWeight()) return makeError("the first input must be an activation");
      if (in(0).nchw() != ys) return makeError("input and output shapes differ");
      for (size_t i = 1; i < 3; ++i) {
        const Tensor &w = in(i);
        const DType want = !int8 ? DType::F32 : i == 1 ? DType::I16 : DType::I32;
        if (!w.isWeight() || w.numel() != ys[1] ||
            (w.shape.size() != 1 && w.shape != std::vector<int64_t>{1, ys[1], 1, 1}))
          return makeError("weight '", w.name, "' must hold one value per channel ([", ys[1], "] or [1, ", ys[1],
                           ", 1, 1])");
        if (w.dtype != want) return makeError("weight '", w.name, "' must be ", dtypeName(want));
      }
      return Status::ok();
    }
    [[fallthrough]];
  case OpKind::Relu: case OpKind::LeakyRelu: case OpKind::Clip: case OpKind::Requant:
  case OpKind::Sigmoid: {
    TPU_RETURN_IF_ERROR(needInputs(1, 1));
    TPU_RETURN_IF_ERROR(sameType(in(0)));
    if (in(0).nchw() != ys) return makeError("input and output shapes differ");
    if (op.kind == OpKind::LeakyRelu) {
      TPU_RETURN_IF_ERROR(needMultipliers(1));
      if (!int8 && !(op.alpha >= 0.0f && op.alpha <= 1.0f))
        return makeError("alpha ", op.alpha, " is outside [0, 1]");
      if (int8 && (op.multipliers[0] < -128 || op.multipliers[0] > 127))
        return makeError("multiplier ", op.multipliers[0], " does not fit int8");
    }
    if (op.kind == OpKind::Requant) {
      if (!int8) return makeError("Requant is int8 only");
      TPU_RETURN_IF_ERROR(needMultipliers(1));
      if (op.multipliers[0] < -32768 || op.multipliers[0] > 32767)
        return makeError("multiplier ", op.multipliers[0], " does not fit int16");
    }
    if (op.kind == OpKind::Sigmoid && int8) return makeError("int8 sigmoid is a Lut op");
    if (op.kind == OpKind::Affine && int8) {
      TPU_RETURN_IF_ERROR(needMultipliers(2));
      if (op.multipliers[0] < -32768 || op.multipliers[0] > 32767)
        return makeError("multiplier ", op.multipliers[0], " does not fit int16");
    }
    if (op.kind == OpKind::Clip && !(op.clipMin <= op.clipMax))
      return makeError("clip bounds [", op.clipMin, ", ", op.clipMax, "] are empty");
    return Status::ok();
  }
  case OpKind::Lut: {
    TPU_RETURN_IF_ERROR(needInputs(2, 2));
    if (!int8 || !isInt8Like(in(0).dtype)) return makeError("Lut is int8 only (input and output)");
    if (in(0).nchw() != ys) return makeError("input and output shapes differ");
    const Tensor &t = in(1);
    if (!t.isWeight() || t.numel() != 256 || t.dtype != y.dtype)
      return makeError("table '", t.name, "' must be a weight of 256 ", dtypeName(y.dtype));
    return Status::ok();
  }
  case OpKind::Fc: {
    TPU_RETURN_IF_ERROR(needInputs(2, 3));
    const Tensor &x = in(0), &w = in(1);
    TPU_RETURN_IF_ERROR(sameType(x));
    int64_t k = x.numel() / x.nchw()[0];
    if (ys[0] != x.nchw()[0] || ys[2] != 1 || ys[3] != 1)
      return makeError("output must be (N, n_out)");
    if (!w.isWeight() || w.shape != std::vector<int64_t>{ys[1], k})
      return makeError("weight '", w.name, "' must be [n_out, K] = [", ys[1], ", ", k, "]");
    if (int8 != isInt8Like(w.dtype) || (!int8 && w.dtype != DType::F32))
      return makeError("weight '", w.name, "' dtype ", dtypeName(w.dtype), " does not fit a ", dtypeName(y.dtype), " fc");
    if (op.inputs.size() == 3) {
      const Tensor &b = in(2);
      if (!b.isWeight() || b.numel() != ys[1] || b.dtype != (int8 ? DType::I16 : DType::F32))
        return makeError("bias '", b.name, "' must be a ", int8 ? "int16" : "float32", " weight of ", ys[1], " elements");
    }
    return Status::ok();
  }
  case OpKind::Concat: {
    TPU_RETURN_IF_ERROR(needInputs(1, 4096));
    int64_t c = 0;
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      auto xs = in(i).nchw();
      TPU_RETURN_IF_ERROR(sameType(in(i)));
      if (in(i).dtype != y.dtype) return makeError("input '", in(i).name, "' dtype differs from the output's");
      if (xs[0] != ys[0] || xs[2] != ys[2] || xs[3] != ys[3])
        return makeError("input '", in(i).name, "' differs from the output outside the channel axis");
      c += xs[1];
    }
    if (c != ys[1]) return makeError("input channels sum to ", c, ", output has ", ys[1]);
    return Status::ok();
  }
  case OpKind::Upsample: {
    TPU_RETURN_IF_ERROR(needInputs(1, 1));
    TPU_RETURN_IF_ERROR(sameType(in(0)));
    auto xs = in(0).nchw();
    if (op.scaleH < 1 || op.scaleW < 1 || ys[0] != xs[0] || ys[1] != xs[1] ||
        ys[2] != xs[2] * op.scaleH || ys[3] != xs[3] * op.scaleW)
      return makeError("output must be the input scaled by ", op.scaleH, "x", op.scaleW);
    return Status::ok();
  }
  case OpKind::Reshape: {
    TPU_RETURN_IF_ERROR(needInputs(1, 1));
    if (in(0).dtype != y.dtype || in(0).numel() != y.numel() || in(0).nchw()[0] != ys[0])
      return makeError("a reshape keeps dtype, element count and batch");
    return Status::ok();
  }
  case OpKind::Cast: {
    TPU_RETURN_IF_ERROR(needInputs(1, 1));
    bool toInt = in(0).dtype == DType::F32 && int8;
    bool toFloat = isInt8Like(in(0).dtype) && y.dtype == DType::F32;
    if (!toInt && !toFloat) return makeError("casts fp32 <-> int8 only");
    if (in(0).nchw() != ys) return makeError("input and output shapes differ");
    float s = toInt ? y.scale : in(0).scale;
    if (!(s > 0.0f) || s != s) return makeError("scale ", s, " must be positive");
    return Status::ok();
  }
  }
  return makeError("unknown op kind");
}

} // namespace

Status Graph::validate() const {
  const int nt = int(tensors.size());
  std::vector<char> defined(tensors.size(), 0);
  for (int t = 0; t < nt; ++t) {
    const Tensor &x = tensors[t];
    if (x.shape.empty() || x.shape.size() > 4)
      return makeError("tensor '", x.name, "': ", x.shape.size(), " dims (1..4 supported)");
    for (int64_t d : x.shape)
      if (d < 1) return makeError("tensor '", x.name, "': dimension ", d, " < 1");
    if (x.isWeight() && x.data.size() != x.bytes())
      return makeError("weight '", x.name, "': ", x.data.size(), " bytes of data, shape needs ", x.bytes());
    if (x.isWeight()) defined[t] = 1;
  }
  for (int t : inputs) {
    if (t < 0 || t >= nt) return makeError("graph input index ", t, " out of range");
    if (tensors[t].isWeight()) return makeError("graph input '", tensors[t].name, "' is a weight");
    defined[t] = 1;
  }
  for (const Op &op : ops) {
    std::string where = std::string(opKindName(op.kind)) + " '" + op.name + "'";
    if (op.output < 0 || op.output >= nt) return makeError(where, ": output index out of range");
    for (int t : op.inputs) {
      if (t < 0 || t >= nt) return makeError(where, ": input index ", t, " out of range");
      if (!defined[t])
        return makeError(where, ": input '", tensors[t].name, "' is not defined before it (ops must be in topological order)");
    }
    if (defined[op.output]) return makeError(where, ": output '", tensors[op.output].name, "' is defined twice");
    Status st = checkOp(*this, op);
    if (!st) return st.prefix(where);
    defined[op.output] = 1;
  }
  for (int t : outputs) {
    if (t < 0 || t >= nt || !defined[t]) return makeError("graph output index ", t, " is not produced");
    if (tensors[t].isWeight()) return makeError("graph output '", tensors[t].name, "' is a weight");
  }
  if (inputs.empty() || outputs.empty()) return makeError("graph '", name, "' needs inputs and outputs");
  return Status::ok();
}

} // namespace tpu::backend

namespace tpu::backend {
TransposedPads transposedPads(const Op &op, const Tensor &x, const Tensor &y) {
  const WindowParams &p = op.window;
  auto xs = x.nchw(), ys = y.nchw();
  int64_t keH = (p.kh - 1) * p.dilationH, keW = (p.kw - 1) * p.dilationW;
  TransposedPads t;
  t.top = keH - p.padTop, t.left = keW - p.padLeft;
  // Output rows = (ih-1)*s + 1 + top + bottom - keH.
  t.bottom = ys[2] - 1 + keH - (xs[2] - 1) * p.strideH - t.top;
  t.right = ys[3] - 1 + keW - (xs[3] - 1) * p.strideW - t.left;
  return t;
}

WindowParams effectiveWindow(const Op &op, const Tensor &x, const Tensor &y) {
  WindowParams w = op.window;
  auto xs = x.nchw(), ys = y.nchw();
  int64_t needH = (ys[2] - 1) * w.strideH + (w.kh - 1) * w.dilationH + 1;
  int64_t needW = (ys[3] - 1) * w.strideW + (w.kw - 1) * w.dilationW + 1;
  w.padBottom = std::max(w.padBottom, needH - xs[2] - w.padTop);
  w.padRight = std::max(w.padRight, needW - xs[3] - w.padLeft);
  return w;
}
} // namespace tpu::backend
