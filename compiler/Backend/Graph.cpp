#include "compiler/Backend/Graph.h"

#include "compiler/Backend/OpRegistry.h"
#include "compiler/Backend/OpValidation.h"
#include "support/Float16.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tpu::backend {

unsigned dtypeBytes(DType t) {
  switch (t) {
  case DType::F32: case DType::I32: return 4;
  case DType::I16:
  case DType::F16:
  case DType::BF16:
    return 2;
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
  case DType::F16:
    return "float16";
  case DType::BF16:
    return "bfloat16";
  }
  return "?";
}

bool isInt8Like(DType t) { return t == DType::I8 || t == DType::U8; }
bool isHalf(DType t) { return t == DType::F16 || t == DType::BF16; }

bool stored4N(const Tensor &t) { return isInt8Like(t.dtype) && !t.isWeight() && t.nchw()[0] > 1; }

std::array<int64_t, 4> Tensor::nchw() const {
  std::array<int64_t, 4> s{1, 1, 1, 1};
  for (size_t i = 0; i < shape.size(); ++i) s[std::min<size_t>(i, 3)] *= shape[i];
  return s;
}

bool fitsCommandFields(const std::vector<int64_t> &shape) {
  Tensor t;
  t.shape = shape;
  const auto nchw = t.nchw();
  return nchw[0] <= kMaxOperandItems && std::all_of(nchw.begin(), nchw.end(), [](int64_t d) { return d <= kMaxDim; });
}

std::array<int64_t, 4> broadcastNchw(const Tensor &in, const Tensor &out) {
  Tensor aligned;
  aligned.shape = in.shape;
  if (aligned.shape.size() < out.shape.size())
    aligned.shape.insert(aligned.shape.begin(), out.shape.size() - aligned.shape.size(), 1);
  return aligned.nchw();
}

bool isChannelWeight(const Tensor &w, const Tensor &out) {
  const int64_t c = out.nchw()[1];
  return w.isWeight() && w.numel() == c && (w.shape.size() == 1 || w.shape == std::vector<int64_t>{1, c, 1, 1});
}

std::vector<uint8_t> widenHalf(const std::vector<uint8_t> &values, DType from) {
  std::vector<uint8_t> out(values.size() * 2);
  for (size_t i = 0; i + 1 < values.size(); i += 2) {
    const uint16_t h = uint16_t(values[i] | values[i + 1] << 8);
    const float f = from == DType::BF16 ? bf16ToFloat(h) : f16ToFloat(h);
    std::memcpy(&out[2 * i], &f, 4);
  }
  return out;
}

std::vector<uint8_t> roundToHalf(const std::vector<uint8_t> &values, DType to) {
  std::vector<uint8_t> out(values.size() / 2);
  for (size_t i = 0; i + 3 < values.size(); i += 4) {
    float f;
    std::memcpy(&f, &values[i], 4);
    const uint16_t h = to == DType::BF16 ? floatToBf16(f) : floatToF16(f);
    out[i / 2] = uint8_t(h), out[i / 2 + 1] = uint8_t(h >> 8);
  }
  return out;
}

bool isHalfOp(const Graph &g, const Op &op) {
  if (op.kind == OpKind::Cast) return false;
  if (isHalf(g.tensors[size_t(op.output)].dtype)) return true;
  return std::any_of(op.inputs.begin(), op.inputs.end(), [&](int t) { return isHalf(g.tensors[size_t(t)].dtype); });
}

