// The steps every importer (ONNX, TFLite) runs after building its Top module,
// and the file it writes. compiler/Import/OnnxImporter.cpp still spells these
// out itself; it can call them instead.
#pragma once

#include "support/Npz.h"
#include "support/Status.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"

#include <string>
#include <vector>

namespace tpu::import {

// A diagnostic as one line, prefixed with the op's name location: "'conv1': message".
std::string diagnosticText(mlir::Diagnostic &d);

// Unless !canonicalize: the fuse patterns on the in-memory weights, then MLIR's
// canonicalizer; then verification; then only the weights a top.weight still
// names are kept. `diagnostics` collects the context's messages (for the error).
Status finishModule(mlir::ModuleOp module, NpzMap &weights, bool canonicalize, std::vector<std::string> &diagnostics);

// Writes the module as text: op locations (the tensor names) printed, the
// module's own location left out so that a parser gives it the file's
// location, against which the relative weight file name resolves.
Status writeTopModule(mlir::ModuleOp module, const std::string &mlirPath);

} // namespace tpu::import
