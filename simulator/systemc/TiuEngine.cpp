#include "simulator/systemc/TiuEngine.h"

namespace tpu::sysc {

bool TiuEngine::perform(const SimCommand &cmd) {
  sc_core::wait(RunControl::cyclesToTime(cmd.latencyCycles + cmd.dataCycles));
  ctl_.countWakeup();
  return !ctl_.aborted();
}

} // namespace tpu::sysc
