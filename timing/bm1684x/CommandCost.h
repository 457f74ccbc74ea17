// What one BM1684X command costs: a pure function of its fields (read through the operand views of
// memory/bm1684x/Operands.h) and the hardware parameters, for the SystemC model and the latency fit.
// TIU: a start-up, then EU passes (elements over lanes and the EU vector of the widest type) times the
// steps per pass (kernel taps, input channels, Taylor terms); a conv of 8- or 16-bit data runs on the cube
// (cubePixels output positions x icParallelBytes of input channels per lane and cycle), an fp32 one on the
// EU vector, input channel by channel. GDMA: timing/GdmaTiming.h's formula on the command's access pattern.
// Formulas and their sources: docs/bm1684x.md, "Timing".
#pragma once

#include "isa/HwConfig.h"
#include "isa/bm1684x/Command.h"
#include "memory/GdmaAccess.h"
#include "support/Status.h"

#include <cstdint>

namespace tpu::timing::bm1684x {

struct CommandCost {
  double latencyCycles = 0;  // TIU issue and pipeline fill; DMA descriptor and DDR first byte
  double dataCycles = 0;     // compute, or the DMA's local-memory floor (the DDR phase apart: ddrBytes)
  uint64_t ddrBytes = 0;     // bytes on the DDR channel, whole bursts
  uint64_t payloadBytes = 0; // bytes a DMA writes
  uint64_t macs = 0;         // multiply-accumulates of a conv or depthwise
};

// What a command asks of its engine, before the start-ups and the DDR and local-memory rates price it: a
// TIU command's compute cycles (lanes, EU bytes, the cube and divideCycles already applied), a DMA's
// access pattern. The latency fit computes it once per command and prices it under many configurations.
struct CommandWork {
  enum class Kind : uint8_t { Free, Tiu, Dma } kind = Kind::Free; // Free: a sys command
  uint64_t computeCycles = 0;
  uint64_t macs = 0;
  sim::GdmaAccess access;
};

// Error: a command whose operands are not described (memory/bm1684x/Operands.h), named.
Result<CommandWork> commandWork(const isa::bm1684x::Command &command, const isa::HwConfig &hw);
CommandCost costOf(const CommandWork &work, const isa::HwConfig &hw);
inline Result<CommandCost> commandCost(const isa::bm1684x::Command &command, const isa::HwConfig &hw) {
  auto work = commandWork(command, hw);
  if (!work) return work.status();
  return costOf(*work, hw);
}

} // namespace tpu::timing::bm1684x
