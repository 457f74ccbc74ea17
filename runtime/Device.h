// A simulated BM1684: the hardware config, local memory and global memory
// (DDR), plus the map of which DDR ranges are in use. Coefficients and
// neuron (activation/IO) memory sit exactly where the bmodel placed them;
// user buffers are allocated from what is left.
#pragma once

#include "isa/HwConfig.h"
#include "memory/Memory.h"
#include "support/Status.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tpu::runtime {

class SimDevice {
public:
  // What a DDR range holds. Neuron ranges of different nets may overlap
  // (launches on one device run one at a time, as on the chip); everything
  // else is exclusive.
  enum class Use { Coefficients, Neurons, UserBuffer };

  explicit SimDevice(const isa::HwConfig &cfg) : cfg_(cfg), lmem_(cfg), gmem_(cfg) {}
  SimDevice(const SimDevice &) = delete;
  SimDevice &operator=(const SimDevice &) = delete;

  const isa::HwConfig &config() const { return cfg_; }
  sim::LocalMemory &lmem() { return lmem_; }
  sim::GlobalMemory &gmem() { return gmem_; }
  const sim::GlobalMemory &gmem() const { return gmem_; }

  // Claims [addr, addr+bytes) for `owner` ("net 'x' coefficients"). Errors:
  // outside the device's DDR ("out of simulated device memory") or overlapping
  // a range it may not share (naming both owners).
  Status reserve(uint64_t addr, uint64_t bytes, Use use, const std::string &owner);
  // A reservation, as needed to undo it.
  struct Claim {
    uint64_t addr;
    std::string owner;
  };
  // Drops reservations made with reserve() (unknown ones are ignored).
  void unreserveAll(const std::vector<Claim> &claims);
  // Allocates a user buffer (first fit, dmaAlignBytes aligned) and returns its
  // address; "out of simulated device memory" when nothing fits.
  Result<uint64_t> allocate(uint64_t bytes, const std::string &owner);
  // The same from the top of DDR down (the highest free block that fits):
  // for buffers the runtime keeps for a net's lifetime (the IO staging of a
  // net its chip's runner runs), away from where bmodels place their memory.
  Result<uint64_t> allocateHigh(uint64_t bytes, const std::string &owner);
  // Frees a user buffer returned by allocate.
  Status release(uint64_t addr);
  // Bytes currently reserved or allocated (overlapping neuron ranges once).
  uint64_t usedBytes() const;

private:
  struct Range {
    uint64_t bytes;
    Use use;
    std::string owner;
  };
  const Range *conflict(uint64_t addr, uint64_t bytes, Use use, uint64_t &at) const;

  isa::HwConfig cfg_;
  sim::LocalMemory lmem_;
  sim::GlobalMemory gmem_;
  std::multimap<uint64_t, Range> ranges_; // by start address
};

} // namespace tpu::runtime
