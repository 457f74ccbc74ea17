// Cost of one GDMA command from its access pattern (memory/GdmaAccess.h,
// one truth for bytes and contiguous runs) and the hardware
// parameters: a per-command latency, a DDR data phase (bytes on the channel,
// burst waste included, over the bandwidth available) and an LMEM-port floor.
// Formulas and sources: docs/timing.md.
#pragma once

#include "isa/GdmaCommand.h"
#include "isa/HwConfig.h"
#include "memory/GdmaAccess.h"
#include "support/Status.h"

#include <cstdint>

namespace tpu::timing {

struct GdmaCost {
  uint64_t payloadBytes = 0; // useful bytes written at the destination
  uint64_t ddrBytes = 0;     // bytes crossing the DDR channel, both sides, whole bursts
  double latencyCycles = 0;  // descriptor start-up + DDR first-byte latency
  double lmemCycles = 0;     // LMEM-port floor of the data phase
  // Data-phase cycles with `ddrBytesPerCycle` of bandwidth (the whole channel or a share of it).
  double dataCycles(double ddrBytesPerCycle) const;
  double cycles(double ddrBytesPerCycle) const { return latencyCycles + dataCycles(ddrBytesPerCycle); }
  // DDR payload efficiency: useful DDR bytes / bytes on the channel (1 when no DDR side).
  double burstEfficiency = 1;
};

// DDR bandwidth in bytes per TPU cycle.
double ddrBytesPerCycle(const isa::HwConfig &hw);
// Bytes a side of `runs` contiguous runs of `runBytes` occupies on the DDR
// channel: every run starts a burst, so a run shorter than a burst wastes the rest.
uint64_t ddrChannelBytes(uint64_t runs, uint64_t runBytes, uint32_t burstBytes);

GdmaCost gdmaCost(const sim::GdmaAccess &access, const isa::HwConfig &hw);
// Plans the command (validation errors name the field) and costs it.
Result<GdmaCost> gdmaCost(const isa::GdmaCommand &cmd, const isa::HwConfig &hw);
// Cycles of the command alone on the DDR channel (the cost model's view).
Result<double> gdmaCycles(const isa::GdmaCommand &cmd, const isa::HwConfig &hw);

} // namespace tpu::timing
