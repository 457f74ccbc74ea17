#include "timing/TiuTiming.h"

#include <algorithm>
#include <cmath>

namespace tpu::timing {

using namespace isa;

namespace {

uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// Product that saturates at UINT64_MAX: garbage shapes (16-bit fields, up to
// 2^64 elements) must give a huge cost, not a wrapped small one.
uint64_t mulSat(std::initializer_list<uint64_t> factors) {
  uint64_t r = 1;
  for (uint64_t f : factors) {
    if (f == 0) return 0;
    if (r > UINT64_MAX / f) r = UINT64_MAX;
    else r *= f;
  }
  return r;
}

uint32_t laneOf(const LocalOperand &op, const HwConfig &hw) { return op.addr / hw.lmemBytesPerLane; }

// The widest operand decides how many elements share an EU word.
uint32_t widestBytes(std::initializer_list<const LocalOperand *> ops) {
  uint32_t b = 1;
  for (const LocalOperand *op : ops)
    if (!op->isConst) b = std::max(b, precBytes(op->prec));
  return b;
}

// Cycles per EU pass of an element-wise operation: iterative ones (divide,
// rsqrt, Taylor series) take divideCycles, everything else one.
uint64_t euOpCycles(EuOp eu, const HwConfig &hw) {
  switch (eu) {
  case EuOp::Divide:
  case EuOp::Rsqrt:
  case EuOp::Taylor:
    return hw.divideCycles;
  default:
    return 1;
  }
}

// Do two of the operands (constants aside) start in the same LMEM bank?
// Then they contend for its port.
bool shareBank(std::initializer_list<const LocalOperand *> ops, const HwConfig &hw) {
  uint32_t seen = 0;
  for (const LocalOperand *op : ops) {
    if (op->isConst) continue;
    const uint32_t bit = 1u << ((op->addr % hw.lmemBytesPerLane) / hw.lmemBankBytes() % 32);
    if (seen & bit) return true;
    seen |= bit;
  }
  return false;
}

struct Visitor {
  const HwConfig &hw;
  TiuCost cost;
  bool bankConflict = false;

