// The chip's integer arithmetic, in one place: the simulator's semantics
// library and the compiler's Tpu interpreter both call these helpers, so the
// two agree bit for bit (docs/isa.md, "TIU commands", "Arithmetic").
//
//  - Right shifts round half up (towards +infinity): (v + 2^(s-1)) >> s with
//    an arithmetic shift, as BM1684's requantisation does (TPU-MLIR's
//    RightShiftRound with ROUNDING_HALF_UP).
//  - Results saturate to the destination's range (int8/uint8/int16/...).
//  - fp32 -> integer rounds half to even (the IEEE default), saturates, NaN -> 0.
//  - Integer accumulation is exact in int64 (saturating at the int64 limits,
//    which real commands never reach) and saturated once, when written.
#pragma once

#include "isa/Opcodes.h"
#include "support/FloatBits.h"

#include <cmath>
#include <cstdint>

namespace tpu::sim {

struct IntRange {
  int64_t lo, hi;
};

// The value range of an integer precision (Fp32 is not an integer type: the
// int32 range is returned so callers never divide by zero on a wrong call).
constexpr IntRange intRange(isa::Prec p, bool isSigned) {
  switch (p) {
  case isa::Prec::Int8: return isSigned ? IntRange{-128, 127} : IntRange{0, 255};
  case isa::Prec::Int16: return isSigned ? IntRange{-32768, 32767} : IntRange{0, 65535};
  default: return isSigned ? IntRange{INT32_MIN, INT32_MAX} : IntRange{0, UINT32_MAX};
  }
}

constexpr int64_t saturate(int64_t v, IntRange r) { return v < r.lo ? r.lo : v > r.hi ? r.hi : v; }
constexpr int64_t saturate(int64_t v, isa::Prec p, bool isSigned) {
  return saturate(v, intRange(p, isSigned));
}
constexpr int8_t saturateInt8(int64_t v) { return int8_t(saturate(v, {-128, 127})); }
constexpr uint8_t saturateUint8(int64_t v) { return uint8_t(saturate(v, {0, 255})); }
constexpr int16_t saturateInt16(int64_t v) { return int16_t(saturate(v, {-32768, 32767})); }
constexpr int32_t saturateInt32(int64_t v) { return int32_t(saturate(v, {INT32_MIN, INT32_MAX})); }

// Rounding right shift: round half up, floor(v / 2^s) plus the first
// dropped bit; exact over the whole int64 range. shift 0 returns v.
// The rule for any signed integer type I. For a value of a narrower type
// the result is the same as in int64 (shifts past its width give 0 in both).
template <class I> constexpr I roundingRightShiftIn(I v, unsigned shift) {
  if (shift == 0) return v;
  if (shift >= 8 * sizeof(I)) return 0;
  return (v >> shift) + ((v >> (shift - 1)) & 1);
}
constexpr int64_t roundingRightShift(int64_t v, unsigned shift) { return roundingRightShiftIn(v, shift); }

// int64 arithmetic that saturates instead of overflowing: intermediate
// values of the chip never come close, but fuzzed commands may.
constexpr int64_t kInt64Max = INT64_MAX, kInt64Min = INT64_MIN;
inline int64_t satAdd(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? (b > 0 ? kInt64Max : kInt64Min) : r;
}
inline int64_t satMul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? ((a < 0) != (b < 0) ? kInt64Min : kInt64Max) : r;
}
inline int64_t satShl(int64_t v, unsigned s) {
  return s >= 63 ? (v == 0 ? 0 : v > 0 ? kInt64Max : kInt64Min) : satMul(v, int64_t(1) << s);
}

constexpr int64_t relu(int64_t v) { return v < 0 ? 0 : v; }
inline float relu(float v) { return v < 0.0f ? 0.0f : v; } // keeps NaN and -0.0f -> -0.0f

// The integer write-back of every fixed-point command: rounding shift,
// optional relu, saturation to the destination precision.
constexpr int64_t requantize(int64_t acc, unsigned rshift, bool doRelu, isa::Prec p, bool isSigned) {
  int64_t v = roundingRightShift(acc, rshift);
  if (doRelu) v = relu(v);
  return saturate(v, p, isSigned);
}

// fp32 -> integer: round half to even, saturate to r; NaN -> 0.
inline int64_t fp32ToInt(float v, IntRange r) {
  if (std::isnan(v)) return 0;
  double d = std::nearbyint(double(v)); // default rounding mode: half to even
  if (d <= double(r.lo)) return r.lo;
  if (d >= double(r.hi)) return r.hi;
  return int64_t(d);
}
inline int64_t fp32ToInt(float v, isa::Prec p, bool isSigned) {
  return fp32ToInt(v, intRange(p, isSigned));
}
// Rounded but saturated only to +-2^62: the caller saturates to its destination.
inline int64_t fp32ToInt(float v) {
  return fp32ToInt(v, IntRange{-(int64_t(1) << 62), int64_t(1) << 62});
}

using ::tpu::bitsFloat;
using ::tpu::floatBits;

// Sign-extends the low `bits` bits of v (for constants held in 32-bit fields).
constexpr int64_t signExtend(uint64_t v, unsigned bits) {
  uint64_t m = uint64_t(1) << (bits - 1);
  v &= bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
  return int64_t((v ^ m) - m);
}

} // namespace tpu::sim
