// The GDMA tensor-move command as a typed struct, and its mapping to the
// 128-byte word (through GdmaRaw and the field table). What each field means
// is defined in docs/isa.md, "GDMA commands".
#pragma once

#include "isa/Fields.h"
#include "isa/Opcodes.h"
#include "support/Status.h"

#include <array>
#include <cstdint>

namespace tpu::isa {

// One side of a move: a 4-D tensor (n, c, h, w) at a 40-bit address.
// Global side: a DDR byte address. Local side: lane * lmemBytesPerLane + offset,
// the lane being the tensor's npu_offset. Strides are in elements of `format`
// and only used when the command's strideEnable is set (docs/isa.md).
struct GdmaTensor {
  uint64_t addr = 0;
  GdmaFormat format = GdmaFormat::Fp32;
  std::array<uint32_t, 4> shape{1, 1, 1, 1};  // n, c, h, w (16 bits each)
  std::array<uint32_t, 4> stride{0, 0, 0, 1}; // n, c, h, w (32 bits each)
  bool operator==(const GdmaTensor &o) const {
    return addr == o.addr && format == o.format && shape == o.shape && stride == o.stride;
  }
};

struct GdmaCommand {
  GdmaDirection direction = GdmaDirection::S2L;
  GdmaSpecialFunc specialFunc = GdmaSpecialFunc::None;
  GdmaTensor src, dst;
  bool strideEnable = true;
  uint32_t constantValue = 0;   // ConstantFill: the element's bit pattern in dst format
  uint64_t laneMask = ~0ull;    // local destination: lane i written iff bit i set
  uint32_t lrnShiftNum = 0;     // LrnShift: channels to shift by (4 bits)
  bool lrnShiftDir = false;     // LrnShift: false = towards higher c, true = lower c

  // Synchronisation (BM1684.md §2): own id and the TIU id waited for.
  uint16_t cmdId = 0;
  uint16_t eng0SyncId = 0;
  uint16_t eng1SyncId = 0;
  uint16_t eng3SyncId = 0;

  // Descriptor-control bits, carried through unchanged; the model gives them
  // no meaning of their own (docs/isa.md).
  bool pioGdmaEnable = true;
  bool desType = false;
  bool chainEnd = false;
  bool intrEn = false;
  bool barrierEnable = false;
  bool accWriteEnable = false;
  bool commonMode = false;
  bool prefetchDisable = false;
  bool holdDesValue = false;
  uint8_t reserved = 0;
  bool chwCopy = false;
  bool sysMemType = false;
  uint32_t srcHshift = 0;  // 24 bits
  uint8_t srcWshift = 0, dstHshift = 0, dstWshift = 0;
  bool singleStep = false;
  bool debugMode = false;

  bool srcIsLocal() const {
    return direction == GdmaDirection::L2S || direction == GdmaDirection::L2L;
  }
  bool dstIsLocal() const {
    return direction == GdmaDirection::S2L || direction == GdmaDirection::L2L;
  }
  bool operator==(const GdmaCommand &o) const;
  bool operator!=(const GdmaCommand &o) const { return !(*this == o); }
};

// Rejects direction / special function / format codes the hardware does not
// define, naming the field and the value.
Result<GdmaCommand> decodeGdma(const GdmaRaw &raw);
// Values that do not fit their fields (a 41-bit address, ...) are caught by
// GdmaRaw::encode(), which names the field.
GdmaRaw encode(const GdmaCommand &cmd);

// The global-memory strides (elements of an 8-bit format) of one group of four
// batch items of an int8 4N tensor of c x h x w: n 1, c 4hw, h 4w, w 4. Group
// g of the tensor starts at byte g * 4 * c * h * w (docs/isa.md, "4N").
std::array<uint32_t, 4> int8x4NStrides(uint32_t h, uint32_t w);

} // namespace tpu::isa
