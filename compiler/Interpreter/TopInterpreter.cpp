#include "compiler/Interpreter/TopInterpreter.h"

#include "compiler/Dialect/Top/TopOps.h"
#include "compiler/Dialect/Top/WeightStore.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/SourceMgr.h"

#include <map>
#include <set>

using namespace mlir;

namespace top {
namespace {

using Shape = std::vector<int64_t>;

// The static shape of a tensor value; none for a top.none result.
Shape shapeOf(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t ? Shape(t.getShape().begin(), t.getShape().end()) : Shape();
}

std::string opLabel(Operation *op, const std::string &name) {
  return op->getName().getStringRef().str() + " '" + name + "'";
}

// Collects the first error diagnostic as "file:line:col: message".
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(MLIRContext *context)
      : handler_(context, [this](Diagnostic &diag) {
          if (diag.getSeverity() == DiagnosticSeverity::Error && message_.empty()) {
            std::string where;
            if (auto loc = dyn_cast<FileLineColLoc>(diag.getLocation()))
              where = loc.getFilename().str() + ":" + std::to_string(loc.getLine()) + ":" +
                      std::to_string(loc.getColumn()) + ": ";
            message_ = where + diag.str();
          }
          return success();
        }) {}
  const std::string &message() const { return message_; }

private:
  std::string message_;
  ScopedDiagnosticHandler handler_;
};

} // namespace

struct TopInterpreter::Impl {
  ModuleOp module;
  func::FuncOp func;
  std::vector<TensorInfo> inputs, outputs;
  std::vector<Value> inputValues;                // function arguments, in order
  llvm::DenseMap<Value, std::string> names;      // every value's tensor name
  llvm::DenseMap<Value, TensorValue> weights;    // top.weight results, converted once
  std::vector<Operation *> schedule;             // ops in order (without the return)
  llvm::DenseMap<Value, size_t> lastUse;         // index into schedule
  TopInterpreter::ResultHook hook;

  // Applies the hook to a produced value (a private copy when its data is
  // shared, e.g. by a reshape's input).
  void applyHook(Value v, llvm::DenseMap<Value, TensorValue> &env);

  tpu::Status prepare(const tpu::NpzMap *weightMap);
  tpu::Status nameValues();
  tpu::Status checkOp(Operation *op);
  tpu::Status execute(Operation *op, llvm::DenseMap<Value, TensorValue> &env);
};

tpu::Status TopInterpreter::Impl::nameValues() {
  std::set<std::string> taken;
  std::map<std::string, int> counters;
  auto unique = [&](std::string base) {
    std::string name = base;
    for (int i = 1; taken.count(name); ++i) name = base + "_" + std::to_string(i);
    taken.insert(name);
    return name;
  };
  auto fallback = [&](Operation *op) {
    std::string base = op->getName().stripDialect().str();
    return base + "_" + std::to_string(counters[base]++);
  };
  // Inputs first: named by the function's top.input_names, else by the
  // top.input op reading the argument, else by the argument's location.
  auto inputNames = func->getAttrOfType<ArrayAttr>(kInputNamesAttr);
  for (BlockArgument arg : func.getArguments()) {
    std::string name;
    if (inputNames && inputNames.size() == func.getNumArguments())
      if (auto s = dyn_cast<StringAttr>(inputNames[arg.getArgNumber()])) name = s.str();
    for (Operation *user : arg.getUsers())
      if (auto in = dyn_cast<InputOp>(user); in && name.empty())
        if (auto nl = dyn_cast<NameLoc>(in.getLoc())) name = nl.getName().str();
    if (name.empty())
      if (auto nl = dyn_cast<NameLoc>(arg.getLoc())) name = nl.getName().str();
    if (name.empty()) name = "arg" + std::to_string(arg.getArgNumber());
    names[arg] = unique(name);
  }
  for (Operation *op : schedule) {
    if (auto in = dyn_cast<InputOp>(op)) {
      names[in.getOutput()] = names[in.getInput()];
      continue;
    }
    std::vector<std::string> locNames;
    Location loc = op->getLoc();
    if (auto nl = dyn_cast<NameLoc>(loc)) locNames.push_back(nl.getName().str());
    else if (auto fl = dyn_cast<FusedLoc>(loc))
      for (Location l : fl.getLocations())
        if (auto n = dyn_cast<NameLoc>(l)) locNames.push_back(n.getName().str());
    for (unsigned i = 0; i < op->getNumResults(); ++i) {
      std::string base;
      if (locNames.size() == op->getNumResults()) base = locNames[i];
      else if (!locNames.empty()) base = locNames[0] + (op->getNumResults() > 1 ? "_" + std::to_string(i) : "");
      else base = fallback(op);
      names[op->getResult(i)] = unique(base);
    }
  }
  return tpu::Status::ok();
}

