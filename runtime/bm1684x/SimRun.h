// Runs a BM1684X bmodel's net through the SystemC model (simulator/systemc) with the BM1684X's costs
// (timing/bm1684x): the same data as runFunc, plus cycles, utilisation, trace and stats.
#pragma once

#include "isa/HwConfig.h"
#include "isa/bmodel/Model.h"
#include "simulator/systemc/SimProgram.h"
#include "simulator/systemc/SimReport.h"
#include "support/Npz.h"
#include "support/Status.h"

#include <string>

namespace tpu::runtime::bm1684x {

struct TimedRun {
  NpzMap outputs;
  sysc::SimReport report;
};

// `hw` the BM1684X's parameters (isa::chipInfo(Chip::BM1684X).hwConfig(), or a config file over them).
Result<TimedRun> runSim(const bmodel::Model &model, const std::string &netName, const NpzMap &inputs,
                        const isa::HwConfig &hw, const sysc::SimOptions &options);

} // namespace tpu::runtime::bm1684x
