// The timed backend: the SystemC model of the TIU and GDMA engines
// (simulator/systemc), fed with the decoded groups of a net.
#pragma once

#include "runtime/Backend.h"
#include "simulator/systemc/SimReport.h"

namespace tpu::runtime {

std::unique_ptr<Backend> makeSimBackend();

// The timed part of `report` from a simulation's: cycles, utilisation, layers, stats (and the trace when
// events were recorded).
void fillTimedReport(const sysc::SimReport &sim, bool withTrace, RunReport &report);

} // namespace tpu::runtime
