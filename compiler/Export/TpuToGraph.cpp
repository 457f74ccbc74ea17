#include "compiler/Export/TpuToGraph.h"

#include "compiler/Dialect/Top/TopOps.h"
#include "compiler/Dialect/Tpu/TpuOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <set>

using namespace mlir;

namespace tpu::exporter {

namespace {

using backend::DType;
using backend::OpKind;

Result<DType> dtypeOf(Type elem) {
  if (elem.isF32()) return DType::F32;
  if (elem.isSignlessInteger(8) || elem.isSignedInteger(8)) return DType::I8;
  if (elem.isUnsignedInteger(8)) return DType::U8;
  if (elem.isInteger(16)) return DType::I16;
  if (elem.isInteger(32)) return DType::I32;
  std::string s;
  llvm::raw_string_ostream os(s);
  elem.print(os);
  return makeError("element type ", os.str(), " has no back-end dtype");
}

std::string locText(Location loc) {
  std::string s;
  llvm::raw_string_ostream os(s);
  loc.print(os);
  return os.str();
}

class Exporter {
public:
  Exporter(const NpzMap &weights) : weights_(weights) {}
  Result<backend::Graph> run(ModuleOp module);

private:
  Status translate(Operation *op);
  Result<int> tensorFor(Value v, const std::string &name);
  Result<int> input(Value v);

  const NpzMap &weights_;
  backend::Graph g_;
  llvm::DenseMap<Value, int> ids_;
  std::set<std::string> names_;
  int unnamed_ = 0;
};

std::string nameOf(Operation *op) {
  if (auto nl = dyn_cast<NameLoc>(op->getLoc())) return nl.getName().str();
  return "";
}

Result<int> Exporter::tensorFor(Value v, const std::string &base) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type) return makeError("value is not a ranked tensor");
  backend::Tensor t;
  t.name = base.empty() ? "tensor_" + std::to_string(unnamed_++) : base;
  for (int i = 1; names_.count(t.name); ++i) t.name = base + "_" + std::to_string(i);
  names_.insert(t.name);
  t.shape.assign(type.getShape().begin(), type.getShape().end());
  auto dt = dtypeOf(type.getElementType());
  if (!dt) return makeError(dt.message());
  t.dtype = *dt;
  if (auto s = tpuir::scaleOf(type)) t.scale = *s;
  else if (backend::isInt8Like(t.dtype) && !v.getDefiningOp<top::WeightOp>())
    return makeError("int8 activation without a scale (tensor<...xi8, SCALE : f32>)");
  int id = g_.addTensor(std::move(t));
  ids_[v] = id;
  return id;
}

// The tensor of an operand; weights become weight tensors on first use.
Result<int> Exporter::input(Value v) {
  if (auto it = ids_.find(v); it != ids_.end()) return it->second;
  auto w = v.getDefiningOp<top::WeightOp>();
  if (!w) return makeError("operand is defined by an op that is not translated");
  std::string name = w.getName().str();
  auto arr = weights_.find(name);
  if (arr == weights_.end()) return makeError("weight '", name, "' is not in the weight file");
  auto id = tensorFor(v, name);
  if (!id) return id;
  backend::Tensor &t = g_.tensors[size_t(*id)];
  if (arr->second.shape != t.shape || arr->second.dtype != backend::dtypeName(t.dtype))
    return makeError("weight '", name, "' is ", arr->second.dtype, " ", shapeToString(arr->second.shape),
                     " in the file but ", backend::dtypeName(t.dtype), " ", shapeToString(t.shape), " in the module");
  t.data = arr->second.data;
  return id;
}

