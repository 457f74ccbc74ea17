// Parameters of the activation kinds of Activation.cpp.
#pragma once

namespace tpu::backend {

// LeakyRelu: the fp32 slope, 0 <= alpha <= 1 (int8: multipliers[0], rshift).
struct LeakyReluParams {
  float alpha = 0.0f;
};

// Clip: the bounds (int8: the integer bounds).
struct ClipParams {
  float min = 0.0f, max = 0.0f;
};

} // namespace tpu::backend
