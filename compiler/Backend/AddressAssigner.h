// Global-memory placement of a graph: coefficients packed one after another
// at coeffAlignBytes (4 KiB), as the graph gives them, activations (IO tensors
// included) in the neuron area with liveness-based reuse: a tensor's bytes
// are free again after its last reader; a Reshape output shares its input's
// storage. Deterministic: first fit in op order.
#pragma once

#include "compiler/Backend/Graph.h"
#include "isa/HwConfig.h"
#include "support/Status.h"

#include <cstdint>
#include <vector>

namespace tpu::backend {

// Bytes an activation takes in DDR: int8/uint8 4N (batch rounded up to 4),
// everything else 1N.
uint64_t activationBytes(const Tensor &t);

struct AddressMap {
  uint64_t coeffAddr = 0, coeffSize = 0;   // coefficient area
  uint64_t neuronAddr = 0, neuronSize = 0; // activation area
  std::vector<uint64_t> addr;              // per tensor (weights and activations); 0 = none
  std::vector<uint8_t> coeff;              // the coefficient bytes
  uint64_t activationTotal = 0;            // bytes without reuse, for the report
};

Result<AddressMap> assignAddresses(const Graph &g, const isa::HwConfig &cfg);

} // namespace tpu::backend
