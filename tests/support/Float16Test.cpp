// support/Float16.h: fp16 and bf16 against references computed here independently: every 16-bit pattern's value by the
// formula of its format, and rounding as "the nearest value of the format, ties to the even pattern".
#include "support/Float16.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace tpu;

namespace {

// The value of an fp16 pattern by its formula: (-1)^s 2^(e-15) (1 + m/1024), subnormals 2^-14 m/1024.
double f16Value(uint16_t h) {
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e == 0 ? std::ldexp(double(m), -24) : std::ldexp(1.0 + m / 1024.0, e - 15);
  if (e == 31) v = m ? NAN : INFINITY;
  return (h & 0x8000) ? -v : v;
}

// The nearest of the ascending finite non-negative values (their patterns 0..n-1) to |x|, ties to even;
// `overflow`: the magnitude from which the result is infinity (the largest finite plus half an ulp).
uint16_t nearest(const std::vector<double> &values, double x, double overflow, uint16_t infinity) {
  const double a = std::fabs(x);
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (a >= overflow) return sign | infinity;
  auto hi = std::lower_bound(values.begin(), values.end(), a);
  if (hi == values.begin()) return sign;
  auto lo = hi - 1;
  if (hi == values.end()) return uint16_t(sign | (lo - values.begin()));
  const double dl = a - *lo, dh = *hi - a;
  size_t pick =
      size_t((dl < dh || (dl == dh && ((lo - values.begin()) % 2 == 0))) ? lo - values.begin() : hi - values.begin());
  return uint16_t(sign | pick);
}

float randomFloat(std::mt19937 &rng, int minExp, int maxExp) {
  std::uniform_int_distribution<int> e(minExp, maxExp);
  std::uniform_real_distribution<float> m(1.0f, 2.0f);
  return std::ldexp(m(rng), e(rng)) * (rng() & 1 ? -1.0f : 1.0f);
}

} // namespace

TEST(Float16, EveryPatternWidensExactlyAndRoundsBack) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const double want = f16Value(uint16_t(h));
    const float got = f16ToFloat(uint16_t(h));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << h;
      EXPECT_EQ(floatToF16(got) & 0xfe00, (h & 0x8000) | 0x7e00) << h; // quiet NaN, sign kept
      continue;
    }
    EXPECT_EQ(double(got), want) << h;
    EXPECT_EQ(floatToF16(got), h) << h;
  }
}

TEST(Float16, RoundsToNearestEven) {
  std::vector<double> values; // patterns 0x0000..0x7bff
  for (uint32_t h = 0; h < 0x7c00; ++h) values.push_back(f16Value(uint16_t(h)));
  const double overflow = 65504.0 + 16.0;
  std::vector<float> xs{0.0f,          -0.0f,          65519.99f, 65520.0f,      1e9f,          5.9604645e-8f,
                        2.9802322e-8f, 2.98023259e-8f, 1e-10f,    6.1035156e-5f, 6.10351525e-5f};
  for (uint32_t h = 0; h + 1 < 0x7c00; ++h) { // every halfway point and its neighbours
    const float mid = float((values[h] + values[h + 1]) / 2);
    xs.insert(xs.end(), {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e30f), -mid});
  }
  std::mt19937 rng(3);
  for (int i = 0; i < 100000; ++i) xs.push_back(randomFloat(rng, -30, 17));
  for (float x : xs) EXPECT_EQ(floatToF16(x), nearest(values, x, overflow, 0x7c00)) << x;
}

TEST(Bfloat16, WidensExactlyAndRoundsToNearestEven) {
  std::vector<double> values; // patterns 0x0000..0x7f7f
  for (uint32_t b = 0; b < 0x7f80; ++b) {
    float f;
    uint32_t u = b << 16;
    std::memcpy(&f, &u, 4);
    values.push_back(f);
    EXPECT_EQ(bf16ToFloat(uint16_t(b)), f);
    EXPECT_EQ(floatToBf16(f), b);
  }
  // Halfway between the largest finite (0x7f7f) and the next step (2^128): rounds to infinity.
  const double overflow = std::ldexp(1.0, 128) - std::ldexp(1.0, 127 - 8);
  std::mt19937 rng(5);
  std::vector<float> xs{3.3961514e38f, 3.4e38f, std::numeric_limits<float>::max(), 1e-40f, -1e-45f};
  for (int i = 0; i < 200000; ++i) xs.push_back(randomFloat(rng, -140, 127));
  for (uint32_t b = 0; b + 1 < 0x7f80; b += 7) xs.push_back(float((values[b] + values[b + 1]) / 2));
  for (float x : xs) EXPECT_EQ(floatToBf16(x), nearest(values, x, overflow, 0x7f80)) << x;
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(std::nanf("")))));
  EXPECT_EQ(floatToBf16(-std::numeric_limits<float>::infinity()), 0xff80);
}
