#include "compiler/Import/OnnxNodeImporter.h"

#include "compiler/Dialect/Top/HostEval.h"

using namespace mlir;

namespace tpu::onnx {

Result<std::vector<int64_t>> OnnxImporter::shapeOf(const Node &n, size_t i) {
  if (!present(n, i)) return makeError(n.describe(), ": missing input ", i);
  if (const NpyArray *c = constOf(n.inputs[i])) return c->shape;
  auto v = value(n.inputs[i]);
  if (!v) return v.status();
  auto t = dyn_cast<RankedTensorType>(v->getType());
  if (!t) return makeError(n.describe(), ": input '", n.inputs[i], "' has no known shape");
  return std::vector<int64_t>(t.getShape().begin(), t.getShape().end());
}

Result<bool> OnnxImporter::shapeFromData(const Node &n, size_t i) {
  if (!present(n, i) || constInput(n, i)) return false;
  auto v = operand(n, i);
  if (!v) return v.status();
  return top::shapeFromData(*v);
}

Result<std::vector<int64_t>> OnnxImporter::constInts(const Node &n, size_t i, const std::string &what) {
  const NpyArray *c = constInput(n, i);
  if (!c) return makeError(n.describe(), ": input ", what, " must be a constant (got '",
                           present(n, i) ? n.inputs[i] : std::string(), "' computed at run time)");
  return toInt64(*c);
}

Result<std::vector<double>> OnnxImporter::constFloats(const Node &n, size_t i, const std::string &what) {
  const NpyArray *c = constInput(n, i);
  if (!c) return makeError(n.describe(), ": input ", what, " must be a constant");
  return toDouble(*c);
}

namespace {
template <typename T> Result<T> oneValue(const Node &n, Result<std::vector<T>> values, const std::string &what) {
  if (!values) return values.status();
  if (values->size() != 1)
    return makeError(n.describe(), ": ", what, " must hold one value, it holds ", values->size());
  return values->front();
}
} // namespace

Result<int64_t> OnnxImporter::constInt(const Node &n, size_t i, const std::string &what) {
  return oneValue(n, constInts(n, i, what), what);
}

Result<double> OnnxImporter::constFloat(const Node &n, size_t i, const std::string &what) {
  return oneValue(n, constFloats(n, i, what), what);
}

Location OnnxImporter::locFor(const Node &n, const std::string &outputName) {
  if (!outputName.empty()) return nameLoc(outputName);
  SmallVector<Location> locs;
  for (const auto &o : n.outputs)
    if (!o.empty()) locs.push_back(nameLoc(o));
  if (locs.size() == 1) return locs[0];
  return FusedLoc::get(&ctx_, locs);
}

const OpTable &onnxOpTable() {
  static const OpTable table = [] {
    OpTable t;
    for (auto registerFamily :
         {registerActivationOps, registerConstantOps, registerControlFlowOps, registerConvOps, registerDataMovementOps,
          registerDetectionOps, registerElementwiseOps, registerLogicOps, registerMathOps, registerMatMulOps,
          registerNormalizationOps, registerPoolOps, registerReduceOps, registerResizeOps, registerShapeOps})
      registerFamily(t);
    return t;
  }();
  return table;
}

Status checkFoldedSize(const Node &n, const std::vector<int64_t> &shape) {
  constexpr int64_t kMaxFoldedElements = int64_t(1) << 28;
  int64_t total = 1;
  for (int64_t d : shape) {
    if (d < 0) return makeError(n.describe(), ": negative dimension in ", shapeToString(shape));
    if (d && total > kMaxFoldedElements / d)
      return makeError(n.describe(), ": constant of shape ", shapeToString(shape), " is too large to fold");
    total *= d;
  }
  return Status::ok();
}

Status onlyFirstOutput(const Node &n) {
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (!n.outputs[i].empty()) return makeError(n.describe(), ": output ", i, " (training-mode statistics) is not supported");
  return Status::ok();
}

std::vector<int64_t> intsOr(const Node &n, const std::string &key, size_t count, int64_t dflt) {
  auto v = n.getInts(key);
  return v ? *v : std::vector<int64_t>(count, dflt);
}

// Explicit pads for auto_pad SAME_UPPER / SAME_LOWER / VALID, else the pads attribute.
Result<std::vector<int64_t>> windowPads(const Node &n, const std::vector<int64_t> &in, const std::vector<int64_t> &k,
                                        const std::vector<int64_t> &s, const std::vector<int64_t> &d) {
  size_t sp = k.size();
  std::string autoPad = n.getString("auto_pad", "NOTSET");
  std::vector<int64_t> pads(2 * sp, 0);
  if (autoPad == "NOTSET") {
    if (auto p = n.getInts("pads")) {
      if (p->size() != 2 * sp) return makeError(n.describe(), ": pads needs ", 2 * sp, " values");
      pads = *p;
    }
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (size_t i = 0; i < sp; ++i) {
      int64_t out = (in[i + 2] + s[i] - 1) / s[i];
      int64_t total = std::max<int64_t>(0, (out - 1) * s[i] + (k[i] - 1) * d[i] + 1 - in[i + 2]);
      int64_t small = total / 2, big = total - small;
      pads[i] = autoPad == "SAME_UPPER" ? small : big;
      pads[i + sp] = autoPad == "SAME_UPPER" ? big : small;
    }
  } else if (autoPad != "VALID") {
    return makeError(n.describe(), ": unknown auto_pad '", autoPad, "'");
  }
  return pads;
}

} // namespace tpu::onnx
