// BM1684X commands executed on the data (no timing): the memories as the chip's commands address them, and
// each command's effect on them, read through its operand views (memory/bm1684x/Operands.h). Executed so
// far: tensor DMA (plain, broadcast, n<->c transpose, constant fill; lane masks; elements of 1, 2 or 4
// bytes); elementwise arithmetic on floats (fp32, fp16, bf16, operand and result types mixed as the
// precision fields say) and on 8-, 16- and 32-bit integers, signed or unsigned (add, sub, mul, max, min,
// copy; float div; integer adds, subs, and, or, xor, logical and arithmetic shifts; casts between any two
// distinct types), compare-select (sel_gt, sel_eq, sel_lt) and the SFU's Taylor series and rsqrt on floats;
// conv.normal on floats (16-bit weights in the Ic32 layout, 32-bit in Ic1) and on int8/uint8 (weights in
// the Ic64 layout, exact int32 sums), max pooling on floats and 8/16-bit integers, average pooling on
// floats and int8/uint8 (multiplier, rounded shift), depthwise conv (+ relu) on floats, requantisation
// quant.rq1 (multiplier, shift, zero point), and the per-lane table lookup sg.pe_s_gather_d1coor (elements
// of 8, 16 or 32 bits copied). fp16 and bf16 follow one rule, integers another (Executor.cpp, the numerics):
// floats widened exactly to fp32, computed as on fp32, each result rounded once to its type; integers exact
// in int64, wrapped or saturated once to the result's type, divisions by powers of two rounded by the
// command's round mode. Where the BM1684X's results are not public (integer saturation, shifts and rounding,
// division, the SFU, summation order, the 16-bit float datapath, the gather) they are modelling choices
// mirroring TPU-MLIR's reference and this project's BM1684 model (Executor.cpp). Every other command
// (quant.rq0 and the dequantisations among them), these on other data types (int4) and fields whose effect
// is not modelled are errors naming them: nothing is approximated.
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