// Re-derives the op's result types with its own shape rule (on a detached
// clone) and requires them to equal the module's: the kernels trust shapes.
tpu::Status TopInterpreter::Impl::checkOp(Operation *op) {
  std::string label = opLabel(op, op->getNumResults() ? names[op->getResult(0)] : "");
  if (op->getDialect() == nullptr || op->getDialect()->getNamespace() != "top")
    return tpu::makeError(label, ": not a Top dialect op");
  for (Value r : op->getResults()) {
    if (isa<NoneType>(r.getType())) continue;
    auto t = dyn_cast<RankedTensorType>(r.getType());
    if (!t || !t.hasStaticShape())
      return tpu::makeError(label, ": result has no static shape (run shape inference first)");
    if (dtypeOfElement(t.getElementType()).empty())
      return tpu::makeError(label, ": unsupported element type (f32, i64 or i1 only)");
  }
  if (op->hasTrait<OpTrait::Constant>()) return tpu::Status::ok();
  auto shaped = dyn_cast<ShapeInferInterface>(op);
  if (!shaped) return tpu::makeError(label, ": op has no shape rule");
  Operation *clone = op->clone();
  DiagnosticCollector diags(op->getContext());
  bool ok = succeeded(cast<ShapeInferInterface>(clone).inferShapes());
  std::string mismatch;
  if (ok) {
    for (unsigned i = 0; i < op->getNumResults(); ++i)
      if (clone->getResult(i).getType() != op->getResult(i).getType()) {
        std::string want, have;
        llvm::raw_string_ostream ws(want), hs(have);
        clone->getResult(i).getType().print(ws);
        op->getResult(i).getType().print(hs);
        mismatch = "result " + std::to_string(i) + " is " + hs.str() + " but the operands give " + ws.str();
        break;
      }
  }
  clone->destroy();
  if (!ok) return tpu::makeError(label, ": ", diags.message().empty() ? "shape rule failed" : diags.message());
  if (!mismatch.empty()) return tpu::makeError(label, ": ", mismatch);
  return tpu::Status::ok();
}

tpu::Status TopInterpreter::Impl::prepare(const tpu::NpzMap *weightMap) {
  func = module.lookupSymbol<func::FuncOp>("main");
  if (!func) {
    auto funcs = module.getOps<func::FuncOp>();
    if (std::distance(funcs.begin(), funcs.end()) != 1)
      return tpu::makeError("module needs a function named 'main' or exactly one function");
    func = *funcs.begin();
  }
  if (func.isExternal()) return tpu::makeError("function '", func.getName().str(), "' has no body");
  if (!func.getBody().hasOneBlock()) return tpu::makeError("function must have a single block");
  Block &block = func.getBody().front();
  Operation *ret = block.getTerminator();
  for (Operation &op : block)
    if (&op != ret) schedule.push_back(&op);
  TPU_RETURN_IF_ERROR(nameValues());

  for (BlockArgument arg : func.getArguments()) {
    auto t = dyn_cast<RankedTensorType>(arg.getType());
    if (!t || !t.hasStaticShape() || dtypeOfElement(t.getElementType()).empty())
      return tpu::makeError("input '", names[arg], "' needs a static f32/i64/i1 tensor type");
    inputs.push_back({names[arg], shapeOf(arg), dtypeOfElement(t.getElementType())});
    inputValues.push_back(arg);
  }
  // Outputs: the function's top.output_names (the ONNX graph outputs, also
  // when one is an input or another output), else the value names.
  auto outputNames = func->getAttrOfType<ArrayAttr>(kOutputNamesAttr);
  for (unsigned i = 0; i < ret->getNumOperands(); ++i) {
    Value v = ret->getOperand(i);
    std::string name = names[v];
    if (outputNames && outputNames.size() == ret->getNumOperands())
      if (auto s = dyn_cast<StringAttr>(outputNames[i])) name = s.str();
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || !t.hasStaticShape()) return tpu::makeError("output '", name, "' has no static shape");
    outputs.push_back({name, shapeOf(v), dtypeOfElement(t.getElementType())});
  }
  for (Operation *op : schedule) TPU_RETURN_IF_ERROR(checkOp(op));

  WeightStore store;
  if (weightMap) {
    store.arrays() = *weightMap;
  } else {
    bool anyWeight = false;
    for (Operation *op : schedule) anyWeight |= isa<WeightOp>(op);
    if (anyWeight) {
      auto loaded = WeightStore::loadFor(module);
      if (!loaded) return loaded.status();
      store = loaded.take();
    }
  }
  for (Operation *op : schedule) {
    auto w = dyn_cast<WeightOp>(op);
    if (!w) continue;
    auto array = store.get(w);
    if (!array) return array.status();
    TensorValue t;
    t.shape = (*array)->shape;
    t.values = std::make_shared<std::vector<float>>((*array)->toFloat());
    weights[w.getOutput()] = std::move(t);
  }
  for (size_t i = 0; i < schedule.size(); ++i)
    for (Value v : schedule[i]->getOperands()) lastUse[v] = i;
  for (Value v : ret->getOperands()) lastUse[v] = schedule.size();
  return tpu::Status::ok();
}

