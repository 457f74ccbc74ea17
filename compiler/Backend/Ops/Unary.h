// Parameters of Unary (Unary.cpp).
#pragma once

#include "kernels/Kernels.h"

namespace tpu::backend {

// The fp32 function and its parameters (kernels::unary's a, b).
struct UnaryParams {
  kernels::UnaryKind function = kernels::UnaryKind::Identity;
  float alpha = 0.0f, beta = 0.0f;
};

} // namespace tpu::backend
