#include "timing/bm1684x/CommandCost.h"

#include "isa/bm1684x/MemoryMap.h"
#include "memory/bm1684x/Operands.h"
#include "timing/GdmaTiming.h"
#include "timing/TiuTiming.h"

#include <algorithm>

namespace tpu::timing::bm1684x {

namespace {

using memory::bm1684x::Operand;
using memory::bm1684x::Space;

uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

uint32_t bytesOf(const Operand &v) { return std::max(1u, v.type.bits() / 8); }

uint32_t laneOf(const Operand &v) {
  return v.space == Space::Lmem ? uint32_t(v.address / isa::bm1684x::kLaneBytes % isa::bm1684x::kLanes) : 0;
}

// Widest element of the local tensors a command touches.
uint32_t widestBytes(const memory::bm1684x::Operands &ops) {
  uint32_t bytes = 1;
  for (const auto *list : {&ops.results, &ops.operands})
    for (const Operand &v : *list)
      if (v.space != Space::Const) bytes = std::max(bytes, bytesOf(v));
  return bytes;
}

// Lane rounds x EU passes over the plane of an (n, c, h, w) result.
uint64_t passes(const Operand &out, uint32_t bytes, const isa::HwConfig &hw) {
  const auto &s = out.shape;
  return laneRounds(s[1], laneOf(out), hw) * ceilDiv(s[0] * s[2] * s[3], hw.euCount(bytes));
}

// Steps per pass of an element-wise command: its EU operation's.
uint64_t stepsPerPass(const isa::bm1684x::Command &c, const isa::HwConfig &hw) {
  const auto &op = c.op();
  if (op.type == 3 && op.sub == 12) return hw.divideCycles; // arith.div
  if (op.type == 9) {                                       // SFU: Taylor terms, or an iterative rsqrt
    if (op.sub == 12 || op.sub == 13) return std::max<uint64_t>(1, c.get("opd1_n"));
    return hw.divideCycles;
  }
  return 1;
}

uint64_t tiuCompute(const isa::bm1684x::Command &c, const memory::bm1684x::Operands &ops, const isa::HwConfig &hw,
                    uint64_t &macs) {
  const Operand &out = ops.results.at(0);
  const auto &o = out.shape;
  switch (c.op().type) {
  case 0: { // conv: weights (oc, ic, kh, kw)
    const Operand &in = ops.operands.at(0), &w = ops.operands.at(1);
    const uint64_t taps = w.shape[2] * w.shape[3], ic = w.shape[1], pixels = o[0] * o[2] * o[3];
    macs = pixels * o[1] * ic * taps;
    const uint32_t bytes = bytesOf(in);
    const uint64_t rounds = laneRounds(o[1], laneOf(out), hw);
    if (bytes == 4 || hw.cubePixels == 0) return rounds * ceilDiv(pixels, hw.euCount(4)) * ic * taps;
    return rounds * ceilDiv(pixels, hw.cubePixels) * ceilDiv(ic, hw.icParallelBytes / bytes) * taps;
  }
  case 1: { // pooling and depthwise: a window per output element
    const uint64_t taps = c.get("opd1_h") * c.get("opd1_w");
    if (c.op().sub == 0 || c.op().sub == 2) macs = o[0] * o[1] * o[2] * o[3] * taps;
    return passes(out, widestBytes(ops), hw) * taps;
  }
  // Element-wise: arithmetic, requantise, transpose/broadcast, SFU, compare-select; and the per-lane gathers
  // (TIU type 6: pe_s_gather_d1coor and pe_s_gather_hzd), priced as arithmetic is, one result element per lane
  // per EU slot over res0's shape (a modelling choice: the gather's own rate is not public).
  default:
    return passes(out, widestBytes(ops), hw) * stepsPerPass(c, hw);
  }
}

// One side of a tensor DMA as timing/GdmaTiming.h charges it.
sim::GdmaSideAccess sideOf(const Operand &v, const isa::HwConfig &hw) {
  sim::GdmaSideAccess side;
  if (v.space == Space::Const) return side; // a fill reads nothing
  const auto &s = v.shape;
  const uint32_t bytes = bytesOf(v);
  const uint64_t elements = s[0] * s[1] * s[2] * s[3];
  side.elementBytes = bytes;
  side.bytes = elements * bytes;
  if (v.space == Space::Lmem) {
    side.local = true;
    // Channels spread over the lanes from the first: the busiest lane holds ceil of its share.
    side.laneBytes = laneRounds(s[1], laneOf(v), hw) * s[0] * s[2] * s[3] * bytes;
    return side;
  }
  // Contiguous elements from the innermost dim outwards while the strides are dense.
  uint64_t run = 1;
  for (int d = 3; d >= 0; --d) {
    if (v.stride && (*v.stride)[size_t(d)] != int64_t(run) && s[size_t(d)] != 1) break;
    run *= s[size_t(d)];
  }
  side.runBytes = std::max<uint64_t>(1, run) * bytes;
  side.runs = elements ? ceilDiv(elements, std::max<uint64_t>(1, run)) : 0;
  return side;
}

} // namespace

Result<CommandWork> commandWork(const isa::bm1684x::Command &c, const isa::HwConfig &hw) {
  CommandWork work;
  const auto &op = c.op();
  if (op.isSys()) return work;                         // ends a buffer, moves nothing
  if (op.engine == isa::Engine::Tiu && op.type == 7) { // LAR: a register write
    work.kind = CommandWork::Kind::Tiu;
    return work;
  }
  auto ops = memory::bm1684x::operandsOf(c);
  if (!ops) return makeError("no timing for ", op.mnemonic, ": ", ops.message());
  if (ops->results.empty()) return makeError("no timing for ", op.mnemonic, ": it has no result");
  if (op.engine == isa::Engine::Tiu) {
    work.kind = CommandWork::Kind::Tiu;
    work.computeCycles = tiuCompute(c, *ops, hw, work.macs);
    return work;
  }
  work.kind = CommandWork::Kind::Dma;
  work.access.write = sideOf(ops->results[0], hw);
  if (!ops->operands.empty()) work.access.read = sideOf(ops->operands[0], hw);
  return work;
}

CommandCost costOf(const CommandWork &work, const isa::HwConfig &hw) {
  CommandCost cost;
  cost.macs = work.macs;
  if (work.kind == CommandWork::Kind::Tiu) {
    cost.latencyCycles = hw.tiuStartupCycles;
    cost.dataCycles = double(work.computeCycles);
  } else if (work.kind == CommandWork::Kind::Dma) {
    GdmaCost g = gdmaCost(work.access, hw);
    cost.latencyCycles = g.latencyCycles;
    cost.dataCycles = g.lmemCycles;
    cost.ddrBytes = g.ddrBytes;
    cost.payloadBytes = g.payloadBytes;
  }
  return cost;
}

} // namespace tpu::timing::bm1684x
