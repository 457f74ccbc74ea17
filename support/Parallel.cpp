#include "support/Parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace tpu {

namespace {

std::atomic<int> gThreads{0};
thread_local bool tInsideLoop = false;

// One loop at a time: its chunks are handed out through an atomic counter to
// the caller and the workers; `generation` tells the workers a loop started.
class ThreadPool {
public:
  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread &t : workers_) t.join();
  }

  // False when the pool is busy with another thread's loop.
  bool run(int64_t n, int64_t chunks, const std::function<void(int64_t, int64_t)> &fn, int workers) {
    std::unique_lock<std::mutex> owner(owner_, std::try_to_lock);
    if (!owner) return false;
    startWorkers(workers);
    {
      std::lock_guard<std::mutex> lock(mu_);
      fn_ = &fn;
      n_ = n;
      per_ = (n + chunks - 1) / chunks;
      chunks_ = chunks;
      helpers_ = workers;
      next_.store(0);
      active_ = int(workers_.size());
      generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    runChunks();
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [&] { return active_ == 0; });
    fn_ = nullptr;
    return true;
  }

private:
  void startWorkers(int wanted) {
    while (int(workers_.size()) < wanted) {
      try {
        workers_.emplace_back([this, index = int(workers_.size()), seen = generation_.load()] {
          workerLoop(index, seen);
        });
      } catch (const std::system_error &) { // no more threads: the others take the chunks
        return;
      }
    }
  }

  void runChunks() {
    tInsideLoop = true;
    for (int64_t c; (c = next_.fetch_add(1)) < chunks_;) {
      const int64_t b = c * per_, e = std::min(n_, b + per_);
      if (b < e) (*fn_)(b, e);
    }
    tInsideLoop = false;
  }

  // Workers past the loop's `helpers_` (the pool grew for a loop that asked
  // for more threads) only report back, so a loop uses the threads it asked for.
  void workerLoop(int index, uint64_t seen) {
    for (;;) {
      // A short spin first (a few hundred yields): simulated commands start
      // loops back to back, and a sleeping thread takes tens of microseconds
      // to wake. Yielding, not pausing, leaves the core to a sibling thread.
      for (int i = 0; i < 500 && generation_.load(std::memory_order_acquire) == seen; ++i) std::this_thread::yield();
      {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, [&] { return stop_ || generation_.load() != seen; });
        if (stop_) return;
        seen = generation_.load();
      }
      if (index < helpers_) runChunks();
      std::lock_guard<std::mutex> lock(mu_);
      if (--active_ == 0) done_.notify_one();
    }
  }

  std::mutex owner_; // held by the thread whose loop runs
  std::mutex mu_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int64_t> next_{0};
  const std::function<void(int64_t, int64_t)> *fn_ = nullptr;
  int64_t n_ = 0, per_ = 1, chunks_ = 0;
  int helpers_ = 0;
  int active_ = 0;
  bool stop_ = false;
};

ThreadPool &pool() {
  static ThreadPool p;
  return p;
}

} // namespace

int numThreads() {
  int n = gThreads.load();
  if (n > 0) return n;
  return int(std::max(1u, std::thread::hardware_concurrency()));
}

void setNumThreads(int n) { gThreads.store(std::max(1, n)); }

void parallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)> &fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  const int threads = numThreads();
  if (threads <= 1 || n < 2 * grain || tInsideLoop) return fn(0, n);
  // A few chunks per thread, taken in turn, even out a late-waking worker.
  const int64_t chunks = std::min<int64_t>(4 * int64_t(threads), n / grain);
  if (!pool().run(n, chunks, fn, threads - 1)) fn(0, n);
}

} // namespace tpu
