// mlir-opt for the Top dialect: parses, runs passes (--canonicalize,
// --top-shape-infer, --top-fold-weights, --top-dce, ...) and prints.
#include "compiler/Dialect/Top/TopOps.h"
#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<top::TopDialect, mlir::func::FuncDialect>();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerSymbolDCEPass();
  top::registerTopPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, "Top dialect optimizer\n", registry));
}
