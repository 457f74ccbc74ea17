// Resolving an LMEM operand to concrete element addresses (docs/isa.md,
// "Local memory"): the lane of the address is the tensor's npu_offset;
// element (n, c, h, w) lives in lane (npu_offset + c) % lanes at byte offset
//   laneOffset + (n*sn + ((npu_offset + c) / lanes)*sc + h*sh + w*sw) * bytes
// Used by TIU and GDMA semantics alike.
#pragma once

#include "arith/IntArith.h"
#include "isa/HwConfig.h"
#include "isa/TiuCommand.h"
#include "memory/Memory.h"
#include "support/Status.h"

#include <cstdint>
#include <cstring>

namespace tpu::sim {

// EU-aligned channel stride: align(h*w, EU count) elements (published).
uint32_t alignedChannelStride(const isa::HwConfig &cfg, const isa::Shape4 &shape, uint32_t elemBytes);
// The strides a stride mode gives a tensor of `shape` whose channel 0 is in
// lane npuOffset; `explicitStrides` is returned for StrideMode::Explicit.
isa::Strides4 localStrides(const isa::HwConfig &cfg, isa::StrideMode mode, const isa::Shape4 &shape,
                           uint32_t npuOffset, uint32_t elemBytes,
                           const isa::Strides4 &explicitStrides);

// A checked view of one operand: every element of `shape` is inside its lane.
// A constant operand has no memory behind it: every element reads constValue.
struct LocalTensor {
  isa::Shape4 shape;
  isa::Strides4 stride;   // elements
  isa::Prec prec = isa::Prec::Int8;
  bool isSigned = true;
  uint32_t elemBytes = 1;
  uint32_t lanes = 64;
  uint32_t npuOffset = 0;  // lane of channel 0
  uint32_t laneOffset = 0; // byte offset of element (0,0,0,0) in its lane
  bool isConst = false;
  uint32_t constValue = 0;

  uint32_t laneOf(uint32_t c) const { return (npuOffset + c) % lanes; }
  // Byte offset of element (n, c, h, w) inside lane laneOf(c).
  uint64_t offset(uint32_t n, uint32_t c, uint32_t h, uint32_t w) const {
    uint64_t ci = (uint64_t(npuOffset) + c) / lanes;
    return laneOffset +
           (uint64_t(n) * stride.n + ci * stride.c + uint64_t(h) * stride.h + uint64_t(w) * stride.w) *
               elemBytes;
  }
  uint8_t *ptr(LocalMemory &m, uint32_t n, uint32_t c, uint32_t h, uint32_t w) const {
    return m.lane(laneOf(c)) + offset(n, c, h, w);
  }
  const uint8_t *ptr(const LocalMemory &m, uint32_t n, uint32_t c, uint32_t h, uint32_t w) const {
    return m.lane(laneOf(c)) + offset(n, c, h, w);
  }
  bool isFloat() const { return prec == isa::Prec::Fp32; }

  // Element access with the operand's precision and sign (constants included).
  int64_t loadInt(const LocalMemory &m, uint32_t n, uint32_t c, uint32_t h, uint32_t w) const {
    if (isConst) return constInt();
    return decodeInt(ptr(m, n, c, h, w));
  }
  float loadFloat(const LocalMemory &m, uint32_t n, uint32_t c, uint32_t h, uint32_t w) const {
    if (isConst) return isFloat() ? bitsFloat(constValue) : float(constInt());
    const uint8_t *p = ptr(m, n, c, h, w);
    return isFloat() ? decodeFloat(p) : float(decodeInt(p));
  }
  // Stores an integer already saturated to (prec, isSigned), or truncates
  // to the element width otherwise.
  void storeInt(LocalMemory &m, uint32_t n, uint32_t c, uint32_t h, uint32_t w, int64_t v) const {
    uint64_t u = uint64_t(v);
    std::memcpy(ptr(m, n, c, h, w), &u, elemBytes); // little endian host
  }
  void storeFloat(LocalMemory &m, uint32_t n, uint32_t c, uint32_t h, uint32_t w, float v) const {
    std::memcpy(ptr(m, n, c, h, w), &v, 4);
  }

  int64_t constInt() const {
    if (isFloat()) return int64_t(constValue);
    unsigned bits = elemBytes * 8;
    return isSigned ? signExtend(constValue, bits)
                    : int64_t(bits >= 32 ? constValue : constValue & ((1u << bits) - 1));
  }
  int64_t decodeInt(const uint8_t *p) const {
    switch (elemBytes) {
    case 1: return isSigned ? int64_t(int8_t(*p)) : int64_t(*p);
    case 2: {
      uint16_t u;
      std::memcpy(&u, p, 2);
      return isSigned ? int64_t(int16_t(u)) : int64_t(u);
    }
    default: {
      uint32_t u;
      std::memcpy(&u, p, 4);
      return isSigned ? int64_t(int32_t(u)) : int64_t(u);
    }
    }
  }
  static float decodeFloat(const uint8_t *p) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
};

// Resolves `op` as a tensor of `shape` (normally op.shape; command classes
// pass the implied shape of operands without shape fields). Checks: no zero
// dimension, the address's lane exists, the offset is aligned to the element
// size, and the last element of every lane ends inside the lane. `what`
// names the operand in errors ("opd0").
Result<LocalTensor> resolveLocal(const isa::HwConfig &cfg, const isa::LocalOperand &op,
                                 const isa::Shape4 &shape, const char *what);
inline Result<LocalTensor> resolveLocal(const isa::HwConfig &cfg, const isa::LocalOperand &op,
                                        const char *what) {
  return resolveLocal(cfg, op, op.shape, what);
}

} // namespace tpu::sim
