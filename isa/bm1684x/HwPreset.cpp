#include "isa/bm1684x/HwPreset.h"

#include "isa/bm1684x/MemoryMap.h"

namespace tpu::isa::bm1684x {

HwConfig hwConfig() {
  HwConfig c;
  // TPU-MLIR's BM1684X backend (BM1684X.h) and the memory map (MemoryMap.h).
  c.npuLanes = kLanes;
  c.euBytes = kEuBytes;
  c.lmemBytesPerLane = uint32_t(kLaneBytes);
  c.lmemBanks = uint32_t(kBanksPerLane);
  c.dmaAlignBytes = 512;
  c.coeffAlignBytes = 0x1000;
  c.globalMemBase = kGlobalStart;
  c.globalMemBytes = kGlobalEnd - kGlobalStart;
  c.l2SramBytes = 0x1FB000;
  // Sophgo's figures for the chip: 1 GHz, INT8 32 TOPS, FP16/BF16 16 TFLOPS, FP32 2 TFLOPS; LPDDR4X at
  // 4266 MT/s on a 128-bit bus (docs/bm1684x.md, "Timing"). The conv cube takes IC_PARALLEL = 64 bytes of
  // input channels; its peaks give 4 output positions per lane and cycle (32e12 / 2 / 1e9 / 64 lanes / 64).
  c.clockMhz = 1000;
  c.gdmaClockMhz = 1000;
  c.icParallelBytes = 64;
  c.cubePixels = 4;
  c.ddrBandwidthGBs = 68.3;
  // First guesses, not fitted: perf/validate_latency_bm1684x.py fits these on the published rows, but the
  // compiler's work differs from TPU-MLIR's (docs/bm1684x.md, "Timing"), so the fit is not taken in yet.
  c.ddrLatencyNs = 500;
  c.ddrBurstBytes = 64;
  c.gdmaLmemBytesPerLanePerCycle = 4;
  c.gdmaLmemMinElementBytes = 0;
  c.tiuStartupCycles = 100;
  c.gdmaStartupCycles = 100;
  c.syncCycles = 0;
  c.lutCyclesPerElement = 0;
  c.divideCycles = 8;
  return c;
}

} // namespace tpu::isa::bm1684x
