// The DDR channel shared by every requester: transfers in flight split its
// bandwidth equally (processor sharing), so two concurrent transfers each run
// at half speed. Time advances only when a transfer starts or ends, never per
// byte or per cycle. On BM1684 only GDMA (S2L, L2S, S2S) reaches DDR; the TIU
// works from local memory.
#pragma once

#include "simulator/systemc/RunControl.h"

#include <systemc>

#include <vector>

namespace tpu::sysc {

class DdrChannel : public sc_core::sc_module {
public:
  DdrChannel(sc_core::sc_module_name name, RunControl &ctl);

  // New run: bandwidth from the config, byte counter from zero.
  void configure(double bytesPerCycle) {
    bytesPerCycle_ = bytesPerCycle;
    bytesDone_ = 0;
  }
  double bytesPerCycle() const { return bytesPerCycle_; }
  size_t inFlight() const { return active_.size(); }

  // Moves `bytes` over the channel from the calling thread; returns false if
  // the run aborted meanwhile.
  bool transfer(uint64_t bytes);

private:
  struct Transfer {
    double remaining;
  };
  void settle(); // charges the progress since the last change to every transfer
  void sample();

  RunControl &ctl_;
  double bytesPerCycle_ = 1;
  sc_core::sc_time lastChange_;
  uint64_t bytesDone_ = 0;
  std::vector<Transfer *> active_; // arrival order
  sc_core::sc_event changed_;
};

} // namespace tpu::sysc
