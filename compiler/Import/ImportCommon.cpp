#include "compiler/Import/ImportCommon.h"
#include "compiler/Dialect/Top/TopOps.h"
#include "compiler/Dialect/Top/WeightStore.h"
#include "compiler/Transforms/Passes.h"

#include "mlir/IR/Verifier.h"
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

Status finishModule(ModuleOp module, NpzMap &weights, bool canonicalize, std::vector<std::string> &diagnostics) {
  MLIRContext *context = module.getContext();
  auto last = [&] { return diagnostics.empty() ? std::string() : diagnostics.back(); };
  if (canonicalize) {
    top::WeightStore store(std::move(weights));
    RewritePatternSet patterns(context);
    top::populateFusePatterns(patterns, store);
    (void)applyPatternsAndFoldGreedily(module, std::move(patterns));
    weights = std::move(store.arrays());
    PassManager pm(context);
    pm.addPass(createCanonicalizerPass());
    if (failed(pm.run(module))) return makeError("canonicalization failed: ", last());
  }
  diagnostics.clear();
  if (failed(verify(module))) return makeError("the imported module does not verify: ", last());
  std::set<std::string> used;
  module.walk([&](top::WeightOp w) { used.insert(w.getName().str()); });
  for (auto it = weights.begin(); it != weights.end();)
    it = used.count(it->first) ? std::next(it) : weights.erase(it);
  return Status::ok();
}

Status writeTopModule(ModuleOp module, const std::string &mlirPath) {
  std::error_code ec;
  llvm::raw_fd_ostream os(mlirPath, ec);
  if (ec) return makeError(mlirPath, ": cannot write: ", ec.message());
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
