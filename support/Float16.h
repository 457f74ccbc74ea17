// The 16-bit floats of the BM1684X (IEEE binary16 "fp16" and bfloat16 "bf16"): exact widening to fp32 and
// rounding from fp32 to nearest, ties to even, as the chip's fp32 -> fp16/bf16 conversion and TPU-MLIR's
// reference do. Overflow gives infinity; NaN stays a quiet NaN of the same sign; fp16 keeps subnormals.
// One truth for the importer, the npz reader, the compiler's weights and reference, the Tpu interpreter
// and the simulator.
#pragma once

#include "support/FloatBits.h"

#include <cstdint>

namespace tpu {

inline float f16ToFloat(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0x1f) return bitsFloat(sign | 0x7f800000u | (mant << 13)); // inf, NaN (payload kept)
  if (exp != 0) return bitsFloat(sign | ((exp + 112) << 23) | (mant << 13));
  // Zero or subnormal: mant * 2^-24, exact in fp32.
  const float v = float(mant) * (1.0f / 16777216.0f);
  return sign ? -v : v;
}

inline uint16_t floatToF16(float f) {
  const uint32_t u = floatBits(f), sign = (u >> 16) & 0x8000u, abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return uint16_t(sign | 0x7e00u | ((abs >> 13) & 0x3ffu)); // NaN, stays quiet
  if (abs >= 0x477ff000u) return uint16_t(sign | 0x7c00u); // rounds to 65536 or beyond: infinity
  // Below 2^-14: a subnormal (or zero), in units of 2^-24.
  if (abs < 0x38800000u) {
    const uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    const int shift = 126 - int(abs >> 23); // 2^-24 units: value = mant * 2^(e - 150), e = abs >> 23
    if (shift > 24) return uint16_t(sign);  // below half of the least subnormal (or exactly zero)
    const uint32_t q = mant >> shift, rest = mant & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    return uint16_t(sign | (q + (rest > halfway || (rest == halfway && (q & 1)))));
  }
  // Normal: rebias the exponent, round the 13 dropped mantissa bits (a carry may step the exponent).
  const uint32_t v = abs - 0x38000000u; // exponent - 112
  const uint32_t q = v >> 13, rest = v & 0x1fffu;
  return uint16_t(sign | (q + (rest > 0x1000u || (rest == 0x1000u && (q & 1)))));
}

inline float bf16ToFloat(uint16_t b) { return bitsFloat(uint32_t(b) << 16); }

inline uint16_t floatToBf16(float f) {
  const uint32_t u = floatBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40u); // NaN, stays quiet
  return uint16_t((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
}

} // namespace tpu
