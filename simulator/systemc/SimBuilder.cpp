#include "simulator/systemc/SimBuilder.h"

#include "memory/GdmaAccess.h"
#include "memory/LocalTensor.h"
#include "simulator/semantics/GdmaExec.h"
#include "simulator/semantics/TiuExec.h"
#include "timing/GdmaTiming.h"
#include "timing/Schedule.h"
#include "timing/TiuTiming.h"

#include <algorithm>

namespace tpu::sysc {

std::string gdmaMnemonic(const isa::GdmaCommand &cmd) {
  return "gdma." + std::string(isa::gdmaDirectionName(cmd.direction)) + "." +
         std::string(isa::gdmaSpecialFuncName(cmd.specialFunc));
}

namespace {

// One past the highest in-lane byte of a resolved local tensor (strides are
// non-negative, so its last element is the furthest, as resolveLocal checks).
uint64_t tensorEnd(const sim::LocalTensor &t) {
  if (t.isConst) return 0;
  const isa::Shape4 &s = t.shape;
  return t.offset(s.n - 1, s.c - 1, s.h - 1, s.w - 1) + t.elemBytes;
}

// The local operand slots of a TIU command, resolved with their own shape
// fields; slots that do not resolve (unused, zero shape) are skipped.
struct LmemExtent {
  const isa::HwConfig &hw;
  uint64_t end = 0;
  template <class F, class T> void operator()(F, const T &) {}
  template <class B> void operator()(isa::OptionalOperandCount<B>) {}
  void operator()(isa::OperandRef<const isa::LocalOperand> r) {
    if (r.op.isConst) return;
    Result<sim::LocalTensor> t = sim::resolveLocal(hw, r.op, "operand");
    if (t) end = std::max(end, tensorEnd(*t));
  }
};

uint64_t tiuLmemEnd(const isa::TiuCommand &cmd, const isa::HwConfig &hw) {
  LmemExtent v{hw};
  std::visit([&](const auto &s) { std::decay_t<decltype(s)>::fields(s, v); }, cmd.op);
  return v.end;
}

uint64_t gdmaLmemEnd(const isa::GdmaCommand &cmd, const isa::HwConfig &hw) {
  Result<sim::GdmaPlan> plan = sim::planGdma(hw, cmd);
  if (!plan) return 0;
  uint64_t end = 0;
  if (plan->readsSrc && plan->src.local) end = tensorEnd(plan->src.lmem);
  if (plan->dst.local) end = std::max(end, tensorEnd(plan->dst.lmem));
  return end;
}

} // namespace

ProgramBuilder::ProgramBuilder(const isa::HwConfig &hw) : hw_(std::make_shared<const isa::HwConfig>(hw)) {}

void ProgramBuilder::beginGroup() { program_.groups.emplace_back(); }

double ProgramBuilder::previousWaitSync(const std::vector<SimCommand> &queue, uint32_t waitId) const {
  return timing::syncCost(waitId, queue.empty() ? 0 : queue.back().waitId, *hw_);
}

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
  c.latencyCycles = previousWaitSync(group().tiu(), c.waitId) + double(cost.startupCycles);
  c.dataCycles = double(cost.computeCycles);
  c.lmemEnd = tiuLmemEnd(cmd, *hw_);
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
  const double sync = previousWaitSync(group().gdma(), c.waitId);
  if (cost) {
    c.latencyCycles = sync + cost->latencyCycles;
    c.dataCycles = cost->lmemCycles;
    c.ddrBytes = cost->ddrBytes;
    c.payloadBytes = cost->payloadBytes;
    c.lmemEnd = gdmaLmemEnd(cmd, *hw_);
  } else {
    c.latencyCycles = sync + hw_->gdmaStartupCycles * hw_->perGdmaCycle(); // executeGdma reports the error
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
