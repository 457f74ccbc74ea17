#include "compiler/Import/TopBuilder.h"
#include "compiler/Dialect/Top/HostEval.h"
#include "compiler/Dialect/Top/WeightStore.h"
#include "compiler/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/raw_ostream.h"

#include <set>

using namespace mlir;

namespace tpu::import {

std::string diagnosticText(Diagnostic &d) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (auto name = dyn_cast<NameLoc>(d.getLocation())) os << "'" << name.getName().strref() << "': ";
  os << d.str();
  return s;
}

namespace {

MLIRContext &withTopDialects(MLIRContext &ctx) {
  ctx.loadDialect<top::TopDialect, func::FuncDialect>();
  return ctx;
}

} // namespace

Type elementTypeOf(MLIRContext *ctx, const std::string &dtype) {
  if (dtype == "int64") return IntegerType::get(ctx, 64);
  if (dtype == "bool") return IntegerType::get(ctx, 1);
  return Float32Type::get(ctx);
}

TopBuilder::TopBuilder(MLIRContext &ctx, NpzMap &weights)
    : ctx_(withTopDialects(ctx)), b_(&ctx), weights_(weights), diagHandler_(&ctx, [this](Diagnostic &d) {
        diags_.push_back(diagnosticText(d));
        return success();
      }) {}

namespace {

constexpr int64_t kMaxShapeValues = 64;

Result<top::TensorValue> valueAtBounds(Value v, const NpzMap &weights) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape() || type.getNumElements() > kMaxShapeValues)
    return makeError("it is not computed from shapes alone");
  Operation *op = v.getDefiningOp();
  if (!op) return makeError("it reads a graph input");
  if (auto w = dyn_cast<top::WeightOp>(op)) {
    auto it = weights.find(w.getName().str());
    if (it == weights.end()) return makeError("weight '", w.getName().str(), "' is missing");
    return top::TensorValue{it->second.shape, std::make_shared<std::vector<float>>(it->second.toFloat())};
  }
  if (auto s = dyn_cast<top::ShapeOp>(op)) {
    auto in = cast<RankedTensorType>(s.getInput().getType()).getShape();
    std::vector<float> dims(in.begin() + s.getStart(), in.begin() + s.getEnd());
    return top::TensorValue{{int64_t(dims.size())}, std::make_shared<std::vector<float>>(dims)};
  }
  if (!isa<top::EvaluateInterface>(op)) return makeError(op->getName().getStringRef().str(), " cannot be evaluated");
  std::vector<top::TensorValue> operands;
  for (Value in : op->getOperands()) {
    if (in.getDefiningOp<top::NoneOp>()) {
      operands.emplace_back();
      continue;
    }
    auto value = valueAtBounds(in, weights);
    if (!value) return value.status();
    operands.push_back(value.take());
  }
  auto results = top::evaluateOp(op, std::move(operands), op->getName().getStringRef().str());
  if (!results) return results.status();
  return std::move((*results)[cast<OpResult>(v).getResultNumber()]);
}

} // namespace

Result<std::vector<int64_t>> TopBuilder::intsAtBounds(Value v) {
  auto value = valueAtBounds(v, weights_);
  if (!value) return value.status();
  std::vector<int64_t> out;
  for (float x : *value->values) out.push_back(int64_t(x));
  return out;
}

Result<Value> TopBuilder::value(const std::string &name) {
  auto it = values_.find(name);
  if (it != values_.end()) return it->second;
  auto c = consts_.find(name);
  if (c == consts_.end()) return makeError("tensor '", name, "' is used before it is produced");
  const NpyArray &a = c->second;
  auto type = RankedTensorType::get(a.shape, elementTypeOf(&ctx_, a.dtype));
  // Weights go at the top of the function, in first-use order.
  OpBuilder::InsertionGuard guard(b_);
  Block *block = b_.getInsertionBlock();
  b_.setInsertionPoint(block, block->begin());
  while (b_.getInsertionPoint() != block->end() && isa<top::InputOp, top::WeightOp>(&*b_.getInsertionPoint()))
    b_.setInsertionPoint(block, std::next(b_.getInsertionPoint()));
  auto w = b_.create<top::WeightOp>(nameLoc(name), type, b_.getStringAttr(name));
  weights_[name] = a;
  values_[name] = w.getOutput();
  return w.getOutput();
}

Value TopBuilder::none() { return b_.create<top::NoneOp>(b_.getUnknownLoc(), NoneType::get(&ctx_)).getOutput(); }

