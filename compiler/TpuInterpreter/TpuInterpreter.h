// The Tpu interpreter: runs a Tpu module exactly as the chip computes it.
// The module is translated to the code generator's graph (compiler/Export)
// and every op is evaluated by compiler/Backend/QuantRef, the same integer
// reference the generated commands are checked against, so the interpreter
// and the bmodel agree bit for bit. Values are returned as float32 (int8
// tensors dequantized: q * scale), named like the Top interpreter's.
#pragma once

#include "compiler/Backend/Graph.h"
#include "compiler/Backend/QuantRef.h"
#include "support/Npz.h"
#include "support/Status.h"

#include "mlir/IR/BuiltinOps.h"

#include <memory>

namespace tpu::tpuinterp {

// True when the module's function contains Tpu-dialect ops.
bool isTpuModule(mlir::ModuleOp module);

// The graph inputs' bytes from named arrays: `inputs` must name exactly the
// graph inputs with their shapes (any numeric dtype; int8 inputs are
// quantized with their scale).
Result<std::vector<backend::Bytes>> graphInputs(const backend::Graph &graph, const NpzMap &inputs);

class TpuInterpreter {
public:
  // Loads the weights from the module's weight file (top.weight_file).
  static Result<std::unique_ptr<TpuInterpreter>> create(mlir::ModuleOp module);
  static Result<std::unique_ptr<TpuInterpreter>> create(backend::Graph graph);

  const backend::Graph &graph() const { return graph_; }
  // The outputs for `inputs` (as graphInputs takes them), or with dumpAll
  // every activation tensor.
  Result<NpzMap> run(const NpzMap &inputs, bool dumpAll = false) const;

private:
  explicit TpuInterpreter(backend::Graph g) : graph_(std::move(g)) {}
  backend::Graph graph_;
};

} // namespace tpu::tpuinterp
