#include "compiler/Backend/CodeGen.h"

#include "compiler/Backend/AddressAssigner.h"
#include "compiler/Backend/LmemAllocator.h"
#include "isa/ProgramOrder.h"
#include "isa/bmodel/Bmodel.h"
#include "simulator/semantics/IntArith.h"
#include "simulator/timing/GdmaTiming.h"
#include "simulator/timing/TiuTiming.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <sstream>

namespace tpu::backend {

namespace {

using isa::LocalOperand;
using isa::Prec;
using isa::Shape4;
using isa::Strides4;

Prec precOf(DType t) {
  switch (t) {
  case DType::F32: return Prec::Fp32;
  case DType::I16: return Prec::Int16;
  case DType::I32: return Prec::Int32;
  default: return Prec::Int8;
  }
}
isa::GdmaFormat formatOf(DType t) {
  switch (t) {
  case DType::F32: return isa::GdmaFormat::Fp32;
  case DType::I16: return isa::GdmaFormat::Int16;
  case DType::U8: return isa::GdmaFormat::Uint8;
  default: return isa::GdmaFormat::Int8;
  }
}
int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
uint32_t u32(int64_t v) { return uint32_t(v); }

// ---------------------------------------------------------------------------
// Tensors in local memory: channel c in lane (lane + c) % lanes, explicit
// strides in elements (docs/isa.md, "Local memory").
struct LBuf {
  uint32_t offset = 0, lane = 0;
  DType dtype = DType::F32;
  Shape4 shape;
  Strides4 stride;

  // Compact layout: w 1, h W, c H*W, n rounds(C)*H*W.
  static LBuf compact(uint32_t offset, DType t, Shape4 s, uint32_t lanes) {
    LBuf b;
    b.offset = offset, b.dtype = t, b.shape = s;
    uint32_t plane = s.h * s.w;
    b.stride = {u32(ceilDiv(s.c, lanes)) * plane, plane, s.w, 1};
    return b;
  }
  static uint64_t bytes(DType t, Shape4 s, uint32_t lanes) {
    return uint64_t(s.n) * ceilDiv(s.c, lanes) * s.h * s.w * dtypeBytes(t);
  }
  uint32_t addr(const isa::HwConfig &hw) const { return lane * hw.lmemBytesPerLane + offset; }
  LocalOperand operand(const isa::HwConfig &hw) const {
    LocalOperand o;
    o.addr = addr(hw), o.shape = shape, o.prec = precOf(dtype), o.isSigned = dtype != DType::U8;
    o.strideMode = isa::StrideMode::Explicit, o.stride = stride;
    return o;
  }
  LBuf channels(uint32_t c0, uint32_t cs, uint32_t lanes) const {
    LBuf b = *this;
    uint32_t abs = lane + c0;
    b.lane = abs % lanes;
    b.offset = offset + (abs / lanes) * stride.c * dtypeBytes(dtype);
    b.shape.c = cs;
    return b;
  }
  LBuf withType(DType t) const {
    LBuf b = *this;
    b.dtype = t;
    return b;
  }
};

LocalOperand constant(DType t, int64_t v) {
  LocalOperand o;
  o.isConst = true, o.prec = precOf(t), o.isSigned = t != DType::U8;
  o.constValue = uint32_t(v);
  return o;
}
LocalOperand constantF(float v) {
  LocalOperand o;
  o.isConst = true, o.prec = Prec::Fp32, o.constValue = sim::floatBits(v);
  return o;
}

// An activation in DDR: fp32 1N, int8/uint8 4N (docs/isa.md, "int8 4N").
struct DTensor {
  uint64_t addr = 0;
  DType dtype = DType::F32;
  std::array<int64_t, 4> s{1, 1, 1, 1};
  bool n4() const { return isInt8Like(dtype); }
};

struct Emitter {
  const Graph &g;
  const Options &opt;
  const isa::HwConfig &hw;
  const AddressMap &am;
  CommandBuilder *b; // where commands go (a scratch builder while costing candidates)

  DTensor ddr(int t) const {
    DTensor d;
    d.addr = am.addr[t], d.dtype = g.tensors[t].dtype, d.s = g.tensors[t].nchw();
    return d;
  }

  // Moves rows [h0, h0+hs) of items [n0, n0+ns), channels [c0, c0+cs) of a
  // DDR activation to/from local buffer `l` (shape (ns, cs, hs, W)).
  uint16_t move(bool toLocal, const DTensor &d, int64_t n0, int64_t ns, int64_t c0, int64_t cs,
                int64_t h0, int64_t hs, const LBuf &l, uint16_t wait) {
    const int64_t C = d.s[1], H = d.s[2], W = d.s[3];
    const uint64_t e = dtypeBytes(d.dtype);
    uint16_t id = 0;
    auto emit = [&](uint64_t gaddr, std::array<uint32_t, 4> gstride, int64_t nFrom, int64_t nCount) {
      isa::GdmaCommand c;
      c.direction = toLocal ? isa::GdmaDirection::S2L : isa::GdmaDirection::L2S;
      isa::GdmaTensor gt, lt;
      gt.addr = gaddr, gt.format = formatOf(d.dtype);
      gt.shape = {u32(nCount), u32(cs), u32(hs), u32(W)}, gt.stride = gstride;
      lt.addr = l.addr(hw) + (nFrom - n0) * l.stride.n * e, lt.format = gt.format;
      lt.shape = gt.shape, lt.stride = {l.stride.n, l.stride.c, l.stride.h, l.stride.w};
      c.src = toLocal ? gt : lt;
      c.dst = toLocal ? lt : gt;
      id = b->gdma(c, wait);
    };
    if (!d.n4()) {
      emit(d.addr + uint64_t(((n0 * C + c0) * H + h0) * W) * e,
           {u32(C * H * W), u32(H * W), u32(W), 1}, n0, ns);
      return id;
    }
    // One command per group of four batch items sharing a word.
    for (int64_t n = n0; n < n0 + ns;) {
      int64_t grp = n / 4, count = std::min(n0 + ns, (grp + 1) * 4) - n;
      uint64_t a = d.addr + uint64_t(grp * 4 * C * H * W + ((c0 * H + h0) * W) * 4 + n % 4);
      auto st = isa::int8x4NStrides(u32(H), u32(W));
      emit(a, st, n, count);
      n += count;
    }
    return id;
  }

