// Runs a BM1684X bmodel on the functional semantics (simulator/semantics/bm1684x): the net's coefficients
// and inputs placed at their DDR addresses, every command group's commands executed in program order, the
// outputs read back. No time: the BM1684X has no timing model yet. fp32 inputs and outputs only, as the
// BM1684X compiler writes them.
#pragma once

#include "isa/bmodel/Model.h"
#include "support/Npz.h"
#include "support/Status.h"

#include <string>

namespace tpu::runtime::bm1684x {

// `netName` empty: the model's only net. `inputs` must name exactly the net's inputs, with their shapes.
Result<NpzMap> runFunc(const bmodel::Model &model, const std::string &netName, const NpzMap &inputs);
// The same on a bmodel file; errors name the file.
Result<NpzMap> runFuncFile(const std::string &bmodelPath, const std::string &netName, const NpzMap &inputs);

} // namespace tpu::runtime::bm1684x
