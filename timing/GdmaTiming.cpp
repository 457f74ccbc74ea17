#include "timing/GdmaTiming.h"

#include <algorithm>

namespace tpu::timing {

double ddrBytesPerCycle(const isa::HwConfig &hw) { return hw.ddrBandwidthGBs * 1e3 / hw.clockMhz; }

uint64_t ddrChannelBytes(uint64_t runs, uint64_t runBytes, uint32_t burstBytes) {
  return runs * ((runBytes + burstBytes - 1) / burstBytes) * burstBytes;
}

double GdmaCost::dataCycles(double bpc) const { return std::max(lmemCycles, double(ddrBytes) / bpc); }

GdmaCost gdmaCost(const sim::GdmaAccess &access, const isa::HwConfig &hw) {
  GdmaCost c;
  c.payloadBytes = access.write.bytes;
  uint64_t ddrPayload = 0;
  double laneBytes = 0;
  for (const sim::GdmaSideAccess *side : {&access.read, &access.write}) {
    if (side->bytes == 0) continue;
    if (side->local) {
      laneBytes = std::max(laneBytes, double(side->laneBytes) * std::max(1.0, hw.gdmaLmemMinElementBytes / side->elementBytes));
    } else {
      c.ddrBytes += ddrChannelBytes(side->runs, side->runBytes, hw.ddrBurstBytes);
      ddrPayload += side->bytes;
    }
  }
  c.latencyCycles = hw.gdmaStartupCycles * hw.perGdmaCycle() +
                   (c.ddrBytes ? hw.ddrLatencyNs * hw.cyclesPerNs() : 0.0);
  // Each lane's LMEM port takes its share: a tensor of few channels uses few ports.
  c.lmemCycles = laneBytes / hw.gdmaLmemBytesPerLanePerCycle * hw.perGdmaCycle();
  c.burstEfficiency = c.ddrBytes ? double(ddrPayload) / double(c.ddrBytes) : 1.0;
  return c;
}

Result<GdmaCost> gdmaCost(const isa::GdmaCommand &cmd, const isa::HwConfig &hw) {
  Result<sim::GdmaAccess> access = sim::gdmaAccess(hw, cmd);
  if (!access) return access.status();
  return gdmaCost(*access, hw);
}

Result<double> gdmaCycles(const isa::GdmaCommand &cmd, const isa::HwConfig &hw) {
  Result<GdmaCost> cost = gdmaCost(cmd, hw);
  if (!cost) return cost.status();
  return cost->cycles(ddrBytesPerCycle(hw));
}

} // namespace tpu::timing
