#include "compiler/Backend/AddressAssigner.h"

#include "compiler/Backend/OpRegistry.h"

#include <algorithm>
#include <map>

namespace tpu::backend {

namespace {
uint64_t alignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
} // namespace

uint64_t activationBytes(const Tensor &t) {
  auto s = t.nchw();
  uint64_t n = uint64_t(s[0]);
  if (isInt8Like(t.dtype)) n = (n + 3) / 4 * 4;
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

  // Storage roots (a Reshape output shares its input's) and live ranges, in
  // op indices widened to each op's segment: written from the segment's
  // first op, read until its last.
  const int end = int(g.ops.size());
  std::vector<int> segFirst(g.ops.size()), segLast(g.ops.size());
  for (int i = 0; i < end; ++i) segFirst[size_t(i)] = segLast[size_t(i)] = i;
  for (auto [a, b] : segments) {
    if (a > b || b >= g.ops.size())
      return makeError("segment [", a, ", ", b, "] is outside the ", g.ops.size(), " ops");
    for (size_t i = a; i <= b; ++i) segFirst[i] = int(a), segLast[i] = int(b);
  }
  std::vector<int> root(nt);
  for (size_t t = 0; t < nt; ++t) root[t] = int(t);
  for (const Op &op : g.ops)
    if (opKindInfo(op.kind).sharesInputBytes) root[op.output] = root[op.inputs[0]];
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
      m.addr[t] = m.neuronAddr + offset[root[t]];
  return m;
}

} // namespace tpu::backend
