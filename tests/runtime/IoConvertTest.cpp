// fp32 <-> device tensor conversion: layouts (1N/2N/4N), quantization,
// round trips with odd batch sizes, and rejected combinations.
#include "runtime/IoConvert.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace tpu::runtime;

namespace {

std::vector<float> randomValues(size_t n, float lo, float hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float &x : v) x = dist(rng);
  return v;
}

tpu::bmodel::Tensor layout(DataType t, StoreMode m, std::vector<uint64_t> shape,
                           float scale = 1.0f) {
  tpu::bmodel::Tensor l;
  l.dtype = t;
  l.storeMode = m;
  l.shape = std::move(shape);
  l.scale = scale;
  return l;
}

} // namespace

TEST(IoConvert, DeviceBytesFollowStoreMode) {
  EXPECT_EQ(*deviceBytes(layout(DataType::Float32, StoreMode::N1, {3, 2, 5, 7})), 3u * 70 * 4);
  // 4N int8: ceil(N/4) * C*H*W * 4.
  EXPECT_EQ(*deviceBytes(layout(DataType::Int8, StoreMode::N4, {1, 3, 4, 4})), 1u * 48 * 4);
  EXPECT_EQ(*deviceBytes(layout(DataType::Int8, StoreMode::N4, {5, 3, 4, 4})), 2u * 48 * 4);
  EXPECT_EQ(*deviceBytes(layout(DataType::Int8, StoreMode::N4, {8, 3, 4, 4})), 2u * 48 * 4);
  EXPECT_EQ(*deviceBytes(layout(DataType::Int8, StoreMode::N1, {5, 3, 4, 4})), 5u * 48);
  // 2N int16: ceil(N/2) * CHW * 2 items * 2 bytes.
  EXPECT_EQ(*deviceBytes(layout(DataType::Int16, StoreMode::N2, {3, 10})), 2u * 10 * 4);
  EXPECT_EQ(*deviceBytes(layout(DataType::Float32, StoreMode::N1, {})), 4u);
}

TEST(IoConvert, Int8FourNInterleavesBatchItemsInEachWord) {
  // N=5, inner=2: word w of group g holds items 4g..4g+3 of position w.
  tpu::bmodel::Tensor l = layout(DataType::Int8, StoreMode::N4, {5, 2}, 1.0f);
  std::vector<float> x = {10, 11, 20, 21, 30, 31, 40, 41, 50, 51};
  auto dev = toDevice(l, x.data(), x.size());
  ASSERT_TRUE(dev) << dev.message();
  std::vector<uint8_t> expected = {10, 20, 30, 40, 11, 21, 31, 41, // items 0..3
                                   50, 0, 0, 0, 51, 0, 0, 0};      // item 4 + padding
  EXPECT_EQ(*dev, expected);
}

TEST(IoConvert, Int16TwoNInterleavesPairs) {
  tpu::bmodel::Tensor l = layout(DataType::Int16, StoreMode::N2, {3, 2}, 1.0f);
  std::vector<float> x = {1, 2, 3, 4, -5, 6};
  auto dev = toDevice(l, x.data(), x.size());
  ASSERT_TRUE(dev);
  ASSERT_EQ(dev->size(), 16u);
  const int16_t *q = reinterpret_cast<const int16_t *>(dev->data());
  std::vector<int16_t> got(q, q + 8);
  EXPECT_EQ(got, (std::vector<int16_t>{1, 3, 2, 4, -5, 0, 6, 0}));
}

TEST(IoConvert, QuantizationRoundsAndSaturates) {
  tpu::bmodel::Tensor l = layout(DataType::Int8, StoreMode::N1, {10}, 0.5f);
  std::vector<float> x = {0.0f, 0.74f, 0.76f, -0.76f, 1000.0f, -1000.0f, 63.5f, -64.0f,
                          0.25f, 0.75f};
  auto dev = toDevice(l, x.data(), x.size());
  ASSERT_TRUE(dev);
  const int8_t *q = reinterpret_cast<const int8_t *>(dev->data());
  EXPECT_EQ(q[0], 0);
  EXPECT_EQ(q[1], 1);   // 1.48 -> 1
  EXPECT_EQ(q[2], 2);   // 1.52 -> 2
  EXPECT_EQ(q[3], -2);
  EXPECT_EQ(q[4], 127); // saturated
  EXPECT_EQ(q[5], -128);
  EXPECT_EQ(q[6], 127);
  EXPECT_EQ(q[7], -128);
  EXPECT_EQ(q[8], 0);   // 0.5 -> 0: half to even, IntArith's fp32 -> int rule
  EXPECT_EQ(q[9], 2);   // 1.5 -> 2
  tpu::bmodel::Tensor u = layout(DataType::Uint8, StoreMode::N1, {2}, 1.0f);
  std::vector<float> y = {-3.0f, 300.0f};
  auto udev = toDevice(u, y.data(), y.size());
  ASSERT_TRUE(udev);
  EXPECT_EQ((*udev)[0], 0);
  EXPECT_EQ((*udev)[1], 255);
}

