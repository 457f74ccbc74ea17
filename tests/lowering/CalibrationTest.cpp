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

TEST(Method, ParsesNames) {
  EXPECT_EQ(*parseMethod("max"), Method::Max);
  EXPECT_EQ(*parseMethod("kl"), Method::Kl);
  EXPECT_FALSE(parseMethod("percentile"));
}

} // namespace
