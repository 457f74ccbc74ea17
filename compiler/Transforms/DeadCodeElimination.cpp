#include "compiler/Dialect/Top/TopOps.h"
#include "compiler/Transforms/Passes.h"

namespace top {
#define GEN_PASS_DEF_TOPDEADCODEELIMINATION
#include "compiler/Transforms/Passes.h.inc"

namespace {
struct DeadCodeEliminationPass : impl::TopDeadCodeEliminationBase<DeadCodeEliminationPass> {
  void runOnOperation() override {
    // Reverse order: erasing a consumer can make its producers dead.
    llvm::SmallVector<mlir::Operation *> ops;
    getOperation().walk([&](mlir::Operation *op) {
      if (llvm::isa<TopDialect>(op->getDialect()) && !llvm::isa<InputOp>(op)) ops.push_back(op); // inputs stay named
    });
    for (auto it = ops.rbegin(); it != ops.rend(); ++it)
      if ((*it)->use_empty()) (*it)->erase();
  }
};
} // namespace
} // namespace top
