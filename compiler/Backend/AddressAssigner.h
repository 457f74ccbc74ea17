// Global-memory placement of a graph: coefficients packed one after another
// at coeffAlignBytes (4 KiB), as the graph gives them, activations (IO tensors
// included) in the neuron area with liveness-based reuse: a tensor's bytes
// are free again after its last reader; a Reshape output shares its input's
// storage, a pure view's output (a slice of whole channels) a run of it, and
// the inputs of an op that joins channels (a concat) are written into its
// output (channelByteOffset). Deterministic: first fit in op order. Liveness
// counts in segments: the ops of a layer group run slice by slice,
// interleaved, so every tensor the group reads stays live until the group's
// last op and every tensor it writes is live from its first op (else the
// group output could take the DDR bytes of an input that later slices still
// load). A group's intermediates stay in local memory: no DDR (address 0).
#pragma once

#include "compiler/Backend/Graph.h"
#include "isa/HwConfig.h"
#include "support/Status.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace tpu::backend {

// Bytes an activation takes in DDR: a 4N one (stored4N) has its batch
// rounded up to 4, a 1N one is compact.
uint64_t activationBytes(const Tensor &t);

// In-place data movement (docs/codegen.md, "Memory"): the byte offset of
// channel c0 inside a tensor whose batch is one group in DDR (1N with one
// item, 4N with at most four), where channels [c0, ...) are one contiguous
// run; -1 when the tensor has several groups.
int64_t channelByteOffset(const Tensor &t, int64_t c0);
// An op whose kind is a pure view (OpImpl::viewedChannel) of whole channels
// [c0, ...) of such a tensor: its output is those bytes of the input, at
// this offset; -1 otherwise (or for a weight input). `channel`, when given,
// receives c0 (-1 with the offset).
int64_t viewByteOffset(const Graph &g, const Op &op, int64_t *channel = nullptr);

struct AddressMap {
  uint64_t coeffAddr = 0, coeffSize = 0;   // coefficient area
  uint64_t neuronAddr = 0, neuronSize = 0; // activation area
  std::vector<uint64_t> addr;              // per tensor (weights and activations); 0 = none
  std::vector<uint8_t> coeff;              // the coefficient bytes
  uint64_t activationTotal = 0;            // bytes without reuse, for the report
};

// `segments`: op ranges [first, last] emitted together, in op order, covering
// every op; empty = every op alone.
Result<AddressMap> assignAddresses(const Graph &g, const isa::HwConfig &cfg,
                                   const std::vector<std::pair<size_t, size_t>> &segments = {});

} // namespace tpu::backend
