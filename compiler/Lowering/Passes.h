// The Top -> Tpu conversion pass (Passes.td); tpuc-opt registers it.
#pragma once

#include "compiler/Dialect/Tpu/TpuOps.h"

#include "mlir/Pass/Pass.h"

#include <memory>

namespace tpu::lowering {

#define GEN_PASS_DECL
#include "compiler/Lowering/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Lowering/Passes.h.inc"

} // namespace tpu::lowering
