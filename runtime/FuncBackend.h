// The functional backend (see Backend.h) and its one loop, which the
// benchmarks in perf/ time directly.
#pragma once

#include "runtime/Backend.h"

namespace tpu::runtime {

// Executes one decoded group in its program order against the device's
// memories. Errors name the engine, queue index and id of the command.
Status executeGroupInOrder(SimDevice &device, const LoadedGroup &group);

std::unique_ptr<Backend> makeFuncBackend();

} // namespace tpu::runtime
