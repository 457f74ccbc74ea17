// Accumulates the TIU and GDMA commands of a net's command groups with
// their synchronisation ids (docs/isa.md, "Synchronising TIU and GDMA"):
// each queue's ids count 1, 2, ... from the start of its group; a command
// names the other engine's id it waits for (0 = nothing). Every command
// carries the layer name current when it was added.
#pragma once

#include "isa/GdmaCommand.h"
#include "isa/TiuCommand.h"
#include "isa/bmodel/Model.h"
#include "support/Status.h"

#include <string>
#include <vector>

namespace tpu::backend {

class CommandBuilder {
public:
  // Starts a new command group: ids restart, nothing from before is waited for.
  void beginGroup();
  void setLayer(std::string name) { layer_ = std::move(name); }

  // Adds a command that waits for GDMA id `waitGdma` (TIU) / TIU id
  // `waitTiu` (GDMA) of the current group; returns the command's own id.
  uint16_t tiu(isa::TiuOp op, uint16_t waitGdma);
  uint16_t gdma(isa::GdmaCommand cmd, uint16_t waitTiu);

  // Ids of the last command of each queue in the current group (0 = none).
  uint16_t lastTiu() const { return groups_.empty() ? 0 : uint16_t(groups_.back().tiu.size()); }
  uint16_t lastGdma() const { return groups_.empty() ? 0 : uint16_t(groups_.back().gdma.size()); }
  size_t groupCount() const { return groups_.size(); }

  // Encodes every group (marking each queue's last command cmd_end). Fails
  // if a queue exceeds the 16-bit ids or a field does not fit, naming the
  // layer of the command.
  Result<std::vector<bmodel::CmdGroup>> finish() const;

  // The typed commands, for the cost model and tests.
  struct Group {
    std::vector<isa::TiuCommand> tiu;
    std::vector<isa::GdmaCommand> gdma;
    std::vector<std::string> tiuLayer, gdmaLayer;
  };
  const std::vector<Group> &groups() const { return groups_; }

private:
  Group &current();
  std::vector<Group> groups_;
  std::string layer_;
};

} // namespace tpu::backend
