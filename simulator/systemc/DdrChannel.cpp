#include "simulator/systemc/DdrChannel.h"

#include <algorithm>

namespace tpu::sysc {

using namespace sc_core;

DdrChannel::DdrChannel(sc_module_name name, RunControl &ctl) : sc_module(name), ctl_(ctl) {}

void DdrChannel::settle() {
  sc_time now = sc_time_stamp();
  if (!active_.empty()) {
    double moved = RunControl::toCycles(now - lastChange_) * bytesPerCycle_ / double(active_.size());
    for (Transfer *t : active_) t->remaining = std::max(0.0, t->remaining - moved);
  }
  lastChange_ = now;
}

void DdrChannel::sample() {
  ctl_.recordDdr(uint32_t(active_.size()), active_.empty() ? 0.0 : bytesPerCycle_, bytesDone_);
}

bool DdrChannel::transfer(uint64_t bytes) {
  if (bytes == 0) return !ctl_.aborted();
  settle();
  Transfer self{double(bytes)};
  active_.push_back(&self);
  changed_.notify(SC_ZERO_TIME); // the others now run slower
  sample();
  // Less than one time-resolution step of work left counts as done.
  const double quantum = RunControl::toCycles(sc_get_time_resolution());
  while (!ctl_.aborted()) {
    double rate = bytesPerCycle_ / double(active_.size());
    if (self.remaining <= rate * quantum) break;
    wait(RunControl::cyclesToTime(self.remaining / rate), changed_ | ctl_.abortEvent());
    ctl_.countWakeup();
    settle();
  }
  active_.erase(std::find(active_.begin(), active_.end(), &self));
  bytesDone_ += bytes;
  changed_.notify(SC_ZERO_TIME); // the others now run faster
  sample();
  return !ctl_.aborted();
}

} // namespace tpu::sysc
