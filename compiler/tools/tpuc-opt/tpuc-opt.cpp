// mlir-opt for the Top and Tpu dialects: parses, verifies (the Tpu ops'
// verifiers, TpuOps.td), runs passes (--canonicalize, --top-shape-infer,
// --top-fold-weights, --top-dce, --convert-top-to-tpu, ...) and prints.
#include "compiler/Dialect/Top/TopOps.h"
#include "compiler/Dialect/Tpu/TpuOps.h"
#include "compiler/Lowering/Passes.h"
#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<top::TopDialect, tpuir::TpuDialect, mlir::func::FuncDialect>();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerSymbolDCEPass();
  top::registerTopPasses();
  tpu::lowering::registerTpuLoweringPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, "Top and Tpu dialect optimizer\n", registry));
}
