// The BM1684X compiler's building blocks: tensor regions as the DMA sees them, the local-memory layout
// (AlignEU, channels over the lanes), the two engines' command queues, and the local-memory plan of an op.
#pragma once

#include "arith/IntArith.h"
#include "compiler/Backend/Graph.h"
#include "isa/bm1684x/Command.h"
#include "isa/bm1684x/MemoryMap.h"
#include "isa/bmodel/Model.h"
#include "memory/bm1684x/Operands.h"
#include "support/Status.h"

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <utility>
#include <vector>

namespace tpu::backend::bm1684x {

namespace map = isa::bm1684x;
using isa::bm1684x::Command;
using Dims = std::array<uint64_t, 4>;
using sim::floatBits;

constexpr uint64_t kF32 = 4;         // bytes of an fp32 element
constexpr unsigned kPrecF32 = 2;     // the commands' precision code for fp32
constexpr uint64_t kDdrAlign = 64;   // tensors in DDR start on 64-byte boundaries
constexpr uint64_t kMaxPad = 15;     // the 4-bit pad fields
constexpr int64_t kMaxDilation = 16; // the 4-bit insertion fields hold dilation - 1

inline uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
inline uint64_t alignUp(uint64_t a, uint64_t b) { return ceilDiv(a, b) * b; }

// The element types compiled: fp32 and the 16-bit floats (Graph.h's rule: a 16-bit op computes its fp32
// form rounded once), and the integers of INT8 models (int8/uint8 activations, int16 and int32 weights and
// intermediate sums).
inline uint64_t bytesOf(DType t) { return dtypeBytes(t); }
inline bool isInteger(DType t) { return t == DType::I8 || t == DType::U8 || t == DType::I16 || t == DType::I32; }
// The commands' precision code of a type (res0_prec, opd*_prec, src_data_format) and its sign bit (opd*_sign).
inline unsigned precOf(DType t) {
  switch (t) {
  case DType::F16:
    return 1;
  case DType::BF16:
    return 5;
  case DType::I8:
  case DType::U8:
    return 0;
  case DType::I16:
    return 3;
  case DType::I32:
    return 4;
  default:
    return kPrecF32;
  }
}
inline unsigned signOf(DType t) { return isInteger(t) && t != DType::U8; }
// The largest |value| an integer type holds (what an activation of it may reach).
inline int64_t largestMagnitude(DType t) {
  return t == DType::U8 ? 255 : t == DType::I8 ? 128 : t == DType::I16 ? 32768 : int64_t(1) << 31;
}
// A constant as a command field holds it in its operand's type: a float's bits (16-bit: the low bits), an
// integer's two's complement in the type's width.
uint32_t constantBits(float v, DType t);
uint32_t integerBits(int64_t v, DType t);

// Channel rows a lane holds for `c` channels starting at lane 0.
inline uint64_t rows(uint64_t c) { return ceilDiv(c, map::kLanes); }
// Elements one channel of an (h, w) plane takes in a lane, padded to the EU vector (the AlignEU layout).
inline uint64_t alignedPlane(uint64_t hw, DType t = DType::F32) { return alignUp(hw, map::kEuBytes / bytesOf(t)); }

// Element strides of a compact (C order) tensor of these dims.
inline Dims compactDims(const Dims &d) { return {d[1] * d[2] * d[3], d[2] * d[3], d[3], 1}; }
inline std::array<int64_t, 4> compactStrides(const Dims &d) {
  const Dims s = compactDims(d);
  return {int64_t(s[0]), int64_t(s[1]), int64_t(s[2]), int64_t(s[3])};
}

// A tensor region as a DMA sees it: its first byte (a DDR or local-memory address as commands write it),
// its shape, its element strides and its element type.
struct Region {
  uint64_t address;
  Dims shape, stride;
  DType dtype = DType::F32;
};
// An (n, c, h, w) tensor in local memory at `offset` of every lane, channels from lane 0, AlignEU.
inline Region localAligned(uint64_t offset, Dims shape, DType t = DType::F32) {
  uint64_t cs = alignedPlane(shape[2] * shape[3], t);
  return {map::kLmemStart + offset, shape, {rows(shape[1]) * cs, cs, shape[3], 1}, t};
}
// An (n, c, h, w) box of a DDR tensor with these element strides, starting at `at`.
inline Region ddrBox(uint64_t address, const Dims &stride, const Dims &at, const Dims &shape, DType t = DType::F32) {
  uint64_t offset = at[0] * stride[0] + at[1] * stride[1] + at[2] * stride[2] + at[3] * stride[3];
  return {address + offset * bytesOf(t), shape, stride, t};
}

using Fields = std::initializer_list<std::pair<const char *, uint64_t>>;
// Sets the fields of a command; an error names the command and the field.
Status setFields(Command &c, Fields fields);

// The two engines' command queues of the one command group. A command waits for the last command of the
// other engine whose memory it touches (a read of what that one writes, or a write of what it reads or
// writes; local memory by in-lane bytes, lanes not told apart): the engines overlap where an op's buffers
// let them (Window.cpp's ping-pong slices). A command whose operands are not described (sys) waits for all.
class Program {
public:
  Status dma(const Region &src, const Region &dst) { return tensorDma(src, dst, std::nullopt); }
  // Every element of a region (DDR or local) set to `bits` (of the region's type).
  Status fill(const Region &r, uint32_t bits) { return tensorDma(r, r, bits); }
  Status tiu(Command c) { return add(std::move(c), true); }

  // Ends both queues with their sys commands and returns the group.
  Result<bmodel::CmdGroup> finish();

private:
  // A tensor DMA from src to dst, or (fillBits) writing the constant over dst.
  Status tensorDma(const Region &src, const Region &dst, std::optional<uint32_t> fillBits);
  Status add(Command c, bool isTiu);

  // What a command reads and writes; `all` when unknown (it conflicts with everything).
  struct Access {
    std::vector<memory::bm1684x::Span> reads, writes;
    bool all = false;
    bool conflicts(const Access &o) const;
  };
  std::vector<Command> tiu_, dma_;
  std::vector<Access> tiuAccess_, dmaAccess_;
};

// Local memory of one lane, handed out in whole banks so that the operands of a command never share one.
struct LmemPlan {
  std::vector<uint64_t> offsets;
  // Places buffers of `bytes` (per lane) one after the other; false when they do not fit.
  bool place(const std::vector<uint64_t> &bytes);
};

// The sliced loops of one op: output channels in steps of whole lane rows, output rows in steps.
struct Slicing {
  uint64_t channelStep = 0, rowStep = 0;
};
// The largest slicing of `channels` channels and `maxRows` rows for which fits(laneRows, rows) holds: the
// most lane rows first, then the most rows, down to `minRows`; rowStep 0 when none fits.
template <class Fits> Slicing largestSlicing(uint64_t channels, uint64_t maxRows, uint64_t minRows, Fits &&fits) {
  for (uint64_t cRows = rows(channels); cRows >= 1; --cRows)
    for (uint64_t r = maxRows; r >= minRows && r >= 1; --r)
      if (fits(cRows, r)) return {cRows * map::kLanes, r};
  return {};
}

} // namespace tpu::backend::bm1684x
