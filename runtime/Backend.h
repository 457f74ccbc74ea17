// The backends a Runtime launches nets on, behind one interface:
//   func  executes every command group in program order with the semantics
//         library (executeTiu / executeGdma): no SystemC, no time.
//   sim   runs the groups through the SystemC model of the TIU and GDMA
//         engines: same data, plus cycles, utilization, trace and stats.
//   device runs the bmodel on a real BM1684 through libsophon (dlopen).
#pragma once

#include "isa/GdmaCommand.h"
#include "isa/ProgramOrder.h"
#include "isa/TiuCommand.h"
#include "isa/bmodel/Model.h"
#include "runtime/Device.h"
#include "support/Status.h"

#include <memory>
#include <string>
#include <vector>

namespace tpu::runtime {

enum class BackendKind { Func, Sim, Device };
// "func" / "sim" / "device"; anything else is an error listing the choices.
Result<BackendKind> parseBackendKind(const std::string &name);
const char *backendKindName(BackendKind kind);
// Is the backend compiled into this build (sim needs the SystemC model;
// device is always built, its libraries are looked for when it is created)?
bool backendAvailable(BackendKind kind);

// A command group decoded once at load time.
struct LoadedGroup {
  std::vector<isa::TiuCommand> tiu;
  std::vector<isa::GdmaCommand> gdma;
  std::vector<isa::OrderedCommand> order; // both queues merged by the cmd_id rule
};

// A net as the backends see it: the bmodel's description (tensors,
// coefficients, raw command bytes and layer names) plus the decoded groups.
struct LoadedNet {
  std::string origin; // the file (or "<memory>") it came from, for messages
  bmodel::Net desc;
  std::vector<LoadedGroup> groups;
  std::vector<SimDevice::Claim> ranges; // device memory claimed for it
  // The bmodel file image, kept for the device backend only (shared by the
  // nets of one bmodel).
  std::shared_ptr<const std::vector<uint8_t>> image;
};

struct RunOptions {
  bool recordTrace = false;    // sim: keep per-command events (trace JSON, per-layer times)
  double maxCycles = 0;        // sim: stop with an error past this many cycles (0 = no limit)
  double wallClockSeconds = 0; // sim: stop with an error past this much host time (0 = no limit)
};

// Where the time of one layer went (timed runs that record events).
struct LayerTime {
  std::string name;
  double tiuBusyCycles = 0, gdmaBusyCycles = 0;
  double spanCycles = 0; // first start to last end on the timeline
};

// What one launch did. Timing fields are filled by the sim backend only.
struct RunReport {
  BackendKind backend = BackendKind::Func;
  uint64_t groups = 0, tiuCommands = 0, gdmaCommands = 0;
  double wallSeconds = 0;      // host time of the launch
  bool timed = false;
  double clockMhz = 0, totalCycles = 0;
  double timeUs() const { return clockMhz > 0 ? totalCycles / clockMhz : 0; }
  double tiuUtilization = 0, gdmaUtilization = 0;
  std::vector<LayerTime> layers; // in order of first appearance (needs recordTrace)
  std::string statsJson; // stats file contents (timed runs)
  std::string traceJson; // Chrome trace-event JSON (timed runs with recordTrace)
};

class Backend {
public:
  virtual ~Backend() = default;
  virtual BackendKind kind() const = 0;
  // Runs every group of `net` against the device's memories. Errors name
  // the group and the command (engine, queue index, id).
  virtual Status execute(SimDevice &device, const LoadedNet &net, const RunOptions &opts,
                         RunReport &report) = 0;
};

Result<std::unique_ptr<Backend>> makeBackend(BackendKind kind);

} // namespace tpu::runtime
