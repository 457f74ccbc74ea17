#include "simulator/systemc/CmdIdSync.h"

#include "isa/ProgramOrder.h"

namespace tpu::sysc {

bool CmdIdSync::waitFor(Engine e, uint32_t id) {
  Side &s = side_[unsigned(e)];
  while (!isa::syncSatisfied(id, s.completed) && !ctl_.aborted()) {
    s.wanted = id;
    sc_core::wait(s.reached | ctl_.abortEvent());
    ctl_.countWakeup();
  }
  s.wanted = 0;
  return !ctl_.aborted();
}

void CmdIdSync::complete(Engine e, uint32_t id) {
  Side &s = side_[unsigned(e)];
  s.completed = id;
  if (s.wanted && isa::syncSatisfied(s.wanted, s.completed)) s.reached.notify(sc_core::SC_ZERO_TIME);
}

} // namespace tpu::sysc
