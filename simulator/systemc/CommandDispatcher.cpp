#include "simulator/systemc/CommandDispatcher.h"

namespace tpu::sysc {

using namespace sc_core;

CommandDispatcher::CommandDispatcher(sc_module_name name, RunControl &ctl, CmdIdSync &sync,
                                     CommandEngine &tiu, CommandEngine &gdma)
    : sc_module(name), ctl_(ctl), sync_(sync), tiu_(tiu), gdma_(gdma) {
  SC_THREAD(run);
}

void CommandDispatcher::launch(const SimProgram &program) {
  program_ = &program;
  group_ = 0;
  finished_ = false;
  launch_.notify(SC_ZERO_TIME);
}

void CommandDispatcher::run() {
  for (;;) {
    wait(launch_);
    for (group_ = 0; group_ < program_->groups.size() && !ctl_.aborted(); ++group_) {
      const SimGroup &g = program_->groups[group_];
      double start = ctl_.nowCycles();
      sync_.reset();
      tiu_.start(g.tiu(), group_);
      gdma_.start(g.gdma(), group_);
      while (!tiu_.finished() || !gdma_.finished()) wait(tiu_.doneEvent() | gdma_.doneEvent());
      if (!ctl_.aborted()) ctl_.recordGroup(group_, start, ctl_.nowCycles());
    }
    finished_ = !ctl_.aborted();
  }
}

} // namespace tpu::sysc
