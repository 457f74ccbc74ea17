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
#include "kernels/HostOps.h"
#include "runtime/Device.h"
#include "support/Status.h"

#include <memory>
#include <optional>
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

// The command groups [first, first + count) of a net.
struct GroupRange {
  size_t first = 0, count = 0;
};

// One step of a launch: a range of command groups for the backend (a net
// without sub-nets is one step of all its groups; adjacent TPU sub-nets are
// one step, as their groups run in order either way), or a CPU sub-net that
// the runtime runs on the host.
struct LoadedStep {
  GroupRange groups;                     // no host op: the groups to execute
  size_t subnet = 0;                     // host op: its index in desc.subnets
  std::optional<kernels::HostCall> host; // the CPU sub-net's op, parsed and checked at load time
};

// A net (one stage of a multi-stage net) as the backends see it: the
// bmodel's description (tensors, coefficients, raw command bytes and layer
// names) plus the decoded groups and the steps a launch runs.
struct LoadedNet {
  std::string origin; // the file (or "<memory>") it came from, for messages
  bmodel::Net desc;
  std::vector<LoadedGroup> groups;
  std::vector<LoadedStep> steps;
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

// What one launch did. Timing fields are filled by the sim backend only;
// with CPU sub-nets they cover the TPU steps, one after the other, and the
// host time of the CPU sub-nets is apart in hostSeconds.
struct RunReport {
  BackendKind backend = BackendKind::Func;
  uint64_t groups = 0, tiuCommands = 0, gdmaCommands = 0;
  double wallSeconds = 0;      // host time of the launch
  uint64_t cpuSubnets = 0;     // CPU sub-nets run on the host
  double hostSeconds = 0;      // their host time (reading inputs, the op, writing the result), measured
  bool timed = false;
  double clockMhz = 0, totalCycles = 0;
  double timeUs() const { return clockMhz > 0 ? totalCycles / clockMhz : 0; }
  double tiuUtilization = 0, gdmaUtilization = 0;
  std::vector<LayerTime> layers; // in order of first appearance (needs recordTrace)
  std::string statsJson; // stats file contents (timed runs)
  std::string traceJson; // Chrome trace-event JSON (timed runs with recordTrace)
};

// One launch of a net on a backend: the runtime executes the group ranges
// of the net's TPU steps through it in order, runs the CPU sub-nets between
// them, and then finishes it.
class Launch {
public:
  virtual ~Launch() = default;
  // Runs the groups `range` of the net against the device's memories. Errors
  // name the group (its index in the net) and the command (engine, queue
  // index, id).
  virtual Status execute(GroupRange range) = 0;
  // Puts what the backend measured over all ranges into `report` (the sim
  // backend: cycles, utilization, layers, stats and trace). The runtime has
  // filled the report's host part (cpuSubnets, hostSeconds) before.
  virtual void finish(RunReport &report) = 0;
};

class Backend {
public:
  virtual ~Backend() = default;
  virtual BackendKind kind() const = 0;
  // Starts a launch of `net`; a backend that cannot run the net (the device
  // backend, a net with CPU sub-nets) says so here.
  virtual Result<std::unique_ptr<Launch>> begin(SimDevice &device, const LoadedNet &net, const RunOptions &opts) = 0;
};

Result<std::unique_ptr<Backend>> makeBackend(BackendKind kind);

} // namespace tpu::runtime
