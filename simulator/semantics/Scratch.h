// Scratch buffers of the command semantics, kept per thread between commands:
// allocating (and page-faulting) several MB per command was a tenth of a
// model's run. Each (type, slot) is one buffer; callers fill what they read,
// and a buffer is never shrunk, so growing it back costs nothing. Requests
// above 64 MB use the caller's own vector and are freed with it.
#pragma once

#include <cstddef>
#include <vector>

namespace tpu::sim {

constexpr size_t kMaxKeptScratchBytes = size_t(64) << 20;

template <class T, int Slot> T *scratch(size_t count, std::vector<T> &fallback) {
  thread_local std::vector<T> kept;
  std::vector<T> &v = count * sizeof(T) <= kMaxKeptScratchBytes ? kept : fallback;
  if (v.size() < count) v.resize(count);
  return v.data();
}

} // namespace tpu::sim
