// Program order: merging TIU and GDMA queues by the cmd_id rule.
#include "isa/ProgramOrder.h"

#include <gtest/gtest.h>

#include <random>

using namespace tpu::isa;

namespace {
constexpr Engine T = Engine::Tiu, G = Engine::Gdma;
}

TEST(ProgramOrder, EmptyQueues) {
  auto o = programOrder(std::vector<SyncIds>{}, std::vector<SyncIds>{});
  ASSERT_TRUE(o.isOk());
  EXPECT_TRUE(o->empty());
}

TEST(ProgramOrder, LoadComputeStore) {
  // D1 load, D2 load, B1 conv waits D2, D3 store waits B1.
  std::vector<SyncIds> tiu{{1, 2}};
  std::vector<SyncIds> gdma{{1, 0}, {2, 0}, {3, 1}};
  auto o = programOrder(tiu, gdma);
  ASSERT_TRUE(o.isOk()) << o.message();
  std::vector<OrderedCommand> want{{G, 0}, {G, 1}, {T, 0}, {G, 2}};
  EXPECT_EQ(*o, want);
}

TEST(ProgramOrder, TieBreakPutsGdmaFirst) {
  std::vector<SyncIds> tiu{{1, 0}, {2, 0}};
  std::vector<SyncIds> gdma{{1, 0}};
  auto o = programOrder(tiu, gdma);
  ASSERT_TRUE(o.isOk());
  std::vector<OrderedCommand> want{{G, 0}, {T, 0}, {T, 1}};
  EXPECT_EQ(*o, want);
}

TEST(ProgramOrder, WaitForLaterIdIsSatisfiedByItsCompletion) {
  // TIU waits for GDMA id 2; ids are compared as "completed at least".
  std::vector<SyncIds> tiu{{1, 2}};
  std::vector<SyncIds> gdma{{1, 0}, {3, 0}};
  auto o = programOrder(tiu, gdma);
  ASSERT_TRUE(o.isOk());
  std::vector<OrderedCommand> want{{G, 0}, {G, 1}, {T, 0}};
  EXPECT_EQ(*o, want);
}

TEST(ProgramOrder, DeadlockNamesBothCommandsAndIds) {
  std::vector<SyncIds> tiu{{1, 0}, {2, 2}};
  std::vector<SyncIds> gdma{{1, 0}, {2, 2}};
  auto o = programOrder(tiu, gdma);
  ASSERT_FALSE(o.isOk());
  EXPECT_EQ(o.message(),
            "deadlock: TIU command 1 (%B2) waits for %D2 and GDMA command 1 (%D2) waits for %B2");
}

TEST(ProgramOrder, DeadlockOnIdTheOtherQueueNeverReaches) {
  std::vector<SyncIds> tiu{{1, 5}};
  std::vector<SyncIds> gdma{{1, 0}, {2, 0}};
  auto o = programOrder(tiu, gdma);
  ASSERT_FALSE(o.isOk());
  EXPECT_EQ(o.message(), "deadlock: TIU command 0 (%B1) waits for %D5 but the GDMA queue ends at %D2");
  auto o2 = programOrder(std::vector<SyncIds>{}, std::vector<SyncIds>{{1, 1}});
  ASSERT_FALSE(o2.isOk());
  EXPECT_EQ(o2.message(), "deadlock: GDMA command 0 (%D1) waits for %B1 but the TIU queue ends at %B0");
}

TEST(ProgramOrder, RejectsIdsNotIncreasing) {
  auto o = programOrder(std::vector<SyncIds>{{1, 0}, {1, 0}}, std::vector<SyncIds>{});
  ASSERT_FALSE(o.isOk());
  EXPECT_EQ(o.message(), "TIU command 1 has id 1 not greater than the previous id 1");
  auto z = programOrder(std::vector<SyncIds>{}, std::vector<SyncIds>{{0, 0}});
  ASSERT_FALSE(z.isOk());
  EXPECT_EQ(z.message(), "GDMA command 0 has id 0 (ids start at 1)");
}

TEST(ProgramOrder, ReadsIdsFromCommandBytes) {
  TiuRaw t;
  t[TiuField::cmd_id_tpu] = 7;
  t[TiuField::cmd_id_gdma] = 3;
  GdmaRaw g;
  g[GdmaField::cmd_id] = 3;
  g[GdmaField::eng0_sync_id] = 6;
  SyncIds ts = tiuSyncIds(*t.encode()), gs = gdmaSyncIds(*g.encode());
  EXPECT_EQ(ts.id, 7);
  EXPECT_EQ(ts.waitId, 3);
  EXPECT_EQ(gs.id, 3);
  EXPECT_EQ(gs.waitId, 6);
}

// Property: for a random program (each command waits for the latest id the
// other engine had issued when it was emitted, or less), the merged order
// keeps each queue's order and only places a command after what it waits for.
TEST(ProgramOrder, RandomProgramsAreOrderedConsistently) {
  std::mt19937 rng(2024);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<SyncIds> tiu, gdma;
    uint16_t tiuId = 0, gdmaId = 0;
    int n = 1 + int(rng() % 60);
    for (int i = 0; i < n; ++i) {
      if (rng() % 2) {
        uint16_t wait = gdmaId ? uint16_t(rng() % (gdmaId + 1)) : 0;
        tiuId += 1 + rng() % 2;
        tiu.push_back({tiuId, wait});
      } else {
        uint16_t wait = tiuId ? uint16_t(rng() % (tiuId + 1)) : 0;
        gdmaId += 1 + rng() % 2;
        gdma.push_back({gdmaId, wait});
      }
    }
    auto o = programOrder(tiu, gdma);
    ASSERT_TRUE(o.isOk()) << o.message();
    ASSERT_EQ(o->size(), tiu.size() + gdma.size());
    uint32_t nextT = 0, nextG = 0;
    uint16_t doneT = 0, doneG = 0;
    for (const OrderedCommand &c : *o) {
      if (c.engine == T) {
        ASSERT_EQ(c.index, nextT++);
        EXPECT_LE(tiu[c.index].waitId, doneG);
        doneT = tiu[c.index].id;
      } else {
        ASSERT_EQ(c.index, nextG++);
        EXPECT_LE(gdma[c.index].waitId, doneT);
        doneG = gdma[c.index].id;
      }
    }
  }
}