  // A plain copy of a weight slice from DDR (given shape and strides) into `l`.
  uint16_t loadWeight(uint64_t addr, DType t, std::array<uint32_t, 4> shape, std::array<uint32_t, 4> gstride,
                      const LBuf &l, uint16_t wait) {
    isa::GdmaCommand c;
    c.direction = isa::GdmaDirection::S2L;
    c.src.addr = addr, c.src.format = formatOf(t), c.src.shape = shape, c.src.stride = gstride;
    c.dst.addr = l.addr(hw), c.dst.format = formatOf(t), c.dst.shape = shape;
    c.dst.stride = {l.stride.n, l.stride.c, l.stride.h, l.stride.w};
    return b->gdma(c, wait);
  }

  uint16_t s2s(uint64_t src, std::array<uint32_t, 4> sstride, uint64_t dst, std::array<uint32_t, 4> dstride,
               std::array<uint32_t, 4> shape, DType t, uint16_t wait) {
    isa::GdmaCommand c;
    c.direction = isa::GdmaDirection::S2S;
    c.src.addr = src, c.src.format = formatOf(t), c.src.shape = shape, c.src.stride = sstride;
    c.dst.addr = dst, c.dst.format = formatOf(t), c.dst.shape = shape, c.dst.stride = dstride;
    return b->gdma(c, wait);
  }
};

// ---------------------------------------------------------------------------
// Sliced ops: the output (N, C, H) is cut into slices; each slice is loaded,
// computed and stored; buffer sets alternate when double-buffered.
struct Tile {
  int64_t n0, ns, c0, cs, h0, hs;
};

// The software pipeline over slices. Emission order per slice i: compute i,
// then load i+1 and store i (store first when load i+1 must wait for
// compute i anyway). Set i % sets holds slice i's loaded inputs and its
// result: load i waits for compute i - sets (the last reader of the set),
// compute i for load i and store i - sets (the last reader of its output).
// Fixed buffers (weights) are reloaded when the channel slice changes, after
// every earlier compute.
template <class Stage>
void runPipeline(const std::vector<Tile> &tiles, unsigned nb, bool hasFixed, Stage &st) {
  const size_t count = tiles.size();
  std::vector<uint16_t> loadId(count, 0), computeId(count, 0), storeId(count, 0);
  auto newFixed = [&](size_t i) { return hasFixed && (i == 0 || tiles[i].c0 != tiles[i - 1].c0); };
  auto loadTile = [&](size_t i) {
    uint16_t wait = i >= nb ? computeId[i - nb] : 0;
    uint16_t id = 0;
    if (newFixed(i)) id = st.loadFixed(tiles[i], std::max(wait, i > 0 ? computeId[i - 1] : uint16_t(0)));
    loadId[i] = std::max(id, st.load(tiles[i], unsigned(i % nb), wait));
  };
  if (count == 0) return;
  loadTile(0);
  for (size_t i = 0; i < count; ++i) {
    uint16_t wait = loadId[i];
    if (i >= nb) wait = std::max(wait, storeId[i - nb]);
    computeId[i] = st.compute(tiles[i], unsigned(i % nb), wait);
    if (i + 1 < count && (nb == 1 || newFixed(i + 1))) {
      storeId[i] = st.store(tiles[i], unsigned(i % nb), computeId[i]);
      loadTile(i + 1);
      continue;
    }
    if (i + 1 < count) loadTile(i + 1);
    storeId[i] = st.store(tiles[i], unsigned(i % nb), computeId[i]);
  }
}

// Emits `count` candidate implementations (`emit(k)`) each into a scratch
// command group, and returns the index of the one with the fewest estimated
// cycles (estimateCycles: the timing library plus the cmd-id schedule).
template <class F> size_t cheapestCandidate(Emitter &e, size_t count, F emit) {
  if (count <= 1) return 0;
  CommandBuilder *real = e.b;
  size_t best = 0;
  double bestCycles = std::numeric_limits<double>::infinity();
  for (size_t k = 0; k < count; ++k) {
    CommandBuilder scratch;
    scratch.beginGroup();
    e.b = &scratch;
    emit(k);
    auto cyc = estimateCycles(scratch.groups().back(), e.hw);
    if (cyc && *cyc < bestCycles) bestCycles = *cyc, best = k;
  }
  e.b = real;
  return best;
}

// Candidate slicings: the fewest slices with one buffer set, then double
// buffered with at most 1, 2, 4, 8 slices' worth of rows/items per slice
// (more slices = more overlap, more per-command overhead).
struct SliceChoice {
  int64_t ns = 0, cs = 0, hs = 0;
  unsigned sets = 1;
  uint64_t slices = UINT64_MAX;
  bool operator==(const SliceChoice &o) const {
    return ns == o.ns && cs == o.cs && hs == o.hs && sets == o.sets;
  }
};
template <class Best>
std::vector<SliceChoice> sliceCandidates(const Best &best, bool doubleBuffer, int64_t n, int64_t h) {
  std::vector<SliceChoice> v;
  SliceChoice one = best(1, n, h);
  if (one.slices == UINT64_MAX) return v;
  v.push_back(one);
  if (!doubleBuffer) return v;
  for (int64_t split : {1, 2, 4, 8}) {
    SliceChoice c = h >= split ? best(2, n, ceilDiv(h, split)) : best(2, ceilDiv(n, split), h);
    if (c.slices != UINT64_MAX && c.slices > 1 && std::find(v.begin(), v.end(), c) == v.end()) v.push_back(c);
  }
  return v;
}

class SlicedOp {
public:
  SlicedOp(Emitter &e, const Op &op) : e_(e), op_(op), hw_(e.hw) {}
  virtual ~SlicedOp() = default;
  // Output extents to slice, and which dims may be cut.
  virtual std::array<int64_t, 3> extents() const = 0; // n, c, h
  virtual bool cutsC() const { return true; }
  virtual bool cutsH() const { return true; }
  // Per-lane bytes of one buffer set for slice extents (ns, cs, hs), and of
  // the buffers loaded once (cs = the channel slice).
  virtual std::vector<uint64_t> setBytes(int64_t ns, int64_t cs, int64_t hs) const = 0;
  virtual std::vector<uint64_t> fixedBytes(int64_t cs) const { (void)cs; return {}; }
  // Fixed buffers are reloaded per slice when C is cut (they depend on c).
  virtual bool fixedPerChannel() const { return false; }

