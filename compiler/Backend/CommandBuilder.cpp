#include "compiler/Backend/CommandBuilder.h"

namespace tpu::backend {

void CommandBuilder::beginGroup() { groups_.emplace_back(); }

CommandBuilder::Group &CommandBuilder::current() {
  if (groups_.empty()) beginGroup();
  return groups_.back();
}

uint16_t CommandBuilder::tiu(isa::TiuOp op, uint16_t waitGdma) {
  Group &g = current();
  isa::TiuCommand cmd;
  cmd.op = std::move(op);
  // Ids past 16 bits are reported by finish(); wrap here to keep going.
  cmd.cmdIdTpu = uint16_t(g.tiu.size() + 1);
  cmd.cmdIdGdma = waitGdma;
  g.tiu.push_back(std::move(cmd));
  g.tiuLayer.push_back(layer_);
  return uint16_t(g.tiu.size());
}

uint16_t CommandBuilder::gdma(isa::GdmaCommand cmd, uint16_t waitTiu) {
  Group &g = current();
  cmd.cmdId = uint16_t(g.gdma.size() + 1);
  cmd.eng0SyncId = waitTiu;
  g.gdma.push_back(cmd);
  g.gdmaLayer.push_back(layer_);
  return uint16_t(g.gdma.size());
}

Result<std::vector<bmodel::CmdGroup>> CommandBuilder::finish() const {
  std::vector<bmodel::CmdGroup> out;
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    const Group &g = groups_[gi];
    if (g.tiu.empty() && g.gdma.empty()) continue;
    auto tooMany = [&](size_t n, const char *engine, const std::string &layer) -> Status {
      return makeError("command group ", gi, " (layer '", layer, "') has ", n, " ", engine,
                       " commands; ids are 16 bits (at most ", bmodel::kMaxCommandsPerQueue, ")");
    };
    if (g.tiu.size() > bmodel::kMaxCommandsPerQueue) return tooMany(g.tiu.size(), "TIU", g.tiuLayer.back());
    if (g.gdma.size() > bmodel::kMaxCommandsPerQueue) return tooMany(g.gdma.size(), "GDMA", g.gdmaLayer.back());
    bmodel::CmdGroup cg;
    for (size_t i = 0; i < g.tiu.size(); ++i) {
      isa::TiuCommand c = g.tiu[i];
      c.cmdEnd = i + 1 == g.tiu.size();
      auto bytes = isa::encodeBytes(c);
      if (!bytes) return Status(bytes.status()).prefix("layer '" + g.tiuLayer[i] + "': TIU command " + std::to_string(i));
      cg.tiu.push_back(*bytes);
    }
    for (size_t i = 0; i < g.gdma.size(); ++i) {
      isa::GdmaRaw raw = isa::encode(g.gdma[i]);
      auto bytes = raw.encode();
      if (!bytes) return Status(bytes.status()).prefix("layer '" + g.gdmaLayer[i] + "': GDMA command " + std::to_string(i));
      cg.gdma.push_back(*bytes);
    }
    cg.tiuLayer = g.tiuLayer;
    cg.gdmaLayer = g.gdmaLayer;
    out.push_back(std::move(cg));
  }
  return out;
}

} // namespace tpu::backend
