// How a GDMA command touches memory: each side resolved to concrete element
// addressing and checked (one truth for executeGdma and the timing model),
// and the access pattern (bytes, contiguous runs) the timing model charges.
// Rules: docs/isa.md, "GDMA commands".
#pragma once

#include "isa/GdmaCommand.h"
#include "isa/HwConfig.h"
#include "support/Status.h"

#include <array>
#include <cstdint>

namespace tpu::sim {

// One side of a command with its effective strides (defaults applied when
// stride_enable is 0). Element (n,c,h,w) is at
//   global: addr + (n*sn + c*sc + h*sh + w*sw) * bytes
//   local:  lane (npuOffset + c) % lanes,
//           laneOffset + (n*sn + ((npuOffset + c) / lanes)*sc + h*sh + w*sw) * bytes
struct GdmaView {
  bool local = false;
  isa::GdmaFormat format = isa::GdmaFormat::Fp32;
  uint32_t bytes = 4;
  std::array<uint32_t, 4> shape{};
  std::array<uint64_t, 4> stride{};
  uint64_t addr = 0;        // the command's 40-bit address
  uint32_t npuOffset = 0;   // local: lane of channel 0
  uint64_t laneOffset = 0;  // local: byte offset of element (0,0,0,0) in its lane

  uint64_t elements() const {
    return uint64_t(shape[0]) * shape[1] * shape[2] * shape[3];
  }
  uint32_t laneOf(uint32_t c, uint32_t lanes) const { return (npuOffset + c) % lanes; }
  // Element offset (in elements) of (n, c, h, 0) from laneOffset (local) or
  // addr (global).
  uint64_t rowElement(uint32_t n, uint32_t c, uint32_t h, uint32_t lanes) const {
    uint64_t cStep = local ? (uint64_t(npuOffset) + c) / lanes : c;
    return n * stride[0] + cStep * stride[1] + h * stride[2];
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
};
struct GdmaAccess {
  GdmaSideAccess read, write;
};

// The access pattern of a valid command. Local writes count only lanes the
// lane mask enables; a fill reads nothing.
GdmaAccess gdmaAccess(const isa::HwConfig &cfg, const GdmaPlan &plan, const isa::GdmaCommand &cmd);
Result<GdmaAccess> gdmaAccess(const isa::HwConfig &cfg, const isa::GdmaCommand &cmd);

} // namespace tpu::sim
