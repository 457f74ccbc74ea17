#include "tools/explore/SimStats.h"

#include "tools/explore/Html.h"

#include <algorithm>

namespace tpu::explore {

using Json = nlohmann::json;

namespace {

std::string keyPath(const std::string &path, const std::string &key) { return path.empty() ? key : path + "." + key; }

} // namespace

Result<const Json *> JsonReader::member(const Json &obj, const std::string &key, const std::string &path) const {
  if (!obj.is_object()) return makeError(origin, ": '", path, "' is not an object");
  auto it = obj.find(key);
  if (it == obj.end()) return makeError(origin, ": missing key '", keyPath(path, key), "'");
  return &*it;
}

Result<double> JsonReader::number(const Json &obj, const std::string &key, const std::string &path) const {
  auto m = member(obj, key, path);
  if (!m) return m.status();
  if (!(*m)->is_number()) return makeError(origin, ": key '", keyPath(path, key), "' is not a number");
  return (*m)->get<double>();
}

Result<std::string> JsonReader::string(const Json &obj, const std::string &key, const std::string &path) const {
  auto m = member(obj, key, path);
  if (!m) return m.status();
  if (!(*m)->is_string()) return makeError(origin, ": key '", keyPath(path, key), "' is not a string");
  return (*m)->get<std::string>();
}

Result<const Json *> JsonReader::array(const Json &obj, const std::string &key) const {
  auto m = member(obj, key, "");
  if (!m) return m.status();
  if (!(*m)->is_array()) return makeError(origin, ": key '", key, "' is not an array");
  return *m;
}

double SimStats::lmemPeakBytes() const {
  double peak = -1;
  for (const StatsSpan &g : groups) peak = std::max(peak, g.lmemBytes);
  return peak;
}

namespace {

Result<StatsSpan> readSpan(const JsonReader &rd, const Json &j, const std::string &path) {
  StatsSpan s;
  TPU_ASSIGN_OR_RETURN(s.start, rd.number(j, "start_cycle", path));
  TPU_ASSIGN_OR_RETURN(s.end, rd.number(j, "end_cycle", path));
  for (size_t e = 0; e < 2; ++e) {
    TPU_ASSIGN_OR_RETURN(s.commands[e], rd.number(j, std::string(kStatsEngines[e]) + "_commands", path));
    TPU_ASSIGN_OR_RETURN(s.busy[e], rd.number(j, std::string(kStatsEngines[e]) + "_busy_cycles", path));
  }
  for (const char *key : {"lmem_peak_bytes", "lmem_bytes"})
    if (j.contains(key)) {
      TPU_ASSIGN_OR_RETURN(s.lmemBytes, rd.number(j, key, path));
      break;
    }
  return s;
}

} // namespace

Result<SimStats> parseSimStats(const std::string &text, const std::string &origin) {
  Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded()) return makeError(origin, ": not valid JSON");
  if (!j.is_object()) return makeError(origin, ": the stats file must hold a JSON object");
  JsonReader rd{origin};
  SimStats s;
  TPU_ASSIGN_OR_RETURN(s.clockMhz, rd.number(j, "clock_mhz", ""));
  TPU_ASSIGN_OR_RETURN(s.totalCycles, rd.number(j, "total_cycles", ""));
  TPU_ASSIGN_OR_RETURN(s.timeUs, rd.number(j, "time_us", ""));
  if (!(s.clockMhz > 0)) return makeError(origin, ": clock_mhz must be positive");
  if (!(s.totalCycles >= 0)) return makeError(origin, ": total_cycles must not be negative");
  TPU_ASSIGN_OR_RETURN(const Json *engines, rd.member(j, "engines", ""));
  for (size_t e = 0; e < 2; ++e) {
    TPU_ASSIGN_OR_RETURN(const Json *eng, rd.member(*engines, kStatsEngines[e], "engines"));
    std::string path = std::string("engines.") + kStatsEngines[e];
    EngineStats &out = s.engines[e];
    TPU_ASSIGN_OR_RETURN(out.commands, rd.number(*eng, "commands", path));
    TPU_ASSIGN_OR_RETURN(out.busy, rd.number(*eng, "busy_cycles", path));
    TPU_ASSIGN_OR_RETURN(out.waiting, rd.number(*eng, "waiting_cycles", path));
    TPU_ASSIGN_OR_RETURN(out.idle, rd.number(*eng, "idle_cycles", path));
    TPU_ASSIGN_OR_RETURN(out.utilization, rd.number(*eng, "utilization", path));
  }
  TPU_ASSIGN_OR_RETURN(const Json *ddr, rd.member(j, "ddr", ""));
  TPU_ASSIGN_OR_RETURN(s.ddrBytes, rd.number(*ddr, "bytes", "ddr"));
  TPU_ASSIGN_OR_RETURN(s.payloadBytes, rd.number(*ddr, "payload_bytes", "ddr"));
  TPU_ASSIGN_OR_RETURN(s.ddrGBs, rd.number(*ddr, "average_gbs", "ddr"));
  TPU_ASSIGN_OR_RETURN(const Json *groups, rd.array(j, "groups"));
  for (size_t i = 0; i < groups->size(); ++i) {
    TPU_ASSIGN_OR_RETURN(StatsSpan g, readSpan(rd, (*groups)[i], "groups[" + std::to_string(i) + "]"));
    g.name = "group " + std::to_string(i);
    s.haveLmem |= g.lmemBytes >= 0;
    s.groups.push_back(std::move(g));
  }
  // A timing model that does not compute local-memory extents writes 0 for every group (the BM1684X's,
  // simulator/systemc/bm1684x/ProgramBuilder.h); a program whose TIU commands touch no local memory does not
  // exist, so that is no figure rather than a peak of 0 bytes.
  if (s.engines[0].commands > 0 && s.lmemPeakBytes() == 0) {
    for (StatsSpan &g : s.groups) g.lmemBytes = -1;
    s.haveLmem = false;
  }
  TPU_ASSIGN_OR_RETURN(const Json *layers, rd.array(j, "layers"));
  for (size_t i = 0; i < layers->size(); ++i) {
    std::string path = "layers[" + std::to_string(i) + "]";
    TPU_ASSIGN_OR_RETURN(StatsSpan l, readSpan(rd, (*layers)[i], path));
    TPU_ASSIGN_OR_RETURN(l.name, rd.string((*layers)[i], "name", path));
    s.layers.push_back(std::move(l));
  }
  return s;
}

Result<SimStats> readSimStatsFile(const std::string &path) {
  auto text = readTextFile(path);
  if (!text) return text.status();
  return parseSimStats(*text, path);
}

} // namespace tpu::explore
