// How a Top pass that computed new weights saves them (the old weight file
// is never modified).
#pragma once

#include "compiler/Dialect/Top/WeightStore.h"

namespace top {

// Saves the arrays the module's top.weight ops name to `attrValue` or, when
// empty, to <the old file's name without .npz><suffix>.npz, resolved like
// any weight file name (relative to the .mlir's directory), and points the
// module's top.weight_file at it.
tpu::Status saveDerivedWeights(mlir::ModuleOp module, WeightStore &store, const std::string &attrValue,
                               const std::string &suffix);

} // namespace top
