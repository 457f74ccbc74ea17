// TIU commands of the BM1684X compiler, their fields set from what an op needs: fp32 arithmetic on local
// tiles, window commands (conv.normal, pord.*), sfu.rsqrt.
#pragma once

#include "compiler/Backend/BM1684X/Program.h"
#include "compiler/Backend/Ops/Window.h"

namespace tpu::backend::bm1684x {

// A TIU command (long form) with these fields.
Result<Command> tiuCommand(const char *mnemonic, Fields fields);

// One fp32 arithmetic command on local tiles of `shape` (all at lane 0, AlignEU): out = a OP b, b a tile
// or a constant.
struct TileOperand {
  int tile = -1; // -1: the constant
  float constant = 0;
};
Result<Command> arithCommand(const char *mnemonic, const Dims &shape, uint64_t out, uint64_t a,
                             std::optional<uint64_t> bTile, float bConstant);

// A window command (conv.normal or pord.*) on local tensors at lane 0: output `out` (1, c, oh, ow), input
// `in` rows and width, the window's kernel, strides and dilations, pad rows above and below the input (the
// columns' pads are the window's own), the pad value's fp32 bits.
Result<Command> windowCommand(const char *mnemonic, const Dims &out, const std::array<uint64_t, 2> &in,
                              const WindowParams &p, const std::array<uint64_t, 2> &padRows, uint32_t padValue,
                              uint64_t inOffset, uint64_t outOffset);

// sfu.rsqrt in place on one value per channel of cs channels at `offset`.
Result<Command> rsqrtCommand(uint64_t offset, uint64_t cs);

// pord.avgpooling's multiplier of the window's sum: an fp32 constant in opd1.
Status setMultiplier(Command &c, float multiplier);

} // namespace tpu::backend::bm1684x
