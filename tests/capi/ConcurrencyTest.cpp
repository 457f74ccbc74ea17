// Concurrent launches through the C API: threads, each with its own
// bm_handle_t and bmrt, run the sample program over and over and every
// output equals the one a single thread computes for the same inputs.
#include "CApiSession.h"

#include "runtime/Backend.h"

#include <thread>

using namespace capitest;

namespace {

constexpr int kLaunchesPerThread = 12;

struct Case {
  std::vector<float> x, y, z;
};

// Inputs for (thread, launch), and their outputs from one sequential session.
std::vector<std::vector<Case>> sequentialCases(int threads, const std::vector<uint8_t> &bmodel) {
  Session s("func");
  EXPECT_TRUE(bmrt_load_bmodel_data(s.bmrt, bmodel.data(), bmodel.size()));
  std::vector<std::vector<Case>> cases(threads);
  for (int t = 0; t < threads; ++t)
    for (int i = 0; i < kLaunchesPerThread; ++i) {
      Case c{randomFloats(kXFloats, unsigned(100 * t + 2 * i)),
             randomFloats(kYFloats, unsigned(100 * t + 2 * i + 1)), {}};
      EXPECT_TRUE(runConvAdd(s, c.x, c.y, c.z));
      cases[t].push_back(std::move(c));
    }
  return cases;
}

// Runs every thread's cases on its own session, all threads at once;
// returns the number of launches that failed or differed.
int runConcurrently(const std::vector<const char *> &backends, const std::vector<uint8_t> &bmodel,
                    const std::vector<std::vector<Case>> &cases) {
  std::vector<std::unique_ptr<Session>> sessions;
  for (const char *b : backends) {
    sessions.push_back(std::make_unique<Session>(b));
    if (!sessions.back()->ok() ||
        !bmrt_load_bmodel_data(sessions.back()->bmrt, bmodel.data(), bmodel.size()))
      return -1;
  }
  std::vector<int> bad(backends.size(), 0);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < backends.size(); ++t)
    threads.emplace_back([&, t] {
      for (const Case &c : cases[t]) {
        std::vector<float> z;
        if (!runConvAdd(*sessions[t], c.x, c.y, z) ||
            std::memcmp(z.data(), c.z.data(), kZFloats * 4) != 0)
          ++bad[t];
      }
    });
  for (auto &th : threads) th.join();
  int total = 0;
  for (int b : bad) total += b;
  return total;
}

} // namespace

TEST(CApiConcurrency, TwoFuncDevicesOnTwoThreads) {
  auto bmodel = convAddBmodel();
  ASSERT_FALSE(bmodel.empty());
  auto cases = sequentialCases(2, bmodel);
  ASSERT_EQ(cases[0].size(), size_t(kLaunchesPerThread));
  // The cases are distinct launches, not one output repeated.
  EXPECT_NE(std::memcmp(cases[0][0].z.data(), cases[1][0].z.data(), kZFloats * 4), 0);
  EXPECT_NE(std::memcmp(cases[0][0].z.data(), cases[0][1].z.data(), kZFloats * 4), 0);
  EXPECT_EQ(runConcurrently({"func", "func"}, bmodel, cases), 0);
}

// The SystemC model runs one simulation at a time per process; a sim device
// and a func device used at once still give the same bytes.
TEST(CApiConcurrency, SimAndFuncDevicesOnTwoThreads) {
  if (!tpu::runtime::backendAvailable(tpu::runtime::BackendKind::Sim))
    GTEST_SKIP() << "this build has no SystemC model";
  auto bmodel = convAddBmodel();
  ASSERT_FALSE(bmodel.empty());
  auto cases = sequentialCases(3, bmodel);
  EXPECT_EQ(runConcurrently({"sim", "func", "sim"}, bmodel, cases), 0);
}
