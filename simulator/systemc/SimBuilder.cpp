#include "simulator/systemc/SimBuilder.h"

#include "simulator/semantics/GdmaExec.h"
#include "simulator/semantics/TiuExec.h"
#include "simulator/timing/GdmaTiming.h"
#include "simulator/timing/TiuTiming.h"

namespace tpu::sysc {

std::string gdmaMnemonic(const isa::GdmaCommand &cmd) {
  return "gdma." + std::string(isa::gdmaDirectionName(cmd.direction)) + "." +
         std::string(isa::gdmaSpecialFuncName(cmd.specialFunc));
}

ProgramBuilder::ProgramBuilder(const isa::HwConfig &hw) : hw_(std::make_shared<const isa::HwConfig>(hw)) {}

void ProgramBuilder::beginGroup() { program_.groups.emplace_back(); }

SimGroup &ProgramBuilder::group() {
  if (program_.groups.empty()) beginGroup();
  return program_.groups.back();
}

int32_t ProgramBuilder::layerIndex(const std::string &layer) {
  if (layer.empty()) return -1;
  auto [it, fresh] = layers_.emplace(layer, int32_t(program_.layerNames.size()));
  if (fresh) program_.layerNames.push_back(layer);
  return it->second;
}

void ProgramBuilder::addTiu(const isa::TiuCommand &cmd, const std::string &layer) {
  SimCommand c;
  c.id = cmd.cmdIdTpu;
  c.waitId = cmd.cmdIdGdma;
  c.name = isa::tiuMnemonic(cmd.task(), cmd.eu());
  c.layer = layerIndex(layer);
  timing::TiuCost cost = timing::tiuCost(cmd, *hw_);
  c.latencyCycles = double(cost.startupCycles);
  c.dataCycles = double(cost.computeCycles);
  c.execute = [hw = hw_, cmd](sim::LocalMemory &lm, sim::GlobalMemory &) { return sim::executeTiu(*hw, lm, cmd); };
  group().tiu().push_back(std::move(c));
}

void ProgramBuilder::addGdma(const isa::GdmaCommand &cmd, const std::string &layer) {
  SimCommand c;
  c.id = cmd.cmdId;
  c.waitId = cmd.eng0SyncId;
  c.name = gdmaMnemonic(cmd);
  c.layer = layerIndex(layer);
  Result<timing::GdmaCost> cost = timing::gdmaCost(cmd, *hw_);
  if (cost) {
    c.latencyCycles = cost->latencyCycles;
    c.dataCycles = cost->lmemCycles;
    c.ddrBytes = cost->ddrBytes;
    c.payloadBytes = cost->payloadBytes;
  } else {
    c.latencyCycles = hw_->gdmaStartupCycles; // executeGdma reports the error when it runs
  }
  c.execute = [hw = hw_, cmd](sim::LocalMemory &lm, sim::GlobalMemory &gm) {
    return sim::executeGdma(*hw, lm, gm, cmd);
  };
  group().gdma().push_back(std::move(c));
}

SimProgram ProgramBuilder::take() {
  layers_.clear();
  return std::move(program_);
}

Result<SimProgram> buildProgram(const isa::HwConfig &hw, const std::vector<bmodel::CmdGroup> &groups) {
  ProgramBuilder b(hw);
  for (size_t g = 0; g < groups.size(); ++g) {
    const bmodel::CmdGroup &grp = groups[g];
    b.beginGroup();
    auto layer = [](const std::vector<std::string> &names, size_t i) {
      return i < names.size() ? names[i] : std::string();
    };
    for (size_t i = 0; i < grp.tiu.size(); ++i) {
      Result<isa::TiuCommand> cmd = isa::decodeTiu(grp.tiu[i].data());
      if (!cmd) return makeError("command group ", g, ": TIU command #", i, ": ", cmd.message());
      b.addTiu(*cmd, layer(grp.tiuLayer, i));
    }
    for (size_t i = 0; i < grp.gdma.size(); ++i) {
      Result<isa::GdmaCommand> cmd = isa::decodeGdma(isa::GdmaRaw::decode(grp.gdma[i].data()));
      if (!cmd) return makeError("command group ", g, ": GDMA command #", i, ": ", cmd.message());
      b.addGdma(*cmd, layer(grp.gdmaLayer, i));
    }
  }
  return b.take();
}

} // namespace tpu::sysc