  // Output-stationary convolution: each output channel in its lane, output
  // pixels over the word EUs, batch items packed per word, kh*kw*ic taps.
  void operator()(const Conv &c) {
    const Shape4 &out = c.output.shape, &w = c.weight.shape;
    uint32_t inBytes = widestBytes({&c.input, &c.weight});
    uint64_t icPerCycle = inBytes == 1 ? hw.int8ConvChannelsPerCycle : 1;
    uint64_t taps = uint64_t(w.h) * w.w * ceilDiv(c.input.shape.c, icPerCycle);
    cost.computeCycles = mulSat({laneRounds(out.c, laneOf(c.output, hw), hw),
                                 planePasses(out.n, uint64_t(out.h) * out.w, inBytes, hw), taps});
    cost.macs = mulSat({out.n, out.c, out.h, out.w, w.h, w.w, c.input.shape.c});
    bankConflict = shareBank({&c.input, &c.weight, &c.output}, hw);
  }
  // Depthwise and pooling: one window of kh*kw taps per output element.
  void operator()(const Pord &p) {
    const Shape4 &out = p.output.shape;
    uint64_t taps = uint64_t(p.kernel.shape.h) * p.kernel.shape.w;
    cost.computeCycles = mulSat({laneRounds(out.c, laneOf(p.output, hw), hw),
                                 planePasses(out.n, uint64_t(out.h) * out.w, widestBytes({&p.input, &p.output}), hw),
                                 taps});
    if (p.kind() == Pord::Kind::Depthwise) cost.macs = mulSat({out.n, out.c, out.h, out.w, taps});
    bankConflict = shareBank({&p.input, &p.output}, hw);
  }
  // mm: output columns (c, w) in lanes, rows M = n packed per word, K steps.
  void operator()(const MatMul &m) {
    const Shape4 &out = m.output.shape;
    uint64_t k = m.right.shape.n; // right is (n = K, c, 1, w)
    cost.computeCycles = mulSat({laneRounds(out.c, laneOf(m.output, hw), hw),
                                 planePasses(out.n, out.w, widestBytes({&m.left, &m.right}), hw), k});
    cost.macs = mulSat({out.n, out.c, out.h, out.w, k});
    bankConflict = shareBank({&m.left, &m.right, &m.output}, hw);
  }
  // mm2: rows M in channels, N columns over the word EUs, K steps per batch.
  void operator()(const MatMul2 &m) {
    const Shape4 &out = m.output.shape;
    uint64_t k = m.left.shape.w;
    cost.computeCycles = mulSat({laneRounds(out.c, laneOf(m.output, hw), hw),
                                 planePasses(out.n, uint64_t(out.h) * out.w, widestBytes({&m.left, &m.right}), hw), k});
    cost.macs = mulSat({out.n, out.c, out.h, out.w, k});
    bankConflict = shareBank({&m.left, &m.right, &m.output}, hw);
  }
  void elementwise(const Elementwise &e) {
    const Shape4 &out = e.res0.shape;
    uint32_t bytes = e.opdCount < 2 ? widestBytes({&e.res0, &e.opd0}) : widestBytes({&e.res0, &e.opd0, &e.opd1});
    cost.computeCycles = mulSat({laneRounds(out.c, laneOf(e.res0, hw), hw),
                                 planePasses(out.n, uint64_t(out.h) * out.w, bytes, hw), euOpCycles(e.eu, hw)});
    bankConflict = e.opdCount < 2 ? shareBank({&e.res0, &e.opd0}, hw) : shareBank({&e.res0, &e.opd0, &e.opd1}, hw);
  }
  void operator()(const Arith &e) { elementwise(e); }
  void operator()(const ConvCorr &e) { elementwise(e); }
  void operator()(const MdScalar &e) { elementwise(e); }
  void operator()(const MdSfu &e) { elementwise(e); }
  void operator()(const MdLinear &e) { elementwise(e); }
  void operator()(const MdCmp &e) { elementwise(e); }
  void operator()(const VecCorr &e) { elementwise(e); }
  // A lookup reads the table at each element's own index: one element per
  // lane at a time, no EU parallelism and no 4N packing (docs/timing.md).
  void operator()(const Lut &l) {
    const Shape4 &out = l.output.shape;
    const uint64_t perLane = mulSat({laneRounds(out.c, laneOf(l.output, hw), hw), out.n, uint64_t(out.h) * out.w});
    cost.computeCycles = perLane < (uint64_t(1) << 52) ? uint64_t(std::ceil(double(perLane) * hw.lutCyclesPerElement))
                                                       : UINT64_MAX;
    bankConflict = shareBank({&l.output, &l.index}, hw);
  }
  // md_sum reads every input element once; the adder tree is pipelined.
  void operator()(const MdSum &s) {
    const Shape4 &in = s.input.shape;
    cost.computeCycles = mulSat({laneRounds(in.c, laneOf(s.input, hw), hw),
                                 planePasses(in.n, uint64_t(in.h) * in.w, widestBytes({&s.input, &s.output}), hw)});
    bankConflict = shareBank({&s.input, &s.output}, hw);
  }
  void copy(const LocalOperand &out, const LocalOperand &in) {
    cost.computeCycles = mulSat({laneRounds(out.shape.c, laneOf(out, hw), hw),
                                 planePasses(out.shape.n, uint64_t(out.shape.h) * out.shape.w, widestBytes({&out, &in}), hw)});
    bankConflict = shareBank({&out, &in}, hw);
  }
  void operator()(const Lma &l) { copy(l.output, l.input); }
  void operator()(const Decompress &d) { copy(d.output, d.input); }
};

} // namespace

uint32_t wordEus(const HwConfig &hw) { return hw.euBytes / 4; }

uint32_t batchPack(uint32_t elementBytes) { return elementBytes >= 4 ? 1 : 4 / elementBytes; }

uint64_t laneRounds(uint64_t channels, uint32_t lane, const HwConfig &hw) {
  return ceilDiv(channels + lane % hw.npuLanes, hw.npuLanes);
}

uint64_t planePasses(uint64_t n, uint64_t plane, uint32_t elementBytes, const HwConfig &hw) {
  return ceilDiv(n, batchPack(elementBytes)) * ceilDiv(plane, wordEus(hw));
}

TiuCost tiuCost(const TiuCommand &cmd, const HwConfig &hw) {
  Visitor v{hw, {}};
  std::visit(v, cmd.op);
  if (v.bankConflict && hw.bankConflictFactor > 0 && v.cost.computeCycles < (uint64_t(1) << 52))
    v.cost.computeCycles = uint64_t(std::llround(double(v.cost.computeCycles) * (1 + hw.bankConflictFactor)));
  v.cost.startupCycles = hw.tiuStartupCycles;
  return v.cost;
}

} // namespace tpu::timing
