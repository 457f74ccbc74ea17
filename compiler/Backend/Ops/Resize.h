// Parameters of Resize (Resize.cpp).
#pragma once

#include "kernels/Kernels.h"

namespace tpu::backend {

// The source rows (H) and columns (W) of each output row/column.
struct ResizeParams {
  kernels::ResizeTaps h, w;
};

} // namespace tpu::backend
