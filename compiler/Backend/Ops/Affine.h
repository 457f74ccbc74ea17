// Parameters of Affine (Affine.cpp).
#pragma once

namespace tpu::backend {

// Affine with inputs {x}, fp32: x * alpha + beta (int8: multipliers; per
// channel: the scale and bias weights).
struct AffineParams {
  float alpha = 0.0f, beta = 0.0f;
};

} // namespace tpu::backend
