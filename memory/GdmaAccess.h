// How a GDMA command touches memory: each side resolved to concrete element
// addressing and checked (one truth for executeGdma and the timing model),
// and the access pattern (bytes, contiguous runs) the timing model charges.
// Rules: docs/isa.md, "GDMA commands".
#pragma once

#include "isa/GdmaCommand.h"
#include "isa/HwConfig.h"
#include "memory/LocalTensor.h"
#include "support/Status.h"

#include <array>
#include <cstdint>

namespace tpu::sim {

// One side of a command with its effective strides (defaults applied when
// stride_enable is 0), in elements. Element (n,c,h,w) is at
//   global: addr + (n*sn + c*sc + h*sh + w*sw) * bytes
//   local:  lmem.ptr(n, c, h, w) — the lane/offset rule TIU operands use.
struct GdmaView {
  bool local = false;
  isa::GdmaFormat format = isa::GdmaFormat::Fp32;
  uint32_t bytes = 4;
  std::array<uint32_t, 4> shape{};
  std::array<uint64_t, 4> stride{};
  uint64_t addr = 0;  // the command's 40-bit address
  LocalTensor lmem;   // local side only: lanes, npu offset, in-lane offset, strides

  uint64_t elements() const {
    return uint64_t(shape[0]) * shape[1] * shape[2] * shape[3];
  }
  // Byte offset of element (n, c, h, 0): inside lane lmem.laneOf(c) when
  // local, from addr when global.
  uint64_t rowOffset(uint32_t n, uint32_t c, uint32_t h) const {
    if (local) return lmem.offset(n, c, h, 0);
    return (n * stride[0] + c * stride[1] + h * stride[2]) * bytes;
  }
};

// Does the 64-bit localmem mask let a local destination write `lane`?
inline bool laneEnabled(uint64_t laneMask, uint32_t lane) {
  return lane < 64 && (laneMask >> lane & 1);
}

// A validated command: both sides resolved, shapes and formats consistent.
struct GdmaPlan {
  bool readsSrc = true;   // false for constant fill (src fields are ignored)
  GdmaView src, dst;
};

// Checks everything that can be checked without memory contents: supported
// special function and formats, sizes, alignment, address ranges against the
// configured LMEM and DDR, element counts / transposed shapes. Each error
// names the offending field.
Result<GdmaPlan> planGdma(const isa::HwConfig &cfg, const isa::GdmaCommand &cmd);

struct GdmaSideAccess {
  bool local = false;
  uint64_t bytes = 0;     // bytes transferred on this side
  uint64_t runs = 0;      // contiguous runs (bursts) those bytes form
  uint64_t runBytes = 0;  // bytes per run
  uint64_t laneBytes = 0; // local side: bytes of the busiest lane (channels spread over lanes round-robin)
  uint32_t elementBytes = 4;
};
struct GdmaAccess {
  GdmaSideAccess read, write;
};

// The access pattern of a valid command. Local writes count only lanes the
// lane mask enables; a fill reads nothing.
GdmaAccess gdmaAccess(const GdmaPlan &plan, const isa::GdmaCommand &cmd);
Result<GdmaAccess> gdmaAccess(const isa::HwConfig &cfg, const isa::GdmaCommand &cmd);

} // namespace tpu::sim
