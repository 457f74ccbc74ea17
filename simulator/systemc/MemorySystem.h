// The memories both engines share: LMEM and DDR contents, owned by the caller
// of simulate() and bound for the duration of one run. Commands change them
// through their execute callbacks when they complete.
#pragma once

#include "memory/Memory.h"

#include <systemc>

namespace tpu::sysc {

class MemorySystem : public sc_core::sc_module {
public:
  explicit MemorySystem(sc_core::sc_module_name name) : sc_module(name) {}
  void bind(sim::LocalMemory &local, sim::GlobalMemory &global) {
    local_ = &local;
    global_ = &global;
  }
  sim::LocalMemory &local() { return *local_; }
  sim::GlobalMemory &global() { return *global_; }

private:
  sim::LocalMemory *local_ = nullptr;
  sim::GlobalMemory *global_ = nullptr;
};

} // namespace tpu::sysc
