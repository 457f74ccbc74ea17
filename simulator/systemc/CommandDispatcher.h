// Feeds the engines one command group at a time: both queues of a group are
// handed over together, the next group starts when both engines finished (ids
// restart per group). Runs as a thread kicked once per simulate() call.
#pragma once

#include "simulator/systemc/CommandEngine.h"

#include <systemc>

namespace tpu::sysc {

class CommandDispatcher : public sc_core::sc_module {
public:
  SC_HAS_PROCESS(CommandDispatcher);
  CommandDispatcher(sc_core::sc_module_name name, RunControl &ctl, CmdIdSync &sync,
                    CommandEngine &tiu, CommandEngine &gdma);

  // Queues a program for the next sc_start (called outside the simulation).
  void launch(const SimProgram &program);
  bool finished() const { return finished_; }
  uint32_t currentGroup() const { return group_; }

private:
  void run();

  RunControl &ctl_;
  CmdIdSync &sync_;
  CommandEngine &tiu_, &gdma_;
  const SimProgram *program_ = nullptr;
  uint32_t group_ = 0;
  bool finished_ = true;
  sc_core::sc_event launch_;
};

} // namespace tpu::sysc
