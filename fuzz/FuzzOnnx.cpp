// libFuzzer target: the ONNX importer. Bytes -> protobuf -> validated plain
// graph (compiler/Import/OnnxModel), then the MLIR import into the Top dialect
// (shape rules, constant folding). Anything must import or be rejected with an
// error; an imported module must pass the MLIR verifier.
#include "compiler/Dialect/Top/TopDialect.h"
#include "compiler/Import/OnnxImporter.h"
#include "compiler/Import/OnnxModel.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // External data resolves against a directory that holds nothing.
  auto model = tpu::onnx::parseModel(data, size, "/nonexistent-fuzz-dir");
  if (!model.isOk()) return 0;
  mlir::MLIRContext context;
  context.printOpOnDiagnostic(false);
  mlir::ScopedDiagnosticHandler quiet(&context, [](mlir::Diagnostic &) { return mlir::success(); });
  tpu::onnx::ImportOptions options;
  auto imported = tpu::onnx::importModel(context, *model, options);
  if (!imported.isOk()) return 0;
  if (mlir::failed(mlir::verify(imported->module.get()))) std::abort();
  return 0;
}
