// Turns decoded BM1684X command groups into the SystemC model's SimProgram (simulator/systemc/SimProgram.h):
// each command's cost from the BM1684X timing model (timing/bm1684x), its data effect from the BM1684X
// semantics (simulator/semantics/bm1684x) on the caller's memories, applied when the command completes.
#pragma once

#include "isa/HwConfig.h"
#include "isa/bm1684x/Command.h"
#include "simulator/semantics/bm1684x/Executor.h"
#include "simulator/systemc/SimProgram.h"

#include <vector>

namespace tpu::sysc::bm1684x {

// The commands execute on `memories`, which must outlive the program's runs. Errors name the group, the
// engine and the command: one the timing model cannot cost, or one without ids (LAR).
Result<SimProgram> buildProgram(const isa::HwConfig &hw, sim::bm1684x::Memories &memories,
                                const std::vector<isa::bm1684x::CommandGroup> &groups);

} // namespace tpu::sysc::bm1684x
