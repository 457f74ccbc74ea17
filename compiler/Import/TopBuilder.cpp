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
