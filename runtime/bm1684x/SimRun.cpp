#include "runtime/bm1684x/SimRun.h"

#include "runtime/bm1684x/FuncRun.h"
#include "simulator/systemc/Simulator.h"
#include "simulator/systemc/bm1684x/ProgramBuilder.h"

namespace tpu::runtime::bm1684x {

Result<TimedRun> runSim(const bmodel::Model &model, const std::string &netName, const NpzMap &inputs,
                        const isa::HwConfig &hw, const sysc::SimOptions &options) {
  auto prepared = prepareNet(model, netName, inputs);
  if (!prepared) return prepared.status();
  const std::string where = "net '" + prepared->net->name + "'";
  auto program = sysc::bm1684x::buildProgram(hw, *prepared->memories, prepared->groups);
  if (!program) return Status(program.status()).prefix(where);
  sim::bm1684x::Memories &m = *prepared->memories;
  auto report = sysc::simulate(hw, m.local(), m.global(), *program, options);
  if (!report) return Status(report.status()).prefix(where);
  auto outputs = readOutputs(*prepared);
  if (!outputs) return outputs.status();
  return TimedRun{outputs.take(), report.take()};
}

} // namespace tpu::runtime::bm1684x
