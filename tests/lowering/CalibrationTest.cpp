// Calibration: the table format and the KL / max thresholds on known
// distributions.
#include "compiler/Calibration/Calibrator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace tpu::calib;

namespace {

// Histogram of |x| over [0, max|x|] with `bins` bins.
std::vector<uint64_t> histogram(const std::vector<double> &v, int bins, double &absMax) {
  absMax = 0;
  for (double x : v) absMax = std::max(absMax, std::fabs(x));
  std::vector<uint64_t> h(size_t(bins), 0);
  for (double x : v) ++h[size_t(std::min(int(std::fabs(x) / absMax * bins), bins - 1))];
  return h;
}

TEST(KlThreshold, UniformKeepsNearlyTheWholeRange) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> d(-4.0, 4.0);
  std::vector<double> v(200000);
  for (auto &x : v) x = d(rng);
  double a;
  auto h = histogram(v, 2048, a);
  double t = klThreshold(h, a);
  // Clipping a flat distribution only loses information.
  EXPECT_GT(t, 0.9 * a);
  EXPECT_LE(t, a * (1 + 0.5 / 2048) + 1e-12);
}

TEST(KlThreshold, GaussianWithOutliersClipsTheTail) {
  std::mt19937 rng(2);
  std::normal_distribution<double> d(0.0, 1.0);
  std::vector<double> v(200000);
  for (auto &x : v) x = d(rng);
  v[0] = 40.0; // one far outlier sets the max
  double a;
  auto h = histogram(v, 2048, a);
  double t = klThreshold(h, a);
  EXPECT_DOUBLE_EQ(a, 40.0);
  // The threshold lands in the body of the Gaussian, not at the outlier.
  EXPECT_GT(t, 2.0);
  EXPECT_LT(t, 8.0);
}

TEST(KlThreshold, IsTheCentreOfTheChosenBin) {
  std::vector<uint64_t> h(2048, 0);
  for (int i = 0; i < 128; ++i) h[size_t(i)] = 100; // all mass in the first 128 bins
  double t = klThreshold(h, 2048.0);
  EXPECT_DOUBLE_EQ(t, 128.5); // i = 128 loses nothing: KL = 0
}

TEST(CalibrationTable, RoundTripsAndKeepsComments) {
  auto t = CalibrationTable::parse("# a comment\n# method: kl\nconv1 2.5 -1.25 2.5\n\ninput 3 -3 2 # trailing\n", "t.cali");
  ASSERT_TRUE(t) << t.message();
  EXPECT_EQ(t->method, "kl");
  ASSERT_EQ(t->tensors.size(), 2u);
  EXPECT_DOUBLE_EQ(t->tensors["conv1"].threshold, 2.5);
  EXPECT_DOUBLE_EQ(t->tensors["input"].min, -3);
  auto again = CalibrationTable::parse(t->text(), "again");
  ASSERT_TRUE(again) << again.message();
  EXPECT_EQ(again->tensors.size(), 2u);
  EXPECT_DOUBLE_EQ(again->tensors["conv1"].max, 2.5);
}

TEST(CalibrationTable, BadLinesNameFileLineAndProblem) {
  auto fields = CalibrationTable::parse("a 1 0 1\nb 1 0\n", "m.cali");
  ASSERT_FALSE(fields);
  EXPECT_EQ(fields.message(), "m.cali:2: expected 'name threshold min max', got 3 fields");
  auto number = CalibrationTable::parse("a 1 zero 1\n", "m.cali");
  ASSERT_FALSE(number);
  EXPECT_NE(number.message().find("m.cali:1: tensor 'a'"), std::string::npos);
  auto nonPositive = CalibrationTable::parse("a 0 0 1\n", "m.cali");
  ASSERT_FALSE(nonPositive);
  EXPECT_NE(nonPositive.message().find("must be > 0"), std::string::npos);
  auto dup = CalibrationTable::parse("a 1 0 1\na 2 0 2\n", "m.cali");
  ASSERT_FALSE(dup);
  EXPECT_NE(dup.message().find("appears twice"), std::string::npos);
  auto inf = CalibrationTable::parse("a inf 0 1\n", "m.cali");
  EXPECT_FALSE(inf);
  auto order = CalibrationTable::parse("a 1 2 1\n", "m.cali");
  EXPECT_FALSE(order);
}

TEST(CalibrationTable, MissingFileIsAnError) {
  auto t = CalibrationTable::load("/nonexistent/x.cali");
  ASSERT_FALSE(t);
  EXPECT_NE(t.message().find("/nonexistent/x.cali"), std::string::npos);
}

TEST(Method, ParsesEveryNameBack) {
  for (Method m : kAllMethods) EXPECT_EQ(*parseMethod(methodName(m)), m);
  auto bad = parseMethod("percentile");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.message(), "calibration method 'percentile' is not one of max, kl, mse, percentile9999, "
                           "aciq-gauss, aciq-laplace");
}

// Statistics of `v` added in chunks, as samples are.
TensorStats statsOf(const std::vector<float> &v, size_t chunks = 1) {
  TensorStats st;
  const size_t step = v.size() / chunks;
  for (size_t c = 0; c < chunks; ++c)
    st.add(std::vector<float>(v.begin() + c * step, c + 1 == chunks ? v.end() : v.begin() + (c + 1) * step), 2048);
  return st;
}

TEST(AciqAlpha, MatchesThePublishedEightBitValues) {
  // Banner et al. (ACIQ) / Distiller: 8-bit alpha 3.92 sigma (Gaussian), 9.89 b (Laplace).
  EXPECT_NEAR(aciqAlpha(false), 3.92, 0.01);
  EXPECT_NEAR(aciqAlpha(true), 9.89, 0.01);
  EXPECT_NEAR(aciqAlpha(true, 4), 5.03, 0.01);
  EXPECT_NEAR(aciqAlpha(false, 4), 2.55, 0.01);
}

