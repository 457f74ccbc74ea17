#include "timing/Schedule.h"

#include <algorithm>

namespace tpu::timing {

double scheduleCycles(const std::vector<isa::OrderedCommand> &order, const std::vector<ScheduledCommand> &tiu,
                      const std::vector<ScheduledCommand> &gdma) {
  std::vector<double> tiuEnd(tiu.size() + 1, 0), gdmaEnd(gdma.size() + 1, 0);
  double tiuFree = 0, gdmaFree = 0;
  for (const isa::OrderedCommand &oc : order) {
    const bool isTiu = oc.engine == isa::Engine::Tiu;
    const ScheduledCommand &c = isTiu ? tiu[oc.index] : gdma[oc.index];
    double &free = isTiu ? tiuFree : gdmaFree;
    const double start = std::max(free, (isTiu ? gdmaEnd : tiuEnd)[c.waitId]);
    free = (isTiu ? tiuEnd : gdmaEnd)[oc.index + 1] = start + c.cycles;
  }
  return std::max(tiuFree, gdmaFree);
}

} // namespace tpu::timing