TEST(IoConvert, ZeroPointShiftsTheGrid) {
  tpu::bmodel::Tensor l = layout(DataType::Uint8, StoreMode::N1, {3}, 0.25f);
  l.zeroPoint = 128;
  std::vector<float> x = {0.0f, 1.0f, -1.0f};
  auto dev = toDevice(l, x.data(), x.size());
  ASSERT_TRUE(dev);
  EXPECT_EQ(*dev, (std::vector<uint8_t>{128, 132, 124}));
  auto back = fromDevice(l, dev->data(), dev->size());
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, x);
}

TEST(IoConvert, Fp32RoundTripIsExact) {
  tpu::bmodel::Tensor l = layout(DataType::Float32, StoreMode::N1, {3, 5, 7, 2});
  auto x = randomValues(3 * 5 * 7 * 2, -100, 100, 1);
  auto dev = toDevice(l, x.data(), x.size());
  ASSERT_TRUE(dev);
  auto back = fromDevice(l, dev->data(), dev->size());
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, x);
}

// Quantize, dequantize: within half a step everywhere, for every odd batch size.
TEST(IoConvert, Int8FourNRoundTripWithinHalfAStep) {
  for (uint64_t n : {1, 2, 3, 4, 5, 7, 9}) {
    const float scale = 4.0f / 127.0f;
    tpu::bmodel::Tensor l = layout(DataType::Int8, StoreMode::N4, {n, 3, 5, 5}, scale);
    auto x = randomValues(size_t(n) * 75, -4.0f, 4.0f, unsigned(n));
    auto dev = toDevice(l, x.data(), x.size());
    ASSERT_TRUE(dev);
    EXPECT_EQ(dev->size(), size_t((n + 3) / 4) * 75 * 4);
    auto back = fromDevice(l, dev->data(), dev->size());
    ASSERT_TRUE(back);
    ASSERT_EQ(back->size(), x.size());
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_LE(std::fabs((*back)[i] - x[i]), scale / 2 + 1e-6f) << "n=" << n << " i=" << i;
    // The device bytes survive a second trip unchanged.
    auto again = toDevice(l, back->data(), back->size());
    ASSERT_TRUE(again);
    EXPECT_EQ(*again, *dev) << "n=" << n;
  }
}

TEST(IoConvert, RejectsBadLayouts) {
  std::vector<float> x(16, 0.0f);
  auto bad4n = toDevice(layout(DataType::Float32, StoreMode::N4, {4, 4}), x.data(), 16);
  ASSERT_FALSE(bad4n);
  EXPECT_NE(bad4n.message().find("4N"), std::string::npos) << bad4n.message();
  EXPECT_FALSE(toDevice(layout(DataType::Int8, StoreMode::N2, {4, 4}), x.data(), 16));
  EXPECT_FALSE(toDevice(layout(DataType::Float16, StoreMode::N1, {16}), x.data(), 16));
  EXPECT_FALSE(toDevice(layout(DataType(42), StoreMode::N1, {16}), x.data(), 16));
  EXPECT_FALSE(toDevice(layout(DataType::Int8, StoreMode(7), {16}), x.data(), 16));
  EXPECT_FALSE(toDevice(layout(DataType::Int8, StoreMode::N1, {16}, 0.0f), x.data(), 16));
  EXPECT_FALSE(toDevice(layout(DataType::Int8, StoreMode::N1, {16}, NAN), x.data(), 16));
  auto count = toDevice(layout(DataType::Int8, StoreMode::N1, {15}), x.data(), 16);
  ASSERT_FALSE(count);
  EXPECT_NE(count.message().find("16 values"), std::string::npos) << count.message();
  std::vector<uint8_t> bytes(10);
  EXPECT_FALSE(fromDevice(layout(DataType::Int8, StoreMode::N4, {3, 3}), bytes.data(), 10));
  EXPECT_FALSE(deviceBytes(layout(DataType::Int8, StoreMode::N1, {1 << 20, 1 << 20, 1 << 20})));
}

TEST(IoConvert, RelayoutBetweenOneNAndFourNKeepsValues) {
  tpu::bmodel::Tensor l4 = layout(DataType::Int8, StoreMode::N4, {5, 2}, 1.0f);
  tpu::bmodel::Tensor l1 = layout(DataType::Int8, StoreMode::N1, {5, 2}, 1.0f);
  std::vector<float> x = {10, 11, 20, 21, 30, 31, 40, 41, 50, 51};
  auto one = toDevice(l1, x.data(), x.size());
  auto four = toDevice(l4, x.data(), x.size());
  ASSERT_TRUE(one && four);
  auto toFour = relayout(l1, one->data(), one->size(), StoreMode::N4);
  ASSERT_TRUE(toFour) << toFour.message();
  EXPECT_EQ(*toFour, *four);
  auto toOne = relayout(l4, four->data(), four->size(), StoreMode::N1);
  ASSERT_TRUE(toOne);
  EXPECT_EQ(*toOne, *one);
  EXPECT_FALSE(relayout(l1, one->data(), one->size() - 1, StoreMode::N4));
  tpu::bmodel::Tensor f = layout(DataType::Float32, StoreMode::N1, {5, 2});
  EXPECT_FALSE(relayout(f, one->data(), 40, StoreMode::N4)); // 4N needs an 8-bit type
}
