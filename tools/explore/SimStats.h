// The stats file of a timed run (`tpuc sim --stats`, written by
// simulator/systemc/SimReport.cpp), read in one place for every tool that
// shows it: the profile report, sweep rows and the graph's node times.
#pragma once

#include "support/Status.h"

#include <nlohmann/json.hpp>

#include <array>
#include <string>
#include <vector>

namespace tpu::explore {

// Typed access to a JSON file: a missing key or a wrong type is an error
// naming the file (`origin`) and the key path.
struct JsonReader {
  std::string origin;

  Result<const nlohmann::json *> member(const nlohmann::json &obj, const std::string &key,
                                        const std::string &path) const;
  Result<double> number(const nlohmann::json &obj, const std::string &key, const std::string &path) const;
  Result<std::string> string(const nlohmann::json &obj, const std::string &key, const std::string &path) const;
  Result<const nlohmann::json *> array(const nlohmann::json &obj, const std::string &key) const;
};

// The engines in the order of every per-engine array below.
inline constexpr std::array<const char *, 2> kStatsEngines{"tiu", "gdma"};

struct EngineStats {
  double commands, busy, waiting, idle, utilization;
};

// A layer group or a layer: its cycle span and per-engine work.
struct StatsSpan {
  std::string name;
  double start, end;
  std::array<double, 2> commands, busy;
  double lmemBytes = -1; // groups: when the code generator recorded the peak
};

struct SimStats {
  double clockMhz, totalCycles, timeUs;
  std::array<EngineStats, 2> engines;
  double ddrBytes, payloadBytes, ddrGBs;
  std::vector<StatsSpan> groups, layers;
  bool haveLmem = false;

  double lmemPeakBytes() const; // -1 without LMEM figures
};

// `origin` names the file in errors.
Result<SimStats> parseSimStats(const std::string &text, const std::string &origin);
Result<SimStats> readSimStatsFile(const std::string &path);

} // namespace tpu::explore
