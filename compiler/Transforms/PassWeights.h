// How the Top passes load their module's weights and save new ones (the
// old weight file is never modified).
#pragma once

#include "compiler/Dialect/Top/WeightStore.h"

#include <optional>

namespace top {

// The module's weights, or nullopt once the error is reported on the module.
std::optional<WeightStore> loadWeightsOrReport(mlir::ModuleOp module);

// Saves the arrays the module's top.weight ops name to `attrValue` or, when
// empty, to <the old file's name without .npz><suffix>.npz, resolved like
// any weight file name (relative to the .mlir's directory), and points the
// module's top.weight_file at it.
tpu::Status saveDerivedWeights(mlir::ModuleOp module, WeightStore &store, const std::string &attrValue,
                               const std::string &suffix);

} // namespace top
