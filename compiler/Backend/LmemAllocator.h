// Per-lane local memory for the buffers of one op or one layer group. Every
// lane holds the same layout (channel c of a tensor in lane c % 64), so the
// allocator hands out byte offsets within a lane. Bank-aware: a buffer
// starts at a fresh 64 KiB bank when all the buffers still to place fit
// after skipping to it, so the inputs and the output of one TIU command sit
// in different banks where possible; otherwise buffers are packed at 64-byte
// alignment.
#pragma once

#include "isa/HwConfig.h"
#include "support/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tpu::backend {

struct LmemPlan {
  std::vector<uint32_t> offsets; // per buffer, bytes within each lane
  uint64_t used = 0;             // bytes per lane
};

class LmemAllocator {
public:
  explicit LmemAllocator(const isa::HwConfig &cfg) : cfg_(cfg) {}
  // Places buffers of `sizes` bytes per lane in order. Fails when they do
  // not fit, naming `what` and the bytes needed.
  Result<LmemPlan> plan(const std::vector<uint64_t> &sizes, const std::string &what) const;
  // Bytes per lane the buffers take (the same rule; may exceed the lane).
  uint64_t footprint(const std::vector<uint64_t> &sizes) const;
  bool fits(const std::vector<uint64_t> &sizes) const {
    return footprint(sizes) <= cfg_.lmemBytesPerLane;
  }

private:
  LmemPlan place(const std::vector<uint64_t> &sizes) const;
  isa::HwConfig cfg_;
};

} // namespace tpu::backend
