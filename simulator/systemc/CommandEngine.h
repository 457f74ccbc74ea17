// What the TIU and GDMA engines have in common: one thread that takes the
// commands of its queue in order, waits for the cmd_id dependency, spends the
// command's duration (perform(), one wake-up per command) and then applies its
// data effect. TiuEngine and GdmaEngine differ only in how time is spent.
#pragma once

#include "simulator/systemc/CmdIdSync.h"
#include "simulator/systemc/MemorySystem.h"
#include "simulator/systemc/RunControl.h"

#include <systemc>

#include <vector>

namespace tpu::sysc {

class CommandEngine : public sc_core::sc_module {
public:
  SC_HAS_PROCESS(CommandEngine);
  CommandEngine(sc_core::sc_module_name name, Engine kind, RunControl &ctl, CmdIdSync &sync,
                MemorySystem &mem);

  Engine engine() const { return kind_; }
  // Hands the engine a command group's queue (from the dispatcher's thread).
  void start(const std::vector<SimCommand> &queue, uint32_t group);
  bool finished() const { return finished_; }
  const sc_core::sc_event &doneEvent() const { return done_; }
  // Where the engine stands, for deadlock reports.
  size_t position() const { return position_; }
  bool blocked() const { return blocked_; }
  const std::vector<SimCommand> *queue() const { return queue_; }

protected:
  // Advances simulated time by the command's duration; false if the run aborted.
  virtual bool perform(const SimCommand &cmd) = 0;
  RunControl &ctl_;

private:
  void run();

  Engine kind_;
  CmdIdSync &sync_;
  MemorySystem &mem_;
  const std::vector<SimCommand> *queue_ = nullptr;
  uint32_t group_ = 0;
  size_t position_ = 0;
  bool blocked_ = false, finished_ = true;
  sc_core::sc_event start_, done_;
};

} // namespace tpu::sysc
