// Parameters of Upsample (Upsample.cpp).
#pragma once

#include <cstdint>

namespace tpu::backend {

// Nearest upsampling by integer factors.
struct UpsampleParams {
  int64_t scaleH = 1, scaleW = 1;
};

} // namespace tpu::backend