// Constants are bound before the run (the weights); every other op computes
// its results with its own evaluate (EvaluateInterface, its family file).
tpu::Status TopInterpreter::Impl::execute(Operation *op, llvm::DenseMap<Value, TensorValue> &env) {
  if (op->hasTrait<OpTrait::Constant>()) {
    for (Value r : op->getResults())
      if (auto w = weights.find(r); w != weights.end()) env[r] = w->second;
    return tpu::Status::ok();
  }
  std::vector<TensorValue> operands;
  for (Value v : op->getOperands()) {
    auto it = env.find(v);
    operands.push_back(it == env.end() ? TensorValue() : it->second);
  }
  auto results = evaluateOp(op, std::move(operands), opLabel(op, op->getNumResults() ? names[op->getResult(0)] : ""));
  if (!results) return results.status();
  for (unsigned i = 0; i < op->getNumResults(); ++i) env[op->getResult(i)] = std::move((*results)[i]);
  return tpu::Status::ok();
}

TopInterpreter::TopInterpreter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TopInterpreter::~TopInterpreter() = default;

tpu::Result<std::unique_ptr<TopInterpreter>> TopInterpreter::create(ModuleOp module) {
  auto impl = std::make_unique<Impl>();
  impl->module = module;
  TPU_RETURN_IF_ERROR(impl->prepare(nullptr));
  return std::unique_ptr<TopInterpreter>(new TopInterpreter(std::move(impl)));
}

tpu::Result<std::unique_ptr<TopInterpreter>> TopInterpreter::create(ModuleOp module, const tpu::NpzMap &weights) {
  auto impl = std::make_unique<Impl>();
  impl->module = module;
  TPU_RETURN_IF_ERROR(impl->prepare(&weights));
  return std::unique_ptr<TopInterpreter>(new TopInterpreter(std::move(impl)));
}

const std::vector<TensorInfo> &TopInterpreter::inputs() const { return impl_->inputs; }
void TopInterpreter::setResultHook(ResultHook hook) { impl_->hook = std::move(hook); }
const std::string &TopInterpreter::nameOf(Value value) const {
  static const std::string unnamed;
  auto it = impl_->names.find(value);
  return it == impl_->names.end() ? unnamed : it->second;
}

void TopInterpreter::Impl::applyHook(Value v, llvm::DenseMap<Value, TensorValue> &env) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  auto it = env.find(v);
  if (!hook || !t || !t.getElementType().isF32() || it == env.end() || !it->second.values) return;
  std::shared_ptr<std::vector<float>> &data = it->second.values;
  if (data.use_count() > 1) data = std::make_shared<std::vector<float>>(*data);
  hook(names[v], *data);
}
const std::vector<TensorInfo> &TopInterpreter::outputs() const { return impl_->outputs; }

