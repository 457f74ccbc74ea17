// Device memory bookkeeping: reservations, sharing rules, allocation, and
// the out-of-memory errors.
#include "runtime/Device.h"

#include <gtest/gtest.h>

using namespace tpu::runtime;

namespace {
tpu::isa::HwConfig smallConfig(uint64_t ddrBytes) {
  tpu::isa::HwConfig cfg;
  cfg.globalMemBytes = ddrBytes;
  return cfg;
}
} // namespace

TEST(SimDevice, ReservationsInsideDdrSucceed) {
  SimDevice dev(smallConfig(1 << 20));
  const uint64_t base = dev.gmem().base();
  EXPECT_TRUE(dev.reserve(base, 4096, SimDevice::Use::Coefficients, "net 'a' coefficients"));
  EXPECT_TRUE(dev.reserve(base + 4096, 8192, SimDevice::Use::Neurons, "net 'a' neurons"));
  // Another net's neurons may share the same range.
  EXPECT_TRUE(dev.reserve(base + 4096, 4096, SimDevice::Use::Neurons, "net 'b' neurons"));
  EXPECT_EQ(dev.usedBytes(), 4096u + 8192u);
}

TEST(SimDevice, OverlapWithCoefficientsIsNamed) {
  SimDevice dev(smallConfig(1 << 20));
  const uint64_t base = dev.gmem().base();
  ASSERT_TRUE(dev.reserve(base, 4096, SimDevice::Use::Coefficients, "net 'a' coefficients"));
  auto st = dev.reserve(base + 100, 10, SimDevice::Use::Neurons, "net 'b' neurons");
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("net 'b' neurons"), std::string::npos);
  EXPECT_NE(st.message().find("overlaps net 'a' coefficients"), std::string::npos) << st.message();
}

TEST(SimDevice, RangeBeyondDdrIsOutOfMemory) {
  SimDevice dev(smallConfig(1 << 20));
  auto st = dev.reserve(dev.gmem().base() + (1 << 20) - 16, 32, SimDevice::Use::Neurons, "net 'x' neurons");
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("out of simulated device memory"), std::string::npos) << st.message();
  EXPECT_FALSE(dev.reserve(0x1000, 16, SimDevice::Use::Neurons, "below DDR"));
}

TEST(SimDevice, AllocateSkipsReservedRangesAndReportsExhaustion) {
  SimDevice dev(smallConfig(64 * 1024));
  const uint64_t base = dev.gmem().base();
  ASSERT_TRUE(dev.reserve(base, 1000, SimDevice::Use::Coefficients, "coeff"));
  auto a = dev.allocate(100, "input 'x'");
  ASSERT_TRUE(a) << a.message();
  EXPECT_GE(*a, base + 1000);
  EXPECT_EQ(*a % dev.config().dmaAlignBytes, 0u);
  auto b = dev.allocate(100, "input 'y'");
  ASSERT_TRUE(b);
  EXPECT_GE(*b, *a + 100);
  auto huge = dev.allocate(1 << 20, "output 'z'");
  ASSERT_FALSE(huge);
  EXPECT_NE(huge.message().find("out of simulated device memory"), std::string::npos);
  EXPECT_NE(huge.message().find("output 'z'"), std::string::npos);
  ASSERT_TRUE(dev.release(*a));
  auto c = dev.allocate(100, "again");
  ASSERT_TRUE(c);
  EXPECT_EQ(*c, *a); // first fit reuses the freed block
  EXPECT_FALSE(dev.release(base + 3));
}

// allocateHigh (a BM1684X net's IO staging): the highest aligned free block, below a range at the top, never
// over a neuron range, released as any buffer.
TEST(SimDevice, AllocateHighTakesTheTopFreeBlock) {
  SimDevice dev(smallConfig(64 * 1024));
  const uint64_t base = dev.gmem().base(), end = base + 64 * 1024;
  auto a = dev.allocateHigh(100, "staging 'x'");
  ASSERT_TRUE(a) << a.message();
  EXPECT_EQ(*a, end - dev.config().dmaAlignBytes);
  ASSERT_TRUE(dev.reserve(end - 8192, 4096, SimDevice::Use::Neurons, "net 'n' neuron memory"));
  auto b = dev.allocateHigh(5000, "staging 'y'");
  ASSERT_TRUE(b) << b.message();
  EXPECT_EQ(*b % dev.config().dmaAlignBytes, 0u);
  EXPECT_LE(*b + 5000, end - 8192);
  auto huge = dev.allocateHigh(1 << 20, "staging 'z'");
  ASSERT_FALSE(huge);
  EXPECT_NE(huge.message().find("out of simulated device memory: cannot allocate 1048576 bytes for staging 'z'"),
            std::string::npos)
      << huge.message();
  ASSERT_TRUE(dev.release(*a));
  ASSERT_TRUE(dev.release(*b));
  auto c = dev.allocate(100, "low");
  ASSERT_TRUE(c);
  EXPECT_EQ(*c, base);
}
