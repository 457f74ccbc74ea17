// Cycles of one TIU command: pure functions of the command's shapes and the
// hardware parameters, shared by the SystemC model and the compiler's cost
// model. Formulas and their sources: docs/timing.md.
#pragma once

#include "isa/HwConfig.h"
#include "isa/TiuCommand.h"

#include <cstdint>

namespace tpu::timing {

struct TiuCost {
  uint64_t startupCycles = 0; // pipeline fill, once per command
  uint64_t computeCycles = 0; // EU passes x cycles per pass
  uint64_t macs = 0;          // multiply-accumulates (conv, depthwise, mm, mm2); 0 otherwise
  uint64_t cycles() const { // saturating, like every product above
    return computeCycles > UINT64_MAX - startupCycles ? UINT64_MAX : startupCycles + computeCycles;
  }
};

TiuCost tiuCost(const isa::TiuCommand &cmd, const isa::HwConfig &hw);
inline uint64_t cycles(const isa::TiuCommand &cmd, const isa::HwConfig &hw) { return tiuCost(cmd, hw).cycles(); }

// The building blocks, exposed for the compiler's cost model and for tests.
// A lane's EU array is euBytes/4 32-bit words; a word holds 4/bytes batch
// items of a sub-word type (int8 4N, int16 2N) or one fp32/int32 element.
uint32_t wordEus(const isa::HwConfig &hw);
uint32_t batchPack(uint32_t elementBytes);
// Rounds of lanes a tensor of `channels` channels starting in lane `lane` needs.
uint64_t laneRounds(uint64_t channels, uint32_t lane, const isa::HwConfig &hw);
// EU passes over one channel-round of an (n, plane) tensor: ceil(n/pack) * ceil(plane/wordEus).
uint64_t planePasses(uint64_t n, uint64_t plane, uint32_t elementBytes, const isa::HwConfig &hw);

} // namespace tpu::timing
