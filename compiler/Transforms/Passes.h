// Passes over the Top dialect; see Passes.td for what each does.
#pragma once

#include "mlir/Pass/Pass.h"

#include <memory>

namespace top {

#define GEN_PASS_DECL
#include "compiler/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Transforms/Passes.h.inc"

} // namespace top
