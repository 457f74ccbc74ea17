#include "simulator/systemc/RunControl.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace tpu::sysc {

using namespace sc_core;

void RunControl::begin(const SimOptions &opts, double clockMhz, const SimProgram &program) {
  opts_ = opts;
  origin_ = sc_time_stamp();
  wallStart_ = std::chrono::steady_clock::now();
  fault_.reset();
  program_ = &program;
  layerSlot_.assign(program.layerNames.size(), -1);
  report_ = SimReport{};
  report_.clockMhz = clockMhz;
  report_.layerNames = program.layerNames;
  report_.groups.resize(program.groups.size());
  // Local memory in use is a property of the program: every command's
  // operands, whether or not the run reaches it.
  for (size_t g = 0; g < program.groups.size(); ++g) {
    for (const auto &queue : program.groups[g].queue)
      for (const SimCommand &c : queue)
        report_.groups[g].lmemPeakBytes = std::max(report_.groups[g].lmemPeakBytes, c.lmemEnd);
    report_.lmemPeakBytes = std::max(report_.lmemPeakBytes, report_.groups[g].lmemPeakBytes);
  }
}

double RunControl::toCycles(const sc_time &t) {
  static const double ticksPerCycle = std::round(sc_time(1, SC_NS).value());
  return double(t.value()) / ticksPerCycle;
}

double RunControl::nowCycles() const { return toCycles(sc_time_stamp() - origin_); }

void RunControl::fault(std::string message) {
  if (fault_) return;
  fault_ = std::move(message);
  abortEvent_.notify(SC_ZERO_TIME);
}

bool RunControl::checkLimits(Engine e, uint32_t group, size_t index) {
  if (fault_) return false;
  auto where = [&] {
    std::ostringstream os;
    os << " before group " << group << " " << engineName(e) << " command #" << index;
    return os.str();
  };
  if (opts_.maxCycles > 0 && nowCycles() > opts_.maxCycles) {
    std::ostringstream os;
    os << "simulated-cycle limit of " << opts_.maxCycles << " cycles exceeded" << where();
    fault(os.str());
    return false;
  }
  if (opts_.wallClockSeconds > 0) {
    std::chrono::duration<double> spent = std::chrono::steady_clock::now() - wallStart_;
    if (spent.count() > opts_.wallClockSeconds) {
      std::ostringstream os;
      os << "wall-clock limit of " << opts_.wallClockSeconds << " s exceeded" << where();
      fault(os.str());
      return false;
    }
  }
  return true;
}

void RunControl::record(Engine e, uint32_t group, uint32_t index, const SimCommand &cmd,
                        double ready, double start, double end) {
  unsigned ei = unsigned(e);
  double busy = end - start;
  EngineStats &es = report_.engines[ei];
  es.commands++;
  es.busyCycles += busy;
  es.waitingCycles += start - ready;
  GroupStats &gs = report_.groups[group];
  gs.commands[ei]++;
  gs.busyCycles[ei] += busy;
  if (e == Engine::Gdma) {
    report_.ddrBytes += cmd.ddrBytes;
    report_.payloadBytes += cmd.payloadBytes;
  }
  if (cmd.layer >= 0) {
    int32_t &slot = layerSlot_[size_t(cmd.layer)];
    if (slot < 0) {
      slot = int32_t(report_.layers.size());
      LayerStats ls;
      ls.name = program_->layerNames[size_t(cmd.layer)];
      ls.firstStart = start;
      report_.layers.push_back(std::move(ls));
    }
    LayerStats &ls = report_.layers[size_t(slot)];
    ls.firstStart = std::min(ls.firstStart, start);
    ls.lastEnd = std::max(ls.lastEnd, end);
    ls.commands[ei]++;
    ls.busyCycles[ei] += busy;
  }
  if (opts_.recordTrace)
    report_.events.push_back(
        {e, group, index, cmd.id, cmd.waitId, cmd.layer, cmd.name, ready, start, end, cmd.ddrBytes});
}

void RunControl::recordGroup(uint32_t group, double start, double end) {
  report_.groups[group].startCycle = start;
  report_.groups[group].endCycle = end;
}

void RunControl::recordDdr(uint32_t active, double bytesPerCycle, uint64_t bytesDone) {
  if (!opts_.recordTrace) return;
  double now = nowCycles();
  // Several changes at one instant: the last state is the one that holds.
  if (!report_.ddrSamples.empty() && report_.ddrSamples.back().cycle == now) report_.ddrSamples.pop_back();
  report_.ddrSamples.push_back({now, active, bytesPerCycle, bytesDone});
}

SimReport RunControl::finish(double endCycles) {
  report_.totalCycles = endCycles;
  for (EngineStats &es : report_.engines) {
    es.idleCycles = std::max(0.0, endCycles - es.busyCycles - es.waitingCycles);
    es.utilization = endCycles > 0 ? es.busyCycles / endCycles : 0;
  }
  program_ = nullptr;
  return std::move(report_);
}

} // namespace tpu::sysc
