// The GDMA engine: after the per-command latency, the data phase lasts as
// long as the slower of its DDR transfer (through the shared, contended
// DdrChannel) and its DDR-independent floor (LMEM port rate).
#pragma once

#include "simulator/systemc/CommandEngine.h"
#include "simulator/systemc/DdrChannel.h"

namespace tpu::sysc {

class GdmaEngine : public CommandEngine {
public:
  GdmaEngine(sc_core::sc_module_name name, RunControl &ctl, CmdIdSync &sync, MemorySystem &mem,
             DdrChannel &ddr)
      : CommandEngine(name, Engine::Gdma, ctl, sync, mem), ddr_(ddr) {}

protected:
  bool perform(const SimCommand &cmd) override;

private:
  DdrChannel &ddr_;
};

} // namespace tpu::sysc
