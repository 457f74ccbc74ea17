#include "simulator/systemc/CommandEngine.h"

#include <sstream>

namespace tpu::sysc {

using namespace sc_core;

CommandEngine::CommandEngine(sc_module_name name, Engine kind, RunControl &ctl, CmdIdSync &sync,
                             MemorySystem &mem)
    : sc_module(name), ctl_(ctl), kind_(kind), sync_(sync), mem_(mem) {
  SC_THREAD(run);
  // Command semantics run on this thread's stack: give it room.
  set_stack_size(8 << 20);
}

void CommandEngine::start(const std::vector<SimCommand> &queue, uint32_t group) {
  queue_ = &queue;
  group_ = group;
  position_ = 0;
  blocked_ = false;
  finished_ = false;
  start_.notify(SC_ZERO_TIME);
}

void CommandEngine::run() {
  for (;;) {
    wait(start_);
    ctl_.countWakeup();
    double ready = ctl_.nowCycles();
    for (position_ = 0; position_ < queue_->size(); ++position_) {
      const SimCommand &cmd = (*queue_)[position_];
      if (!ctl_.checkLimits(kind_, group_, position_)) break;
      if (cmd.waitId) {
        blocked_ = true;
        bool ok = sync_.waitFor(otherEngine(kind_), cmd.waitId);
        blocked_ = false;
        if (!ok) break;
      }
      double startCycle = ctl_.nowCycles();
      if (!perform(cmd)) break;
      if (cmd.execute) {
        Status st = cmd.execute(mem_.local(), mem_.global());
        if (!st) {
          std::ostringstream os;
          os << "group " << group_ << ": " << engineName(kind_) << " command #" << position_ << " ("
             << cmd.name << ", id " << cmd.id << "): " << st.message();
          ctl_.fault(os.str());
          break;
        }
      }
      double end = ctl_.nowCycles();
      ctl_.record(kind_, group_, uint32_t(position_), cmd, ready, startCycle, end);
      sync_.complete(kind_, cmd.id);
      ready = end;
    }
    finished_ = true;
    done_.notify(SC_ZERO_TIME);
  }
}

} // namespace tpu::sysc
