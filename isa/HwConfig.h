// The BM1684's hardware parameters in one place. Every part (simulator,
// timing model, compiler cost model, LMEM allocator) reads them from here;
// exploration changes them through a JSON file (see docs/timing.md).
#pragma once

#include "support/Status.h"

#include <cstdint>
#include <string>

namespace tpu::isa {

struct HwConfig {
  // Published facts (shared/reference/BM1684.md §1).
  uint32_t npuLanes = 64;             // NPU lanes; channel c lives in lane (c + npu_offset) % lanes
  uint32_t euBytes = 128;             // execution-unit bytes per lane: EU count = euBytes / sizeof(dtype)
  uint32_t lmemBytesPerLane = 512 * 1024;
  uint32_t lmemBanks = 8;
  uint32_t dmaAlignBytes = 512;
  uint32_t coeffAlignBytes = 0x1000;
  uint64_t globalMemBase = 0x100000000ull; // DDR starts at 0x1_0000_0000 (40-bit addresses)
  uint64_t globalMemBytes = 4ull << 30;    // 4 GiB for the TPU on SE5
  uint64_t l2SramBytes = 4ull << 20;
  double clockMhz = 550.0;

  double gdmaClockMhz = 575.0;        // GDMA clock of Sophgo's profiler (BM1684.md §8): GDMA cycles below run at it

  // The timing model's other parameters (docs/timing.md lists each).
  double ddrBandwidthGBs = 25.2;      // channel bytes/s: 2 x the measured 12.6 GB/s DDR0->DDR0 copy (read + write)
  // Fitted once on the whole published set (perf/validate_latency.py); the
  // values are in one place, HwConfig() in HwConfig.cpp.
  double ddrLatencyNs;                // first-byte latency of a DDR access
  uint32_t ddrBurstBytes;             // every contiguous run occupies whole bursts: shorter rows waste the rest
  double gdmaLmemBytesPerLanePerCycle; // LMEM-side rate of the GDMA per lane it touches (GDMA cycles)
  double gdmaLmemMinElementBytes;     // an element takes at least this many bytes of the GDMA's LMEM side
  uint32_t tiuStartupCycles;          // issue and pipeline fill per TIU command
  double gdmaStartupCycles = 60;      // descriptor fetch/decode per GDMA command (GDMA cycles; assumption, not fitted)
  double syncCycles;                  // a command naming a new dependency on the other engine waits this long
  double lutCyclesPerElement;         // a table lookup takes this many cycles per element per lane (no EU parallelism)
  double bankConflictFactor = 0;      // TIU compute x (1 + this) when two operands start in one LMEM bank (fitted to 0)
  uint32_t divideCycles = 8;          // iterative divide / rsqrt per EU group
  uint32_t int8ConvChannelsPerCycle = 2; // input channels an int8 conv word EU takes per cycle (17.6 TOPS, BM1684.md §6)
  // Chips with a conv cube (the BM1684X; 0 = none, the BM1684): per lane and cycle it sums the products of
  // icParallelBytes of input channels (IC_PARALLEL) at cubePixels output positions.
  uint32_t cubePixels = 0;
  uint32_t icParallelBytes = 0;

  HwConfig(); // BM1684: the published values above and the fitted ones (other chips: isa/chips/Registry.h)

  uint64_t lmemBytes() const { return uint64_t(npuLanes) * lmemBytesPerLane; }
  uint32_t lmemBankBytes() const { return lmemBytesPerLane / lmemBanks; }
  // Elements one lane processes per cycle for a dtype of `bytes` bytes.
  uint32_t euCount(uint32_t bytes) const { return euBytes / bytes; }
  double cyclesPerNs() const { return clockMhz / 1000.0; }
  // TIU (reference) cycles per GDMA cycle.
  double perGdmaCycle() const { return clockMhz / gdmaClockMhz; }

  // Checks ranges and consistency (non-zero sizes, banks divide the lane...).
  Status validate() const;

  // Reads a JSON object whose keys are the member names above; absent keys keep
  // `base`'s values (BM1684's by default), unknown keys or wrong types are an error naming the key.
  static Result<HwConfig> fromJson(const std::string &text, const std::string &origin = "<config>",
                                   const HwConfig &base = HwConfig());
  static Result<HwConfig> load(const std::string &path, const HwConfig &base = HwConfig());
  std::string toJson() const;
};

} // namespace tpu::isa
