#include "compiler/Backend/AddressAssigner.h"

#include "compiler/Backend/OpRegistry.h"

#include <algorithm>
#include <map>

namespace tpu::backend {

namespace {
uint64_t alignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
} // namespace

int64_t channelByteOffset(const Tensor &t, int64_t c0) {
  const auto s = t.nchw();
  const bool n4 = stored4N(t);
  if (s[0] > (n4 ? 4 : 1)) return -1;
  return c0 * s[2] * s[3] * (n4 ? 4 : int64_t(dtypeBytes(t.dtype)));
}

int64_t viewByteOffset(const Graph &g, const Op &op, int64_t *channel) {
  const OpImpl &impl = opImpl(op.kind);
  const int64_t c0 = impl.viewedChannel ? impl.viewedChannel(g, op) : -1;
  const Tensor &x = g.tensors[size_t(op.inputs[0])];
  const int64_t offset = c0 < 0 || x.isWeight() ? -1 : channelByteOffset(x, c0);
  if (channel) *channel = offset < 0 ? -1 : c0;
  return offset;
}

uint64_t activationBytes(const Tensor &t) {
  auto s = t.nchw();
  uint64_t n = uint64_t(s[0]);
  if (stored4N(t)) n = (n + 3) / 4 * 4;
  return n * uint64_t(s[1] * s[2] * s[3]) * dtypeBytes(t.dtype);
}

Result<AddressMap> assignAddresses(const Graph &g, const isa::HwConfig &cfg,
                                   const std::vector<std::pair<size_t, size_t>> &segments) {
  AddressMap m;
  const size_t nt = g.tensors.size();
  m.addr.assign(nt, 0);
  // Coefficients, in tensor order, only those an op reads.
  std::vector<char> used(nt, 0);
  for (const Op &op : g.ops)
    for (int t : op.inputs) used[t] = 1;
  m.coeffAddr = cfg.globalMemBase;
  for (size_t t = 0; t < nt; ++t) {
    if (!g.tensors[t].isWeight() || !used[t]) continue;
    m.coeff.resize(alignUp(m.coeff.size(), cfg.coeffAlignBytes), 0);
    m.addr[t] = m.coeffAddr + m.coeff.size();
    const std::vector<uint8_t> &bytes = g.tensors[t].data;
    m.coeff.insert(m.coeff.end(), bytes.begin(), bytes.end());
  }
  m.coeffSize = m.coeff.size();

  // Storage roots and live ranges. A tensor may live inside another one's
  // bytes (its parent, at a byte offset): a Reshape output is its input's
  // bytes, a pure view's output (viewByteOffset: a slice of whole channels)
  // a run of them, and an input of a channel-joining op (a concat) that
  // nothing else claims is written by its producer straight into the
  // output's channels, so the view and the join move nothing (TPU-MLIR's
  // in-place concat). Such an input is an op
  // output of its own (not an alias, a graph input or output) and appears
  // once in the concat. Parents point to earlier tensors or to the concat
  // output, so the chains end; each tensor's root is the end of its chain.
  // Graph inputs and outputs keep bytes of their own (a concat output may
  // hold others': the runtime reads it whole).
  std::vector<int> parent(nt);
  std::vector<uint64_t> parentOffset(nt, 0);
  for (size_t t = 0; t < nt; ++t) parent[t] = int(t);
  std::vector<char> io(nt, 0);
  for (int t : g.inputs) io[size_t(t)] = 1;
  for (int t : g.outputs) io[size_t(t)] = 1;
  std::vector<int64_t> viewStart(nt, -1); // in-place view outputs: their first channel in the input
  auto channels = [&](int t) { return g.tensors[size_t(t)].nchw()[1]; };
  auto claimable = [&](int t) { return parent[size_t(t)] == t && !io[size_t(t)] && !g.tensors[size_t(t)].isWeight(); };
  for (const Op &op : g.ops) {
    int64_t viewChannel = -1;
    const int64_t view = io[size_t(op.output)] ? -1 : viewByteOffset(g, op, &viewChannel);
    if (opKindInfo(op.kind).sharesInputBytes || view >= 0) {
      parent[size_t(op.output)] = op.inputs[0], parentOffset[size_t(op.output)] = uint64_t(std::max<int64_t>(view, 0));
      viewStart[size_t(op.output)] = viewChannel;
      continue;
    }
    if (!opImpl(op.kind).joinsInputChannels) continue;
    const Tensor &y = g.tensors[size_t(op.output)];
    int64_t c0 = 0;
    for (size_t k = 0; k < op.inputs.size(); c0 += channels(op.inputs[k++])) {
      const int x = op.inputs[k];
      const int64_t at = channelByteOffset(y, c0);
      if (at < 0 || std::count(op.inputs.begin(), op.inputs.end(), x) > 1) continue;
      if (claimable(x)) {
        parent[size_t(x)] = op.output, parentOffset[size_t(x)] = uint64_t(at);
        continue;
      }
      // Consecutive inputs that are in-place views of one tensor s, in
      // order, covering all of it (YOLOv8's C2f: split, then concat the
      // halves): s itself goes into the output, the views with it.
      const int src = parent[size_t(x)];
      if (viewStart[size_t(x)] != 0 || !claimable(src)) continue;
      size_t j = k;
      int64_t covered = 0;
      while (j < op.inputs.size() && parent[size_t(op.inputs[j])] == src && viewStart[size_t(op.inputs[j])] == covered)
        covered += channels(op.inputs[j++]);
      if (covered != channels(src)) continue;
      parent[size_t(src)] = op.output, parentOffset[size_t(src)] = uint64_t(at);
      for (; k + 1 < j; ++k) c0 += channels(op.inputs[k]);
    }
  }
  std::vector<int> root(nt);
  std::vector<uint64_t> rootOffset(nt, 0);
  for (size_t t = 0; t < nt; ++t) {
    int r = int(t);
    while (parent[size_t(r)] != r) rootOffset[t] += parentOffset[size_t(r)], r = parent[size_t(r)];
    root[t] = r;
  }

  // Live ranges, in op indices widened to each op's segment: written from
  // the segment's first op, read until its last.
  const int end = int(g.ops.size());
  std::vector<int> segFirst(g.ops.size()), segLast(g.ops.size());
  for (int i = 0; i < end; ++i) segFirst[size_t(i)] = segLast[size_t(i)] = i;
  for (auto [a, b] : segments) {
    if (a > b || b >= g.ops.size())
      return makeError("segment [", a, ", ", b, "] is outside the ", g.ops.size(), " ops");
    for (size_t i = a; i <= b; ++i) segFirst[i] = int(a), segLast[i] = int(b);
  }
  std::vector<int> first(nt, end + 1), last(nt, -2);
  for (int t : g.inputs) first[root[t]] = -1, last[root[t]] = std::max(last[root[t]], -1);
  for (int i = 0; i < end; ++i) {
    const Op &op = g.ops[i];
    const int from = segFirst[size_t(i)], to = segLast[size_t(i)];
    first[root[op.output]] = std::min(first[root[op.output]], from);
    last[root[op.output]] = std::max(last[root[op.output]], to);
    for (int t : op.inputs) last[root[t]] = std::max(last[root[t]], to);
  }
  for (int t : g.outputs) last[root[t]] = end;
  for (int t : g.inputs) last[root[t]] = end; // inputs stay valid: the user may re-launch
  // A layer group's intermediates (outputs of its ops but the last, read only
  // inside it) stay in local memory and take no DDR.
  std::vector<char> local(nt, 0);
  for (int i = 0; i < end; ++i) {
    const int t = g.ops[size_t(i)].output;
    local[size_t(t)] = root[t] == t && i < segLast[size_t(i)] && last[t] <= segLast[size_t(i)];
  }

  // First fit over live intervals, in order of definition.
  struct Live { uint64_t off, size; int last; };
  std::vector<Live> live;
  std::vector<uint64_t> offset(nt, 0);
  std::vector<size_t> order;
  for (size_t t = 0; t < nt; ++t)
    if (root[t] == int(t) && !g.tensors[t].isWeight() && first[t] <= end) {
      if (local[t]) m.activationTotal += alignUp(activationBytes(g.tensors[t]), cfg.dmaAlignBytes);
      else order.push_back(t);
    }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return first[a] < first[b]; });
  uint64_t top = 0;
  for (size_t t : order) {
    uint64_t size = alignUp(activationBytes(g.tensors[t]), cfg.dmaAlignBytes);
    m.activationTotal += size;
    live.erase(std::remove_if(live.begin(), live.end(), [&](const Live &l) { return l.last < first[t]; }),
               live.end());
    std::sort(live.begin(), live.end(), [](const Live &a, const Live &b) { return a.off < b.off; });
    uint64_t at = 0;
    for (const Live &l : live) {
      if (at + size <= l.off) break;
      at = std::max(at, l.off + l.size);
    }
    offset[t] = at;
    live.push_back({at, size, last[t]});
    top = std::max(top, at + size);
  }
  m.neuronAddr = alignUp(m.coeffAddr + m.coeffSize, cfg.coeffAlignBytes);
  m.neuronSize = std::max<uint64_t>(top, cfg.dmaAlignBytes);
  if (m.neuronAddr + m.neuronSize > cfg.globalMemBase + cfg.globalMemBytes)
    return makeError("coefficients (", m.coeffSize, " bytes) and activations (", m.neuronSize,
                     " bytes) exceed the ", cfg.globalMemBytes, "-byte global memory");
  for (size_t t = 0; t < nt; ++t)
    if (!g.tensors[t].isWeight() && first[root[t]] <= end && !local[size_t(root[t])])
      m.addr[t] = m.neuronAddr + offset[root[t]] + rootOffset[t];
  return m;
}

} // namespace tpu::backend
