// TIU commands of the BM1684X compiler, their fields set from what an op needs: float and integer
// arithmetic on local tiles, casts and requantisation, window commands (conv.normal, pord.*), sfu.rsqrt.
#pragma once

#include "compiler/Backend/BM1684X/Program.h"
#include "compiler/Backend/Ops/Window.h"

namespace tpu::backend::bm1684x {

// A TIU command (long form) with these fields.
Result<Command> tiuCommand(const char *mnemonic, Fields fields);

// One arithmetic command on local tiles of `shape` (all at lane 0, AlignEU): out = a OP b, b a tile or an
// fp32 constant; the tiles' element types (a 16-bit float command computes in fp32 and rounds its result
// once, so an fp32 constant is the fp32 form's own). arith.copy (widening or rounding between the tiles'
// types) reads a alone.
struct TileOperand {
  int tile = -1; // -1: the constant
  float constant = 0;
};
struct TileTypes {
  DType out = DType::F32, a = DType::F32, b = DType::F32;
};
Result<Command> arithCommand(const char *mnemonic, const Dims &shape, uint64_t out, uint64_t a,
                             std::optional<uint64_t> bTile, float bConstant, TileTypes types = {});

// The same with an integer constant b of type types.b.
Result<Command> intArithCommand(const char *mnemonic, const Dims &shape, uint64_t out, uint64_t a,
                                std::optional<uint64_t> bTile, int64_t bConstant, TileTypes types);
// arith.cast of a tile into another type: float -> integer rounds half to even and saturates, integer ->
// integer saturates, integer -> float rounds once.
Result<Command> castCommand(const Dims &shape, uint64_t out, DType outType, uint64_t a, DType aType);
// quant.rq1 on a tile: out = saturate(round_half_up(a * multiplier / 2^rshift)), the BM1684's integer
// write-back (arith/IntArith.h requantize) when multiplier is 1.
Result<Command> requantCommand(const Dims &shape, uint64_t out, DType outType, uint64_t a, DType aType,
                               int32_t multiplier, uint32_t rshift);

// sg.pe_s_gather_d1coor on local tiles at lane 0: out (1, c, 1, w) = table[index], each lane's channels
// reading the `entries`-entry table (of the result's type) at `table` in that lane, the index tile uint8.
Result<Command> lookupCommand(const Dims &shape, uint64_t out, uint64_t table, uint64_t entries, uint64_t index,
                              DType type);

// A window command (conv.normal or pord.*) on local tensors at lane 0: output `out` (1, c, oh, ow), input
// `in` rows and width, the window's kernel, strides and dilations, pad rows above and below the input (the
// columns' pads are the window's own), the pad value's bits (of the input's type), the input's and the
// output's element types.
Result<Command> windowCommand(const char *mnemonic, const Dims &out, const std::array<uint64_t, 2> &in,
                              const WindowParams &p, const std::array<uint64_t, 2> &padRows, uint32_t padValue,
                              uint64_t inOffset, uint64_t outOffset, DType inType = DType::F32,
                              DType outType = DType::F32);

// sfu.rsqrt in place on one value per channel of cs channels at `offset`.
Result<Command> rsqrtCommand(uint64_t offset, uint64_t cs);

// pord.avgpooling's multiplier of the window's sum: an fp32 constant in opd1.
Status setMultiplier(Command &c, float multiplier);

} // namespace tpu::backend::bm1684x
