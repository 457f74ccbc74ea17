// Layer groups (docs/codegen.md, "Layer group").
#include "compiler/Backend/Emit.h"

namespace tpu::backend::emit {

// ---------------------------------------------------------------------------
// Layer groups: consecutive ops whose intermediate tensors stay in local
// memory. The group's output is cut into slices along N and H; each op's
// rows are found backwards from the slice (windows add halo rows, clipped
// rows become padding), so intermediate rows overlapping between slices are
// recomputed. Group inputs from DDR and the group output are double-buffered
// (runPipeline); intermediates, scratch and weights have one buffer. The
// weights are loaded once, after the first slice's inputs and op by op, and
// each op's first computation waits only for its own weights: the GDMA
// loads the next ops' weights while the TIU computes (weight prefetch).
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
      if (!impl_[k] || !impl_[k]->local()) return std::string(opKindName(ops_[k]->kind)) + " is not groupable";
      for (int t : ops_[k]->inputs)
        if (isBroadcast(k, t) && !tens_[size_t(index(t))].external) return "a broadcast input is computed in the group";
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
      fixedId_.clear();
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

  // Pipeline stages (runPipeline). A group's slices never change channels,
  // so loadFixed is called once, before the first load: it only marks the
  // weights to be loaded after that load's inputs.
  uint16_t loadFixed(const Tile &t, uint16_t wait) {
    fixedPending_ = true, fixedTile_ = t, fixedWait_ = wait;
    return 0;
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
    if (fixedPending_) {
      fixedPending_ = false;
      fixedId_.assign(ops_.size(), 0);
      for (size_t k = 0; k < ops_.size(); ++k) {
        if (impl_[k]->fixedBytes(outC(k)).empty()) continue;
        e_.b->setLayer(ops_[k]->name);
        fixedId_[k] = impl_[k]->loadFixed(Tile{0, fixedTile_.ns, 0, outC(k), 0, 1}, fixedWait_);
      }
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
      std::vector<LocalTensor> ins;
      for (int tid : op.inputs) {
        if (e_.g.tensors[tid].isWeight()) continue;
        size_t i = size_t(index(tid));
        const auto bc = impl_[k]->local()->broadcastDims(tid);
        LocalTensor v = rowsView(buffer(i, set, t.ns, r), r.need[i].first, bc[2] ? Range{0, 0} : r.inRows[k]);
        if (bc[2]) v.shape.h = u32(count(r.inRows[k])), v.stride.h = 0;
        if (bc[3]) v.shape.w = u32(tens_[o].s[3]), v.stride.w = 0;
        ins.push_back(v);
      }
      std::vector<LocalTensor> temps;
      auto types = impl_[k]->local()->tempTypes();
      for (size_t j = 0; j < types.size(); ++j)
        temps.push_back(LocalTensor::compact(offsets_[tempSlot_[k] + j], types[j],
                                      {u32(t.ns), u32(tens_[o].s[1]), u32(count(r.need[o])), u32(tens_[o].s[3])},
                                      e_.hw.npuLanes));
      const uint16_t opWait = std::max(wait, k < fixedId_.size() ? fixedId_[k] : uint16_t(0));
      id = impl_[k]->local()->computeOn(ins, buffer(o, set, t.ns, r), temps, r.pads[k].first, r.pads[k].second, opWait);
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
  bool isBroadcast(size_t k, int t) const {
    const auto bc = impl_[k]->local()->broadcastDims(t);
    return std::find(bc.begin(), bc.end(), true) != bc.end();
  }
  // The input whose rows op k reads row by row (not one broadcast along H).
  int rowInput(size_t k) const {
    for (int t : ops_[k]->inputs)
      if (!e_.g.tensors[t].isWeight() && !impl_[k]->local()->broadcastDims(t)[2]) return t;
    return ops_[k]->inputs[0];
  }

  // Rows every tensor holds for output rows [h0, h0 + hs) of the group.
  Rows rows(int64_t h0, int64_t hs) const {
    Rows r;
    r.need.assign(tens_.size(), {INT64_MAX, INT64_MIN});
    r.inRows.assign(ops_.size(), {0, -1});
    r.pads.assign(ops_.size(), {0, 0});
    r.need[size_t(index(ops_.back()->output))] = {h0, h0 + hs - 1};
    for (size_t k = ops_.size(); k-- > 0;) {
      Range out = r.need[size_t(index(ops_[k]->output))];
      auto [a, b] = impl_[k]->local()->inputRows(out.first, out.second);
      const int64_t inH = e_.g.tensors[rowInput(k)].nchw()[2];
      Range clipped{std::max<int64_t>(0, a), std::min(inH - 1, b)};
      r.inRows[k] = clipped;
      r.pads[k] = {clipped.first - a, b - clipped.second};
      for (int tid : ops_[k]->inputs) {
        if (e_.g.tensors[tid].isWeight()) continue;
        const Range want = impl_[k]->local()->broadcastDims(tid)[2] ? Range{0, 0} : clipped;
        Range &n = r.need[size_t(index(tid))];
        n = {std::min(n.first, want.first), std::max(n.second, want.second)};
      }
    }
    return r;
  }
  static LocalTensor rowsView(LocalTensor b, int64_t bufFirst, const Range &want) {
    b.offset += u32((want.first - bufFirst) * b.stride.h * dtypeBytes(b.dtype));
    b.shape.h = u32(count(want));
    return b;
  }
  // Tensor i's buffer for this slice: compact over the rows it holds; those
  // that cross DDR (perSet) with room for whole 4N groups when stored 4N.
  LocalTensor buffer(size_t i, unsigned set, int64_t ns, const Rows &r) const {
    const TensorInfo &ti = tens_[i];
    const Shape4 s{u32(ns), u32(ti.s[1]), u32(count(r.need[i])), u32(ti.s[3])};
    if (!perSet(i)) return LocalTensor::compact(offsets_[slot_[i]], ti.d.dtype, s, e_.hw.npuLanes);
    return LocalTensor::activation(offsets_[slot_[i] + set * perSetCount_], ti.d, s, e_.hw.npuLanes);
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
      return LocalTensor::bytes(t, {u32(ns), u32(tens_[i].s[1]), u32(maxRows[i]), u32(tens_[i].s[3])}, lanes);
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
      for (DType t : impl_[k]->local()->tempTypes()) v.push_back(bytesOf(size_t(index(ops_[k]->output)), t));
    }
    size_t first = v.size();
    for (unsigned s = 0; s < sets; ++s)
      for (size_t i = 0; i < tens_.size(); ++i)
        if (perSet(i)) {
          if (s == 0) slot_[i] = v.size();
          v.push_back(LocalTensor::activationBytes(
              tens_[i].d, {u32(ns), u32(tens_[i].s[1]), u32(maxRows[i]), u32(tens_[i].s[3])}, lanes));
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
  bool fixedPending_ = false; // loadFixed was called, the weights follow the next load
  Tile fixedTile_{};
  uint16_t fixedWait_ = 0;
  std::vector<uint16_t> fixedId_; // per op: GDMA id of its last weight load (0: none)
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

} // namespace tpu::backend::emit
