#include "simulator/systemc/GdmaEngine.h"

namespace tpu::sysc {

bool GdmaEngine::perform(const SimCommand &cmd) {
  if (cmd.latencyCycles > 0) {
    sc_core::wait(RunControl::cyclesToTime(cmd.latencyCycles));
    ctl_.countWakeup();
  }
  double dataStart = ctl_.nowCycles();
  if (!ddr_.transfer(cmd.ddrBytes)) return false;
  double rest = cmd.dataCycles - (ctl_.nowCycles() - dataStart);
  if (rest > 0) {
    sc_core::wait(RunControl::cyclesToTime(rest));
    ctl_.countWakeup();
  }
  return !ctl_.aborted();
}

} // namespace tpu::sysc
