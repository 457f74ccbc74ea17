// What a BM1684X command reads and writes: each result and operand as a view of a memory (space, address,
// shape, element strides, data type) or as a constant, read from the command's fields. This is the meaning
// of the fields that the executor, the timing model and the disassembler's operand view share. The rules
// restate the BM1684X operand conventions of TPU-MLIR's debugger (opparam_1684x.py) and are checked against
// its reading of real command buffers (tests/data/bm1684x).
#pragma once

#include "isa/bm1684x/Command.h"
#include "support/Status.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tpu::memory::bm1684x {

enum class Space : uint8_t { Lmem, Static, L2, Global, Const };

// An element type: a precision code (the commands' *_prec and data_format fields: 0 int8, 1 fp16, 2 fp32,
// 3 int16, 4 int32, 5 bf16, 6 int4) and, for integers, signed, unsigned or signless (DMA moves bits).
struct DataType {
  enum class Sign : uint8_t { Signless, Unsigned, Signed };
  unsigned prec = 2;
  Sign sign = Sign::Signless;

  static DataType of(unsigned prec, bool isSigned) { return {prec, isSigned ? Sign::Signed : Sign::Unsigned}; }
  bool isFloat() const { return prec == 1 || prec == 2 || prec == 5; }
  unsigned bits() const;
  std::string name() const; // "f32", "si16", "ui8", "i8" (signless)
  bool operator==(const DataType &o) const { return prec == o.prec && (isFloat() || sign == o.sign); }
};

// How a local-memory tensor is laid out in its lanes (the *_str fields' codes 0-3, and the weight layouts).
enum class LocalLayout : uint8_t {
  AlignEU, // each channel's h*w padded to the EU vector
  Compact, // each channel's h*w packed
  Offset,  // one element per channel
  Stride,  // the strides the command gives
  Ic1,     // conv weights, 32-bit: per output channel (lane), ic*kh*kw packed
  Ic32,    // conv weights, 16-bit: input channels in groups of 32
  Ic64,    // conv weights, 8-bit: input channels in groups of 64
};

struct Operand {
  Space space = Space::Lmem;
  uint64_t address = 0; // from the start of its space (Lmem: lane * kLaneBytes + offset); Const: the raw bits
  DataType type;
  std::array<uint64_t, 4> shape{};
  // Element strides (n, c, h, w); on local memory c counts channels within a lane, as the hardware does.
  // Absent for weight layouts and where the command gives none.
  std::optional<std::array<int64_t, 4>> stride;
  LocalLayout layout = LocalLayout::Stride;

  // "%R15.2688" (bank 15, byte 2688 of it, lane 0; ".L3" for lane 3), "%G4096", "%S1024", "%C1.5".
  std::string name() const;
  // "memref<1x32x54x160xf32, strides: [8640, 8640, 160, 1]>", or the type of a constant.
  std::string typeText() const;
  // A constant's value (floats as their value, integers sign-extended as the type says).
  double constValue() const;
};

struct Operands {
  std::vector<Operand> results, operands;
};

// The bytes a view spans in its memory: for local memory the in-lane byte range [first, end) in every lane
// it touches (lanes are not told apart), elsewhere the range from the memory's start. Empty (first == end)
// for a constant or an empty shape. Strides missing outside local memory are compact ones.
struct Span {
  Space space = Space::Lmem;
  uint64_t first = 0, end = 0;
  bool overlaps(const Span &o) const { return space == o.space && first < o.end && o.first < end; }
};
Span spanOf(const Operand &view);

// The command's results and operands. Error: a type whose operands are not described yet (they are for
// conv, pooling/depthwise, arithmetic, requantise/dequantise, SFU, compare-select, transpose/broadcast, the
// per-lane gathers pe_s_gather_d1coor and pe_s_gather_hzd, and tensor DMA), or a field with a value the
// convention does not define (a layout code, an address in no memory).
Result<Operands> operandsOf(const isa::bm1684x::Command &command);

} // namespace tpu::memory::bm1684x
