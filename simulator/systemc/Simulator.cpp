#include "simulator/systemc/Simulator.h"

#include "simulator/systemc/CommandDispatcher.h"
#include "simulator/systemc/DdrChannel.h"
#include "simulator/systemc/GdmaEngine.h"
#include "simulator/systemc/MemorySystem.h"
#include "simulator/systemc/TiuEngine.h"
#include "timing/GdmaTiming.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <sstream>

namespace tpu::sysc {

using namespace sc_core;

namespace {

// The one module tree of the process.
struct Platform {
  RunControl ctl;
  CmdIdSync sync{ctl};
  MemorySystem mem{"memories"};
  DdrChannel ddr{"ddr", ctl};
  TiuEngine tiu{"tiu", ctl, sync, mem};
  GdmaEngine gdma{"gdma", ctl, sync, mem, ddr};
  CommandDispatcher dispatcher{"dispatcher", ctl, sync, tiu, gdma};
  const CommandEngine &engine(Engine e) const { return e == Engine::Tiu ? (const CommandEngine &)tiu : gdma; }
};

Platform &platform() {
  static std::unique_ptr<Platform> p = [] {
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
    auto created = std::make_unique<Platform>();
    // Elaborate and let every thread reach its first wait, so the first
    // launch's notification has a listener.
    sc_start(SC_ZERO_TIME);
    return created;
  }();
  return *p;
}

std::string describeBlocked(const Platform &p, Engine e) {
  const CommandEngine &eng = p.engine(e);
  const SimCommand &c = (*eng.queue())[eng.position()];
  std::ostringstream os;
  os << engineName(e) << " command #" << eng.position() << " (" << c.name << ", id " << c.id
     << ") waits for " << engineName(otherEngine(e)) << " id " << c.waitId;
  return os.str();
}

// Both engines stopped with work left: say who waits for whom.
std::string deadlockMessage(const Platform &p) {
  std::ostringstream os;
  os << "deadlock in command group " << p.dispatcher.currentGroup() << ": ";
  bool first = true;
  for (Engine e : {Engine::Tiu, Engine::Gdma}) {
    const CommandEngine &eng = p.engine(e);
    if (eng.finished() || !eng.blocked()) continue;
    if (!first) os << ", while ";
    os << describeBlocked(p, e);
    first = false;
    const CommandEngine &other = p.engine(otherEngine(e));
    if (other.finished())
      os << ", but the " << engineName(otherEngine(e)) << " queue ended after completing id "
         << p.sync.completed(otherEngine(e));
  }
  if (first) os << "no engine can make progress";
  return os.str();
}

} // namespace

Status validateProgram(const SimProgram &program, const isa::HwConfig &hw) {
  const double bytesPerCycle = timing::ddrBytesPerCycle(hw);
  double bound = 0; // every command back to back, alone on the DDR channel
  for (size_t g = 0; g < program.groups.size(); ++g)
    for (Engine e : {Engine::Tiu, Engine::Gdma}) {
      const auto &q = program.groups[g].queue[unsigned(e)];
      uint32_t prev = 0;
      for (size_t i = 0; i < q.size(); ++i) {
        const SimCommand &c = q[i];
        auto where = [&] {
          std::ostringstream os;
          os << "command group " << g << ": " << engineName(e) << " command #" << i << " (" << c.name << ")";
          return os.str();
        };
        if (c.id <= prev)
          return makeError(where(), ": id ", c.id, " does not follow id ", prev,
                           " (ids must be non-zero and strictly increasing)");
        prev = c.id;
        if (c.layer < -1 || (c.layer >= 0 && size_t(c.layer) >= program.layerNames.size()))
          return makeError(where(), ": layer index ", c.layer, " outside the ", program.layerNames.size(),
                           "-entry layer table");
        for (double v : {c.latencyCycles, c.dataCycles})
          if (!std::isfinite(v) || v < 0) return makeError(where(), ": cost ", v, " cycles is not valid");
        double cost = c.latencyCycles + std::max(c.dataCycles, double(c.ddrBytes) / bytesPerCycle);
        if (cost > kMaxRunCycles)
          return makeError(where(), ": cost of ", cost, " cycles exceeds the model's ", kMaxRunCycles,
                           "-cycle range (shapes out of any memory?)");
        bound += cost;
      }
    }
  if (bound > kMaxRunCycles)
    return makeError("the program may take ", bound, " cycles, beyond the model's ", kMaxRunCycles,
                     "-cycle range per run");
  return Status::ok();
}

Result<SimReport> simulate(const isa::HwConfig &hw, sim::LocalMemory &local, sim::GlobalMemory &global,
                           const SimProgram &program, const SimOptions &options) {
  TPU_RETURN_IF_ERROR(hw.validate());
  TPU_RETURN_IF_ERROR(validateProgram(program, hw));
  static std::mutex oneRunAtATime;
  std::lock_guard<std::mutex> lock(oneRunAtATime);
  // The SystemC kernel reports its own errors (e.g. modules created after
  // another model already started in this process) as exceptions.
  try {
    Platform &p = platform();
    p.ctl.begin(options, hw.clockMhz, program);
    p.ddr.configure(timing::ddrBytesPerCycle(hw));
    p.mem.bind(local, global);
    p.dispatcher.launch(program);
    sc_start(); // returns when no process can make progress
    if (!p.ctl.aborted() && !p.dispatcher.finished()) {
      p.ctl.fault(deadlockMessage(p));
      sc_start(); // the abort wakes the blocked engines; they drain back to idle
    }
    if (p.ctl.aborted()) {
      Status st = Status::error(*p.ctl.faultMessage());
      p.ctl.finish(p.ctl.nowCycles());
      return st;
    }
    return p.ctl.finish(p.ctl.nowCycles());
  } catch (const std::exception &e) {
    std::string what = e.what();
    while (!what.empty() && (what.back() == '\n' || what.back() == ' ')) what.pop_back();
    for (char &c : what)
      if (c == '\n') c = ' ';
    return makeError("SystemC kernel: ", what);
  }
}

} // namespace tpu::sysc
