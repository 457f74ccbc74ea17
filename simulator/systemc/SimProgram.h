// What the SystemC model executes, independent of how commands are encoded:
// per command group, one queue per engine of commands that carry their own id,
// the id of the other engine's command they wait for, their cost and their
// data effect. Builders (SimBuilder.h) turn typed BM1684 commands into these;
// tests build them directly. Plain C++: no SystemC types here.
#pragma once

#include "isa/ProgramOrder.h"
#include "memory/Memory.h"
#include "support/Status.h"

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tpu::sysc {

using Engine = isa::Engine; // Tiu = 0, Gdma = 1: indexes the per-engine arrays
constexpr unsigned kEngineCount = 2;
inline const char *engineName(Engine e) { return e == Engine::Tiu ? "TIU" : "GDMA"; }
inline Engine otherEngine(Engine e) { return e == Engine::Tiu ? Engine::Gdma : Engine::Tiu; }

// The data effect of a command, applied atomically when the command completes.
using ExecuteFn = std::function<Status(sim::LocalMemory &, sim::GlobalMemory &)>;

struct SimCommand {
  uint32_t id = 0;          // own id (TIU cmd_id_tpu, GDMA cmd_id); strictly increasing per queue
  uint32_t waitId = 0;      // the other engine's id it waits for; 0 = no dependency
  std::string name;         // mnemonic shown in trace and errors
  int32_t layer = -1;       // index into SimProgram::layerNames; -1 = no layer
  double latencyCycles = 0; // start-up phase: descriptor fetch, pipeline fill, DDR first byte
  double dataCycles = 0;    // data phase without DDR limits (compute, LMEM port)
  uint64_t ddrBytes = 0;    // bytes crossing the shared DDR channel in the data phase
  uint64_t payloadBytes = 0; // useful bytes moved (for stats; ddrBytes includes burst waste)
  uint64_t lmemEnd = 0;     // one past the highest in-lane byte its local operands span (0: none)
  ExecuteFn execute;        // may be empty (timing-only runs)
};

struct SimGroup {
  std::array<std::vector<SimCommand>, kEngineCount> queue; // indexed by Engine
  std::vector<SimCommand> &tiu() { return queue[0]; }
  std::vector<SimCommand> &gdma() { return queue[1]; }
  const std::vector<SimCommand> &tiu() const { return queue[0]; }
  const std::vector<SimCommand> &gdma() const { return queue[1]; }
};

struct SimProgram {
  std::vector<SimGroup> groups;
  std::vector<std::string> layerNames;
};

// Simulated time of one run is bounded (1 SystemC ns = 1 cycle; SystemC's
// 64-bit picosecond clock holds 1.8e16 cycles): 1e15 cycles, 21 days at 550 MHz.
constexpr double kMaxRunCycles = 1e15;

struct SimOptions {
  double maxCycles = 0;          // stop with an error past this many simulated cycles; 0 = no limit
  double wallClockSeconds = 0;   // stop with an error past this much host time; 0 = no limit
  bool recordTrace = true;       // keep per-command events (needed for trace JSON and per-layer stats)
};

} // namespace tpu::sysc
