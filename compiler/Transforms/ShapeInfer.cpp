#include "compiler/Dialect/Top/TopOps.h"
#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace top {
#define GEN_PASS_DEF_TOPSHAPEINFER
#include "compiler/Transforms/Passes.h.inc"

namespace {
struct ShapeInferPass : impl::TopShapeInferBase<ShapeInferPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<mlir::func::FuncOp>()) {
      auto walk = func.walk([](ShapeInferInterface op) {
        return mlir::failed(op.inferShapes()) ? mlir::WalkResult::interrupt() : mlir::WalkResult::advance();
      });
      if (walk.wasInterrupted()) return signalPassFailure();
      auto ret = llvm::cast<mlir::func::ReturnOp>(func.getBody().back().getTerminator());
      func.setFunctionType(mlir::FunctionType::get(&getContext(), func.getArgumentTypes(), ret.getOperandTypes()));
    }
  }
};
} // namespace
} // namespace top
