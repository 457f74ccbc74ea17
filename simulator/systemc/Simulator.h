// The plain C++ entry point of the SystemC model. SystemC stays inside the
// library: the modules are elaborated once per process, on the first call, and
// every later call feeds a new program into the same modules (SystemC 2.3
// cannot elaborate twice). Calls are serialised; one run at a time.
#pragma once

#include "isa/HwConfig.h"
#include "simulator/systemc/SimProgram.h"
#include "simulator/systemc/SimReport.h"

namespace tpu::sysc {

// Ids strictly increasing and non-zero per queue, layer indices in range,
// costs finite, non-negative and, summed at the config's DDR bandwidth,
// within kMaxRunCycles. simulate() calls it first.
Status validateProgram(const SimProgram &program, const isa::HwConfig &hw);

// Runs every command group of `program` in order on the TIU and GDMA engines,
// applying each command's data effect to `local` / `global` when it completes.
// Errors: an invalid program, a deadlock (naming both blocked commands and
// their ids), a command's semantic error (group, engine, command index,
// message), a cycle or wall-clock limit. Never hangs.
Result<SimReport> simulate(const isa::HwConfig &hw, sim::LocalMemory &local, sim::GlobalMemory &global,
                           const SimProgram &program, const SimOptions &options = {});

} // namespace tpu::sysc