static tpu::NpyArray toArray(const TensorValue &t, const std::string &dtype) {
  int64_t n = t.numElements();
  const float *p = t.ptr();
  if (dtype == "int64") {
    std::vector<int64_t> v(n);
    for (int64_t i = 0; i < n; ++i) v[i] = static_cast<int64_t>(p[i]);
    return tpu::NpyArray::from<int64_t>(t.shape, v);
  }
  if (dtype == "bool") {
    std::vector<uint8_t> v(n);
    for (int64_t i = 0; i < n; ++i) v[i] = p[i] != 0.0f;
    tpu::NpyArray a = tpu::NpyArray::from<uint8_t>(t.shape, v);
    a.dtype = "bool";
    return a;
  }
  return tpu::NpyArray::from(t.shape, p, n);
}

tpu::Result<tpu::NpzMap> TopInterpreter::run(const tpu::NpzMap &inputs, bool dumpAll) {
  Impl &m = *impl_;
  llvm::DenseMap<Value, TensorValue> env;
  std::set<std::string> expected;
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    const TensorInfo &info = m.inputs[i];
    expected.insert(info.name);
    auto it = inputs.find(info.name);
    if (it == inputs.end()) {
      std::string have;
      for (const auto &[name, a] : inputs) have += (have.empty() ? "" : ", ") + name;
      return tpu::makeError("input '", info.name, "' is missing (given: ", have.empty() ? "none" : have, ")");
    }
    const tpu::NpyArray &a = it->second;
    if (a.shape != info.shape)
      return tpu::makeError("input '", info.name, "' has shape ", tpu::shapeToString(a.shape), " but the model expects ",
                            tpu::shapeToString(info.shape));
    if (a.dtype != info.dtype)
      return tpu::makeError("input '", info.name, "' has dtype ", a.dtype, " but the model expects ", info.dtype);
    TensorValue t;
    t.shape = a.shape;
    t.values = std::make_shared<std::vector<float>>(a.toFloat());
    env[m.inputValues[i]] = std::move(t);
  }
  for (const auto &[name, a] : inputs)
    if (!expected.count(name)) {
      std::string want;
      for (const auto &info : m.inputs) want += (want.empty() ? "" : ", ") + info.name;
      return tpu::makeError("'", name, "' is not a model input (inputs: ", want, ")");
    }

  tpu::NpzMap result;
  auto record = [&](Value v, const std::string &name) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t) return;
    auto it = env.find(v);
    if (it != env.end()) result[name] = toArray(it->second, dtypeOfElement(t.getElementType()));
  };
  for (Value v : m.inputValues) m.applyHook(v, env);
  if (dumpAll)
    for (Value v : m.inputValues) record(v, m.names[v]);
  for (size_t i = 0; i < m.schedule.size(); ++i) {
    Operation *op = m.schedule[i];
    TPU_RETURN_IF_ERROR(m.execute(op, env));
    // Constants and the inputs' aliases were hooked (or are not activations).
    const bool produced = !op->hasTrait<OpTrait::Constant>() && !isa<InputOp>(op);
    if (produced)
      for (Value r : op->getResults()) m.applyHook(r, env);
    if (dumpAll && produced)
      for (Value r : op->getResults()) record(r, m.names[r]);
    // Free what no later op reads (results nobody reads included).
    for (Value v : op->getOperands()) {
      auto lu = m.lastUse.find(v);
      if (lu != m.lastUse.end() && lu->second == i) env.erase(v);
    }
    for (Value r : op->getResults())
      if (!m.lastUse.count(r)) env.erase(r);
  }
  Operation *ret = m.func.getBody().front().getTerminator();
  for (unsigned i = 0; i < ret->getNumOperands(); ++i) record(ret->getOperand(i), m.outputs[i].name);
  return result;
}

void registerTopDialects(MLIRContext &context) {
  context.getOrLoadDialect<TopDialect>();
  context.getOrLoadDialect<func::FuncDialect>();
}

tpu::Result<OwningOpRef<ModuleOp>> loadTopModule(MLIRContext &context, const std::string &path) {
  registerTopDialects(context);
  DiagnosticCollector diags(&context);
  llvm::SourceMgr sourceMgr;
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) return tpu::makeError(path, ": cannot open file");
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module) return tpu::makeError(diags.message().empty() ? path + ": cannot parse" : diags.message());
  // The weight file is found relative to the module's location; a module
  // written from another one (deploy's Tpu module) still carries the location
  // of the file it came from, so locate it at the file it was read from.
  (*module)->setLoc(FileLineColLoc::get(&context, path, 1, 1));
  return module;
}

} // namespace top