Status Exporter::translate(Operation *op) {
  backend::Op o;
  o.name = nameOf(op);
  auto attrI64 = [&](const char *n, int64_t dflt) {
    auto a = op->getAttrOfType<IntegerAttr>(n);
    return a ? a.getInt() : dflt;
  };
  auto attrArr = [&](const char *n) -> std::vector<int64_t> {
    auto a = op->getAttrOfType<DenseI64ArrayAttr>(n);
    return a ? std::vector<int64_t>(a.asArrayRef()) : std::vector<int64_t>{};
  };
  auto attrF64 = [&](const char *n) {
    auto a = op->getAttrOfType<FloatAttr>(n);
    return a ? a.getValueAsDouble() : 0.0;
  };
  auto attrBool = [&](const char *n) {
    auto a = op->getAttrOfType<BoolAttr>(n);
    return a && a.getValue();
  };
  auto kind = llvm::TypeSwitch<Operation *, std::optional<OpKind>>(op)
                  .Case<tpuir::ConvOp>([](auto) { return OpKind::Conv; })
                  .Case<tpuir::ConvTransposeOp>([](auto) { return OpKind::ConvTranspose; })
                  .Case<tpuir::AffineOp>([](auto) { return OpKind::Affine; })
                  .Case<tpuir::MaxPoolOp, tpuir::AvgPoolOp>([](auto) { return OpKind::Pool; })
                  .Case<tpuir::GlobalAvgPoolOp>([](auto) { return OpKind::GlobalAvgPool; })
                  .Case<tpuir::AddOp>([](auto) { return OpKind::Add; })
                  .Case<tpuir::MulOp>([](auto) { return OpKind::Mul; })
                  .Case<tpuir::MaxOp>([](auto) { return OpKind::Max; })
                  .Case<tpuir::ReluOp>([](auto) { return OpKind::Relu; })
                  .Case<tpuir::LeakyReluOp>([](auto) { return OpKind::LeakyRelu; })
                  .Case<tpuir::ClipOp>([](auto) { return OpKind::Clip; })
                  .Case<tpuir::LutOp>([](auto) { return OpKind::Lut; })
                  .Case<tpuir::SigmoidOp>([](auto) { return OpKind::Sigmoid; })
                  .Case<tpuir::FcOp>([](auto) { return OpKind::Fc; })
                  .Case<tpuir::ConcatOp>([](auto) { return OpKind::Concat; })
                  .Case<tpuir::UpsampleOp>([](auto) { return OpKind::Upsample; })
                  .Case<tpuir::ReshapeOp>([](auto) { return OpKind::Reshape; })
                  .Case<tpuir::CastOp>([](auto) { return OpKind::Cast; })
                  .Case<tpuir::RequantOp>([](auto) { return OpKind::Requant; })
                  .Default([](auto) { return std::nullopt; });
  if (!kind) return makeError("no back-end op for ", op->getName().getStringRef().str());
  o.kind = *kind;
  for (Value v : op->getOperands()) {
    if (isa<NoneType>(v.getType())) continue;
    auto id = input(v);
    if (!id) return makeError("operand ", o.inputs.size(), ": ", id.message());
    o.inputs.push_back(*id);
  }
  if (op->getNumResults() != 1) return makeError("expected one result");
  auto out = tensorFor(op->getResult(0), o.name);
  if (!out) return makeError(out.message());
  o.output = *out;
  o.name = g_.tensors[size_t(o.output)].name;
  o.relu = attrBool("do_relu");
  o.rshift = uint32_t(std::clamp<int64_t>(attrI64("rshift", 0), 0, 255));
  for (int64_t m : attrArr("multipliers")) o.multipliers.push_back(int32_t(m));
  if (auto k = attrArr("kernel_shape"); k.size() == 2) {
    auto s = attrArr("strides"), p = attrArr("pads"), d = attrArr("dilations");
    if (s.size() != 2 || p.size() != 4 || d.size() != 2)
      return makeError("strides, dilations need 2 values and pads 4 (top, left, bottom, right)");
    o.window.kh = k[0], o.window.kw = k[1];
    o.window.strideH = s[0], o.window.strideW = s[1];
    o.window.dilationH = d[0], o.window.dilationW = d[1];
    o.window.padTop = p[0], o.window.padLeft = p[1], o.window.padBottom = p[2], o.window.padRight = p[3];
    o.window.groups = attrI64("group", 1);
    o.window.isMax = isa<tpuir::MaxPoolOp>(op);
  } else if (isa<tpuir::ConvOp, tpuir::ConvTransposeOp, tpuir::MaxPoolOp, tpuir::AvgPoolOp>(op)) {
    return makeError("kernel_shape needs 2 values");
  }
  o.alpha = float(attrF64("alpha")), o.beta = float(attrF64("beta"));
  o.clipMin = float(attrF64("min")), o.clipMax = float(attrF64("max"));
  o.scaleH = attrI64("scale_h", 1), o.scaleW = attrI64("scale_w", 1);
  g_.ops.push_back(std::move(o));
  return Status::ok();
}

Result<backend::Graph> Exporter::run(ModuleOp module) {
  func::FuncOp fn;
  module.walk([&](func::FuncOp f) {
    if (!fn || f.getName() == "main") fn = f;
  });
  if (!fn || fn.getBody().empty()) return makeError("the module has no function");
  g_.name = "net";
  for (Operation &op : fn.getBody().front()) {
    if (isa<top::WeightOp, top::NoneOp>(op)) continue;
    if (auto in = dyn_cast<top::InputOp>(op)) {
      auto id = tensorFor(in.getOutput(), nameOf(&op));
      if (!id) return makeError("top.input at ", locText(op.getLoc()), ": ", id.message());
      g_.inputs.push_back(*id);
      continue;
    }
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (Value v : ret.getOperands()) {
        auto it = ids_.find(v);
        if (it == ids_.end()) return makeError("a returned value is not computed by a Tpu op");
        g_.outputs.push_back(it->second);
      }
      continue;
    }
    if (auto st = translate(&op); !st)
      return makeError(op.getName().getStringRef().str(), " '", nameOf(&op), "' at ", locText(op.getLoc()), ": ",
                       st.message());
  }
  if (auto st = g_.validate(); !st) return makeError("the lowered graph is invalid: ", st.message());
  return std::move(g_);
}

} // namespace

Result<backend::Graph> toGraph(ModuleOp module, const NpzMap &weights) {
  Exporter e(weights);
  return e.run(module);
}

} // namespace tpu::exporter
