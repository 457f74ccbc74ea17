// BM1684X commands executed on the data (no timing): the memories as the chip's commands address them, and
// each command's effect on them, read through its operand views (memory/bm1684x/Operands.h). Executed so
// far: tensor DMA (plain, broadcast, n<->c transpose, constant fill; lane masks; elements of 1, 2 or 4
// bytes); float (fp32, fp16, bf16, operand and result types mixed as the precision fields say) and int32
// elementwise arithmetic (add, sub, mul, max, min, copy; float div; int32 adds, subs, and, or, xor, logical
// and arithmetic shifts; casts between any two of fp32, fp16, bf16 and int32), compare-select (sel_gt,
// sel_eq, sel_lt) and the SFU's Taylor series and rsqrt on floats; conv.normal (16-bit weights in the Ic32
// layout, 32-bit in Ic1), max and average pooling and depthwise conv (+ relu) on floats. fp16 and bf16 follow
// one rule (Executor.cpp, the numerics): widened exactly to fp32, computed as on fp32, each result rounded
// once to its type. Where the BM1684X's results are not public (integer saturation and shifts, rounding,
// division, the SFU, summation order, the 16-bit float datapath) they are modelling choices mirroring this
// project's BM1684 model (Executor.cpp). Every other command, these on other data types (int8, int16, int4)
// and fields whose effect is not modelled are errors naming them: nothing is approximated.
#pragma once

#include "isa/bm1684x/Command.h"
#include "memory/Memory.h"
#include "memory/bm1684x/Operands.h"
#include "support/Status.h"

#include <cstdint>
#include <vector>

namespace tpu::sim::bm1684x {

// Local memory (64 lanes of 256 KiB), the 16 KiB static memory, and DDR (sparse).
class Memories {
public:
  Memories();

  LocalMemory &local() { return local_; }
  GlobalMemory &global() { return global_; }
  std::vector<uint8_t> &staticMemory() { return static_; }

  // Element (n, c, h, w) of a view, `bytes` wide: read into / written from `value`. Errors name the view's
  // memory and the range that falls outside it; L2 SRAM is not modelled.
  Status read(const memory::bm1684x::Operand &view, const std::array<uint64_t, 4> &at, void *value) const;
  Status write(const memory::bm1684x::Operand &view, const std::array<uint64_t, 4> &at, const void *value,
               uint64_t laneMask = ~0ull);

private:
  Result<uint8_t *> hostBytes(const memory::bm1684x::Operand &view, uint32_t lane, uint64_t byte, uint64_t bytes);

  LocalMemory local_;
  GlobalMemory global_;
  std::vector<uint8_t> static_;
};

// Runs one command.
Status execute(Memories &memories, const isa::bm1684x::Command &command);

// Runs both engines' commands in program order (isa::bm1684x::programOrder); an error names the command.
Status run(Memories &memories, const std::vector<isa::bm1684x::Command> &tiu,
           const std::vector<isa::bm1684x::Command> &dma);

} // namespace tpu::sim::bm1684x