  virtual uint16_t loadFixed(const Tile &t, uint16_t wait) { (void)t; return wait; }
  virtual uint16_t load(const Tile &t, unsigned set, uint16_t wait) = 0;
  virtual uint16_t compute(const Tile &t, unsigned set, uint16_t wait) = 0;
  virtual uint16_t store(const Tile &t, unsigned set, uint16_t wait) = 0;

  Status run(OpReport &rep);

  // ---- Local use inside a layer group (LayerGroup below) ----
  // Can the op run on LMEM-resident slices of full channels?
  virtual bool groupable() const { return false; }
  // Input rows (unclipped, may be negative = padding) output rows [lo, hi] read.
  virtual std::pair<int64_t, int64_t> inputRows(int64_t lo, int64_t hi) const { return {lo, hi}; }
  // Scratch buffers the computation needs, shaped like the output.
  virtual std::vector<DType> tempTypes() const { return {}; }
  // The TIU commands of one slice: `ins` are the activation inputs (rows
  // clipped to the tensor, padT/padB = padding rows of a window), `out` the
  // output rows. Returns the last TIU id.
  virtual uint16_t computeOn(const std::vector<LBuf> &ins, const LBuf &out, const std::vector<LBuf> &temps,
                             int64_t padT, int64_t padB, uint16_t wait) = 0;
  void setFixed(std::vector<uint32_t> offsets) { fixed_ = std::move(offsets); }

protected:
  Emitter &e_;
  const Op &op_;
  const isa::HwConfig &hw_;
  std::vector<uint32_t> fixed_;          // offsets of the fixed buffers
  std::vector<std::vector<uint32_t>> sets_; // offsets per set
  int64_t ns_ = 1, cs_ = 1, hs_ = 1;
  uint32_t lanes() const { return hw_.npuLanes; }
  uint32_t bufOffset(unsigned set, size_t i) const { return sets_[set][i]; }
};

Status SlicedOp::run(OpReport &rep) {
  const auto ext = extents();
  LmemAllocator alloc(hw_);
  // Channel slices are multiples of the lane count so every slice starts in lane 0.
  std::vector<int64_t> cChoices{ext[1]};
  if (cutsC())
    for (int64_t c = (ext[1] - 1) / lanes() * lanes(); c >= lanes(); c -= lanes()) cChoices.push_back(c);
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
class ConvOp : public SlicedOp {
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
  bool fixedPerChannel() const override { return true; }
  // Rows of the (zero-inserted when transposed) input window of hs output rows.
  int64_t windowRows(int64_t hs) const { return (hs - 1) * p_.strideH + (p_.kh - 1) * p_.dilationH + 1; }
  // Input rows a slice of hs output rows loads (at most).
  int64_t inRows(int64_t hs) const { return transposed_ ? ceilDiv(windowRows(hs), insH_) + 1 : windowRows(hs); }
  int64_t inChannels(int64_t cs) const { return depthwise_ ? cs : x_.s[1]; }
  std::vector<uint64_t> setBytes(int64_t ns, int64_t cs, int64_t hs) const override {
    int64_t rows = std::min(inRows(hs), x_.s[2]);
    return {LBuf::bytes(x_.dtype, {u32(ns), u32(inChannels(cs)), u32(rows), u32(x_.s[3])}, lanes()),
            LBuf::bytes(y_.dtype, {u32(ns), u32(cs), u32(hs), u32(y_.s[3])}, lanes())};
  }
  std::vector<uint64_t> fixedBytes(int64_t cs) const override {
    std::vector<uint64_t> v{LBuf::bytes(wt_, weightShape(cs), lanes())};
    if (baddr_) v.push_back(uint64_t(ceilDiv(cs, lanes())) * dtypeBytes(bt_));
    return v;
  }
  Shape4 weightShape(int64_t cs) const {
    return {u32(depthwise_ ? 1 : icg_), u32(cs), u32(p_.kh), u32(p_.kw)};
  }
  LBuf weightBuf(int64_t cs) const { return LBuf::compact(fixed_[0], wt_, weightShape(cs), lanes()); }
  LBuf biasBuf(int64_t cs) const {
    LBuf b;
    b.offset = fixed_[1], b.dtype = bt_, b.shape = {1, u32(cs), 1, 1}, b.stride = {0, 1, 0, 0};
    return b;
  }
  uint16_t loadFixed(const Tile &t, uint16_t wait) override {
    const int64_t taps = p_.kh * p_.kw, wIc = depthwise_ ? 1 : icg_;
    const uint64_t e = dtypeBytes(wt_);
    // DDR weight [oc, ic/groups, kh, kw] (transposed: [ic, oc, kh, kw]) -> local (ic/groups, oc, kh, kw).
    const std::array<uint32_t, 4> stride =
        transposed_ ? std::array<uint32_t, 4>{u32(y_.s[1] * taps), u32(taps), u32(p_.kw), 1}
                    : std::array<uint32_t, 4>{u32(taps), u32(wIc * taps), u32(p_.kw), 1};
    uint16_t id = e_.loadWeight(waddr_ + uint64_t(t.c0 * (transposed_ ? 1 : wIc) * taps) * e, wt_,
                                {u32(wIc), u32(t.cs), u32(p_.kh), u32(p_.kw)}, stride, weightBuf(t.cs), wait);
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
    return LBuf::compact(bufOffset(set, 0), x_.dtype,
                         {u32(t.ns), u32(inChannels(t.cs)), u32(rowsFor(t).rows), u32(x_.s[3])}, lanes());
  }
  LBuf outBuf(const Tile &t, unsigned set) const {
    return LBuf::compact(bufOffset(set, 1), y_.dtype, {u32(t.ns), u32(t.cs), u32(t.hs), u32(y_.s[3])}, lanes());
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
  bool groupable() const override { return !transposed_; }
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
class PoolOp : public SlicedOp {
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
    return {LBuf::bytes(x_.dtype, {u32(ns), u32(cs), u32(rows), u32(x_.s[3])}, lanes()),
            LBuf::bytes(y_.dtype, {u32(ns), u32(cs), u32(hs), u32(y_.s[3])}, lanes())};
  }
  struct Rows { int64_t r0, rows, padT, padB; };
  Rows rowsFor(const Tile &t) const {
    int64_t iy0 = t.h0 * p_.strideH - p_.padTop, iy1 = iy0 + inRows(t.hs) - 1;
    int64_t r0 = std::max<int64_t>(0, iy0), r1 = std::min(x_.s[2] - 1, iy1);
    return {r0, r1 - r0 + 1, r0 - iy0, iy1 - r1};
  }
  LBuf inBuf(const Tile &t, unsigned set) const {
    return LBuf::compact(bufOffset(set, 0), x_.dtype, {u32(t.ns), u32(t.cs), u32(rowsFor(t).rows), u32(x_.s[3])}, lanes());
  }
  LBuf outBuf(const Tile &t, unsigned set) const {
    return LBuf::compact(bufOffset(set, 1), y_.dtype, {u32(t.ns), u32(t.cs), u32(t.hs), u32(y_.s[3])}, lanes());
  }
  uint16_t load(const Tile &t, unsigned set, uint16_t wait) override {
    Rows r = rowsFor(t);
    return e_.move(true, x_, t.n0, t.ns, t.c0, t.cs, r.r0, r.rows, inBuf(t, set), wait);
  }
  bool groupable() const override { return op_.kind == OpKind::Pool; }
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
class ElementwiseOp : public SlicedOp {
public:
  ElementwiseOp(Emitter &e, const Op &op) : SlicedOp(e, op) {
    for (int t : op.inputs)
      if (!e.g.tensors[t].isWeight()) in_.push_back(e.ddr(t));
    y_ = e.ddr(op.output);
    // A second input of (N, C, 1, 1) is broadcast over H and W.
    bcast_ = in_.size() == 2 && in_[1].s[2] * in_[1].s[3] == 1 && y_.s[2] * y_.s[3] > 1;
    if (op.kind == OpKind::Lut) table_ = e.am.addr[op.inputs[1]];
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
    case OpKind::LeakyRelu: case OpKind::Cast: return 1;
    default: return 0;
    }
  }
  Shape4 shapeOf(const Tile &t) const { return {u32(t.ns), u32(t.cs), u32(t.hs), u32(y_.s[3])}; }
  std::vector<uint64_t> setBytes(int64_t ns, int64_t cs, int64_t hs) const override {
    Shape4 s{u32(ns), u32(cs), u32(hs), u32(y_.s[3])};
    std::vector<uint64_t> v;
    for (size_t i = 0; i < in_.size(); ++i)
      v.push_back(LBuf::bytes(in_[i].dtype, isBcast(i) ? Shape4{s.n, s.c, 1, 1} : s, lanes()));
    v.push_back(LBuf::bytes(y_.dtype, s, lanes()));
    for (unsigned i = 0; i < temps(); ++i) v.push_back(LBuf::bytes(tempType(), s, lanes()));
    return v;
  }
  std::vector<uint64_t> fixedBytes(int64_t) const override {
    if (op_.kind == OpKind::Lut) return {256};
    return {};
  }
  bool isBcast(size_t input) const { return bcast_ && input == 1; }
  LBuf buf(const Tile &t, unsigned set, size_t i, DType dt) const {
    return LBuf::compact(bufOffset(set, i), dt, shapeOf(t), lanes());
  }
  // The broadcast input: one element per (n, c), read for every (h, w).
  LBuf bcastBuf(const Tile &t, unsigned set) const {
    LBuf b = LBuf::compact(bufOffset(set, 1), in_[1].dtype, {u32(t.ns), u32(t.cs), 1, 1}, lanes());
    return b;
  }
  uint16_t loadFixed(const Tile &, uint16_t wait) override {
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
    c.opd1.shape = c.opd0.shape = res.shape;
    c.rshift = rshift, c.relu = relu;
    return e_.b->tiu(c, wait);
  }
  bool groupable() const override { return !bcast_; }
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
      const LBuf &b2 = ins[1];
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
    case OpKind::Affine: { // md_linear mac: a * b + c with constant b, c
      isa::MdLinear c;
      c.res0 = y.operand(hw_), c.opd0 = a.operand(hw_), c.opdCount = 3;
      c.opd1 = f ? constantF(op_.alpha) : constant(DType::I16, m[0]);
      c.opd2 = f ? constantF(op_.beta) : constant(DType::I32, m[1]);
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
  bool fixedPerChannel() const override { return true; }
  std::vector<uint64_t> setBytes(int64_t ns, int64_t cs, int64_t) const override {
    return {LBuf::bytes(x_.dtype, {u32(ns), u32(k_), 1, 1}, lanes()),
            LBuf::bytes(y_.dtype, {u32(ns), u32(cs), 1, 1}, lanes())};
  }
  std::vector<uint64_t> fixedBytes(int64_t cs) const override {
    std::vector<uint64_t> v{LBuf::bytes(wt_, {u32(k_), u32(cs), 1, 1}, lanes())};
    if (baddr_) v.push_back(uint64_t(ceilDiv(cs, lanes())) * dtypeBytes(bt_));
    return v;
  }
  LBuf rightBuf(int64_t cs) const { return LBuf::compact(fixed_[0], wt_, {u32(k_), u32(cs), 1, 1}, lanes()); }
  LBuf biasBuf(int64_t cs) const {
    LBuf b;
    b.offset = fixed_[1], b.dtype = bt_, b.shape = {1, u32(cs), 1, 1}, b.stride = {0, 1, 0, 0};
    return b;
  }
  LBuf leftBuf(const Tile &t, unsigned set) const {
    return LBuf::compact(bufOffset(set, 0), x_.dtype, {u32(t.ns), u32(k_), 1, 1}, lanes());
  }
  LBuf outBuf(const Tile &t, unsigned set) const {
    return LBuf::compact(bufOffset(set, 1), y_.dtype, {u32(t.ns), u32(t.cs), 1, 1}, lanes());
  }
  uint16_t loadFixed(const Tile &t, uint16_t wait) override {
    const int64_t n = y_.s[1];
    // Device weight is [K, n_out] (AddressAssigner's deviceWeight).
    uint16_t id = e_.loadWeight(waddr_ + uint64_t(t.c0) * dtypeBytes(wt_), wt_, {u32(k_), u32(t.cs), 1, 1},
                                {u32(n), 1, 1, 1}, rightBuf(t.cs), wait);
    if (baddr_)
      id = e_.loadWeight(baddr_ + uint64_t(t.c0) * dtypeBytes(bt_), bt_, {1, u32(t.cs), 1, 1}, {0, 1, 1, 1},
                         biasBuf(t.cs), wait);
    return id;
  }
  uint16_t load(const Tile &t, unsigned set, uint16_t wait) override {
    return e_.move(true, x_, t.n0, t.ns, 0, k_, 0, 1, leftBuf(t, set), wait);
  }
  uint16_t computeOn(const std::vector<LBuf> &, const LBuf &, const std::vector<LBuf> &, int64_t, int64_t,
                     uint16_t wait) override {
    return wait; // Fc is never part of a layer group (rows are batch items)
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

// ---- Pure data movement in DDR: Concat, Upsample ---------------------------
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

void emitUpsample(Emitter &e, const Op &op) {
  DTensor x = e.ddr(op.inputs[0]), y = e.ddr(op.output);
  const int64_t C = x.s[1], H = x.s[2], W = x.s[3], OH = y.s[2], OW = y.s[3];
  const uint64_t eb = dtypeBytes(x.dtype);
  for (int64_t dy = 0; dy < op.scaleH; ++dy)
    for (int64_t dx = 0; dx < op.scaleW; ++dx) {
      if (!x.n4()) {
        e.s2s(x.addr, {u32(C * H * W), u32(H * W), u32(W), 1}, y.addr + uint64_t(dy * OW + dx) * eb,
              {u32(C * OH * OW), u32(OH * OW), u32(op.scaleH * OW), u32(op.scaleW)},
              {u32(x.s[0]), u32(C), u32(H), u32(W)}, x.dtype, 0);
        continue;
      }
      for (int64_t grp = 0; grp < ceilDiv(x.s[0], 4); ++grp) {
        int64_t items = std::min<int64_t>(4, x.s[0] - grp * 4);
        e.s2s(x.addr + uint64_t(grp * 4 * C * H * W), isa::int8x4NStrides(u32(H), u32(W)),
              y.addr + uint64_t(grp * 4 * C * OH * OW + (dy * OW + dx) * 4),
              {1, u32(4 * OH * OW), u32(4 * OW * op.scaleH), u32(4 * op.scaleW)},
              {u32(items), u32(C), u32(H), u32(W)}, x.dtype, 0);
      }
    }
}

// The sliced implementation of an op; null for pure data movement.
std::unique_ptr<SlicedOp> makeSliced(Emitter &e, const Op &op) {
  switch (op.kind) {
  case OpKind::Reshape: case OpKind::Concat: case OpKind::Upsample: return nullptr;
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
  case OpKind::Upsample: emitUpsample(e, op); return Status::ok();
  default: return makeSliced(e, op)->run(rep);
  }
}

// ---------------------------------------------------------------------------
// Layer groups: consecutive ops whose intermediate tensors stay in local
// memory. The group's output is cut into slices along N and H; each op's
// rows are found backwards from the slice (windows add halo rows, clipped
// rows become padding), so intermediate rows overlapping between slices are
// recomputed. Group inputs from DDR and the group output are double-buffered
// (runPipeline); intermediates, scratch and weights have one buffer.
class LayerGroup {
public:
  LayerGroup(Emitter &e, std::vector<const Op *> ops) : e_(e), ops_(std::move(ops)) {
    for (const Op *op : ops_) {
      impl_.push_back(makeSliced(e, *op));
      for (int t : op->inputs)
        if (!e.g.tensors[t].isWeight() && index(t) < 0) addTensor(t, true);
      addTensor(op->output, false);
    }
  }

  // Why these ops cannot form a group ("" if they can).
  std::string unsuitable() const {
    if (ops_.size() < 2) return "fewer than two ops";
    const int finalT = ops_.back()->output;
    for (size_t k = 0; k < ops_.size(); ++k) {
      if (!impl_[k] || !impl_[k]->groupable()) return std::string(opKindName(ops_[k]->kind)) + " is not groupable";
      for (const auto &t : tens_)
        if (t.s[0] != tens_[0].s[0]) return "batch sizes differ";
    }
    for (const auto &t : tens_) {
      if (t.external || t.id == finalT) continue;
      for (int o : e_.g.outputs)
        if (o == t.id) return "an intermediate is a graph output";
      for (const Op &op : e_.g.ops)
        for (int in : op.inputs)
          if (in == t.id && std::find(ops_.begin(), ops_.end(), &op) == ops_.end())
            return "an intermediate is read outside the group";
    }
    return "";
  }

  Status run(OpReport &rep) {
    const isa::HwConfig &hw = e_.hw;
    LmemAllocator alloc(hw);
    const auto &fin = tens_[size_t(index(ops_.back()->output))];
    const int64_t N = fin.s[0], H = fin.s[2];
    auto fits = [&](int64_t ns, int64_t hs, unsigned sets) { return alloc.fits(sizes(ns, hs, sets)); };
    auto best = [&](unsigned sets, int64_t nMax, int64_t hMax) {
      SliceChoice c;
      c.sets = sets, c.cs = fin.s[1];
      for (int64_t ns = nMax; ns >= 1; --ns) {
        int64_t lo = 0, hi = hMax;
        while (lo < hi) {
          int64_t mid = (lo + hi + 1) / 2;
          if (fits(ns, mid, sets)) lo = mid;
          else hi = mid - 1;
        }
        if (lo == 0) continue;
        uint64_t slices = uint64_t(ceilDiv(N, ns) * ceilDiv(H, lo));
        if (slices < c.slices) c.ns = ns, c.hs = lo, c.slices = slices;
      }
      return c;
    };
    auto cands = sliceCandidates(best, e_.opt.doubleBuffer, N, H);
    if (cands.empty())
      return makeError("layer group does not fit local memory: needs ",
                       alloc.footprint(sizes(1, 1, 1)), " bytes per lane");
    bool hasFixed = false;
    auto emitWith = [&](const SliceChoice &pick) {
      ns_ = pick.ns, hs_ = pick.hs, sets_ = pick.sets;
      auto plan = alloc.plan(sizes(ns_, hs_, sets_), "layer group");
      offsets_ = plan->offsets;
      rep.nSlice = ns_, rep.cSlice = fin.s[1], rep.hSlice = hs_, rep.buffers = sets_;
      rep.lmemBytes = plan->used, rep.slices = pick.slices;
      // Fixed buffers first in the plan, op by op.
      size_t at = 0;
      for (size_t k = 0; k < ops_.size(); ++k) {
        auto f = impl_[k]->fixedBytes(outC(k));
        impl_[k]->setFixed(std::vector<uint32_t>(offsets_.begin() + at, offsets_.begin() + at + f.size()));
        at += f.size();
        hasFixed |= !f.empty();
      }
      std::vector<Tile> tiles;
      for (int64_t n0 = 0; n0 < N; n0 += ns_)
        for (int64_t h0 = 0; h0 < H; h0 += hs_)
          tiles.push_back({n0, std::min(ns_, N - n0), 0, fin.s[1], h0, std::min(hs_, H - h0)});
      runPipeline(tiles, sets_, hasFixed, *this);
    };
    emitWith(cands[cheapestCandidate(e_, cands.size(), [&](size_t k) { emitWith(cands[k]); })]);
    return Status::ok();
  }

  // Pipeline stages (runPipeline).
  uint16_t loadFixed(const Tile &t, uint16_t wait) {
    uint16_t id = 0;
    for (size_t k = 0; k < ops_.size(); ++k) {
      if (impl_[k]->fixedBytes(outC(k)).empty()) continue;
      e_.b->setLayer(ops_[k]->name);
      id = impl_[k]->loadFixed(Tile{0, t.ns, 0, outC(k), 0, 1}, wait);
    }
    return id;
  }
  uint16_t load(const Tile &t, unsigned set, uint16_t wait) {
    Rows r = rows(t.h0, t.hs);
    uint16_t id = 0;
    for (size_t i = 0; i < tens_.size(); ++i) {
      const TensorInfo &ti = tens_[i];
      if (!ti.external) continue;
      e_.b->setLayer(ops_[size_t(ti.firstUse)]->name);
      id = e_.move(true, ti.d, t.n0, t.ns, 0, ti.s[1], r.need[i].first, count(r.need[i]), buffer(i, set, t.ns, r), wait);
    }
    return id;
  }
  uint16_t compute(const Tile &t, unsigned set, uint16_t wait) {
    Rows r = rows(t.h0, t.hs);
    uint16_t id = wait;
    for (size_t k = 0; k < ops_.size(); ++k) {
      const Op &op = *ops_[k];
      e_.b->setLayer(op.name);
      const size_t o = size_t(index(op.output));
      std::vector<LBuf> ins;
      for (int tid : op.inputs) {
        if (e_.g.tensors[tid].isWeight()) continue;
        size_t i = size_t(index(tid));
        ins.push_back(rowsView(buffer(i, set, t.ns, r), r.need[i].first, r.inRows[k]));
      }
      std::vector<LBuf> temps;
      auto types = impl_[k]->tempTypes();
      for (size_t j = 0; j < types.size(); ++j)
        temps.push_back(LBuf::compact(offsets_[tempSlot_[k] + j], types[j],
                                      {u32(t.ns), u32(tens_[o].s[1]), u32(count(r.need[o])), u32(tens_[o].s[3])},
                                      e_.hw.npuLanes));
      id = impl_[k]->computeOn(ins, buffer(o, set, t.ns, r), temps, r.pads[k].first, r.pads[k].second, wait);
    }
    return id;
  }
  uint16_t store(const Tile &t, unsigned set, uint16_t wait) {
    Rows r = rows(t.h0, t.hs);
    const size_t o = size_t(index(ops_.back()->output));
    e_.b->setLayer(ops_.back()->name);
    return e_.move(false, tens_[o].d, t.n0, t.ns, 0, tens_[o].s[1], t.h0, t.hs, buffer(o, set, t.ns, r), wait);
  }

private:
  using Range = std::pair<int64_t, int64_t>; // rows [first, second]
  static int64_t count(const Range &r) { return r.second - r.first + 1; }
  struct TensorInfo {
    int id;
    bool external;
    DTensor d;
    std::array<int64_t, 4> s;
    int firstUse = 0; // op index of the first reader (externals)
  };
  struct Rows {
    std::vector<Range> need;   // per tensor: rows held for this slice
    std::vector<Range> inRows; // per op: rows of its inputs it reads (clipped)
    std::vector<Range> pads;   // per op: padding rows above / below
  };

  int index(int t) const {
    for (size_t i = 0; i < tens_.size(); ++i)
      if (tens_[i].id == t) return int(i);
    return -1;
  }
  void addTensor(int t, bool external) {
    TensorInfo ti{t, external, e_.ddr(t), e_.g.tensors[t].nchw(), int(impl_.size()) - 1};
    tens_.push_back(ti);
  }
  int64_t outC(size_t k) const { return e_.g.tensors[ops_[k]->output].nchw()[1]; }

  // Rows every tensor holds for output rows [h0, h0 + hs) of the group.
  Rows rows(int64_t h0, int64_t hs) const {
    Rows r;
    r.need.assign(tens_.size(), {INT64_MAX, INT64_MIN});
    r.inRows.assign(ops_.size(), {0, -1});
    r.pads.assign(ops_.size(), {0, 0});
    r.need[size_t(index(ops_.back()->output))] = {h0, h0 + hs - 1};
    for (size_t k = ops_.size(); k-- > 0;) {
      Range out = r.need[size_t(index(ops_[k]->output))];
      auto [a, b] = impl_[k]->inputRows(out.first, out.second);
      const int64_t inH = e_.g.tensors[ops_[k]->inputs[0]].nchw()[2];
      Range clipped{std::max<int64_t>(0, a), std::min(inH - 1, b)};
      r.inRows[k] = clipped;
      r.pads[k] = {clipped.first - a, b - clipped.second};
      for (int tid : ops_[k]->inputs) {
        if (e_.g.tensors[tid].isWeight()) continue;
        Range &n = r.need[size_t(index(tid))];
        n = {std::min(n.first, clipped.first), std::max(n.second, clipped.second)};
      }
    }
    return r;
  }
  static LBuf rowsView(LBuf b, int64_t bufFirst, const Range &want) {
    b.offset += u32((want.first - bufFirst) * b.stride.h * dtypeBytes(b.dtype));
    b.shape.h = u32(count(want));
    return b;
  }
  // Tensor i's buffer for this slice: compact over the rows it holds.
  LBuf buffer(size_t i, unsigned set, int64_t ns, const Rows &r) const {
    const TensorInfo &ti = tens_[i];
    return LBuf::compact(offsets_[slot_[i] + (perSet(i) ? set * perSetCount_ : 0)], ti.d.dtype,
                         {u32(ns), u32(ti.s[1]), u32(count(r.need[i])), u32(ti.s[3])}, e_.hw.npuLanes);
  }
  bool perSet(size_t i) const { return tens_[i].external || tens_[i].id == ops_.back()->output; }

  // Buffer sizes in plan order: fixed (op by op), intermediates, temps, then
  // `sets` copies of (externals, output). Records each buffer's slot.
  std::vector<uint64_t> sizes(int64_t ns, int64_t hs, unsigned sets) {
    const int64_t H = tens_[size_t(index(ops_.back()->output))].s[2];
    std::vector<int64_t> maxRows(tens_.size(), 0);
    for (int64_t h0 = 0; h0 < H; h0 += hs) {
      Rows r = rows(h0, std::min(hs, H - h0));
      for (size_t i = 0; i < tens_.size(); ++i) maxRows[i] = std::max(maxRows[i], count(r.need[i]));
    }
    const uint32_t lanes = e_.hw.npuLanes;
    auto bytesOf = [&](size_t i, DType t) {
      return LBuf::bytes(t, {u32(ns), u32(tens_[i].s[1]), u32(maxRows[i]), u32(tens_[i].s[3])}, lanes);
    };
    std::vector<uint64_t> v;
    for (size_t k = 0; k < ops_.size(); ++k) {
      auto f = impl_[k]->fixedBytes(outC(k));
      v.insert(v.end(), f.begin(), f.end());
    }
    slot_.assign(tens_.size(), 0);
    tempSlot_.assign(ops_.size(), 0);
    for (size_t i = 0; i < tens_.size(); ++i)
      if (!perSet(i)) slot_[i] = v.size(), v.push_back(bytesOf(i, tens_[i].d.dtype));
    for (size_t k = 0; k < ops_.size(); ++k) {
      tempSlot_[k] = v.size();
      for (DType t : impl_[k]->tempTypes()) v.push_back(bytesOf(size_t(index(ops_[k]->output)), t));
    }
    size_t first = v.size();
    for (unsigned s = 0; s < sets; ++s)
      for (size_t i = 0; i < tens_.size(); ++i)
        if (perSet(i)) {
          if (s == 0) slot_[i] = v.size();
          v.push_back(bytesOf(i, tens_[i].d.dtype));
        }
    perSetCount_ = sets ? (v.size() - first) / sets : 0;
    return v;
  }

  Emitter &e_;
  std::vector<const Op *> ops_;
  std::vector<std::unique_ptr<SlicedOp>> impl_;
  std::vector<TensorInfo> tens_;
  std::vector<size_t> slot_, tempSlot_;
  size_t perSetCount_ = 0;
  std::vector<uint32_t> offsets_;
  int64_t ns_ = 1, hs_ = 1;
  unsigned sets_ = 1;
};

// Emits ops [first, last] (one op: op by op; more: a layer group) into the
// current command group.
Status emitSegment(Emitter &e, size_t first, size_t last, OpReport &rep) {
  if (first == last) {
    e.b->setLayer(e.g.ops[first].name);
    return emitOp(e, e.g.ops[first], rep);
  }
  std::vector<const Op *> ops;
  for (size_t k = first; k <= last; ++k) ops.push_back(&e.g.ops[k]);
  LayerGroup grp(e, ops);
  std::string why = grp.unsuitable();
  if (!why.empty()) return makeError("ops cannot form a layer group: ", why);
  return grp.run(rep);
}

// Limits of the command fields an op's parameters go into.
Status checkEncodable(const Graph &g, const Op &op) {
  if (op.kind == OpKind::Conv || op.kind == OpKind::Pool) {
    WindowParams p = effectiveWindow(op, g.tensors[op.inputs[0]], g.tensors[op.output]);
    if (p.padBottom > 15 || p.padRight > 15)
      return makeError("end padding ", p.padBottom, "/", p.padRight, " (ceil mode included) exceeds 15");
  }
  for (int t : op.inputs) {
    auto s = g.tensors[t].nchw();
    for (int64_t d : s)
      if (d > 65535) return makeError("dimension ", d, " of '", g.tensors[t].name, "' exceeds 65535");
  }
  return Status::ok();
}

bmodel::DataType bmodelType(DType t) {
  switch (t) {
  case DType::F32: return bmodel::DataType::Float32;
  case DType::I8: return bmodel::DataType::Int8;
  case DType::U8: return bmodel::DataType::Uint8;
  case DType::I16: return bmodel::DataType::Int16;
  case DType::I32: return bmodel::DataType::Int32;
  }
  return bmodel::DataType::Float32;
}

bmodel::Tensor ioTensor(const Graph &g, const AddressMap &am, int t) {
  const Tensor &x = g.tensors[t];
  bmodel::Tensor d;
  d.name = x.name, d.dtype = bmodelType(x.dtype);
  d.storeMode = isInt8Like(x.dtype) ? bmodel::StoreMode::N4 : bmodel::StoreMode::N1;
  d.deviceAddr = am.addr[t];
  for (int64_t v : x.shape) d.shape.push_back(uint64_t(v));
  d.size = activationBytes(x);
  d.scale = x.dtype == DType::F32 ? 1.0f : x.scale;
  return d;
}

} // namespace

Result<double> estimateCycles(const CommandBuilder::Group &group, const isa::HwConfig &hw) {
  std::vector<isa::SyncIds> tiuIds, gdmaIds;
  for (const auto &c : group.tiu) tiuIds.push_back({c.cmdIdTpu, c.cmdIdGdma});
  for (const auto &c : group.gdma) gdmaIds.push_back({c.cmdId, c.eng0SyncId});
  auto order = isa::programOrder(tiuIds, gdmaIds);
  if (!order) return order.status();
  std::vector<double> tiuEnd(group.tiu.size() + 1, 0), gdmaEnd(group.gdma.size() + 1, 0);
  double tiuFree = 0, gdmaFree = 0;
  const double bw = timing::ddrBytesPerCycle(hw);
  for (const isa::OrderedCommand &oc : *order) {
    if (oc.engine == isa::Engine::Tiu) {
      const auto &c = group.tiu[oc.index];
      double start = std::max(tiuFree, gdmaEnd[c.cmdIdGdma]);
      tiuFree = tiuEnd[oc.index + 1] = start + double(timing::cycles(c, hw));
    } else {
      const auto &c = group.gdma[oc.index];
      auto cost = timing::gdmaCost(c, hw);
      if (!cost) return cost.status();
      double start = std::max(gdmaFree, tiuEnd[c.eng0SyncId]);
      gdmaFree = gdmaEnd[oc.index + 1] = start + cost->cycles(bw);
    }
  }
  return std::max(tiuFree, gdmaFree);
}

std::string CompileReport::text() const {
  std::ostringstream os;
  size_t groups = 0;
  for (const OpReport &r : ops) groups += r.ops > 1;
  os << "code generation: " << ops.size() << " segments (" << groups << " layer groups), coeff " << coeffBytes << " bytes, neuron "
     << neuronBytes << " bytes (" << activationBytesNoReuse << " without reuse)\n";
  char line[256];
  for (const OpReport &r : ops) {
    std::snprintf(line, sizeof line, "  %-14s %-24s slices %4llu (n %lld c %lld h %lld) x%u  lmem %7llu B  tiu %5llu gdma %5llu  ~%.0f cycles\n",
                  opKindName(r.kind), r.name.c_str(), (unsigned long long)r.slices, (long long)r.nSlice,
                  (long long)r.cSlice, (long long)r.hSlice, r.buffers, (unsigned long long)r.lmemBytes,
                  (unsigned long long)r.tiuCommands, (unsigned long long)r.gdmaCommands, r.cycles);
    os << line;
  }
  std::snprintf(line, sizeof line, "estimated total: %.0f cycles\n", totalCycles);
  os << line;
  return os.str();
}

Result<bmodel::Model> compileToBmodel(const Graph &g, const Options &opt, CompileReport *report) {
  TPU_RETURN_IF_ERROR(g.validate());
  TPU_RETURN_IF_ERROR(opt.hw.validate());
  for (const Op &op : g.ops) {
    Status st = checkEncodable(g, op);
    if (!st) return st.prefix(std::string(opKindName(op.kind)) + " '" + op.name + "'");
  }
  auto am = assignAddresses(g, opt.hw);
  if (!am) return am.status();
  // Emits ops [i, j] as one command group of `cb` and fills its report.
  auto emitInto = [&](CommandBuilder &cb, size_t i, size_t j, OpReport &r) -> Status {
    Emitter se{g, opt, opt.hw, *am, &cb};
    const Op &first = g.ops[i];
    r.name = first.name, r.kind = first.kind, r.ops = j - i + 1;
    for (size_t k = i + 1; k <= j; ++k) r.name += "+" + g.ops[k].name;
    cb.beginGroup();
    Status st = emitSegment(se, i, j, r);
    if (!st)
      return st.prefix(j == i ? std::string(opKindName(first.kind)) + " '" + first.name + "'"
                              : "layer group '" + r.name + "'");
    const auto &grp = cb.groups().back();
    r.tiuCommands = grp.tiu.size(), r.gdmaCommands = grp.gdma.size();
    auto cyc = estimateCycles(grp, opt.hw);
    if (!cyc) return Status(cyc.status()).prefix("'" + r.name + "'");
    r.cycles = *cyc;
    return Status::ok();
  };
  // Dynamic programming over cut points: best[j] = cheapest way to run ops
  // [0, j); a segment's cost is its estimated cycles.
  const size_t M = g.ops.size();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> best(M + 1, inf);
  std::vector<size_t> from(M + 1, 0);
  best[0] = 0;
  const size_t maxLen = opt.layerGroups ? std::max(1u, opt.maxGroupOps) : 1;
  for (size_t j = 0; j < M && opt.segmentStarts.empty(); ++j)
    for (size_t len = 1; len <= std::min(maxLen, j + 1); ++len) {
      const size_t i = j + 1 - len;
      if (best[i] == inf) continue;
      CommandBuilder trial;
      OpReport r;
      Status st = emitInto(trial, i, j, r);
      if (!st) {
        if (len == 1) return st; // an op that cannot be compiled at all
        continue;                // not a valid group: other cuts remain
      }
      if (best[i] + r.cycles < best[j + 1]) best[j + 1] = best[i] + r.cycles, from[j + 1] = i;
    }
  std::vector<std::pair<size_t, size_t>> segments;
  for (size_t j = M; j > 0; j = from[j]) segments.emplace_back(from[j], j - 1);
  std::reverse(segments.begin(), segments.end());
  if (!opt.segmentStarts.empty()) {
    segments.clear();
    for (size_t k = 0; k < opt.segmentStarts.size(); ++k) {
      size_t i = opt.segmentStarts[k], j = k + 1 < opt.segmentStarts.size() ? opt.segmentStarts[k + 1] : M;
      if (j <= i || j > M || (k == 0 && i != 0))
        return makeError("segmentStarts must increase from 0 and stay below the op count ", M);
      segments.emplace_back(i, j - 1);
    }
  }

  CommandBuilder b;
  CompileReport rep;
  for (auto [i, j] : segments) {
    OpReport r;
    TPU_RETURN_IF_ERROR(emitInto(b, i, j, r));
    rep.totalCycles += r.cycles;
    rep.ops.push_back(r);
  }
  auto groups = b.finish();
  if (!groups) return groups.status();

  bmodel::Model m;
  m.type = "tpuc codegen";
  m.version = "1";
  bmodel::Net net;
  net.name = g.name;
  for (int t : g.inputs) net.inputs.push_back(ioTensor(g, *am, t));
  for (int t : g.outputs) net.outputs.push_back(ioTensor(g, *am, t));
  net.ctxAddr = am->neuronAddr, net.ctxSize = am->neuronSize;
  net.coeffAddr = am->coeffAddr, net.coeff = am->coeff;
  net.groups = groups.take();
  m.neuronSize = am->neuronSize;
  m.nets.push_back(std::move(net));
  rep.coeffBytes = am->coeffSize, rep.neuronBytes = am->neuronSize;
  rep.activationBytesNoReuse = am->activationTotal;
  if (report) *report = std::move(rep);
  return m;
}

Status writeBmodel(const Graph &g, const Options &opt, const std::string &path, CompileReport *report) {
  auto m = compileToBmodel(g, opt, report);
  if (!m) return m.status();
  return bmodel::writeFile(*m, path);
}

} // namespace tpu::backend
