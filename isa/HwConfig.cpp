#include "isa/HwConfig.h"

#include "support/ReadFile.h"

#include <nlohmann/json.hpp>
#include <utility>

namespace tpu::isa {

namespace {

// One table drives parsing, printing and the error messages.
template <typename Fn> void forEachParam(HwConfig &c, Fn &&fn) {
  fn("npuLanes", c.npuLanes);
  fn("euBytes", c.euBytes);
  fn("lmemBytesPerLane", c.lmemBytesPerLane);
  fn("lmemBanks", c.lmemBanks);
  fn("dmaAlignBytes", c.dmaAlignBytes);
  fn("coeffAlignBytes", c.coeffAlignBytes);
  fn("globalMemBase", c.globalMemBase);
  fn("globalMemBytes", c.globalMemBytes);
  fn("l2SramBytes", c.l2SramBytes);
  fn("clockMhz", c.clockMhz);
  fn("gdmaClockMhz", c.gdmaClockMhz);
  fn("ddrBandwidthGBs", c.ddrBandwidthGBs);
  fn("ddrLatencyNs", c.ddrLatencyNs);
  fn("ddrBurstBytes", c.ddrBurstBytes);
  fn("gdmaLmemBytesPerLanePerCycle", c.gdmaLmemBytesPerLanePerCycle);
  fn("gdmaLmemMinElementBytes", c.gdmaLmemMinElementBytes);
  fn("tiuStartupCycles", c.tiuStartupCycles);
  fn("gdmaStartupCycles", c.gdmaStartupCycles);
  fn("syncCycles", c.syncCycles);
  fn("bankConflictFactor", c.bankConflictFactor);
  fn("lutCyclesPerElement", c.lutCyclesPerElement);
  fn("divideCycles", c.divideCycles);
  fn("int8ConvChannelsPerCycle", c.int8ConvChannelsPerCycle);
  fn("cubePixels", c.cubePixels);
  fn("icParallelBytes", c.icParallelBytes);
}

bool isPow2(uint64_t v) { return v && !(v & (v - 1)); }

} // namespace

// The fitted parameters (perf/validate_latency.py, docs/timing.md "Fitted
// parameters"): least squares on log error over every published row at once.
HwConfig::HwConfig()
    : ddrLatencyNs(2594), ddrBurstBytes(51), gdmaLmemBytesPerLanePerCycle(3.55), gdmaLmemMinElementBytes(7.77),
      tiuStartupCycles(2710), syncCycles(931), lutCyclesPerElement(3.28) {}

Status HwConfig::validate() const {
  if (npuLanes == 0 || npuLanes > 64)
    return makeError("npuLanes = ", npuLanes, " must be in 1..64 (the lane mask is 64 bits)");
  if (euBytes == 0 || euBytes % 4)
    return makeError("euBytes = ", euBytes, " must be a positive multiple of 4");
  if (!isPow2(lmemBytesPerLane) || lmemBytesPerLane < 4096 || lmemBytesPerLane > (1u << 24))
    return makeError("lmemBytesPerLane = ", lmemBytesPerLane, " must be a power of two in 4 KiB..16 MiB");
  if (lmemBanks == 0 || lmemBytesPerLane % lmemBanks)
    return makeError("lmemBanks = ", lmemBanks, " must divide lmemBytesPerLane");
  if (!isPow2(dmaAlignBytes) || !isPow2(coeffAlignBytes))
    return makeError("dmaAlignBytes and coeffAlignBytes must be powers of two");
  if (globalMemBase + globalMemBytes > (1ull << 40) || globalMemBytes == 0)
    return makeError("global memory [", globalMemBase, ", +", globalMemBytes, ") must fit 40-bit addresses");
  if (!(clockMhz > 0) || !(gdmaClockMhz > 0) || !(ddrBandwidthGBs > 0) || !(ddrLatencyNs >= 0) ||
      !(gdmaLmemBytesPerLanePerCycle > 0))
    return makeError("clockMhz, gdmaClockMhz, ddrBandwidthGBs and gdmaLmemBytesPerLanePerCycle must be > 0, "
                     "ddrLatencyNs >= 0");
  for (auto [name, value] : {std::pair<const char *, double>{"gdmaStartupCycles", gdmaStartupCycles},
                              {"syncCycles", syncCycles},
                              {"bankConflictFactor", bankConflictFactor},
                              {"gdmaLmemMinElementBytes", gdmaLmemMinElementBytes},
                              {"lutCyclesPerElement", lutCyclesPerElement}})
    if (!(value >= 0)) return makeError(name, " = ", value, " must be >= 0");
  if (ddrBurstBytes == 0) return makeError("ddrBurstBytes must be > 0");
  if (int8ConvChannelsPerCycle == 0) return makeError("int8ConvChannelsPerCycle must be > 0");
  if ((cubePixels == 0) != (icParallelBytes == 0))
    return makeError("cubePixels and icParallelBytes are both 0 (no conv cube) or both > 0");
  return Status::ok();
}

Result<HwConfig> HwConfig::fromJson(const std::string &text, const std::string &origin, const HwConfig &base) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return makeError(origin, ": not valid JSON");
  if (!j.is_object()) return makeError(origin, ": expected a JSON object of hardware parameters");
  HwConfig cfg = base;
  Status st;
  size_t known = 0;
  forEachParam(cfg, [&](const char *key, auto &field) {
    if (!st.isOk() || !j.contains(key)) return;
    ++known;
    const auto &v = j[key];
    using T = std::decay_t<decltype(field)>;
    if (!v.is_number() || (std::is_integral_v<T> && !v.is_number_integer()) ||
        (std::is_integral_v<T> && v.is_number_integer() && v.get<long long>() < 0)) {
      st = makeError(origin, ": '", key, "' must be a ",
                     std::is_integral_v<T> ? "non-negative integer" : "number");
      return;
    }
    if constexpr (std::is_integral_v<T>) {
      unsigned long long u = v.get<unsigned long long>();
      if (u > std::numeric_limits<T>::max()) {
        st = makeError(origin, ": '", key, "' = ", u, " is out of range");
        return;
      }
      field = T(u);
    } else {
      field = v.get<T>();
    }
  });
  if (!st.isOk()) return st;
  if (known != j.size()) {
    HwConfig probe;
    for (auto it = j.begin(); it != j.end(); ++it) {
      bool found = false;
      forEachParam(probe, [&](const char *key, auto &) { found |= it.key() == key; });
      if (!found) return makeError(origin, ": unknown hardware parameter '", it.key(), "'");
    }
  }
  if (Status v = cfg.validate(); !v.isOk()) return v.prefix(origin);
  return cfg;
}

Result<HwConfig> HwConfig::load(const std::string &path, const HwConfig &base) {
  auto text = readFile(path, "hardware config");
  if (!text) return text.status();
  return fromJson(*text, path, base);
}

std::string HwConfig::toJson() const {
  nlohmann::ordered_json j;
  HwConfig copy = *this;
  forEachParam(copy, [&](const char *key, auto &field) { j[key] = field; });
  return j.dump(2);
}

} // namespace tpu::isa
