// The cmd-id schedule of one command group with every transfer given the
// whole DDR channel (BM1684 has one GDMA engine): each engine runs its queue
// in order, a command starts when its engine is free and the other engine has
// completed the id it waits for. The compiler's cost model (estimateCycles)
// and the timing fit (perf/TimingFit.cpp) use it; the SystemC model spends
// the same costs (docs/timing.md).
#pragma once

#include "isa/HwConfig.h"
#include "isa/ProgramOrder.h"

#include <cstdint>
#include <vector>

namespace tpu::timing {

// Cycles a command spends on the cmd-id synchronisation before its start-up:
// syncCycles when it names a dependency on the other engine that the
// command before it in its queue did not (`previousWaitId`), else 0.
inline double syncCost(uint32_t waitId, uint32_t previousWaitId, const isa::HwConfig &hw) {
  return waitId != 0 && waitId != previousWaitId ? hw.syncCycles : 0.0;
}

struct ScheduledCommand {
  uint32_t waitId = 0; // the other engine's id it waits for (ids are queue position + 1)
  double cycles = 0;   // its whole duration, sync cost included
};

// End of the last command of the group, in cycles from its start.
double scheduleCycles(const std::vector<isa::OrderedCommand> &order, const std::vector<ScheduledCommand> &tiu,
                      const std::vector<ScheduledCommand> &gdma);

} // namespace tpu::timing
