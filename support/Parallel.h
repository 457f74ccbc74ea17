// Splits an index range across a pool of host threads. Work items are
// independent and each is computed by the same sequence of operations
// whatever the split, so results do not depend on the thread count. The
// interpreter's kernels and the simulator's semantics library both use it.
#pragma once

#include <cstdint>
#include <functional>

namespace tpu {

// Threads a parallel loop uses: hardware concurrency unless set (>= 1).
int numThreads();
void setNumThreads(int n);

// Calls fn(begin, end) on disjoint chunks covering [0, n) and returns when
// all are done. Chunks have at least `grain` items; a range of one chunk, a
// call from inside a chunk, and a call made while another thread's loop has
// the pool run on the calling thread alone. The workers are started once
// and wait between loops, so a loop costs a wake-up, not a thread start.
void parallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)> &fn);

} // namespace tpu
