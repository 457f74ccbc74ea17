// The shared integer helpers: rounding, saturation, conversion.
#include "arith/IntArith.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

using namespace tpu::sim;
using tpu::isa::Prec;

TEST(IntArith, RightShiftRoundsHalfUp) {
  EXPECT_EQ(roundingRightShift(5, 1), 3);   // 2.5 -> 3
  EXPECT_EQ(roundingRightShift(-5, 1), -2); // -2.5 -> -2 (half up, not away from zero)
  EXPECT_EQ(roundingRightShift(7, 2), 2);   // 1.75 -> 2
  EXPECT_EQ(roundingRightShift(-7, 2), -2); // -1.75 -> -2
  EXPECT_EQ(roundingRightShift(6, 2), 2);   // 1.5 -> 2
  EXPECT_EQ(roundingRightShift(-6, 2), -1); // -1.5 -> -1
  EXPECT_EQ(roundingRightShift(123, 0), 123);
  EXPECT_EQ(roundingRightShift(-1, 63), 0);
  EXPECT_EQ(roundingRightShift(INT64_MAX, 1), int64_t(1) << 62);
  EXPECT_EQ(roundingRightShift(INT64_MIN, 1), -(int64_t(1) << 62));
  EXPECT_EQ(roundingRightShift(INT64_MIN, 63), -1);
  // Against floor(v / 2^s + 0.5) on random values.
  std::mt19937_64 rng(7);
  for (int i = 0; i < 10000; ++i) {
    int64_t v = int64_t(rng() % (1ull << 40)) - (1ll << 39);
    unsigned s = unsigned(rng() % 32);
    long double exact = std::floor((long double)v / std::ldexp(1.0L, int(s)) + 0.5L);
    EXPECT_EQ(roundingRightShift(v, s), int64_t(exact)) << v << " >> " << s;
  }
}

TEST(IntArith, SaturatesToEachPrecision) {
  EXPECT_EQ(saturateInt8(200), 127);
  EXPECT_EQ(saturateInt8(-200), -128);
  EXPECT_EQ(saturateUint8(-3), 0);
  EXPECT_EQ(saturateUint8(300), 255);
  EXPECT_EQ(saturateInt16(40000), 32767);
  EXPECT_EQ(saturateInt32(int64_t(1) << 40), INT32_MAX);
  EXPECT_EQ(saturate(70000, Prec::Int16, false), 65535);
  EXPECT_EQ(saturate(-1, Prec::Int32, false), 0);
  EXPECT_EQ(saturate(-129, Prec::Int8, true), -128);
}

TEST(IntArith, RequantizeShiftsThenReluThenSaturates) {
  EXPECT_EQ(requantize(1000, 3, false, Prec::Int8, true), 125);
  EXPECT_EQ(requantize(1100, 3, false, Prec::Int8, true), 127);
  EXPECT_EQ(requantize(-1000, 3, false, Prec::Int8, true), -125);
  EXPECT_EQ(requantize(-1000, 3, true, Prec::Int8, true), 0);
  EXPECT_EQ(requantize(2000, 3, true, Prec::Int8, false), 250);
  EXPECT_EQ(requantize(-3, 1, false, Prec::Int8, false), 0);
}

TEST(IntArith, Fp32ToIntRoundsHalfToEvenAndSaturates) {
  EXPECT_EQ(fp32ToInt(2.5f, Prec::Int8, true), 2);
  EXPECT_EQ(fp32ToInt(3.5f, Prec::Int8, true), 4);
  EXPECT_EQ(fp32ToInt(-2.5f, Prec::Int8, true), -2);
  EXPECT_EQ(fp32ToInt(-2.6f, Prec::Int8, true), -3);
  EXPECT_EQ(fp32ToInt(1e9f, Prec::Int8, true), 127);
  EXPECT_EQ(fp32ToInt(-1e9f, Prec::Int8, false), 0);
  EXPECT_EQ(fp32ToInt(1e20f, Prec::Int32, true), INT32_MAX);
  EXPECT_EQ(fp32ToInt(std::numeric_limits<float>::quiet_NaN(), Prec::Int16, true), 0);
  EXPECT_EQ(fp32ToInt(std::numeric_limits<float>::infinity(), Prec::Int16, true), 32767);
}

TEST(IntArith, SaturatingInt64Helpers) {
  EXPECT_EQ(satAdd(INT64_MAX, 1), INT64_MAX);
  EXPECT_EQ(satAdd(INT64_MIN, -1), INT64_MIN);
  EXPECT_EQ(satAdd(3, -5), -2);
  EXPECT_EQ(satMul(int64_t(1) << 40, int64_t(1) << 40), INT64_MAX);
  EXPECT_EQ(satMul(-(int64_t(1) << 40), int64_t(1) << 40), INT64_MIN);
  EXPECT_EQ(satMul(-7, 6), -42);
  EXPECT_EQ(satShl(3, 4), 48);
  EXPECT_EQ(satShl(-3, 62), INT64_MIN);
  EXPECT_EQ(satShl(1, 70), INT64_MAX);
  EXPECT_EQ(satShl(0, 70), 0);
}

TEST(IntArith, BitsAndSignExtension) {
  EXPECT_EQ(bitsFloat(floatBits(-1.25f)), -1.25f);
  EXPECT_EQ(floatBits(1.0f), 0x3f800000u);
  EXPECT_EQ(signExtend(0xff, 8), -1);
  EXPECT_EQ(signExtend(0x7f, 8), 127);
  EXPECT_EQ(signExtend(0xfffffff9u, 32), -7);
  EXPECT_EQ(relu(int64_t(-4)), 0);
  EXPECT_EQ(relu(-4.0f), 0.0f);
}
