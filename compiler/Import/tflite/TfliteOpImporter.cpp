#include "compiler/Import/tflite/TfliteOpImporter.h"

#include "mlir/IR/Verifier.h"

using namespace mlir;

namespace tpu::tflite {

std::vector<int64_t> shapeOf(Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  return std::vector<int64_t>(t.getShape().begin(), t.getShape().end());
}

std::vector<int64_t> permuted(const std::vector<int64_t> &shape, const std::vector<int64_t> &order) {
  std::vector<int64_t> out;
  for (int64_t o : order) out.push_back(shape[o]);
  return out;
}

namespace {

// A permutation that keeps the relative order of the dims larger than 1 moves no data.
bool movesData(const std::vector<int64_t> &shape, const std::vector<int64_t> &order) {
  int64_t last = -1;
  for (int64_t o : order)
    if (shape[o] != 1) {
      if (o < last) return true;
      last = o;
    }
  return false;
}

} // namespace

std::pair<int64_t, int64_t> windowPads(Padding p, int64_t in, int64_t k, int64_t s, int64_t d) {
  if (p == Padding::Valid) return {0, 0};
  int64_t out = (in + s - 1) / s;
  int64_t total = std::max<int64_t>(0, (out - 1) * s + (k - 1) * d + 1 - in);
  return {total / 2, total - total / 2};
}

const Tensor *TfliteImporter::constant(const Operator &op, size_t i) const {
  if (!present(op, i) || values_.count(op.inputs[i])) return nullptr;
  if (auto it = folded_.find(op.inputs[i]); it != folded_.end()) return &it->second;
  const Tensor &t = tensor(op.inputs[i]);
  return t.isConstant() ? &t : nullptr;
}

Result<std::vector<int64_t>> TfliteImporter::ints(const Operator &op, size_t i, const std::string &what) {
  const Tensor *t = constant(op, i);
  if (!t) return makeError(op.describe(), ": input ", i, " (", what, ") must be a constant");
  auto v = integerValues(*t);
  if (!v) return Status(v.status()).prefix(op.describe());
  return v;
}

Result<int64_t> TfliteImporter::axisIn(const Operator &op, int64_t axis, int64_t rank) {
  auto a = onnx::normalizeAxis(axis, rank);
  if (!a) return Status(a.status()).prefix(op.describe());
  return a;
}

std::string TfliteImporter::uniqueName(const std::string &base) {
  if (used_.insert(base).second) return base;
  std::string name;
  for (int i = 1;; ++i) {
    name = base + "_" + std::to_string(i);
    if (!tensorNames_.count(name) && used_.insert(name).second) return name;
  }
}

Status TfliteImporter::verified(Operation *op, const std::string &context, const char *fallback) {
  diags_.clear();
  if (failed(verify(op)) || failed(cast<top::ShapeInferInterface>(op).inferShapes()))
    return makeError(context, ": ", diags_.empty() ? fallback : diags_.back());
  return Status::ok();
}

Value TfliteImporter::none() { return b_.create<top::NoneOp>(b_.getUnknownLoc(), NoneType::get(&ctx_)).getOutput(); }

Value TfliteImporter::weight(const std::string &base, NpyArray array) {
  std::string name = uniqueName(base);
  auto type = RankedTensorType::get(array.shape, b_.getF32Type());
  weights_[name] = std::move(array);
  return b_.create<top::WeightOp>(loc(name), type, b_.getStringAttr(name)).getOutput();
}

Result<Value> TfliteImporter::permute(Value v, const std::vector<int64_t> &order, const std::string &name) {
  std::vector<int64_t> shape = shapeOf(v);
  if (!movesData(shape, order)) {
    if (permuted(shape, order) == shape) return v;
    return build<top::ReshapeOp>(name, {v}, {i64s("shape", permuted(shape, order))}, name);
  }
  return build<top::PermuteOp>(name, {v}, {i64s("order", order)}, name);
}

Result<Value> TfliteImporter::operand(const Operator &op, size_t i) {
  if (!present(op, i)) return makeError(op.describe(), ": input ", i, " is missing");
  int32_t idx = op.inputs[i];
  if (auto it = values_.find(idx); it != values_.end()) return it->second;
  const Tensor *c = constant(op, i);
  if (!c) return makeError(op.describe(), ": input tensor '", tensor(idx).name, "' is used before it is produced");
  const Tensor &t = *c;
  auto real = realValues(t);
  if (!real) return Status(real.status()).prefix(op.describe());
  if (t.shape.size() == 4) return weight(t.name, onnx::transposeArray(*real, kNhwcToNchw));
  return weight(t.name, real.take());
}

Result<Value> TfliteImporter::nativeOperand(const Operator &op, size_t i) {
  auto v = operand(op, i);
  if (!v || shapeOf(*v).size() != 4) return v;
  return toNhwc(*v, tensor(op.inputs[i]).name);
}

Result<std::vector<int64_t>> TfliteImporter::nativeShape(const Operator &op, size_t i) {
  auto v = nativeOperand(op, i);
  if (!v) return v.status();
  return shapeOf(*v);
}

Status TfliteImporter::bindNative(const Operator &op, size_t k, Value native) {
  if (shapeOf(native).size() != 4) {
    bind(op.outputs.at(k), native);
    return Status::ok();
  }
  auto v = toNchw(native, outName(op, k));
  if (!v) return v.status();
  bind(op.outputs.at(k), *v);
  return Status::ok();
}

Result<Value> TfliteImporter::activate(Value v, Activation a, const std::string &name, const Operator &op) {
  switch (a) {
  case Activation::None:
    return v;
  case Activation::Relu:
    return build<top::ReluOp>(name, {v}, {}, op.describe());
  case Activation::Relu6:
    return build<top::ClipOp>(name, {v}, {f64("min", 0.0), f64("max", 6.0)}, op.describe());
  case Activation::ReluN1To1:
    return build<top::ClipOp>(name, {v}, {f64("min", -1.0), f64("max", 1.0)}, op.describe());
  case Activation::Tanh:
    return build<top::TanhOp>(name, {v}, {}, op.describe());
  default:
    return makeError(op.describe(), ": fused activation ", int(a), " is not supported");
  }
}

Result<Value> TfliteImporter::broadcastOperand(const Operator &op, size_t i, size_t rank) {
  if (rank != 4) return nativeOperand(op, i);
  if (const Tensor *t = constant(op, i); t && t->shape.size() < 4) {
    auto real = realValues(*t);
    if (!real) return Status(real.status()).prefix(op.describe());
    std::vector<int64_t> shape(4 - t->shape.size(), 1);
    shape.insert(shape.end(), t->shape.begin(), t->shape.end());
    return weight(t->name, onnx::transposeArray(onnx::reshapeArray(real.take(), shape), kNhwcToNchw));
  }
  auto v = operand(op, i);
  if (!v || shapeOf(*v).size() == 4) return v;
  std::vector<int64_t> shape = shapeOf(*v);
  shape.insert(shape.begin(), 4 - shape.size(), 1);
  std::string name = tensor(op.inputs[i]).name;
  auto r = build<top::ReshapeOp>(name + "_rank4", {*v}, {i64s("shape", shape)}, op.describe());
  if (!r) return r;
  return toNchw(*r, name);
}

size_t TfliteImporter::rankOf(const Operator &op, size_t i) {
  if (const Tensor *t = constant(op, i)) return t->shape.size();
  auto it = values_.find(op.inputs[i]);
  return it == values_.end() ? 0 : shapeOf(it->second).size();
}

const OpHandler *OpTable::find(const Operator &op) const {
  if (op.builtinCode == CUSTOM) {
    auto it = custom_.find(op.customCode);
    return it == custom_.end() ? nullptr : &it->second;
  }
  auto it = builtin_.find(op.builtinCode);
  return it == builtin_.end() ? nullptr : &it->second;
}

} // namespace tpu::tflite
