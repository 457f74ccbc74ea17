// One op alone: the slicing search of a SlicedOp, and the dispatch to each
// kind's emitter (OpRegistry.h) (docs/codegen.md, "Emitting commands").
#include "compiler/Backend/Emit.h"
#include "compiler/Backend/OpRegistry.h"

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

std::unique_ptr<SlicedOp> makeSliced(Emitter &e, const Op &op) {
  const OpImpl &impl = opImpl(op.kind);
  return impl.sliced ? impl.sliced(e, op) : nullptr;
}

Status emitOp(Emitter &e, const Op &op, OpReport &rep) {
  const OpImpl &impl = opImpl(op.kind);
  if (!impl.sliced) {
    impl.direct(e, op);
    return Status::ok();
  }
  return impl.sliced(e, op)->run(rep);
}

} // namespace tpu::backend::emit
