#include "runtime/Device.h"

#include <algorithm>
#include <optional>

namespace tpu::runtime {

namespace {
std::string hex(uint64_t v) {
  std::ostringstream os;
  os << "0x" << std::hex << v;
  return os.str();
}
uint64_t alignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
} // namespace

const SimDevice::Range *SimDevice::conflict(uint64_t addr, uint64_t bytes, Use use,
                                            uint64_t &at) const {
  for (const auto &[start, r] : ranges_) {
    if (start >= addr + bytes) break;
    if (start + r.bytes <= addr) continue;
    if (use == Use::Neurons && r.use == Use::Neurons) continue;
    at = start;
    return &r;
  }
  return nullptr;
}

Status SimDevice::reserve(uint64_t addr, uint64_t bytes, Use use, const std::string &owner) {
  if (bytes == 0) return Status::ok();
  if (!gmem_.contains(addr, bytes))
    return makeError("out of simulated device memory: ", owner, " needs [", hex(addr), ", +",
                     hex(bytes), ") but device memory is [", hex(gmem_.base()), ", ",
                     hex(gmem_.base() + gmem_.size()), ")");
  uint64_t at = 0;
  if (const Range *r = conflict(addr, bytes, use, at))
    return makeError(owner, " at [", hex(addr), ", +", hex(bytes), ") overlaps ", r->owner,
                     " at [", hex(at), ", +", hex(r->bytes), ")");
  ranges_.emplace(addr, Range{bytes, use, owner});
  return Status::ok();
}

void SimDevice::unreserveAll(const std::vector<Claim> &claims) {
  for (const Claim &c : claims)
    for (auto it = ranges_.lower_bound(c.addr); it != ranges_.end() && it->first == c.addr; ++it)
      if (it->second.use != Use::UserBuffer && it->second.owner == c.owner) {
        ranges_.erase(it);
        break;
      }
}

Result<uint64_t> SimDevice::allocate(uint64_t bytes, const std::string &owner) {
  if (bytes == 0) bytes = 1;
  const uint64_t align = std::max<uint64_t>(cfg_.dmaAlignBytes, 1);
  uint64_t candidate = alignUp(gmem_.base(), align);
  uint64_t largest = 0;
  for (const auto &[start, r] : ranges_) {
    if (start >= candidate && start - candidate >= bytes) break;
    if (start > candidate) largest = std::max(largest, start - candidate);
    candidate = std::max(candidate, alignUp(start + r.bytes, align));
  }
  const uint64_t end = gmem_.base() + gmem_.size();
  if (candidate > end || end - candidate < bytes) {
    if (candidate < end) largest = std::max(largest, end - candidate);
    return makeError("out of simulated device memory: cannot allocate ", bytes, " bytes for ",
                     owner, " (largest free block ", largest, " bytes)");
  }
  ranges_.emplace(candidate, Range{bytes, Use::UserBuffer, owner});
  return candidate;
}

Result<uint64_t> SimDevice::allocateHigh(uint64_t bytes, const std::string &owner) {
  if (bytes == 0) bytes = 1;
  const uint64_t align = std::max<uint64_t>(cfg_.dmaAlignBytes, 1);
  const uint64_t end = gmem_.base() + gmem_.size();
  // The free blocks lie between the ranges (neuron ranges may overlap).
  std::optional<uint64_t> best;
  uint64_t largest = 0, from = gmem_.base();
  auto consider = [&](uint64_t lo, uint64_t hi) {
    if (hi <= lo) return;
    largest = std::max(largest, hi - lo);
    if (hi - lo < bytes) return;
    uint64_t at = (hi - bytes) / align * align;
    if (at >= lo && (!best || at > *best)) best = at;
  };
  for (const auto &[start, r] : ranges_) {
    consider(from, std::min(start, end));
    from = std::max(from, start + r.bytes);
  }
  consider(from, end);
  if (!best)
    return makeError("out of simulated device memory: cannot allocate ", bytes, " bytes for ", owner,
                     " (largest free block ", largest, " bytes)");
  ranges_.emplace(*best, Range{bytes, Use::UserBuffer, owner});
  return *best;
}

Status SimDevice::release(uint64_t addr) {
  for (auto it = ranges_.lower_bound(addr); it != ranges_.end() && it->first == addr; ++it)
    if (it->second.use == Use::UserBuffer) {
      ranges_.erase(it);
      return Status::ok();
    }
  return makeError("no device buffer allocated at ", hex(addr));
}

uint64_t SimDevice::usedBytes() const {
  uint64_t used = 0, coveredTo = 0;
  for (const auto &[start, r] : ranges_) {
    uint64_t end = start + r.bytes;
    if (end <= coveredTo) continue;
    used += end - std::max(start, coveredTo);
    coveredTo = end;
  }
  return used;
}

} // namespace tpu::runtime
