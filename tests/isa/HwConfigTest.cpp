#include "isa/HwConfig.h"

#include <gtest/gtest.h>

using tpu::isa::HwConfig;

TEST(HwConfig, DefaultsAreBm1684) {
  HwConfig c;
  EXPECT_EQ(c.npuLanes, 64u);
  EXPECT_EQ(c.lmemBytes(), 32ull << 20);
  EXPECT_EQ(c.lmemBankBytes(), 64u * 1024);
  EXPECT_EQ(c.euCount(4), 32u);
  EXPECT_EQ(c.euCount(1), 128u);
  EXPECT_TRUE(c.validate().isOk());
}

TEST(HwConfig, JsonRoundTripAndOverride) {
  auto r = HwConfig::fromJson(R"({"ddrBandwidthGBs": 64.5, "npuLanes": 32})");
  ASSERT_TRUE(r.isOk()) << r.message();
  EXPECT_EQ(r->npuLanes, 32u);
  EXPECT_DOUBLE_EQ(r->ddrBandwidthGBs, 64.5);
  auto back = HwConfig::fromJson(r->toJson());
  ASSERT_TRUE(back.isOk()) << back.message();
  EXPECT_EQ(back->npuLanes, 32u);
}

TEST(HwConfig, BadInputNamesTheProblem) {
  auto unknown = HwConfig::fromJson(R"({"lanes": 64})", "hw.json");
  ASSERT_FALSE(unknown.isOk());
  EXPECT_NE(unknown.message().find("unknown hardware parameter 'lanes'"), std::string::npos);
  auto type = HwConfig::fromJson(R"({"npuLanes": "64"})", "hw.json");
  ASSERT_FALSE(type.isOk());
  EXPECT_NE(type.message().find("npuLanes"), std::string::npos);
  EXPECT_FALSE(HwConfig::fromJson(R"({"npuLanes": 65})").isOk());
  EXPECT_FALSE(HwConfig::fromJson(R"({"npuLanes": -1})").isOk());
  auto negative = HwConfig::fromJson(R"({"lutCyclesPerElement": -0.5})", "hw.json");
  ASSERT_FALSE(negative.isOk());
  EXPECT_NE(negative.message().find("lutCyclesPerElement = -0.5 must be >= 0"), std::string::npos) << negative.message();
  EXPECT_FALSE(HwConfig::fromJson("{not json").isOk());
  EXPECT_FALSE(HwConfig::load("/nonexistent/hw.json").isOk());
}
