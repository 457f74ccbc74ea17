// The BM1684 cmd_id rule (isa::syncSatisfied, shared with the program-order
// merge): a command may start only after the other engine has completed the
// command whose id it names. A waiter is woken once, when its id is reached
// (or the run aborts), not on every completion.
#pragma once

#include "simulator/systemc/RunControl.h"

#include <systemc>

namespace tpu::sysc {

class CmdIdSync {
public:
  explicit CmdIdSync(RunControl &ctl) : ctl_(ctl) {}

  // New command group: ids restart.
  void reset() {
    for (auto &s : side_) s.completed = 0, s.wanted = 0;
  }
  uint32_t completed(Engine e) const { return side_[unsigned(e)].completed; }

  // Blocks the calling thread until `e` has completed `id`; returns false if the
  // run aborted meanwhile.
  bool waitFor(Engine e, uint32_t id);
  // Engine `e` completed command `id`.
  void complete(Engine e, uint32_t id);

private:
  struct Side {
    uint32_t completed = 0;
    uint32_t wanted = 0; // id a waiter on this side needs; 0 = nobody waits
    sc_core::sc_event reached;
  };
  RunControl &ctl_;
  std::array<Side, kEngineCount> side_;
};

} // namespace tpu::sysc
