// ONNX -> Top dialect. The model is read by the plain OnnxModel library; this
// builds the MLIR module: one top.input per graph input, one top.weight per
// constant that survives folding (its data goes to the weight .npz), one Top op
// per ONNX node, each located at its ONNX output name (loc("name")).
#pragma once

#include "compiler/Import/OnnxModel.h"
#include "compiler/Import/TopBuilder.h"
#include "support/Npz.h"
#include "support/Status.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace tpu::onnx {

struct ImportOptions {
  std::vector<std::vector<int64_t>> inputShapes; // empty: the model's own shapes
  std::vector<std::string> outputNames;          // empty: the graph outputs
  std::string weightFile;                        // value of the top.weight_file attribute
  bool canonicalize = true;                      // run shape inference + structural rewrites
  // Graph inputs frozen to these values (e.g. the scales/axes inputs of the
  // ONNX conformance cases): they become constants, not function arguments,
  // and --input-shapes then lists only the remaining inputs.
  std::map<std::string, NpyArray> constantInputs;
  // Called on the new module before its ops are built, to record module
  // attributes (tpuc import's preprocessing settings, compiler/Preprocess).
  std::function<void(mlir::ModuleOp)> annotateModule;
};

struct ImportedModule {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  NpzMap weights; // exactly the arrays the module's top.weight ops name
};

// The context gets the Top and func dialects loaded. Errors are one line:
// unsupported ops (all of them, with node names and opset), dynamic inputs
// without --input-shapes, bad shapes or attributes (naming the node).
Result<ImportedModule> importModel(mlir::MLIRContext &context, const Model &model, const ImportOptions &options);

// `tpuc import`: reads `onnxPath`, writes `mlirPath` and the weight file
// beside it (<mlir name without .mlir, dots as _>_weights.npz).
Status importOnnxFile(const std::string &onnxPath, const std::string &mlirPath, ImportOptions options);

// "[[1,3,224,224],[1,10]]" -> {{1,3,224,224},{1,10}}.
Result<std::vector<std::vector<int64_t>>> parseShapeList(const std::string &text);

using import::weightFileNameFor;

} // namespace tpu::onnx
