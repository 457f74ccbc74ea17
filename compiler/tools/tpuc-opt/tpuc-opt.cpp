// mlir-opt for the Top dialect: parses, runs passes (--canonicalize,
// --top-shape-infer, ...) and prints.
#include "compiler/Dialect/Top/TopOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

#if __has_include("compiler/Transforms/Passes.h")
#include "compiler/Transforms/Passes.h"
#define TPU_HAVE_TOP_PASSES 1
#endif

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<top::TopDialect, mlir::func::FuncDialect>();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerSymbolDCEPass();
#ifdef TPU_HAVE_TOP_PASSES
  top::registerTopPasses();
#endif
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, "Top dialect optimizer\n", registry));
}