void TopBuilder::beginMain(ModuleOp module, const std::vector<std::pair<std::string, Type>> &inputs) {
  for (const auto &in : inputs) argTypes_.push_back(in.second);
  b_.setInsertionPointToEnd(module.getBody());
  main_ = b_.create<func::FuncOp>(b_.getUnknownLoc(), "main", b_.getFunctionType(argTypes_, {}));
  Block *entry = main_.addEntryBlock();
  b_.setInsertionPointToEnd(entry);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string &name = inputs[i].first;
    auto in = b_.create<top::InputOp>(nameLoc(name), argTypes_[i], entry->getArgument(i));
    values_[name] = in.getOutput();
    inputNames_.push_back(b_.getStringAttr(name));
  }
}

Status TopBuilder::endMain(const std::vector<std::string> &outputs) {
  SmallVector<Value> results;
  SmallVector<Type> resultTypes;
  SmallVector<mlir::Attribute> outputNames;
  for (const auto &name : outputs) {
    if (!isKnown(name)) return makeError("output '", name, "' is not a tensor of the model");
    auto v = value(name);
    if (!v) return v.status();
    results.push_back(*v);
    resultTypes.push_back(v->getType());
    outputNames.push_back(b_.getStringAttr(name));
  }
  b_.create<func::ReturnOp>(b_.getUnknownLoc(), results);
  main_.setFunctionType(b_.getFunctionType(argTypes_, resultTypes));
  main_->setAttr(top::kInputNamesAttr, b_.getArrayAttr(inputNames_));
  main_->setAttr(top::kOutputNamesAttr, b_.getArrayAttr(outputNames));
  return Status::ok();
}

Status finishTopModule(TopBuilder &builder, ModuleOp module, NpzMap &weights, bool canonicalize) {
  return finishTopModule(module, weights, canonicalize, builder.diagnostics());
}

Status finishTopModule(ModuleOp module, NpzMap &weights, bool canonicalize, std::vector<std::string> &diags) {
  MLIRContext &context = *module.getContext();
  if (canonicalize) {
    top::WeightStore store(std::move(weights));
    RewritePatternSet patterns(&context);
    top::populateFusePatterns(patterns, store);
    (void)applyPatternsAndFoldGreedily(module, std::move(patterns));
    weights = std::move(store.arrays());
    PassManager pm(&context);
    pm.addPass(createCanonicalizerPass());
    if (failed(pm.run(module))) return makeError("canonicalization failed: ", diags.empty() ? "" : diags.back());
  }
  diags.clear();
  if (failed(verify(module)))
    return makeError("the imported module does not verify: ", diags.empty() ? "" : diags.back());
  TPU_RETURN_IF_ERROR(top::checkShapesFromData(module));
  // Keep only the weights still referenced after folding and canonicalization.
  std::set<std::string> used;
  module.walk([&](top::WeightOp w) { used.insert(w.getName().str()); });
  for (auto it = weights.begin(); it != weights.end();)
    it = used.count(it->first) ? std::next(it) : weights.erase(it);
  return Status::ok();
}

std::string weightFileNameFor(const std::string &mlirPath) {
  std::string name = mlirPath.substr(mlirPath.find_last_of('/') + 1);
  if (name.size() > 5 && name.compare(name.size() - 5, 5, ".mlir") == 0) name.resize(name.size() - 5);
  for (char &c : name)
    if (c == '.') c = '_';
  return name + "_weights.npz";
}

Status writeTopModule(ModuleOp module, const NpzMap &weights, const std::string &mlirPath) {
  auto weightName = module->getAttrOfType<StringAttr>(top::kWeightFileAttr);
  if (!weightName) return makeError(mlirPath, ": the module has no ", top::kWeightFileAttr, " attribute");
  std::string dir = mlirPath.find('/') == std::string::npos ? "" : mlirPath.substr(0, mlirPath.find_last_of('/') + 1);
  TPU_RETURN_IF_ERROR(writeNpz(dir + weightName.getValue().str(), weights));
  std::error_code ec;
  llvm::raw_fd_ostream os(mlirPath, ec);
  if (ec) return makeError(mlirPath, ": cannot write: ", ec.message());
  // Op locations (the model's tensor names) are printed; the module's own
  // location is left out so that a parser gives it the .mlir file's location,
  // against which the relative weight file name resolves.
  OpPrintingFlags flags;
  flags.enableDebugInfo(true, /*prettyForm=*/false);
  os << "module attributes " << module->getAttrDictionary() << " {\n";
  for (Operation &op : *module.getBody()) {
    op.print(os, flags);
    os << "\n";
  }
  os << "}\n";
  os.close();
  if (os.has_error()) return makeError(mlirPath, ": write error");
  return Status::ok();
}

} // namespace tpu::import