TEST(TensorStats, HistogramRangeDoublesAndKeepsEveryValue) {
  TensorStats st;
  st.add({0.5f, -1.0f, 0.0f}, 2048);
  EXPECT_DOUBLE_EQ(st.histRange, 1.0);
  st.add({3.0f, 0.25f}, 2048); // 3 > 1: the range doubles twice, to 4
  EXPECT_DOUBLE_EQ(st.histRange, 4.0);
  uint64_t total = 0;
  for (uint64_t h : st.hist) total += h;
  EXPECT_EQ(total, 4u); // the zero is counted apart
  EXPECT_EQ(st.zeros, 1u);
  EXPECT_EQ(st.count, 5u);
  const size_t fine = 2048 * TensorStats::kOversample;
  ASSERT_EQ(st.hist.size(), fine);
  EXPECT_EQ(st.hist[size_t(0.5 / 4 * fine)], 1u);
  // The first sample's max sat in the last bin of its range [0, 1]: after
  // two merges, the last bin of [0, 1] in [0, 4].
  EXPECT_EQ(st.hist[(fine - 1) / 4], 1u);
  EXPECT_EQ(st.hist[size_t(3.0 / 4 * fine)], 1u);
  EXPECT_DOUBLE_EQ(st.absMax(), 3.0);
  // Re-binned over [0, absMax = 3] as a second pass would bin it: 0.25, 0.5,
  // 1 and 3 in bins 170, 341, 682 and the last.
  auto exact = st.histogramOverAbsMax(2048);
  EXPECT_EQ(exact[size_t(0.25 / 3 * 2048)], 1u);
  EXPECT_EQ(exact[size_t(0.5 / 3 * 2048)], 1u);
  EXPECT_EQ(exact[size_t(1.0 / 3 * 2048)], 1u);
  EXPECT_EQ(exact[2047], 1u);
}

TEST(MethodThreshold, OnAGaussianWithOneOutlier) {
  std::mt19937 rng(3);
  std::normal_distribution<double> d(0.0, 1.0);
  std::vector<float> v(400000);
  for (auto &x : v) x = float(d(rng));
  v[7] = 50.0f;
  TensorStats st = statsOf(v, 8);
  EXPECT_DOUBLE_EQ(methodThreshold(Method::Max, st), 50.0);
  // 99.99th percentile of |N(0,1)|: 3.89.
  EXPECT_NEAR(methodThreshold(Method::Percentile9999, st), 3.89, 0.1);
  EXPECT_NEAR(methodThreshold(Method::AciqGauss, st), 3.92 * std::sqrt(1 + 2500.0 / 400000), 0.05);
  // Laplace fit: b = E|x| = sqrt(2 / pi) for a unit Gaussian.
  EXPECT_NEAR(methodThreshold(Method::AciqLaplace, st), 9.89 * std::sqrt(2 / M_PI), 0.05);
  // MSE weighs the outlier's squared clipping error (50 - t)^2 against the
  // rounding noise of 400000 values, 400000 (t / 127)^2 / 12: minimum near t = 16.
  const double mse = methodThreshold(Method::Mse, st);
  EXPECT_GT(mse, 14.0);
  EXPECT_LT(mse, 19.0);
  v[7] = 0.1f;
  // Without it, the clip of a unit Gaussian at 8 bits: about 4 sigma.
  const double plain = methodThreshold(Method::Mse, statsOf(v, 8));
  EXPECT_GT(plain, 3.3);
  EXPECT_LT(plain, 5.0);
  const double kl = methodThreshold(Method::Kl, st);
  EXPECT_GT(kl, 2.0);
  EXPECT_LT(kl, 10.0);
}

TEST(MethodThreshold, UniformKeepsTheRangeAndZeroTensorsGetATinyScale) {
  std::vector<float> v(100000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(i) / float(v.size()) * 2 - 1;
  TensorStats st = statsOf(v, 4);
  for (Method m : {Method::Mse, Method::Percentile9999}) EXPECT_GT(methodThreshold(m, st), 0.98) << methodName(m);
  for (Method m : kAllMethods) EXPECT_LE(methodThreshold(m, st), 1.0) << methodName(m); // never above max|x|
  TensorStats zero = statsOf(std::vector<float>(10, 0.0f));
  for (Method m : kAllMethods) EXPECT_DOUBLE_EQ(methodThreshold(m, zero), 1e-5) << methodName(m);
}

TEST(FakeQuantize, RoundsToTheInt8OrUint8Grid) {
  std::vector<float> v = {-2.0f, -0.6f, 0.004f, 0.3f, 1.0f, 5.0f};
  TensorRange signedRange{1.27, -2, 5}; // scale 0.01, saturates at -1.28 and 1.27
  fakeQuantize(v, signedRange);
  EXPECT_FLOAT_EQ(v[0], -128 * 0.01f);
  EXPECT_FLOAT_EQ(v[1], -60 * 0.01f);
  EXPECT_FLOAT_EQ(v[2], 0.0f);
  EXPECT_FLOAT_EQ(v[5], 127 * 0.01f);
  std::vector<float> u = {0.0f, 0.5f, 3.0f};
  fakeQuantize(u, TensorRange{2.55, 0, 3}); // uint8: scale 0.01, 0..255
  EXPECT_FLOAT_EQ(u[1], 50 * 0.01f);
  EXPECT_FLOAT_EQ(u[2], 255 * 0.01f);
}

} // namespace
