#include "compiler/Kernels/Parallel.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace tpu::kernels {

static std::atomic<int> gThreads{0};

int numThreads() {
  int n = gThreads.load();
  if (n > 0) return n;
  return std::max(1u, std::thread::hardware_concurrency());
}

void setNumThreads(int n) { gThreads.store(std::max(1, n)); }

void parallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)> &fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  int64_t chunks = std::min<int64_t>(numThreads(), (n + grain - 1) / grain);
  if (chunks <= 1) {
    fn(0, n);
    return;
  }
  std::vector<std::thread> workers;
  workers.reserve(chunks - 1);
  int64_t per = (n + chunks - 1) / chunks;
  for (int64_t c = 1; c < chunks; ++c) {
    int64_t b = c * per, e = std::min(n, b + per);
    if (b < e) workers.emplace_back(fn, b, e);
  }
  fn(0, std::min(n, per));
  for (auto &w : workers) w.join();
}

} // namespace tpu::kernels
