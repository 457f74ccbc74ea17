// The local engine: compiling a plan's builds (a pool of child processes,
// or one build at a time under a lock file when tasks on several nodes share
// the cache) and simulating points as `tpuc sim` children. A task of the
// GNU Parallel and Slurm engines (tools/explore/Cluster.h) runs its points
// with it too.
#pragma once

#include "tools/explore/SweepPlan.h"

#include <vector>

namespace tpu::explore {

// Compiles and simulates `which` on this machine and writes their row files;
// a failed build or point becomes an error row. `lock`: builds are shared
// with tasks on other nodes.
Result<std::vector<SweepRow>> runPointsHere(Plan &plan, const SweepSpec &spec, const std::vector<size_t> &which,
                                            unsigned workers, bool lock, bool progress);

// What this process compiled, for the task logs and the user.
void noteCompiles(const Plan &plan, const SweepSpec &spec, SweepResult &result);

} // namespace tpu::explore
