// Internal to compiler/Backend: the pieces the per-op emitters
// (Ops/*.cpp), layer groups (LayerGroup.cpp) and the driver
// (CodeGen.cpp) share: local buffers, DDR views, the emitter context, the
// slice pipeline and the candidate costing. Not a public interface.
#pragma once

#include "arith/IntArith.h"
#include "compiler/Backend/AddressAssigner.h"
#include "compiler/Backend/CodeGen.h"
#include "compiler/Backend/CommandBuilder.h"
#include "compiler/Backend/Graph.h"
#include "compiler/Backend/LmemAllocator.h"

#include <algorithm>
#include <array>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

namespace tpu::backend::emit {

using isa::LocalOperand;
using isa::Prec;
using isa::Shape4;
using isa::Strides4;

inline Prec precOf(DType t) {
  switch (t) {
  case DType::F32: return Prec::Fp32;
  case DType::I16: return Prec::Int16;
  case DType::I32: return Prec::Int32;
  default:
    return Prec::Int8; // 16-bit floats never reach the BM1684 (compileToBmodel refuses them)
  }
}
inline isa::GdmaFormat formatOf(DType t) {
  switch (t) {
  case DType::F32: return isa::GdmaFormat::Fp32;
  case DType::I32: return isa::GdmaFormat::Fp32; // GDMA has no int32 format: a 4-byte copy (same format: no conversion)
  case DType::I16: return isa::GdmaFormat::Int16;
  case DType::U8: return isa::GdmaFormat::Uint8;
  default: return isa::GdmaFormat::Int8;
  }
}
inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
// Most channels one TIU operand can have (the width of the *_c fields).
inline int64_t maxChannels() { return int64_t(isa::fieldInfo(isa::TiuField::res0_c).maxValue()); }

inline uint32_t u32(int64_t v) { return uint32_t(v); }

// An activation in DDR, 1N or 4N (stored4N; docs/isa.md, "int8 4N"). A view
// may reshape `s` (broadcasts, spreadOverLanes): the layout stays the tensor's.
struct DTensor {
  uint64_t addr = 0;
  DType dtype = DType::F32;
  std::array<int64_t, 4> s{1, 1, 1, 1};
  bool packed4N = false;
  bool n4() const { return packed4N; }

  static DTensor of(const Tensor &t, uint64_t addr) {
    DTensor d;
    d.addr = addr, d.dtype = t.dtype, d.s = t.nchw(), d.packed4N = stored4N(t);
    return d;
  }
  // Element strides (n, c, h, w) in elements of the dtype: 1N compact; 4N
  // the item is the lowest byte of each word, so c, h, w step by 4 and n
  // counts within one group of four only.
  std::array<int64_t, 4> strides() const {
    if (n4()) return {1, 4 * s[2] * s[3], 4 * s[3], 4};
    return {s[1] * s[2] * s[3], s[2] * s[3], s[3], 1};
  }
  // Element offset of item n's first element (c, h, w = 0).
  uint64_t itemOffset(int64_t n) const {
    const int64_t chw = s[1] * s[2] * s[3];
    return n4() ? uint64_t((n / 4) * 4 * chw + n % 4) : uint64_t(n * chw);
  }
};

// ---------------------------------------------------------------------------
// Tensors in local memory: channel c in lane (lane + c) % lanes, explicit
// strides in elements (docs/isa.md, "Local memory").
struct LocalTensor {
  uint32_t offset = 0, lane = 0;
  DType dtype = DType::F32;
  Shape4 shape;
  Strides4 stride;