Graph widenedOp(const Graph &g, const Op &op) {
  Graph w;
  w.name = g.name;
  Op o = op;
  o.inputs.clear();
  auto add = [&](int t) {
    Tensor x = g.tensors[size_t(t)];
    if (isHalf(x.dtype)) {
      if (x.isWeight()) x.data = widenHalf(x.data, x.dtype);
      x.dtype = DType::F32;
    }
    return w.addTensor(std::move(x));
  };
  for (int t : op.inputs) o.inputs.push_back(add(t));
  o.output = add(op.output);
  for (int t : o.inputs)
    if (!w.tensors[size_t(t)].isWeight()) w.inputs.push_back(t);
  w.outputs = {o.output};
  w.ops.push_back(std::move(o));
  return w;
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

void Op::wrongParams() const {
  std::fprintf(stderr, "internal error: %s '%s' holds the parameters of another kind\n", opKindName(kind),
               name.c_str());
  std::abort();
}

namespace {

Status checkOp(const Graph &g, const Op &op);

// A 16-bit float op: one 16-bit type for its activations and its result (fp32 weights allowed: biases,
// scales), then the checks of its fp32 form.
Status checkHalfOp(const Graph &g, const Op &op) {
  const DType half = g.tensors[size_t(op.output)].dtype;
  if (!isHalf(half))
    return makeError("output '", g.tensors[size_t(op.output)].name, "' is ", dtypeName(half),
                     " but inputs are 16-bit floats: only a Cast changes a tensor's float type");
  for (int t : op.inputs) {
    const Tensor &x = g.tensors[size_t(t)];
    if (x.dtype != half && !(x.isWeight() && x.dtype == DType::F32))
      return makeError("input '", x.name, "' is ", dtypeName(x.dtype), ", the output ", dtypeName(half));
  }
  const Graph wide = widenedOp(g, op);
  return checkOp(wide, wide.ops[0]);
}

// The checks every op gets, then its kind's own (OpImpl::validate).
Status checkOp(const Graph &g, const Op &op) {
  if (size_t(op.kind) >= kOpKindCount) return makeError("unknown op kind");
  if (isHalfOp(g, op)) return checkHalfOp(g, op);
  const OpKindInfo &info = opKindInfo(op.kind);
  const OpCheck c(g, op);
  if (op.rshift > 31) return makeError("rshift ", op.rshift, " exceeds 31");
  if (!info.takesWeights)
    for (int t : op.inputs)
      if (g.tensors[size_t(t)].isWeight())
        return makeError("input '", g.tensors[size_t(t)].name, "' is a weight; ", info.name, " takes activations");
  const bool int16 = opImpl(op.kind).int16Activations, host = opImpl(op.kind).runsOnHost();
  // Only the host reads or writes an empty tensor (no command has a 0 field).
  if (!host) {
    std::vector<int> touched = op.inputs;
    touched.push_back(op.output);
    for (int t : touched)
      if (g.tensors[size_t(t)].numel() == 0)
        return makeError("tensor '", g.tensors[size_t(t)].name, "' is empty; only host ops take empty tensors");
  }
  // A view (no commands) and a host op may write any dims; a command's
  // fields hold those of what it writes (of what it reads: checkEncodable).
  if (!host && !info.sharesInputBytes)
    for (int64_t d : c.ys)
      if (d < 1 || d > kMaxDim) return makeError("output dimension ", d, " is outside [1, ", kMaxDim, "]");
  // (A Cast's 16-bit float result: every other 16-bit float op was checked as its fp32 form.)
  if (!c.int8 && c.y.dtype != DType::F32 && !(host && c.y.dtype == DType::I32) && !isHalf(c.y.dtype))
    return makeError("output dtype ", dtypeName(c.y.dtype), " is not an activation type (float32, int8, uint8",
                     int16 ? ", int16" : "", ")");
  if (c.y.dtype == DType::I16 && !int16) return makeError("output dtype int16: ", info.name, " has no int16 form");
  for (int t : op.inputs)
    if (const Tensor &x = g.tensors[size_t(t)]; !x.isWeight() && x.dtype == DType::I16 && !int16)
      return makeError("input '", x.name, "' is int16: ", info.name, " takes no int16 activation");
  // int32 activations are integer tensors of host ops (indices): only host ops read them.
  for (int t : op.inputs)
    if (const Tensor &x = g.tensors[size_t(t)]; !x.isWeight() && x.dtype == DType::I32 && !host)
      return makeError("input '", x.name, "' is int32: ", info.name,
                       " runs on the chip, which takes no int32 activation");
  TPU_RETURN_IF_ERROR(c.needInputs(info.minInputs, info.maxInputs));
  return opImpl(op.kind).validate(c);
}

} // namespace

Status Graph::validateOp(const Op &op) const {
  Status st = checkOp(*this, op);
  return st ? st : st.prefix(std::string(opKindName(op.kind)) + " '" + op.name + "'");
}

Status Graph::validate() const {
  const int nt = int(tensors.size());
  std::vector<char> defined(tensors.size(), 0);
  for (int t = 0; t < nt; ++t) {
    const Tensor &x = tensors[t];
    if (x.shape.size() > kMaxRank)
      return makeError("tensor '", x.name, "': ", x.shape.size(), " dims (0..", kMaxRank, " supported)");
    for (int64_t d : x.shape)
      if (d < 0) return makeError("tensor '", x.name, "': dimension ", d, " < 0");
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
    TPU_RETURN_IF_ERROR(validateOp(op));
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
