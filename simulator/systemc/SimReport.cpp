#include "simulator/systemc/SimReport.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>
#include <sstream>

namespace tpu::sysc {

using Json = nlohmann::ordered_json;

namespace {

const char *engineKey(unsigned e) { return e == 0 ? "tiu" : "gdma"; }

// Cycle values to the model's resolution (1/1000 cycle), so sums of
// fractional DDR transfer times print as 1296.4, not 1296.3999999999996.
double cyc(double v) { return std::round(v * 1000.0) / 1000.0; }

Json engineJson(const EngineStats &s) {
  Json j;
  j["commands"] = s.commands;
  j["busy_cycles"] = cyc(s.busyCycles);
  j["waiting_cycles"] = cyc(s.waitingCycles);
  j["idle_cycles"] = cyc(s.idleCycles);
  j["utilization"] = s.utilization;
  return j;
}

// Per-engine counters of a group or layer as "tiu_commands", "gdma_busy_cycles"...
void addPerEngine(Json &j, const std::array<uint64_t, kEngineCount> &commands,
                  const std::array<double, kEngineCount> &busy) {
  for (unsigned e = 0; e < kEngineCount; ++e) j[std::string(engineKey(e)) + "_commands"] = commands[e];
  for (unsigned e = 0; e < kEngineCount; ++e) j[std::string(engineKey(e)) + "_busy_cycles"] = cyc(busy[e]);
}

} // namespace

std::string SimReport::statsJson() const {
  Json j;
  j["clock_mhz"] = clockMhz;
  j["total_cycles"] = cyc(totalCycles);
  j["time_us"] = timeUs();
  Json engs;
  for (unsigned e = 0; e < kEngineCount; ++e) engs[engineKey(e)] = engineJson(engines[e]);
  j["engines"] = engs;
  Json ddr;
  ddr["bytes"] = ddrBytes;
  ddr["payload_bytes"] = payloadBytes;
  ddr["average_gbs"] = totalCycles > 0 ? double(ddrBytes) / totalCycles * clockMhz / 1000.0 : 0.0;
  j["ddr"] = ddr;
  j["lmem_peak_bytes"] = lmemPeakBytes;
  Json gs = Json::array();
  for (size_t i = 0; i < groups.size(); ++i) {
    Json g;
    g["index"] = i;
    g["start_cycle"] = cyc(groups[i].startCycle);
    g["end_cycle"] = cyc(groups[i].endCycle);
    g["cycles"] = cyc(groups[i].endCycle - groups[i].startCycle);
    addPerEngine(g, groups[i].commands, groups[i].busyCycles);
    g["lmem_peak_bytes"] = groups[i].lmemPeakBytes;
    gs.push_back(std::move(g));
  }
  j["groups"] = std::move(gs);
  Json ls = Json::array();
  for (const LayerStats &l : layers) {
    Json o;
    o["name"] = l.name;
    o["start_cycle"] = cyc(l.firstStart);
    o["end_cycle"] = cyc(l.lastEnd);
    addPerEngine(o, l.commands, l.busyCycles);
    ls.push_back(std::move(o));
  }
  j["layers"] = std::move(ls);
  return j.dump(2) + "\n";
}

std::string SimReport::chromeTraceJson() const {
  const int pid = 1;
  auto us = [&](double cycles) { return clockMhz > 0 ? cycles / clockMhz : cycles; };
  Json ev = Json::array();
  auto meta = [&](const char *what, int tid, const std::string &name) {
    Json m;
    m["name"] = what;
    m["ph"] = "M";
    m["pid"] = pid;
    if (tid >= 0) m["tid"] = tid;
    m["args"] = Json{{"name", name}};
    ev.push_back(std::move(m));
  };
  meta("process_name", -1, "BM1684 TPU");
  meta("thread_name", 1, "TIU");
  meta("thread_name", 2, "GDMA");
  meta("thread_name", 3, "command groups");
  for (size_t i = 0; i < groups.size(); ++i) {
    Json g;
    g["name"] = "group " + std::to_string(i);
    g["cat"] = "group";
    g["ph"] = "X";
    g["pid"] = pid;
    g["tid"] = 3;
    g["ts"] = us(groups[i].startCycle);
    g["dur"] = us(groups[i].endCycle - groups[i].startCycle);
    ev.push_back(std::move(g));
  }
  for (const TraceEvent &t : events) {
    Json x;
    x["name"] = t.layer >= 0 ? t.name + " " + layerNames[size_t(t.layer)] : t.name;
    x["cat"] = engineKey(unsigned(t.engine));
    x["ph"] = "X";
    x["pid"] = pid;
    x["tid"] = t.engine == Engine::Tiu ? 1 : 2;
    x["ts"] = us(t.startCycle);
    x["dur"] = us(t.endCycle - t.startCycle);
    Json a;
    a["group"] = t.group;
    a["index"] = t.index;
    a["id"] = t.id;
    a["wait_id"] = t.waitId;
    if (t.layer >= 0) a["layer"] = layerNames[size_t(t.layer)];
    a["cycles"] = cyc(t.endCycle - t.startCycle);
    a["waited_cycles"] = cyc(t.startCycle - t.readyCycle);
    if (t.engine == Engine::Gdma) a["ddr_bytes"] = t.ddrBytes;
    x["args"] = std::move(a);
    ev.push_back(std::move(x));
  }
  // Flow arrows from each dependency to the command that waited for it.
  std::map<std::tuple<unsigned, uint32_t, uint32_t>, const TraceEvent *> byId;
  for (const TraceEvent &t : events) byId[{unsigned(t.engine), t.group, uint32_t(t.id)}] = &t;
  uint64_t flowId = 0;
  for (const TraceEvent &t : events) {
    if (!t.waitId) continue;
    auto dep = byId.find({unsigned(otherEngine(t.engine)), t.group, uint32_t(t.waitId)});
    if (dep == byId.end()) continue;
    ++flowId;
    for (const TraceEvent *end : {dep->second, &t}) {
      Json f;
      f["name"] = "cmd_id";
      f["cat"] = "dependency";
      f["ph"] = end == &t ? "f" : "s";
      if (end == &t) f["bp"] = "e";
      f["id"] = flowId;
      f["pid"] = pid;
      f["tid"] = end->engine == Engine::Tiu ? 1 : 2;
      f["ts"] = us(end->startCycle);
      ev.push_back(std::move(f));
    }
  }
  for (const DdrSample &s : ddrSamples) {
    Json c;
    c["name"] = "DDR bandwidth";
    c["ph"] = "C";
    c["pid"] = pid;
    c["ts"] = us(s.cycle);
    c["args"] = Json{{"GB/s", s.bytesPerCycle * clockMhz / 1000.0}};
    ev.push_back(c);
    c["name"] = "DDR bytes";
    c["args"] = Json{{"bytes", s.bytesDone}};
    ev.push_back(std::move(c));
  }
  Json j;
  j["displayTimeUnit"] = "ns";
  j["traceEvents"] = std::move(ev);
  return j.dump() + "\n";
}

std::string SimReport::summary() const {
  std::ostringstream os;
  char buf[160];
  std::snprintf(buf, sizeof buf, "total: %.0f cycles, %.3f us at %.0f MHz\n", totalCycles, timeUs(), clockMhz);
  os << buf;
  for (unsigned e = 0; e < kEngineCount; ++e) {
    const EngineStats &s = engines[e];
    std::snprintf(buf, sizeof buf,
                  "%-4s: %llu commands, busy %.0f, waiting %.0f, idle %.0f cycles, utilization %.1f%%\n",
                  engineName(Engine(e)), (unsigned long long)s.commands, s.busyCycles, s.waitingCycles,
                  s.idleCycles, 100.0 * s.utilization);
    os << buf;
  }
  return os.str();
}

} // namespace tpu::sysc
