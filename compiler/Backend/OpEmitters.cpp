// The per-op emitters: each op kind's slicing, loads, TIU commands and
// stores (docs/codegen.md, "Emitting commands").
#include "compiler/Backend/Emit.h"
#include "compiler/Backend/QuantRef.h"

#include "isa/GdmaCommand.h"
#include "isa/TiuCommand.h"

namespace tpu::backend::emit {

Status SlicedOp::run(OpReport &rep) {
  const auto ext = extents();
  LmemAllocator alloc(hw_);
  // Channel slices are multiples of the lane count so every slice starts in lane 0.
  std::vector<int64_t> cChoices;
  if (ext[1] <= maxChannels()) cChoices.push_back(ext[1]);
  if (cutsC())
    for (int64_t c = std::min((ext[1] - 1) / lanes(), maxChannels() / lanes()) * lanes(); c >= lanes(); c -= lanes())
      cChoices.push_back(c);
  if (cChoices.empty())
    return makeError(ext[1], " channels exceed the ", maxChannels(), " a command can address, and this op cannot split them");
  auto sizesFor = [&](int64_t ns, int64_t cs, int64_t hs, unsigned sets) {
    std::vector<uint64_t> v = fixedBytes(cs);
    for (unsigned s = 0; s < sets; ++s) {
      auto x = setBytes(ns, cs, hs);
      v.insert(v.end(), x.begin(), x.end());
    }
    return v;
  };
  // The fewest slices with `sets` buffer sets, at most nMax items and hMax rows each.
  auto best = [&](unsigned sets, int64_t nMax, int64_t hMax) {
    SliceChoice c;
    c.sets = sets;
    for (int64_t cs : cChoices)
      for (int64_t ns = nMax; ns >= 1; --ns) {
        // Largest row count that fits (the footprint grows with hs).
        int64_t lo = 0, hi = cutsH() ? hMax : 1;
        if (!cutsH() && !alloc.fits(sizesFor(ns, cs, ext[2], sets))) continue;
        if (!cutsH()) lo = ext[2];
        else
          while (lo < hi) {
            int64_t mid = (lo + hi + 1) / 2;
            if (alloc.fits(sizesFor(ns, cs, mid, sets))) lo = mid;
            else hi = mid - 1;
          }
        if (lo == 0) continue;
        uint64_t slices = uint64_t(ceilDiv(ext[0], ns) * ceilDiv(ext[1], cs) * ceilDiv(ext[2], lo));
        if (slices < c.slices) c.ns = ns, c.cs = cs, c.hs = lo, c.slices = slices;
      }
    return c;
  };
  auto cands = sliceCandidates(best, e_.opt.doubleBuffer, ext[0], cutsH() ? ext[2] : 0);
  if (cands.empty()) {
    int64_t minC = cutsC() ? std::min<int64_t>(ext[1], lanes()) : ext[1];
    auto need = alloc.footprint(sizesFor(1, minC, cutsH() ? 1 : ext[2], 1));
    return makeError("does not fit local memory even as a one-row slice: needs ", need,
                     " bytes per lane, the lane has ", hw_.lmemBytesPerLane);
  }
  auto emitWith = [&](const SliceChoice &pick) {
    ns_ = pick.ns, cs_ = pick.cs, hs_ = pick.hs;
    auto fixedSizes = fixedBytes(cs_);
    auto plan = alloc.plan(sizesFor(ns_, cs_, hs_, pick.sets), "slice buffers");
    fixed_.assign(plan->offsets.begin(), plan->offsets.begin() + fixedSizes.size());
    size_t per = setBytes(ns_, cs_, hs_).size();
    sets_.clear();
    for (unsigned s = 0; s < pick.sets; ++s)
      sets_.emplace_back(plan->offsets.begin() + fixedSizes.size() + s * per,
                         plan->offsets.begin() + fixedSizes.size() + (s + 1) * per);
    rep.nSlice = ns_, rep.cSlice = cs_, rep.hSlice = hs_, rep.buffers = pick.sets;
    rep.lmemBytes = plan->used, rep.slices = pick.slices;
    // Slices: channel outermost (fixed buffers change with it), then n, then h.
    std::vector<Tile> tiles;
    for (int64_t c0 = 0; c0 < ext[1]; c0 += cs_)
      for (int64_t n0 = 0; n0 < ext[0]; n0 += ns_)
        for (int64_t h0 = 0; h0 < ext[2]; h0 += hs_)
          tiles.push_back({n0, std::min(ns_, ext[0] - n0), c0, std::min(cs_, ext[1] - c0), h0,
                           std::min(hs_, ext[2] - h0)});
    runPipeline(tiles, pick.sets, !fixedSizes.empty(), *this);
  };
  emitWith(cands[cheapestCandidate(e_, cands.size(), [&](size_t k) { emitWith(cands[k]); })]);
  return Status::ok();
}


// ---- Conv (groups, depthwise, dilation) ------------------------------------
class ConvOp : public SlicedOp, public LocalOp {
public:
  ConvOp(Emitter &e, const Op &op) : SlicedOp(e, op) {
    x_ = e.ddr(op.inputs[0]), y_ = e.ddr(op.output);
    const Tensor &xt = e.g.tensors[op.inputs[0]], &yt = e.g.tensors[op.output];
    transposed_ = op.kind == OpKind::ConvTranspose;
    if (transposed_) {
      // A stride-1 conv over the zero-inserted input with the kernel rotated.
      p_ = op.window;
      TransposedPads tp = transposedPads(op, xt, yt);
      insH_ = p_.strideH, insW_ = p_.strideW;
      p_.strideH = p_.strideW = 1;
      p_.padTop = tp.top, p_.padBottom = tp.bottom, p_.padLeft = tp.left, p_.padRight = tp.right;
    } else {
      p_ = effectiveWindow(op, xt, yt);
    }
    wt_ = e.g.tensors[op.inputs[1]].dtype;
    waddr_ = e.am.addr[op.inputs[1]];
    if (op.inputs.size() == 3) baddr_ = e.am.addr[op.inputs[2]], bt_ = e.g.tensors[op.inputs[2]].dtype;
    icg_ = x_.s[1] / p_.groups, ocg_ = y_.s[1] / p_.groups;
    depthwise_ = icg_ == 1 && ocg_ == 1 && p_.groups > 1;
  }
  std::array<int64_t, 3> extents() const override { return {y_.s[0], y_.s[1], y_.s[2]}; }
  // Grouped (not depthwise) convs keep all channels: a group must not straddle slices.
  bool cutsC() const override { return p_.groups == 1 || depthwise_; }
  // Rows of the (zero-inserted when transposed) input window of hs output rows.
  int64_t windowRows(int64_t hs) const { return (hs - 1) * p_.strideH + (p_.kh - 1) * p_.dilationH + 1; }
  // Input rows a slice of hs output rows loads (at most).
  int64_t inRows(int64_t hs) const { return transposed_ ? ceilDiv(windowRows(hs), insH_) + 1 : windowRows(hs); }
  int64_t inChannels(int64_t cs) const { return depthwise_ ? cs : x_.s[1]; }
  std::vector<uint64_t> setBytes(int64_t ns, int64_t cs, int64_t hs) const override {
    int64_t rows = std::min(inRows(hs), x_.s[2]);
    return {LBuf::activationBytes(x_.dtype, {u32(ns), u32(inChannels(cs)), u32(rows), u32(x_.s[3])}, lanes()),
            LBuf::activationBytes(y_.dtype, {u32(ns), u32(cs), u32(hs), u32(y_.s[3])}, lanes())};
  }
  std::vector<uint64_t> fixedBytes(int64_t cs) const override {
    std::vector<uint64_t> v{LBuf::bytes(wt_, weightShape(cs), lanes())};
    if (baddr_) v.push_back(uint64_t(ceilDiv(cs, lanes())) * dtypeBytes(bt_));
    return v;
  }
  Shape4 weightShape(int64_t cs) const {
    return {u32(depthwise_ ? 1 : icg_), u32(cs), u32(p_.kh), u32(p_.kw)};
  }
  // Each output channel's (ic, kh, kw) taps contiguous in its lane, so the
  // load writes one run per channel: strides n kh*kw, c ic*kh*kw.
  LBuf weightBuf(int64_t cs) const {
    LBuf b;
    Shape4 s = weightShape(cs);
    b.offset = fixed_[0], b.dtype = wt_, b.shape = s;
    b.stride = {s.h * s.w, s.n * s.h * s.w, s.w, 1};
    return b;
  }
  LBuf biasBuf(int64_t cs) const {
    LBuf b;
    b.offset = fixed_[1], b.dtype = bt_, b.shape = {1, u32(cs), 1, 1}, b.stride = {0, 1, 0, 0};
    return b;
  }
  uint16_t loadFixed(const Tile &t, uint16_t wait) override {
    const int64_t taps = p_.kh * p_.kw, wIc = depthwise_ ? 1 : icg_;
    const uint64_t e = dtypeBytes(wt_);
    uint16_t id = 0;
    if (transposed_) {
      // DDR [ic, oc, kh, kw] -> local (ic, oc, kh, kw): runs of kh*kw.
      id = e_.loadWeight(waddr_ + uint64_t(t.c0 * taps) * e, wt_, {u32(wIc), u32(t.cs), u32(p_.kh), u32(p_.kw)},
                         {u32(y_.s[1] * taps), u32(taps), u32(p_.kw), 1}, weightBuf(t.cs), wait);
    } else {
      // DDR [oc, ic/groups, kh, kw] is the local layout's order: the same
      // bytes seen as (1, oc, ic/groups, kh*kw) on both sides, one run.
      LBuf view = weightBuf(t.cs);
      view.shape = {1, u32(t.cs), u32(wIc), u32(taps)}, view.stride = {0, u32(wIc * taps), u32(taps), 1};
      id = e_.loadWeight(waddr_ + uint64_t(t.c0 * wIc * taps) * e, wt_, {1, u32(t.cs), u32(wIc), u32(taps)},
                         {0, u32(wIc * taps), u32(taps), 1}, view, wait);
    }
    if (baddr_)
      id = e_.loadWeight(baddr_ + uint64_t(t.c0) * dtypeBytes(bt_), bt_, {1, u32(t.cs), 1, 1}, {0, 1, 1, 1},
                         biasBuf(t.cs), wait);
    return id;
  }
  struct Rows { int64_t r0, rows, padT, padB; };
  Rows rowsFor(const Tile &t) const {
    int64_t iy0 = t.h0 * p_.strideH - p_.padTop;
    int64_t iy1 = iy0 + windowRows(t.hs) - 1;
    if (transposed_) {
      // Window rows [iy0, iy1] of the zero-inserted input: the data rows
      // inside it, the rest (inserted zeros and edges) as padding.
      int64_t r0 = iy0 <= 0 ? 0 : ceilDiv(iy0, insH_), r1 = std::min(x_.s[2] - 1, iy1 / insH_);
      return {r0, r1 - r0 + 1, r0 * insH_ - iy0, iy1 - r1 * insH_};
    }
    int64_t r0 = std::max<int64_t>(0, iy0), r1 = std::min(x_.s[2] - 1, iy1);
    return {r0, r1 - r0 + 1, r0 - iy0, iy1 - r1};
  }
  LBuf inBuf(const Tile &t, unsigned set) const {
    return LBuf::activation(bufOffset(set, 0), x_.dtype,
                         {u32(t.ns), u32(inChannels(t.cs)), u32(rowsFor(t).rows), u32(x_.s[3])}, lanes());
  }
  LBuf outBuf(const Tile &t, unsigned set) const {
    return LBuf::activation(bufOffset(set, 1), y_.dtype, {u32(t.ns), u32(t.cs), u32(t.hs), u32(y_.s[3])}, lanes());
  }
  uint16_t load(const Tile &t, unsigned set, uint16_t wait) override {
    Rows r = rowsFor(t);
    return e_.move(true, x_, t.n0, t.ns, depthwise_ ? t.c0 : 0, inChannels(t.cs), r.r0, r.rows, inBuf(t, set), wait);
  }
  template <class Cmd> void window(Cmd &c, const Rows &r) const {
    c.padTop = u32(r.padT), c.padBottom = u32(r.padB);
    c.padLeft = u32(p_.padLeft), c.padRight = u32(p_.padRight);
    c.strideH = u32(p_.strideH), c.strideW = u32(p_.strideW);
    c.kernelInsH = u32(p_.dilationH - 1), c.kernelInsW = u32(p_.dilationW - 1);
    c.rshift = op_.rshift, c.relu = op_.relu;
    if (transposed_) {
      c.inputInsH = u32(insH_ - 1), c.inputInsW = u32(insW_ - 1);
      c.kernelRotate = true;
    }
  }
  LocalOp *local() override { return transposed_ ? nullptr : this; }
  std::pair<int64_t, int64_t> inputRows(int64_t lo, int64_t hi) const override {
    return {lo * p_.strideH - p_.padTop, hi * p_.strideH - p_.padTop + (p_.kh - 1) * p_.dilationH};
  }
  uint16_t compute(const Tile &t, unsigned set, uint16_t wait) override {
    Rows r = rowsFor(t);
    return computeOn({inBuf(t, set)}, outBuf(t, set), {}, r.padT, r.padB, wait);
  }
  uint16_t computeOn(const std::vector<LBuf> &ins, const LBuf &out, const std::vector<LBuf> &,
                     int64_t padT, int64_t padB, uint16_t wait) override {
    const LBuf &in = ins[0];
    const Tile t{0, out.shape.n, 0, out.shape.c, 0, out.shape.h};
    Rows r{0, in.shape.h, padT, padB};
    LBuf w = weightBuf(t.cs);
    uint16_t id = 0;
    if (depthwise_) {
      isa::Pord c;
      c.eu = isa::EuOp::Mac;
      c.input = in.operand(hw_), c.kernel = w.operand(hw_), c.output = out.operand(hw_);
      c.kernel.shape = {1, u32(t.cs), u32(p_.kh), u32(p_.kw)};
      if (baddr_) c.hasBias = true, c.bias = biasBuf(t.cs).operand(hw_);
      window(c, r);
      return e_.b->tiu(c, wait);
    }
    for (int64_t gi = 0; gi < p_.groups; ++gi) {
      isa::Conv c;
      c.eu = isa::EuOp::Mac;
      int64_t o0 = gi * ocg_, ocs = p_.groups == 1 ? t.cs : ocg_;
      c.input = in.channels(u32(gi * icg_), u32(icg_), lanes()).operand(hw_);
      c.weight = w.channels(u32(o0), u32(ocs), lanes()).operand(hw_);
      c.output = out.channels(u32(o0), u32(ocs), lanes()).operand(hw_);
      if (baddr_) c.hasBias = true, c.bias = biasBuf(t.cs).channels(u32(o0), u32(ocs), lanes()).operand(hw_);
      window(c, r);
      id = e_.b->tiu(c, wait);
    }
    return id;
  }
  uint16_t store(const Tile &t, unsigned set, uint16_t wait) override {
    return e_.move(false, y_, t.n0, t.ns, t.c0, t.cs, t.h0, t.hs, outBuf(t, set), wait);
  }

private:
  DTensor x_, y_;
  WindowParams p_;
  DType wt_ = DType::F32, bt_ = DType::F32;
  uint64_t waddr_ = 0, baddr_ = 0;
  int64_t icg_ = 1, ocg_ = 1;
  bool depthwise_ = false;
  bool transposed_ = false;
  int64_t insH_ = 1, insW_ = 1; // transposed: the stride, as zero insertion
};

// ---- Pooling (max, average, global average) -------------------------------
class PoolOp : public SlicedOp, public LocalOp {
public:
  PoolOp(Emitter &e, const Op &op) : SlicedOp(e, op) {
    x_ = e.ddr(op.inputs[0]), y_ = e.ddr(op.output);
    if (op.kind == OpKind::Pool) {
      p_ = effectiveWindow(op, e.g.tensors[op.inputs[0]], e.g.tensors[op.output]);
    } else {
      p_.kh = x_.s[2], p_.kw = x_.s[3];
    }
    isMax_ = op.kind == OpKind::Pool && op.window.isMax;
  }
  std::array<int64_t, 3> extents() const override { return {y_.s[0], y_.s[1], y_.s[2]}; }
  int64_t inRows(int64_t hs) const { return (hs - 1) * p_.strideH + p_.kh; }
  std::vector<uint64_t> setBytes(int64_t ns, int64_t cs, int64_t hs) const override {
    int64_t rows = std::min(inRows(hs), x_.s[2]);
    return {LBuf::activationBytes(x_.dtype, {u32(ns), u32(cs), u32(rows), u32(x_.s[3])}, lanes()),
            LBuf::activationBytes(y_.dtype, {u32(ns), u32(cs), u32(hs), u32(y_.s[3])}, lanes())};
  }
  struct Rows { int64_t r0, rows, padT, padB; };
  Rows rowsFor(const Tile &t) const {
    int64_t iy0 = t.h0 * p_.strideH - p_.padTop, iy1 = iy0 + inRows(t.hs) - 1;
    int64_t r0 = std::max<int64_t>(0, iy0), r1 = std::min(x_.s[2] - 1, iy1);
    return {r0, r1 - r0 + 1, r0 - iy0, iy1 - r1};
  }
  LBuf inBuf(const Tile &t, unsigned set) const {
    return LBuf::activation(bufOffset(set, 0), x_.dtype, {u32(t.ns), u32(t.cs), u32(rowsFor(t).rows), u32(x_.s[3])}, lanes());
  }
  LBuf outBuf(const Tile &t, unsigned set) const {
    return LBuf::activation(bufOffset(set, 1), y_.dtype, {u32(t.ns), u32(t.cs), u32(t.hs), u32(y_.s[3])}, lanes());
  }
  uint16_t load(const Tile &t, unsigned set, uint16_t wait) override {
    Rows r = rowsFor(t);
    return e_.move(true, x_, t.n0, t.ns, t.c0, t.cs, r.r0, r.rows, inBuf(t, set), wait);
  }
  LocalOp *local() override { return op_.kind == OpKind::Pool ? this : nullptr; }
  std::pair<int64_t, int64_t> inputRows(int64_t lo, int64_t hi) const override {
    return {lo * p_.strideH - p_.padTop, hi * p_.strideH - p_.padTop + p_.kh - 1};
  }
  uint16_t compute(const Tile &t, unsigned set, uint16_t wait) override {
    Rows r = rowsFor(t);
    return computeOn({inBuf(t, set)}, outBuf(t, set), {}, r.padT, r.padB, wait);
  }
  uint16_t computeOn(const std::vector<LBuf> &ins, const LBuf &out, const std::vector<LBuf> &,
                     int64_t padT, int64_t padB, uint16_t wait) override {
    const Tile t{0, out.shape.n, 0, out.shape.c, 0, out.shape.h};
    Rows r{0, ins[0].shape.h, padT, padB};
    isa::Pord c;
    c.eu = isMax_ ? isa::EuOp::Max : isa::EuOp::Mac;
    c.input = ins[0].operand(hw_), c.output = out.operand(hw_);
    if (isMax_) {
      c.kernel = c.input;
    } else if (y_.dtype == DType::F32) {
      c.kernel = constantF(1.0f / float(p_.kh * p_.kw));
      c.rshift = 0;
    } else {
      c.kernel = constant(DType::U8, op_.multipliers[0]);
      c.rshift = op_.rshift;
    }
    c.kernel.shape = {1, u32(t.cs), u32(p_.kh), u32(p_.kw)};
    c.padTop = u32(r.padT), c.padBottom = u32(r.padB), c.padLeft = u32(p_.padLeft), c.padRight = u32(p_.padRight);
    c.strideH = u32(p_.strideH), c.strideW = u32(p_.strideW);
    return e_.b->tiu(c, wait);
  }
  uint16_t store(const Tile &t, unsigned set, uint16_t wait) override {
    return e_.move(false, y_, t.n0, t.ns, t.c0, t.cs, t.h0, t.hs, outBuf(t, set), wait);
  }

private:
  DTensor x_, y_;
  WindowParams p_;
  bool isMax_ = false;
};

// ---- Element-wise ops: one output element from the same element of each input.
class ElementwiseOp : public SlicedOp, public LocalOp {
public:
  ElementwiseOp(Emitter &e, const Op &op) : SlicedOp(e, op) {
    for (int t : op.inputs)
      if (!e.g.tensors[t].isWeight()) in_.push_back(e.ddr(t));
    y_ = e.ddr(op.output);
    // A second input of (N, C, 1, 1) is broadcast over H and W.
    bcast_ = in_.size() == 2 && in_[1].s[2] * in_[1].s[3] == 1 && y_.s[2] * y_.s[3] > 1;
    if (op.kind == OpKind::Lut) table_ = e.am.addr[op.inputs[1]];
    // Per-channel weights (one value per channel, every n, h, w): the second
    // input of Add/Mul/Max, the scale and bias of a per-channel Affine.
    if (op.kind != OpKind::Lut)
      for (size_t i = 1; i < op.inputs.size(); ++i)
        if (e.g.tensors[op.inputs[i]].isWeight())
          chanWeights_.push_back({e.am.addr[op.inputs[i]], e.g.tensors[op.inputs[i]].dtype});
  }
  std::array<int64_t, 3> extents() const override { return {y_.s[0], y_.s[1], y_.s[2]}; }
  // The scratch buffer's type: int32 products, fp32 for casts, else the output's.
  DType tempType() const {
    if (op_.kind == OpKind::Cast) return DType::F32;
    if (y_.dtype == DType::F32) return DType::F32;
    if (op_.kind == OpKind::Add || op_.kind == OpKind::Mul || op_.kind == OpKind::Max) return DType::I32;
    return y_.dtype;
  }
  unsigned temps() const {
    switch (op_.kind) {
    case OpKind::Add: case OpKind::Max: return y_.dtype == DType::F32 ? 0 : 2;
    case OpKind::Mul: return y_.dtype == DType::F32 ? 0 : 1;
    case OpKind::LeakyRelu: case OpKind::Cast: case OpKind::Sigmoid: return 1;
    default: return 0;
    }
  }
  Shape4 shapeOf(const Tile &t) const { return {u32(t.ns), u32(t.cs), u32(t.hs), u32(y_.s[3])}; }
  std::vector<uint64_t> setBytes(int64_t ns, int64_t cs, int64_t hs) const override {
    Shape4 s{u32(ns), u32(cs), u32(hs), u32(y_.s[3])};
    std::vector<uint64_t> v;
    for (size_t i = 0; i < in_.size(); ++i)
      v.push_back(LBuf::activationBytes(in_[i].dtype, isBcast(i) ? Shape4{s.n, s.c, 1, 1} : s, lanes()));
    v.push_back(LBuf::activationBytes(y_.dtype, s, lanes()));
    for (unsigned i = 0; i < temps(); ++i) v.push_back(LBuf::bytes(tempType(), s, lanes()));
    return v;
  }
  std::vector<uint64_t> fixedBytes(int64_t cs) const override {
    if (op_.kind == OpKind::Lut) return {256};
    if (op_.kind == OpKind::Sigmoid) return {SigmoidRecipe::kExpTerms * 4};
    std::vector<uint64_t> v;
    for (const ChannelWeight &w : chanWeights_) v.push_back(uint64_t(ceilDiv(cs, lanes())) * dtypeBytes(w.dtype));
    return v;
  }
  // Per-channel weight i as an operand of res0's shape: one element per channel.
  LBuf channelWeight(size_t i, const Shape4 &s) const {
    LBuf b;
    b.offset = fixed_[i], b.dtype = chanWeights_[i].dtype, b.shape = s, b.stride = {0, 1, 0, 0};
    return b;
  }
  bool isBcast(size_t input) const { return bcast_ && input == 1; }
  LBuf buf(const Tile &t, unsigned set, size_t i, DType dt) const {
    return LBuf::activation(bufOffset(set, i), dt, shapeOf(t), lanes());
  }
  // The broadcast input: one element per (n, c), read for every (h, w).
  LBuf bcastBuf(const Tile &t, unsigned set) const {
    LBuf b = LBuf::activation(bufOffset(set, 1), in_[1].dtype, {u32(t.ns), u32(t.cs), 1, 1}, lanes());
    return b;
  }
  uint16_t loadFixed(const Tile &t, uint16_t wait) override {
    if (!chanWeights_.empty()) {
      uint16_t id = 0;
      for (size_t i = 0; i < chanWeights_.size(); ++i) {
        const ChannelWeight &w = chanWeights_[i];
        id = e_.loadWeight(w.addr + uint64_t(t.c0) * dtypeBytes(w.dtype), w.dtype, {1, u32(t.cs), 1, 1},
                           {0, 1, 1, 1}, channelWeight(i, {1, u32(t.cs), 1, 1}), wait);
      }
      return id;
    }
    if (op_.kind == OpKind::Sigmoid) {
      // The Taylor coefficients, filled into the same offset of every lane.
      uint16_t id = 0;
      const auto &c = SigmoidRecipe::expCoefficients();
      for (size_t k = 0; k < c.size(); ++k) {
        isa::GdmaCommand f;
        f.direction = isa::GdmaDirection::S2L, f.specialFunc = isa::GdmaSpecialFunc::ConstantFill;
        f.constantValue = sim::floatBits(c[k]);
        f.src.format = f.dst.format = isa::GdmaFormat::Fp32;
        f.src.shape = f.dst.shape = {1, lanes(), 1, 1};
        f.dst.addr = fixed_[0] + uint32_t(k * 4), f.dst.stride = {1, 1, 1, 1};
        id = e_.b->gdma(f, wait);
      }
      return id;
    }
    // The 256-entry table, broadcast into the same offset of every lane.
    LBuf tb;
    tb.offset = fixed_[0], tb.dtype = y_.dtype, tb.shape = {1, lanes(), 1, 256}, tb.stride = {0, 256, 256, 1};
    return e_.loadWeight(table_, y_.dtype, {1, lanes(), 1, 256}, {0, 0, 256, 1}, tb, wait);
  }
  uint16_t load(const Tile &t, unsigned set, uint16_t wait) override {
    uint16_t id = 0;
    for (size_t i = 0; i < in_.size(); ++i)
      id = isBcast(i) ? e_.move(true, in_[i], t.n0, t.ns, t.c0, t.cs, 0, 1, bcastBuf(t, set), wait)
                      : e_.move(true, in_[i], t.n0, t.ns, t.c0, t.cs, t.h0, t.hs, buf(t, set, i, in_[i].dtype), wait);
    return id;
  }
  uint16_t ew(isa::EuOp eu, const LBuf &res, LocalOperand a, LocalOperand b, uint32_t rshift, bool relu,
              uint16_t wait, uint8_t count = 2) {
    isa::Arith c;
    c.eu = eu, c.res0 = res.operand(hw_), c.opd0 = a, c.opd1 = b, c.opdCount = count;
    c.opd0.shape = res.shape;
    if (eu != isa::EuOp::Taylor) c.opd1.shape = res.shape; // taylor: opd1 w = the terms
    c.rshift = rshift, c.relu = relu;
    return e_.b->tiu(c, wait);
  }
  LocalOp *local() override { return bcast_ ? nullptr : this; }
  std::vector<DType> tempTypes() const override { return std::vector<DType>(temps(), tempType()); }
  uint16_t compute(const Tile &t, unsigned set, uint16_t wait) override {
    const size_t ni = in_.size();
    std::vector<LBuf> ins, tmps;
    for (size_t i = 0; i < ni; ++i) {
      LBuf b = buf(t, set, i, in_[i].dtype);
      if (isBcast(i)) {
        b = bcastBuf(t, set);
        b.shape = shapeOf(t), b.stride.h = b.stride.w = 0;
      }
      ins.push_back(b);
    }
    for (unsigned i = 0; i < temps(); ++i) tmps.push_back(buf(t, set, ni + 1 + i, tempType()));
    return computeOn(ins, buf(t, set, ni, y_.dtype), tmps, 0, 0, wait);
  }
  uint16_t computeOn(const std::vector<LBuf> &ins, const LBuf &y, const std::vector<LBuf> &tmps, int64_t,
                     int64_t, uint16_t wait) override {
    const Tile t{0, y.shape.n, 0, y.shape.c, 0, y.shape.h};
    const LBuf &a = ins[0];
    auto tmp = [&](unsigned i) { return tmps[i]; };
    const bool f = y_.dtype == DType::F32;
    const auto &m = op_.multipliers;
    using isa::EuOp;
    switch (op_.kind) {
    case OpKind::Add: case OpKind::Max: case OpKind::Mul: {
      const LBuf b2 = chanWeights_.empty() ? ins[1] : channelWeight(0, y.shape);
      EuOp eu = op_.kind == OpKind::Add ? EuOp::Add : op_.kind == OpKind::Max ? EuOp::Max : EuOp::Mul;
      if (f) return ew(eu, y, a.operand(hw_), b2.operand(hw_), 0, op_.relu, wait);
      if (op_.kind == OpKind::Mul) {
        ew(EuOp::Mul, tmp(0), a.operand(hw_), b2.operand(hw_), 0, false, wait);
        return ew(EuOp::Mul, y, tmp(0).operand(hw_), constant(DType::I16, m[0]), op_.rshift, op_.relu, wait);
      }
      ew(EuOp::Mul, tmp(0), a.operand(hw_), constant(DType::I16, m[0]), 0, false, wait);
      ew(EuOp::Mul, tmp(1), b2.operand(hw_), constant(DType::I16, m[1]), 0, false, wait);
      return ew(eu, y, tmp(0).operand(hw_), tmp(1).operand(hw_), op_.rshift, op_.relu, wait);
    }
    case OpKind::Relu:
      return ew(EuOp::Max, y, a.operand(hw_), f ? constantF(0.0f) : constant(y_.dtype, 0), 0, false, wait);
    case OpKind::LeakyRelu:
      if (f) ew(EuOp::Mul, tmp(0), a.operand(hw_), constantF(op_.alpha), 0, false, wait);
      else ew(EuOp::Mul, tmp(0), a.operand(hw_), constant(DType::I8, m[0]), op_.rshift, false, wait);
      return ew(EuOp::Max, y, a.operand(hw_), tmp(0).operand(hw_), 0, false, wait);
    case OpKind::Clip:
      if (f) {
        ew(EuOp::Max, y, a.operand(hw_), constantF(op_.clipMin), 0, false, wait);
        return ew(EuOp::Min, y, y.operand(hw_), constantF(op_.clipMax), 0, false, wait);
      } else {
        auto r = sim::intRange(Prec::Int8, y_.dtype != DType::U8);
        int64_t lo = sim::saturate(int64_t(op_.clipMin), r), hi = sim::saturate(int64_t(op_.clipMax), r);
        ew(EuOp::Max, y, a.operand(hw_), constant(DType::I16, lo), 0, false, wait);
        return ew(EuOp::Min, y, y.operand(hw_), constant(DType::I16, hi), 0, false, wait);
      }
    case OpKind::Requant:
      return ew(EuOp::Mul, y, a.operand(hw_), constant(DType::I16, m[0]), op_.rshift, op_.relu, wait);
    case OpKind::Affine: { // md_linear mac: a * b + c with constant or per-channel b, c
      isa::MdLinear c;
      c.res0 = y.operand(hw_), c.opd0 = a.operand(hw_), c.opdCount = 3;
      if (!chanWeights_.empty()) {
        c.opd1 = channelWeight(0, y.shape).operand(hw_), c.opd2 = channelWeight(1, y.shape).operand(hw_);
      } else {
        c.opd1 = f ? constantF(op_.alpha) : constant(DType::I16, m[0]);
        c.opd2 = f ? constantF(op_.beta) : constant(DType::I32, m[1]);
      }
      c.opd1.shape = c.opd2.shape = y.shape;
      c.rshift = f ? 0 : op_.rshift, c.relu = op_.relu;
      return e_.b->tiu(c, wait);
    }
    case OpKind::Cast:
      if (f) { // int8 -> fp32: convert, then scale
        ew(EuOp::Copy, tmp(0), a.operand(hw_), LocalOperand{}, 0, false, wait, 1);
        return ew(EuOp::Mul, y, tmp(0).operand(hw_), constantF(e_.g.tensors[op_.inputs[0]].scale), 0, false, wait);
      } else { // fp32 -> int8: scale, then convert (round half to even, saturate)
        ew(EuOp::Mul, tmp(0), a.operand(hw_), constantF(1.0f / e_.g.tensors[op_.output].scale), 0, false, wait);
        return ew(EuOp::Copy, y, tmp(0).operand(hw_), LocalOperand{}, 0, false, wait, 1);
      }
    case OpKind::Sigmoid: { // SigmoidRecipe, step for step
      using R = SigmoidRecipe;
      const LBuf &e = tmp(0);
      ew(EuOp::Max, y, a.operand(hw_), constantF(-R::kClamp), 0, false, wait);
      ew(EuOp::Min, y, y.operand(hw_), constantF(R::kClamp), 0, false, wait);
      ew(EuOp::Mul, y, y.operand(hw_), constantF(-1.0f / float(1u << R::kSquarings)), 0, false, wait);
      LBuf coef;
      coef.offset = fixed_[0], coef.dtype = DType::F32, coef.shape = {1, u32(t.cs), 1, R::kExpTerms};
      coef.stride = {0, 0, 0, 1};
      ew(EuOp::Taylor, e, y.operand(hw_), coef.operand(hw_), 0, false, wait);
      for (unsigned i = 0; i < R::kSquarings; ++i) ew(EuOp::Mul, e, e.operand(hw_), e.operand(hw_), 0, false, wait);
      ew(EuOp::Add, e, e.operand(hw_), constantF(1.0f), 0, false, wait);
      return ew(EuOp::Divide, y, constantF(1.0f), e.operand(hw_), 0, false, wait);
    }
    case OpKind::Lut: {
      isa::Lut c;
      c.eu = EuOp::Copy;
      c.output = y.operand(hw_), c.index = a.operand(hw_);
      LBuf tb;
      tb.offset = fixed_[0], tb.dtype = y_.dtype, tb.shape = {1, u32(t.cs), 1, 256}, tb.stride = {0, 0, 0, 1};
      c.table = tb.operand(hw_);
      return e_.b->tiu(c, wait);
    }
    default: return wait;
    }
  }
  uint16_t store(const Tile &t, unsigned set, uint16_t wait) override {
    return e_.move(false, y_, t.n0, t.ns, t.c0, t.cs, t.h0, t.hs, buf(t, set, in_.size(), y_.dtype), wait);
  }

private:
  std::vector<DTensor> in_;
  DTensor y_;
  uint64_t table_ = 0;
  bool bcast_ = false;
  struct ChannelWeight {
    uint64_t addr; // DDR
    DType dtype;
  };
  std::vector<ChannelWeight> chanWeights_;
};

// ---- Fc: (M, K) x (K, N) + bias; rows = batch, K over lanes ----------------
class FcOp : public SlicedOp {
public:
  FcOp(Emitter &e, const Op &op) : SlicedOp(e, op) {
    const Tensor &xt = e.g.tensors[op.inputs[0]];
    x_ = e.ddr(op.inputs[0]), y_ = e.ddr(op.output);
    k_ = xt.numel() / xt.nchw()[0];
    x_.s = {x_.s[0], k_, 1, 1};
    wt_ = e.g.tensors[op.inputs[1]].dtype, waddr_ = e.am.addr[op.inputs[1]];
    if (op.inputs.size() == 3) baddr_ = e.am.addr[op.inputs[2]], bt_ = e.g.tensors[op.inputs[2]].dtype;
  }
  std::array<int64_t, 3> extents() const override { return {y_.s[0], y_.s[1], 1}; }
  bool cutsH() const override { return false; }
  std::vector<uint64_t> setBytes(int64_t ns, int64_t cs, int64_t) const override {
    return {LBuf::activationBytes(x_.dtype, {u32(ns), u32(k_), 1, 1}, lanes()),
            LBuf::activationBytes(y_.dtype, {u32(ns), u32(cs), 1, 1}, lanes())};
  }
  std::vector<uint64_t> fixedBytes(int64_t cs) const override {
    std::vector<uint64_t> v{LBuf::bytes(wt_, {u32(k_), u32(cs), 1, 1}, lanes())};
    if (baddr_) v.push_back(uint64_t(ceilDiv(cs, lanes())) * dtypeBytes(bt_));
    return v;
  }
  // Each column's K rows contiguous in its lane (one load run per column).
  LBuf rightBuf(int64_t cs) const {
    LBuf b;
    b.offset = fixed_[0], b.dtype = wt_, b.shape = {u32(k_), u32(cs), 1, 1}, b.stride = {1, u32(k_), 1, 1};
    return b;
  }
  LBuf biasBuf(int64_t cs) const {
    LBuf b;
    b.offset = fixed_[1], b.dtype = bt_, b.shape = {1, u32(cs), 1, 1}, b.stride = {0, 1, 0, 0};
    return b;
  }
  LBuf leftBuf(const Tile &t, unsigned set) const {
    return LBuf::activation(bufOffset(set, 0), x_.dtype, {u32(t.ns), u32(k_), 1, 1}, lanes());
  }
  LBuf outBuf(const Tile &t, unsigned set) const {
    return LBuf::activation(bufOffset(set, 1), y_.dtype, {u32(t.ns), u32(t.cs), 1, 1}, lanes());
  }
  uint16_t loadFixed(const Tile &t, uint16_t wait) override {
    // DDR weight [n_out, K] is the local layout's order: the same bytes seen
    // as (1, columns, 1, K) on both sides, one run.
    LBuf view = rightBuf(t.cs);
    view.shape = {1, u32(t.cs), 1, u32(k_)}, view.stride = {0, u32(k_), u32(k_), 1};
    uint16_t id = e_.loadWeight(waddr_ + uint64_t(t.c0 * k_) * dtypeBytes(wt_), wt_, {1, u32(t.cs), 1, u32(k_)},
                                {0, u32(k_), u32(k_), 1}, view, wait);
    if (baddr_)
      id = e_.loadWeight(baddr_ + uint64_t(t.c0) * dtypeBytes(bt_), bt_, {1, u32(t.cs), 1, 1}, {0, 1, 1, 1},
                         biasBuf(t.cs), wait);
    return id;
  }
  uint16_t load(const Tile &t, unsigned set, uint16_t wait) override {
    return e_.move(true, x_, t.n0, t.ns, 0, k_, 0, 1, leftBuf(t, set), wait);
  }
  uint16_t compute(const Tile &t, unsigned set, uint16_t wait) override {
    isa::MatMul c;
    c.eu = isa::EuOp::Mul;
    c.left = leftBuf(t, set).operand(hw_), c.right = rightBuf(t.cs).operand(hw_);
    c.output = outBuf(t, set).operand(hw_);
    if (baddr_) c.hasBias = true, c.bias = biasBuf(t.cs).operand(hw_);
    c.rshift = op_.rshift, c.relu = op_.relu;
    return e_.b->tiu(c, wait);
  }
  uint16_t store(const Tile &t, unsigned set, uint16_t wait) override {
    return e_.move(false, y_, t.n0, t.ns, t.c0, t.cs, 0, 1, outBuf(t, set), wait);
  }

private:
  DTensor x_, y_;
  int64_t k_ = 1;
  DType wt_ = DType::F32, bt_ = DType::F32;
  uint64_t waddr_ = 0, baddr_ = 0;
};

// ---- Upsample: nearest, integer factors, through local memory ---------------
// Slices are cut along input rows: a slice of hs input rows loads them in
// one contiguous move, scaleH * scaleW TIU copies write each (dy, dx) phase
// into the output rows with strides (scaleH rows, scaleW elements), and one
// store moves the hs * scaleH output rows out. (Scattering single elements
// in DDR costs one burst per element.)
class UpsampleOp : public SlicedOp {
public:
  UpsampleOp(Emitter &e, const Op &op) : SlicedOp(e, op) { x_ = e.ddr(op.inputs[0]), y_ = e.ddr(op.output); }
  std::array<int64_t, 3> extents() const override { return {x_.s[0], x_.s[1], x_.s[2]}; }
  std::vector<uint64_t> setBytes(int64_t ns, int64_t cs, int64_t hs) const override {
    return {LBuf::activationBytes(x_.dtype, {u32(ns), u32(cs), u32(hs), u32(x_.s[3])}, lanes()),
            LBuf::activationBytes(y_.dtype, {u32(ns), u32(cs), u32(hs * op_.scaleH), u32(y_.s[3])}, lanes())};
  }
  LBuf inBuf(const Tile &t, unsigned set) const {
    return LBuf::activation(bufOffset(set, 0), x_.dtype, {u32(t.ns), u32(t.cs), u32(t.hs), u32(x_.s[3])}, lanes());
  }
  LBuf outBuf(const Tile &t, unsigned set) const {
    return LBuf::activation(bufOffset(set, 1), y_.dtype, {u32(t.ns), u32(t.cs), u32(t.hs * op_.scaleH), u32(y_.s[3])},
                            lanes());
  }
  uint16_t load(const Tile &t, unsigned set, uint16_t wait) override {
    return e_.move(true, x_, t.n0, t.ns, t.c0, t.cs, t.h0, t.hs, inBuf(t, set), wait);
  }
  uint16_t compute(const Tile &t, unsigned set, uint16_t wait) override {
    const LBuf in = inBuf(t, set), out = outBuf(t, set);
    uint16_t id = wait;
    for (int64_t dy = 0; dy < op_.scaleH; ++dy)
      for (int64_t dx = 0; dx < op_.scaleW; ++dx) {
        LBuf phase = out; // output (n, c, iy * scaleH + dy, ix * scaleW + dx)
        phase.offset += u32((dy * y_.s[3] + dx) * dtypeBytes(y_.dtype));
        phase.shape = in.shape;
        phase.stride.h = out.stride.h * u32(op_.scaleH), phase.stride.w = out.stride.w * u32(op_.scaleW);
        isa::Arith c;
        c.eu = isa::EuOp::Copy, c.opdCount = 1;
        c.res0 = phase.operand(hw_), c.opd0 = in.operand(hw_);
        id = e_.b->tiu(c, wait);
      }
    return id;
  }
  uint16_t store(const Tile &t, unsigned set, uint16_t wait) override {
    return e_.move(false, y_, t.n0, t.ns, t.c0, t.cs, t.h0 * op_.scaleH, t.hs * op_.scaleH, outBuf(t, set), wait);
  }

private:
  DTensor x_, y_;
};

// ---- Pure data movement in DDR: Concat -------------------------------------
// A DDR activation viewed as (groups, C, rows, W) with its strides: 4N int8
// folds each group's four items into the rows (4H rows of W bytes per channel).
void emitConcat(Emitter &e, const Op &op) {
  DTensor y = e.ddr(op.output);
  const int64_t H = y.s[2], W = y.s[3];
  const bool n4 = y.n4();
  const int64_t groups = n4 ? ceilDiv(y.s[0], 4) : y.s[0], rows = n4 ? 4 * H : H;
  int64_t c0 = 0;
  for (int t : op.inputs) {
    DTensor x = e.ddr(t);
    const int64_t ci = x.s[1];
    const uint64_t eb = dtypeBytes(x.dtype);
    e.s2s(x.addr, {u32(ci * rows * W), u32(rows * W), u32(W), 1},
          y.addr + uint64_t(c0 * rows * W) * eb, {u32(y.s[1] * rows * W), u32(rows * W), u32(W), 1},
          {u32(groups), u32(ci), u32(rows), u32(W)}, x.dtype, 0);
    c0 += ci;
  }
}

// The sliced implementation of an op; null for pure data movement.
std::unique_ptr<SlicedOp> makeSliced(Emitter &e, const Op &op) {
  switch (op.kind) {
  case OpKind::Reshape: case OpKind::Concat: return nullptr;
  case OpKind::Upsample: return std::make_unique<UpsampleOp>(e, op);
  case OpKind::Conv: case OpKind::ConvTranspose: return std::make_unique<ConvOp>(e, op);
  case OpKind::Pool: case OpKind::GlobalAvgPool: return std::make_unique<PoolOp>(e, op);
  case OpKind::Fc: return std::make_unique<FcOp>(e, op);
  default: return std::make_unique<ElementwiseOp>(e, op);
  }
}

Status emitOp(Emitter &e, const Op &op, OpReport &rep) {
  switch (op.kind) {
  case OpKind::Reshape: return Status::ok();
  case OpKind::Concat: emitConcat(e, op); return Status::ok();
  default: return makeSliced(e, op)->run(rep);
  }
}

} // namespace tpu::backend::emit
