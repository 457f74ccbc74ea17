// The host thread pool: every index once, no more threads than asked for
// (also after the pool grew for a wider loop), nested loops run inline.
#include "support/Parallel.h"

#include <gtest/gtest.h>

#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace {

// Runs a loop of n items and returns how many threads took part.
size_t threadsUsed(int64_t n, std::vector<int> &hits) {
  std::mutex mu;
  std::set<std::thread::id> ids;
  tpu::parallelFor(n, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) ++hits[size_t(i)];
    // Long enough chunks that idle workers would take some.
    volatile double x = 0;
    for (int k = 0; k < 3000000; ++k) x = x + k;
    std::lock_guard<std::mutex> lock(mu);
    ids.insert(std::this_thread::get_id());
  });
  return ids.size();
}

TEST(Parallel, EveryIndexOnceAndNoMoreThreadsThanAsked) {
  const int saved = tpu::numThreads();
  for (int threads : {4, 2, 1, 3}) {
    tpu::setNumThreads(threads);
    std::vector<int> hits(64, 0);
    EXPECT_LE(threadsUsed(64, hits), size_t(threads)) << threads << " threads asked";
    for (int h : hits) EXPECT_EQ(h, 1);
  }
  tpu::setNumThreads(saved);
}

TEST(Parallel, NestedLoopsRunOnTheCallingThread) {
  tpu::setNumThreads(2);
  std::vector<int> hits(16 * 16, 0);
  tpu::parallelFor(16, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const std::thread::id outer = std::this_thread::get_id();
      tpu::parallelFor(16, 1, [&](int64_t b2, int64_t e2) {
        EXPECT_EQ(std::this_thread::get_id(), outer);
        for (int64_t k = b2; k < e2; ++k) ++hits[size_t(i * 16 + k)];
      });
    }
  });
  for (int h : hits) EXPECT_EQ(h, 1);
}

} // namespace
