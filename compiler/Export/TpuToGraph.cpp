#include "compiler/Export/TpuToGraph.h"

#include "compiler/Dialect/Top/TopOps.h"
#include "compiler/Dialect/Tpu/TpuOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

#include <set>

using namespace mlir;

namespace tpu::exporter {

namespace {

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

Result<int> Exporter::tensorFor(Value v, const std::string &base) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type) return makeError("value is not a ranked tensor");
  std::string name = base.empty() ? "tensor_" + std::to_string(unnamed_++) : base;
  for (int i = 1; names_.count(name); ++i) name = base + "_" + std::to_string(i);
  auto t = tpuir::backendTensor(v, name, bool(v.getDefiningOp<top::WeightOp>()));
  if (!t) return t.status();
  names_.insert(name);
  int id = g_.addTensor(std::move(*t));
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
  o.name = tpuir::opName(op);
  auto backendOp = dyn_cast<tpuir::BackendOpInterface>(op);
  if (!backendOp) return makeError("no back-end op for ", op->getName().getStringRef().str());
  TPU_RETURN_IF_ERROR(backendOp.exportAttributes(o));
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
    if (op.hasTrait<top::OpTrait::Constant>()) continue; // weights are read where a Tpu op uses them
    if (auto in = dyn_cast<top::InputOp>(op)) {
      auto id = tensorFor(in.getOutput(), tpuir::opName(&op));
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
      return makeError(op.getName().getStringRef().str(), " '", tpuir::opName(&op), "' at ", locText(op.getLoc()), ": ",
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
