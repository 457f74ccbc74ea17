// The timed backend: the SystemC model of the TIU and GDMA engines
// (simulator/systemc), fed with the decoded groups of a net.
#pragma once

#include "runtime/Backend.h"

namespace tpu::runtime {

std::unique_ptr<Backend> makeSimBackend();

} // namespace tpu::runtime
