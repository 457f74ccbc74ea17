// An fp32 value's bits and back (memcpy: no aliasing rules broken).
#pragma once

#include <cstdint>
#include <cstring>

namespace tpu {

inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

} // namespace tpu
