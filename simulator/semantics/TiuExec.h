// What one TIU command does to local memory, bit-exact (docs/isa.md, "TIU
// commands"). Plain C++: the functional backend and the SystemC TIU engine
// both call it. Every operand is resolved and bounds-checked before anything
// is written; a bad field or an out-of-range access is an error naming the
// field, and local memory is left untouched.
#pragma once

#include "isa/HwConfig.h"
#include "isa/TiuCommand.h"
#include "simulator/semantics/Memory.h"
#include "support/Status.h"

namespace tpu::sim {

Status executeTiu(const isa::HwConfig &cfg, LocalMemory &mem, const isa::TiuCommand &cmd);

} // namespace tpu::sim
