// What one GDMA command does to memory, bit-exact (docs/isa.md, "GDMA
// commands"). Plain C++: the functional backend and the SystemC GDMA engine
// both call it.
#pragma once

#include "isa/GdmaCommand.h"
#include "isa/HwConfig.h"
#include "memory/Memory.h"
#include "support/Status.h"

namespace tpu::sim {

// Executes `cmd`: S2L, L2S, S2S, L2L; strided; copy, N<->C transpose, C<->W
// transpose, lrn_shift, format convert, constant fill; lane mask on local
// destinations. The whole command is checked (planGdma) before any byte is
// written, so an error leaves memory untouched. `lmem` must have the lanes
// and lane size of `cfg`.
Status executeGdma(const isa::HwConfig &cfg, LocalMemory &lmem, GlobalMemory &gmem,
                   const isa::GdmaCommand &cmd);

} // namespace tpu::sim
