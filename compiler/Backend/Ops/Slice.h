// Parameters of Slice (Slice.cpp).
#pragma once

#include <array>
#include <cstdint>

namespace tpu::backend {

// Per NCHW dim: output element i reads input element start + i * step.
struct SliceParams {
  std::array<int64_t, 4> start{0, 0, 0, 0}, step{1, 1, 1, 1};
};

} // namespace tpu::backend
