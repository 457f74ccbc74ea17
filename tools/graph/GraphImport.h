// Model file -> GraphModel, by extension: .onnx (imported in memory through
// the ONNX importer, nothing written), .top.mlir / .tpu.mlir (any .mlir:
// parsed and walked generically, one node per op that computes a tensor;
// weights and none values are operands, not nodes), .bmodel (BmodelGraph.h).
#pragma once

#include "support/Status.h"
#include "tools/graph/GraphModel.h"

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tpu::graph {

struct ImportOptions {
  std::vector<std::vector<int64_t>> inputShapes; // .onnx with dynamic inputs
};

// Errors: a missing file, an extension that is none of the above, and the
// importer's or reader's own error (naming the file).
Result<GraphModel> loadGraph(const std::string &path, const ImportOptions &options);

// The graph of an MLIR module (Top or Tpu dialect): `source` is "top" or "tpu".
GraphModel moduleGraph(mlir::ModuleOp module, const std::string &source);

} // namespace tpu::graph
