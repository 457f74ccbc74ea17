// Splits an index range across std::threads. Work items are independent and
// each is computed by the same sequence of operations whatever the split, so
// results do not depend on the thread count.
#pragma once

#include <cstdint>
#include <functional>

namespace tpu::kernels {

// Threads used by the kernels: hardware concurrency unless set (>= 1).
int numThreads();
void setNumThreads(int n);

// Calls fn(begin, end) on disjoint chunks covering [0, n). Chunks have at
// least `grain` items; small ranges run on the calling thread.
void parallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)> &fn);

} // namespace tpu::kernels
