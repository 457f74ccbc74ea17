// The memories a command touches: the NPU's local memory (LMEM, lanes x bytes
// per lane) and global memory (DDR, 40-bit addresses, sparse). Plain C++, no
// SystemC: the functional backend and the SystemC model share them.
#pragma once

#include "isa/HwConfig.h"
#include "support/Status.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace tpu::sim {

// LMEM. A local address is lane * lmemBytesPerLane + offset-in-lane
// (docs/isa.md, "Local memory"): the lane of a tensor's channel 0 is the
// address's lane ("npu_offset"), channel c lives in lane (npu_offset + c) % lanes.
class LocalMemory {
public:
  explicit LocalMemory(const isa::HwConfig &cfg)
      : lanes_(cfg.npuLanes), laneBytes_(cfg.lmemBytesPerLane),
        data_(size_t(cfg.npuLanes) * cfg.lmemBytesPerLane, 0) {}

  uint32_t lanes() const { return lanes_; }
  uint32_t laneBytes() const { return laneBytes_; }
  uint64_t totalBytes() const { return data_.size(); }

  // Raw lane storage; callers check ranges with checkLaneRange first.
  uint8_t *lane(uint32_t l) { return data_.data() + size_t(l) * laneBytes_; }
  const uint8_t *lane(uint32_t l) const { return data_.data() + size_t(l) * laneBytes_; }

  // Is [offset, offset+bytes) inside one lane?
  bool inLane(uint64_t offset, uint64_t bytes) const {
    return offset <= laneBytes_ && bytes <= laneBytes_ - offset;
  }
  Status checkLaneRange(uint64_t offset, uint64_t bytes, const char *what) const {
    if (inLane(offset, bytes)) return Status::ok();
    return makeError(what, ": local memory access [", offset, ", +", bytes,
                     ") is outside the ", laneBytes_, "-byte lane");
  }
  void clear() { std::fill(data_.begin(), data_.end(), 0); }

private:
  uint32_t lanes_, laneBytes_;
  std::vector<uint8_t> data_;
};

// DDR, allocated on first touch in 64 KiB pages so a 4 GiB address space
// costs only what is used. Reads of never-written bytes return zero.
class GlobalMemory {
public:
  static constexpr uint64_t kPageBytes = 64 * 1024;

  explicit GlobalMemory(const isa::HwConfig &cfg)
      : base_(cfg.globalMemBase), size_(cfg.globalMemBytes) {}

  uint64_t base() const { return base_; }
  uint64_t size() const { return size_; }
  bool contains(uint64_t addr, uint64_t bytes) const {
    return addr >= base_ && bytes <= size_ && addr - base_ <= size_ - bytes;
  }
  Status checkRange(uint64_t addr, uint64_t bytes, const char *what) const {
    if (contains(addr, bytes)) return Status::ok();
    return makeError(what, ": global memory access [0x", std::hex, addr, ", +0x", bytes,
                     ") is outside [0x", base_, ", 0x", base_ + size_, ")");
  }

  Status read(uint64_t addr, void *dst, uint64_t bytes) const;
  Status write(uint64_t addr, const void *src, uint64_t bytes);
  Status fill(uint64_t addr, uint8_t value, uint64_t bytes);
  // Bytes of pages touched so far (the simulated footprint).
  uint64_t residentBytes() const { return pageCount_ * kPageBytes; }
  void clear() { chunks_.clear(), pageCount_ = 0; }

private:
  uint8_t *page(uint64_t index, bool create);
  const uint8_t *page(uint64_t index) const;

  uint64_t base_, size_;
  // Pages indexed directly in two levels (chunks of kChunkPages page
  // pointers, allocated when a page in them is): a lookup per small GDMA row
  // in a tree of pages was a tenth of a run.
  static constexpr uint64_t kChunkPages = 4096;
  struct Chunk {
    std::unique_ptr<uint8_t[]> pages[kChunkPages];
  };
  std::vector<std::unique_ptr<Chunk>> chunks_;
  uint64_t pageCount_ = 0;
};

} // namespace tpu::sim
