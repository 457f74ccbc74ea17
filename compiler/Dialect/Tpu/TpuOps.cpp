#include "compiler/Dialect/Tpu/TpuOps.h"

#include "compiler/Dialect/Top/TopOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/DenseMap.h"

#include "compiler/Dialect/Tpu/TpuDialect.cpp.inc"
#include "compiler/Dialect/Tpu/TpuInterfaces.cpp.inc"

void tpuir::TpuDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "compiler/Dialect/Tpu/TpuOps.cpp.inc"
      >();
}

using namespace mlir;
using tpu::backend::DType;

namespace tpuir {

RankedTensorType int8Type(ArrayRef<int64_t> shape, float scale, MLIRContext *ctx, bool isUnsigned) {
  Builder b(ctx);
  Type elem = isUnsigned ? Type(b.getIntegerType(8, /*isSigned=*/false)) : b.getIntegerType(8);
  return RankedTensorType::get(shape, elem, b.getF32FloatAttr(scale));
}

std::optional<float> scaleOf(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  if (!t || !t.getElementType().isInteger(8)) return std::nullopt;
  auto s = dyn_cast_or_null<FloatAttr>(t.getEncoding());
  if (!s) return std::nullopt;
  return float(s.getValueAsDouble());
}

namespace {

tpu::Result<DType> dtypeOf(Type elem) {
  if (elem.isF32()) return DType::F32;
  if (elem.isF16()) return DType::F16;
  if (elem.isBF16()) return DType::BF16;
  if (elem.isSignlessInteger(8) || elem.isSignedInteger(8)) return DType::I8;
  if (elem.isUnsignedInteger(8)) return DType::U8;
  if (elem.isInteger(16)) return DType::I16;
  if (elem.isInteger(32)) return DType::I32;
  std::string s;
  llvm::raw_string_ostream os(s);
  elem.print(os);
  return tpu::makeError("element type ", os.str(), " has no back-end dtype");
}

} // namespace

std::string opName(Operation *op) {
  if (auto nl = dyn_cast<NameLoc>(op->getLoc())) return nl.getName().str();
  return "";
}

tpu::Result<tpu::backend::Tensor> backendTensor(Value v, std::string name, bool isWeight) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type) return tpu::makeError("value is not a ranked tensor");
  tpu::backend::Tensor t;
  t.name = std::move(name);
  t.shape.assign(type.getShape().begin(), type.getShape().end());
  auto dt = dtypeOf(type.getElementType());
  if (!dt) return dt.status();
  t.dtype = *dt;
  if (auto s = scaleOf(type)) t.scale = *s;
  else if (tpu::backend::isInt8Like(t.dtype) && !isWeight)
    return tpu::makeError("int8 activation without a scale (tensor<...xi8, SCALE : f32>)");
  return t;
}

// The op exported alone into a back-end graph (its activation operands are
// the graph's inputs, its weights zero-filled) and checked by the back end.
LogicalResult verifyTpuOp(Operation *op) {
  tpu::backend::Graph g;
  tpu::backend::Op o;
  if (auto st = cast<BackendOpInterface>(op).exportAttributes(o); !st) return op->emitOpError() << st.message();
  llvm::DenseMap<Value, int> ids;
  for (auto [i, v] : llvm::enumerate(op->getOperands())) {
    if (isa<NoneType>(v.getType())) continue;
    if (auto it = ids.find(v); it != ids.end()) {
      o.inputs.push_back(it->second);
      continue;
    }
    auto w = v.getDefiningOp<top::WeightOp>();
    std::string name = w ? w.getName().str() : v.getDefiningOp() ? opName(v.getDefiningOp()) : "";
    auto t = backendTensor(v, name.empty() ? "operand " + std::to_string(i) : name, bool(w));
    if (!t) return op->emitOpError() << "operand " << i << ": " << t.message();
    if (w) t->data.assign(t->bytes(), 0);
    int id = g.addTensor(std::move(*t));
    if (!w) g.inputs.push_back(id);
    ids[v] = id;
    o.inputs.push_back(id);
  }
  std::string name = opName(op);
  auto y = backendTensor(op->getResult(0), name.empty() ? "result" : name, false);
  if (!y) return op->emitOpError() << "result: " << y.message();
  o.output = g.addTensor(std::move(*y));
  o.name = g.tensors[size_t(o.output)].name;
  g.outputs.push_back(o.output);
  g.ops.push_back(std::move(o));
  // An op of constants only (a constant output's copy) has no graph inputs: its own checks alone.
  if (auto st = g.inputs.empty() ? g.validateOp(g.ops[0]) : g.validate(); !st) return op->emitOpError() << st.message();
  return success();
}

// BackendOpInterface::exportAttributes of every op (TpuOps.td Tpu_Op): the
// attributes every Tpu op carries (fused relu, rshift, multipliers), then
// the parameters of its kind (exportParams, in Export/<Kind>.cpp).
template <class OpT> tpu::Status exportAttributesOf(OpT op, tpu::backend::Op &o) {
  o.kind = OpT::getBackendKind();
  o.relu = op.getDoRelu();
  const int64_t rshift = int64_t(op.getRshift());
  if (rshift < 0 || rshift > 31) return tpu::makeError("rshift ", rshift, " is outside [0, 31]");
  o.rshift = uint32_t(rshift);
  for (int64_t m : op.getMultipliers()) {
    if (m < INT32_MIN || m > INT32_MAX) return tpu::makeError("multiplier ", m, " does not fit int32");
    o.multipliers.push_back(int32_t(m));
  }
  return op.exportParams(o);
}

} // namespace tpuir

#define GET_OP_CLASSES
#include "compiler/Dialect/Tpu/TpuOps.cpp.inc"
