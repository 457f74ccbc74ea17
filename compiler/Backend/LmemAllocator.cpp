#include "compiler/Backend/LmemAllocator.h"

namespace tpu::backend {

namespace {
constexpr uint64_t kAlign = 64;
uint64_t alignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
} // namespace

LmemPlan LmemAllocator::place(const std::vector<uint64_t> &sizes) const {
  uint64_t remaining = 0;
  for (uint64_t s : sizes) remaining += alignUp(s, kAlign);
  LmemPlan p;
  uint64_t top = 0;
  for (uint64_t s : sizes) {
    uint64_t packed = alignUp(top, kAlign);
    uint64_t bank = alignUp(top, cfg_.lmemBankBytes());
    uint64_t start = bank + remaining <= cfg_.lmemBytesPerLane ? bank : packed;
    p.offsets.push_back(uint32_t(start));
    top = start + s;
    remaining -= alignUp(s, kAlign);
  }
  p.used = top;
  return p;
}

uint64_t LmemAllocator::footprint(const std::vector<uint64_t> &sizes) const { return place(sizes).used; }

Result<LmemPlan> LmemAllocator::plan(const std::vector<uint64_t> &sizes, const std::string &what) const {
  LmemPlan p = place(sizes);
  if (p.used > cfg_.lmemBytesPerLane)
    return makeError(what, " needs ", p.used, " bytes of local memory per lane, the lane has ",
                     cfg_.lmemBytesPerLane);
  return p;
}

} // namespace tpu::backend