  // Compact layout: w 1, h W, c H*W, n rounds(C)*H*W.
  static LocalTensor compact(uint32_t offset, DType t, Shape4 s, uint32_t lanes) {
    LocalTensor b;
    b.offset = offset, b.dtype = t, b.shape = s;
    uint32_t plane = s.h * s.w;
    b.stride = {u32(ceilDiv(s.c, lanes)) * plane, plane, s.w, 1};
    return b;
  }
  static uint64_t bytes(DType t, Shape4 s, uint32_t lanes) {
    return uint64_t(s.n) * ceilDiv(s.c, lanes) * s.h * s.w * dtypeBytes(t);
  }
  // A slice of DDR activation `d` moved to/from DDR: the buffer of a 4N
  // tensor holds whole groups (items rounded up to 4), so a group moves as
  // words in one run (move()).
  uint32_t nCap = 0; // items the buffer has room for
  static uint32_t items(bool n4, uint32_t n) { return n4 ? (n + 3) / 4 * 4 : n; }
  static LocalTensor activation(uint32_t offset, const DTensor &d, Shape4 s, uint32_t lanes) {
    LocalTensor b = compact(offset, d.dtype, s, lanes);
    b.nCap = items(d.n4(), s.n);
    return b;
  }
  static uint64_t activationBytes(const DTensor &d, Shape4 s, uint32_t lanes) {
    s.n = items(d.n4(), s.n);
    return bytes(d.dtype, s, lanes);
  }
  uint32_t addr(const isa::HwConfig &hw) const { return lane * hw.lmemBytesPerLane + offset; }
  LocalOperand operand(const isa::HwConfig &hw) const {
    LocalOperand o;
    o.addr = addr(hw), o.shape = shape, o.prec = precOf(dtype), o.isSigned = dtype != DType::U8;
    o.strideMode = isa::StrideMode::Explicit, o.stride = stride;
    return o;
  }
  LocalTensor channels(uint32_t c0, uint32_t cs, uint32_t lanes) const {
    LocalTensor b = *this;
    uint32_t abs = lane + c0;
    b.lane = abs % lanes;
    b.offset = offset + (abs / lanes) * stride.c * dtypeBytes(dtype);
    b.shape.c = cs;
    return b;
  }
  // A per-channel vector (a bias, a channel weight): one element per
  // channel, seen with shape s (read for every n, h, w).
  static LocalTensor perChannel(uint32_t offset, DType t, Shape4 s) {
    LocalTensor b;
    b.offset = offset, b.dtype = t, b.shape = s, b.stride = {0, 1, 0, 0};
    return b;
  }
  static uint64_t perChannelBytes(DType t, int64_t channels, uint32_t lanes) {
    return uint64_t(ceilDiv(channels, lanes)) * dtypeBytes(t);
  }
  LocalTensor withType(DType t) const {
    LocalTensor b = *this;
    b.dtype = t;
    return b;
  }
};

inline LocalOperand constant(DType t, int64_t v) {
  LocalOperand o;
  o.isConst = true, o.prec = precOf(t), o.isSigned = t != DType::U8;
  o.constValue = uint32_t(v);
  return o;
}
inline LocalOperand constantF(float v) {
  LocalOperand o;
  o.isConst = true, o.prec = Prec::Fp32, o.constValue = sim::floatBits(v);
  return o;
}

struct Emitter {
  const Graph &g;
  const Options &opt;
  const isa::HwConfig &hw;
  const AddressMap &am;
  CommandBuilder *b; // where commands go (a scratch builder while costing candidates)

  DTensor ddr(int t) const { return DTensor::of(g.tensors[size_t(t)], am.addr[size_t(t)]); }

  // Moves rows [h0, h0+hs) of items [n0, n0+ns), channels [c0, c0+cs) of a
  // DDR activation to/from local buffer `l` (shape (ns, cs, hs, W)).
  // channelBroadcast (loads of a one-channel tensor): every local channel
  // gets DDR channel 0 (channel stride 0).
  uint16_t move(bool toLocal, const DTensor &d, int64_t n0, int64_t ns, int64_t c0, int64_t cs,
                int64_t h0, int64_t hs, const LocalTensor &l, uint16_t wait, bool channelBroadcast = false) {
    const int64_t C = d.s[1], H = d.s[2], W = d.s[3];
    const uint64_t e = dtypeBytes(d.dtype);
    uint16_t id = 0;
    auto emit = [&](uint64_t gaddr, std::array<uint32_t, 4> gstride, int64_t nFrom, int64_t nCount) {
      isa::GdmaCommand c;
      c.direction = toLocal ? isa::GdmaDirection::S2L : isa::GdmaDirection::L2S;
      isa::GdmaTensor gt, lt;
      gt.addr = gaddr, gt.format = formatOf(d.dtype);
      if (channelBroadcast) gstride[1] = 0;
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
      // Word mode: the slice holds every valid item of the group (slots past
      // the batch are padding on both sides) and the buffer has room for 4.
      const int64_t valid = std::min<int64_t>(4, d.s[0] - grp * 4);
      const bool whole = n == grp * 4 && count == valid && (n - n0) + 4 <= int64_t(l.nCap);
      if (whole && hs * W <= 0xFFFF && l.stride.w == 1 && l.stride.h == uint32_t(W)) {
        // The words in DDR order, seen on both sides as (1, c, h*w, item):
        // one contiguous DDR run per channel slice.
        isa::GdmaCommand c;
        c.direction = toLocal ? isa::GdmaDirection::S2L : isa::GdmaDirection::L2S;
        isa::GdmaTensor gt, lt;
        gt.addr = a, gt.format = lt.format = formatOf(d.dtype);
        gt.shape = lt.shape = {1, u32(cs), u32(hs * W), 4};
        gt.stride = {0, channelBroadcast ? 0 : u32(4 * H * W), 4, 1};
        lt.addr = l.addr(hw) + (n - n0) * l.stride.n * e, lt.stride = {0, l.stride.c, 1, l.stride.n};
        c.src = toLocal ? gt : lt;
        c.dst = toLocal ? lt : gt;
        id = b->gdma(c, wait);
      } else {
        emit(a, isa::int8x4NStrides(u32(H), u32(W)), n, count);
      }
      n += count;
    }
    return id;
  }

