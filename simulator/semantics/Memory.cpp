#include "simulator/semantics/Memory.h"

#include <algorithm>

namespace tpu::sim {

uint8_t *GlobalMemory::page(uint64_t index, bool create) {
  auto it = pages_.find(index);
  if (it != pages_.end()) return it->second.get();
  if (!create) return nullptr;
  auto p = std::make_unique<uint8_t[]>(kPageBytes);
  std::memset(p.get(), 0, kPageBytes);
  return pages_.emplace(index, std::move(p)).first->second.get();
}

const uint8_t *GlobalMemory::page(uint64_t index) const {
  auto it = pages_.find(index);
  return it == pages_.end() ? nullptr : it->second.get();
}

Status GlobalMemory::read(uint64_t addr, void *dst, uint64_t bytes) const {
  TPU_RETURN_IF_ERROR(checkRange(addr, bytes, "read"));
  auto *out = static_cast<uint8_t *>(dst);
  uint64_t off = addr - base_;
  while (bytes) {
    uint64_t in = off % kPageBytes, n = std::min(bytes, kPageBytes - in);
    if (const uint8_t *p = page(off / kPageBytes)) std::memcpy(out, p + in, n);
    else std::memset(out, 0, n);
    out += n, off += n, bytes -= n;
  }
  return Status::ok();
}

Status GlobalMemory::write(uint64_t addr, const void *src, uint64_t bytes) {
  TPU_RETURN_IF_ERROR(checkRange(addr, bytes, "write"));
  auto *in8 = static_cast<const uint8_t *>(src);
  uint64_t off = addr - base_;
  while (bytes) {
    uint64_t in = off % kPageBytes, n = std::min(bytes, kPageBytes - in);
    std::memcpy(page(off / kPageBytes, true) + in, in8, n);
    in8 += n, off += n, bytes -= n;
  }
  return Status::ok();
}

Status GlobalMemory::fill(uint64_t addr, uint8_t value, uint64_t bytes) {
  TPU_RETURN_IF_ERROR(checkRange(addr, bytes, "fill"));
  uint64_t off = addr - base_;
  while (bytes) {
    uint64_t in = off % kPageBytes, n = std::min(bytes, kPageBytes - in);
    std::memset(page(off / kPageBytes, true) + in, value, n);
    off += n, bytes -= n;
  }
  return Status::ok();
}

} // namespace tpu::sim
