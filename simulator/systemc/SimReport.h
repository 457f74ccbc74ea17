// What a SystemC run reports: total time, per-engine busy / waiting / idle
// time, per command group and per layer, the per-command events of the trace
// and DDR traffic samples. statsJson() and chromeTraceJson() turn it into the
// files scripts and Perfetto read (stable key order, deterministic).
#pragma once

#include "simulator/systemc/SimProgram.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace tpu::sysc {

struct EngineStats {
  uint64_t commands = 0;
  double busyCycles = 0;    // executing a command (GDMA: including DDR contention)
  double waitingCycles = 0; // a command is next but its dependency is not complete
  double idleCycles = 0;    // nothing to do: queue empty or group finished
  double utilization = 0;   // busy / total
};

struct GroupStats {
  double startCycle = 0, endCycle = 0;
  uint64_t lmemPeakBytes = 0; // per lane: one past the highest byte a command's local operand spans
  std::array<uint64_t, kEngineCount> commands{};
  std::array<double, kEngineCount> busyCycles{};
};

struct LayerStats {
  std::string name;
  double firstStart = 0, lastEnd = 0; // span on the timeline
  std::array<uint64_t, kEngineCount> commands{};
  std::array<double, kEngineCount> busyCycles{};
};

// One executed command, times in cycles from the start of the run.
struct TraceEvent {
  Engine engine;
  uint32_t group, index, id, waitId;
  int32_t layer; // index into SimReport::layerNames, -1 = none
  std::string name;
  double readyCycle, startCycle, endCycle; // ready: previous command of this engine done
  uint64_t ddrBytes;
};

// DDR channel state from `cycle` on until the next sample.
struct DdrSample {
  double cycle;
  uint32_t activeTransfers;
  double bytesPerCycle; // bandwidth in use
  uint64_t bytesDone;   // cumulative bytes completed
};

struct SimReport {
  double clockMhz = 0;
  double totalCycles = 0;
  double timeUs() const { return clockMhz > 0 ? totalCycles / clockMhz : 0; }
  std::array<EngineStats, kEngineCount> engines{};
  uint64_t ddrBytes = 0;     // bytes over the DDR channel, burst waste included
  uint64_t payloadBytes = 0; // useful GDMA bytes
  uint64_t lmemPeakBytes = 0; // the largest group's lmemPeakBytes
  std::vector<GroupStats> groups;
  std::vector<LayerStats> layers; // in order of first appearance
  std::vector<std::string> layerNames; // the program's, indexed by TraceEvent::layer
  std::vector<TraceEvent> events; // empty unless SimOptions::recordTrace
  std::vector<DdrSample> ddrSamples;
  uint64_t wakeups = 0;      // SystemC process activations of the engines (overhead metric)

  const EngineStats &tiu() const { return engines[0]; }
  const EngineStats &gdma() const { return engines[1]; }

  std::string statsJson() const;
  // Chrome trace-event format: one track per engine, complete events per
  // command, counter tracks for DDR bandwidth and bytes. Opens in Perfetto.
  std::string chromeTraceJson() const;
  // A few lines for a terminal: total, per-engine utilization.
  std::string summary() const;
};

} // namespace tpu::sysc