  // A plain copy of a weight slice from DDR (given shape and strides) into `l`.
  uint16_t loadWeight(uint64_t addr, DType t, std::array<uint32_t, 4> shape, std::array<uint32_t, 4> gstride,
                      const LocalTensor &l, uint16_t wait) {
    isa::GdmaCommand c;
    c.direction = isa::GdmaDirection::S2L;
    c.src.addr = addr, c.src.format = formatOf(t), c.src.shape = shape, c.src.stride = gstride;
    c.dst.addr = l.addr(hw), c.dst.format = formatOf(t), c.dst.shape = shape;
    c.dst.stride = {l.stride.n, l.stride.c, l.stride.h, l.stride.w};
    return b->gdma(c, wait);
  }

  // Channels [c0, c0 + cs) of a per-channel vector in DDR into local offset `offset`.
  uint16_t loadPerChannel(uint64_t addr, DType t, int64_t c0, int64_t cs, uint32_t offset, uint16_t wait) {
    return loadWeight(addr + uint64_t(c0) * dtypeBytes(t), t, {1, u32(cs), 1, 1}, {0, 1, 1, 1},
                      LocalTensor::perChannel(offset, t, {1, u32(cs), 1, 1}), wait);
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

class LocalOp;

// One op compiled alone: its output cut into slices (run() picks the
// slicing by cost), each slice loaded, computed and stored.
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
  // The pipeline stages (runPipeline); each returns the id of its last command.
  virtual uint16_t loadFixed(const Tile &t, uint16_t wait) { (void)t; return wait; }
  virtual uint16_t load(const Tile &t, unsigned set, uint16_t wait) = 0;
  virtual uint16_t compute(const Tile &t, unsigned set, uint16_t wait) = 0;
  virtual uint16_t store(const Tile &t, unsigned set, uint16_t wait) = 0;

  Status run(OpReport &rep);

  // The op's local form for layer groups; null when it cannot join one.
  virtual LocalOp *local() { return nullptr; }
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


// An op that runs on LMEM-resident slices of full channels inside a layer
// group (LayerGroup.cpp). Its fixed buffers (weights) are the SlicedOp's.
class LocalOp {
public:
  virtual ~LocalOp() = default;
  // Input rows (unclipped, may be negative = padding) output rows [lo, hi] read.
  virtual std::pair<int64_t, int64_t> inputRows(int64_t lo, int64_t hi) const { return {lo, hi}; }
  // Scratch buffers the computation needs, shaped like the output.
  virtual std::vector<DType> tempTypes() const { return {}; }
  // Dims (N, C, H, W) along which input `tensor` is read broadcast: the group
  // holds its one row and reads it with stride 0 along H and W.
  virtual std::array<bool, 4> broadcastDims(int tensor) const { (void)tensor; return {}; }
  // The TIU commands of one slice: `ins` are the activation inputs (rows
  // clipped to the tensor, padT/padB = padding rows of a window), `out` the
  // output rows. Returns the last TIU id.
  virtual uint16_t computeOn(const std::vector<LocalTensor> &ins, const LocalTensor &out, const std::vector<LocalTensor> &temps,
                             int64_t padT, int64_t padB, uint16_t wait) = 0;
};

// An OpImpl::sliced for an emitter class constructed from (Emitter &, const Op &).
template <class T> std::unique_ptr<SlicedOp> slicedAs(Emitter &e, const Op &op) {
  return std::make_unique<T>(e, op);
}

// The sliced implementation of an op; null for pure data movement.
std::unique_ptr<SlicedOp> makeSliced(Emitter &e, const Op &op);
// Emits one op alone (sliced, pipelined) into the current command group.
Status emitOp(Emitter &e, const Op &op, OpReport &rep);
// Emits ops [first, last]: one op alone, more as a layer group.
Status emitSegment(Emitter &e, size_t first, size_t last, OpReport &rep);

} // namespace tpu::backend::emit
