#include "isa/Opcodes.h"

#include <gtest/gtest.h>

using namespace tpu::isa;

TEST(Opcodes, ValidCombinationsFollowTheReference) {
  EXPECT_TRUE(isValidTiuOp(0, 1));   // conv mac
  EXPECT_FALSE(isValidTiuOp(0, 2));
  EXPECT_TRUE(isValidTiuOp(1, 4));   // maxpool
  EXPECT_FALSE(isValidTiuOp(1, 0));
  EXPECT_TRUE(isValidTiuOp(3, 24));  // ar cmp_select
  EXPECT_FALSE(isValidTiuOp(3, 25));
  EXPECT_TRUE(isValidTiuOp(10, 21)); // md_linear square_diff
  EXPECT_FALSE(isValidTiuOp(10, 2));
  EXPECT_FALSE(isValidTiuOp(15, 0)); // no task type 15
}

TEST(Opcodes, MnemonicRoundTripForEveryValidPair) {
  unsigned valid = 0;
  for (unsigned t = 0; t < 16; ++t)
    for (unsigned e = 0; e < 32; ++e) {
      if (!isValidTiuOp(t, e)) continue;
      ++valid;
      std::string m = tiuMnemonic(TiuTask(t), EuOp(e));
      auto back = parseTiuMnemonic(m);
      ASSERT_TRUE(back) << m;
      EXPECT_EQ(unsigned(back->first), t);
      EXPECT_EQ(unsigned(back->second), e);
    }
  EXPECT_GT(valid, 100u);
  EXPECT_FALSE(parseTiuMnemonic("conv.add"));
  EXPECT_FALSE(parseTiuMnemonic("nonsense"));
  EXPECT_EQ(tiuMnemonic(TiuTask::Pord, EuOp::Max), "pord.max");
}
