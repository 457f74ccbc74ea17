// The TIU (compute) engine: a command occupies it for its start-up latency
// plus its compute cycles; it never touches DDR on BM1684.
#pragma once

#include "simulator/systemc/CommandEngine.h"

namespace tpu::sysc {

class TiuEngine : public CommandEngine {
public:
  TiuEngine(sc_core::sc_module_name name, RunControl &ctl, CmdIdSync &sync, MemorySystem &mem)
      : CommandEngine(name, Engine::Tiu, ctl, sync, mem) {}

protected:
  bool perform(const SimCommand &cmd) override;
};

} // namespace tpu::sysc
