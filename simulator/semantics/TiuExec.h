// What one TIU command does to local memory, bit-exact (docs/isa.md, "TIU
// commands"). Plain C++: the functional backend and the SystemC TIU engine
// both call it. Every operand is resolved and bounds-checked before anything
// is written; a bad field or an out-of-range access is an error naming the
// field, and local memory is left untouched.
#pragma once

#include "isa/HwConfig.h"
#include "isa/TiuCommand.h"
#include "memory/Memory.h"
#include "support/Status.h"

namespace tpu::sim {

Status executeTiu(const isa::HwConfig &cfg, LocalMemory &mem, const isa::TiuCommand &cmd);

// The host instruction sets the int8 convolution kernels can use, in order.
// Every level gives the same results; tests run each one the host has.
enum class HostIsa { Scalar, Avx2, Avx512Vnni };
// The best level the host supports, capped by limitHostIsa.
HostIsa hostIsa();
void limitHostIsa(HostIsa limit);

} // namespace tpu::sim
