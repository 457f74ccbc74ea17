// Turns typed BM1684 commands into the SystemC model's SimProgram: each
// command's cost from the timing model (timing/), its data effect
// from the semantics library (executeTiu / executeGdma, applied when the
// command completes), its name from the ISA mnemonics and its layer name.
#pragma once

#include "isa/GdmaCommand.h"
#include "isa/HwConfig.h"
#include "isa/TiuCommand.h"
#include "isa/bmodel/Model.h"
#include "simulator/systemc/SimProgram.h"

#include <map>
#include <memory>
#include <string>

namespace tpu::sysc {

class ProgramBuilder {
public:
  // Costs are computed with `hw`; simulate() the program with the same config.
  explicit ProgramBuilder(const isa::HwConfig &hw);

  void beginGroup();
  // `layer` "" = no layer. A GDMA command the semantics would reject is kept
  // (with its start-up latency only) so the run stops at it with its index.
  void addTiu(const isa::TiuCommand &cmd, const std::string &layer = "");
  void addGdma(const isa::GdmaCommand &cmd, const std::string &layer = "");
  SimProgram take();

private:
  int32_t layerIndex(const std::string &layer);
  SimGroup &group();
  // The cmd-id synchronisation cost of a command appended to `queue` (timing::syncCost).
  double previousWaitSync(const std::vector<SimCommand> &queue, uint32_t waitId) const;

  std::shared_ptr<const isa::HwConfig> hw_;
  SimProgram program_;
  std::map<std::string, int32_t> layers_;
};

// Decodes the command groups of a bmodel net (raw 128-byte commands and their
// layer names); a command that does not decode is an error naming the group,
// engine, index and field.
Result<SimProgram> buildProgram(const isa::HwConfig &hw, const std::vector<bmodel::CmdGroup> &groups);

std::string gdmaMnemonic(const isa::GdmaCommand &cmd); // "gdma.s2l.copy" style

} // namespace tpu::sysc
