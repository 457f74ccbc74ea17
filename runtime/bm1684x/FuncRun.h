// Runs a BM1684X bmodel's net on the chip's functional semantics (simulator/semantics/bm1684x): the net's
// coefficients and inputs placed at their DDR addresses, every command group's commands executed in program
// order, the outputs read back. runtime/bm1684x/SimRun.h runs the same groups through the SystemC model.
// fp32 inputs and outputs only, as the BM1684X compiler writes them.
#pragma once

#include "isa/bm1684x/Command.h"
#include "isa/bmodel/Model.h"
#include "simulator/semantics/bm1684x/Executor.h"
#include "support/Npz.h"
#include "support/Status.h"

#include <memory>
#include <string>
#include <vector>

namespace tpu::runtime::bm1684x {

// A net ready to run: its coefficients and inputs in DDR, its command groups decoded.
struct PreparedNet {
  const bmodel::Net *net = nullptr;
  std::unique_ptr<sim::bm1684x::Memories> memories; // large host arrays: on the heap
  std::vector<isa::bm1684x::CommandGroup> groups;
};

// `netName` empty: the model's only net. `inputs` must name exactly the net's inputs, with their shapes.
Result<PreparedNet> prepareNet(const bmodel::Model &model, const std::string &netName, const NpzMap &inputs);
// The net's outputs as they stand in DDR.
Result<NpzMap> readOutputs(const PreparedNet &prepared);

Result<NpzMap> runFunc(const bmodel::Model &model, const std::string &netName, const NpzMap &inputs);
// The same on a bmodel file; errors name the file.
Result<NpzMap> runFuncFile(const std::string &bmodelPath, const std::string &netName, const NpzMap &inputs);

} // namespace tpu::runtime::bm1684x
