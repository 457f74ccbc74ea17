// Tpu module -> the code generator's plain graph (compiler/Backend/Graph.h):
// one backend Op per Tpu op, tensors named by the ops' locations, weights
// read from the module's weight arrays. The graph is validated; an error
// names the Tpu op (and its location) that does not translate.
#pragma once

#include "compiler/Backend/Graph.h"
#include "support/Npz.h"
#include "support/Status.h"

#include "mlir/IR/BuiltinOps.h"

namespace tpu::exporter {

Result<backend::Graph> toGraph(mlir::ModuleOp module, const NpzMap &weights);

} // namespace tpu::exporter
