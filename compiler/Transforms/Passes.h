// Passes over the Top dialect; see Passes.td for what each does.
#pragma once

#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

#include <memory>
#include <string>

namespace top {

#define GEN_PASS_DECL
#include "compiler/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Transforms/Passes.h.inc"

// Runs --top-equalize-weights on `module`: its new weights go to
// `weightFile` (resolved like any weight file name; empty: the pass's
// default name). Failure has been reported as a diagnostic.
mlir::LogicalResult equalizeWeights(mlir::ModuleOp module, const std::string &weightFile = "");

class WeightStore;
// The LayerNorm/GELU recognisers of --top-fuse-patterns over a given store
// (the importer runs them on its in-memory weights).
void populateFusePatterns(mlir::RewritePatternSet &patterns, const WeightStore &store);

} // namespace top
