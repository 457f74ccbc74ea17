#include "memory/Memory.h"

#include <algorithm>

namespace tpu::sim {

uint8_t *GlobalMemory::page(uint64_t index, bool create) {
  const uint64_t chunk = index / kChunkPages;
  if (chunk >= chunks_.size()) {
    if (!create) return nullptr;
    chunks_.resize(chunk + 1);
  }
  if (!chunks_[chunk]) {
    if (!create) return nullptr;
    chunks_[chunk] = std::make_unique<Chunk>();
  }
  std::unique_ptr<uint8_t[]> &p = chunks_[chunk]->pages[index % kChunkPages];
  if (!p && create) {
    p = std::make_unique<uint8_t[]>(kPageBytes); // value-initialized: zeros
    ++pageCount_;
  }
  return p.get();
}

const uint8_t *GlobalMemory::page(uint64_t index) const {
  const uint64_t chunk = index / kChunkPages;
  if (chunk >= chunks_.size() || !chunks_[chunk]) return nullptr;
  return chunks_[chunk]->pages[index % kChunkPages].get();
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
