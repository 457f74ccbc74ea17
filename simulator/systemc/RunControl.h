// State one simulation run shares between the modules: the time origin, the
// limits, the first fault, and the recorder that turns completed commands
// into statistics. Not a module: the modules hold a reference to it.
#pragma once

#include "simulator/systemc/SimReport.h"

#include <systemc>

#include <chrono>
#include <optional>
#include <string>

namespace tpu::sysc {

class RunControl {
public:
  // Starts a run: time origin = now, clears the fault, keeps the options.
  void begin(const SimOptions &opts, double clockMhz, const SimProgram &program);

  double nowCycles() const; // simulated cycles since begin(): 1 SystemC ns = 1 TPU cycle
  static sc_core::sc_time cyclesToTime(double cycles) { return sc_core::sc_time(cycles, sc_core::SC_NS); }
  // Exact for whole cycles (integer division of the kernel's time ticks).
  static double toCycles(const sc_core::sc_time &t);

  // The first fault wins; later ones are consequences. Wakes every module
  // blocked on something so the run drains instead of hanging.
  void fault(std::string message);
  bool aborted() const { return fault_.has_value(); }
  const std::optional<std::string> &faultMessage() const { return fault_; }
  const sc_core::sc_event &abortEvent() const { return abortEvent_; }
  // Checks the cycle and wall-clock limits before a command starts.
  bool checkLimits(Engine e, uint32_t group, size_t index);

  // Called by an engine for every command it completes.
  void record(Engine e, uint32_t group, uint32_t index, const SimCommand &cmd, double ready,
              double start, double end);
  void recordGroup(uint32_t group, double start, double end);
  void recordDdr(uint32_t active, double bytesPerCycle, uint64_t bytesDone);
  void countWakeup() { ++report_.wakeups; }

  // Finishes the statistics (idle time, utilization) and hands the report over.
  SimReport finish(double endCycles);

private:
  SimOptions opts_;
  sc_core::sc_time origin_;
  std::chrono::steady_clock::time_point wallStart_;
  std::optional<std::string> fault_;
  sc_core::sc_event abortEvent_;
  const SimProgram *program_ = nullptr;
  std::vector<int32_t> layerSlot_; // program layer index -> report.layers index, -1 unseen
  SimReport report_;
};

} // namespace tpu::sysc
