#include "memory/LocalTensor.h"

namespace tpu::sim {

using isa::Shape4;
using isa::StrideMode;
using isa::Strides4;

uint32_t alignedChannelStride(const isa::HwConfig &cfg, const Shape4 &shape, uint32_t elemBytes) {
  uint64_t eu = cfg.euCount(elemBytes);
  uint64_t hw = uint64_t(shape.h) * shape.w;
  return uint32_t((hw + eu - 1) / eu * eu);
}

Strides4 localStrides(const isa::HwConfig &cfg, StrideMode mode, const Shape4 &shape,
                      uint32_t npuOffset, uint32_t elemBytes, const Strides4 &explicitStrides) {
  uint32_t cPerLane = (npuOffset + shape.c + cfg.npuLanes - 1) / cfg.npuLanes;
  switch (mode) {
  case StrideMode::Aligned: {
    uint32_t cs = alignedChannelStride(cfg, shape, elemBytes);
    return {cPerLane * cs, cs, shape.w, 1};
  }
  case StrideMode::Compact: {
    uint32_t cs = shape.h * shape.w;
    return {cPerLane * cs, cs, shape.w, 1};
  }
  case StrideMode::PerChannel: return {0, 1, 0, 0};
  case StrideMode::Explicit: return explicitStrides;
  }
  return explicitStrides;
}

Result<LocalTensor> resolveLocal(const isa::HwConfig &cfg, const isa::LocalOperand &op,
                                 const Shape4 &shape, const char *what) {
  LocalTensor t;
  t.shape = shape;
  t.prec = op.prec;
  t.isSigned = op.isSigned;
  t.elemBytes = isa::precBytes(op.prec);
  t.lanes = cfg.npuLanes;
  if (shape.n == 0 || shape.c == 0 || shape.h == 0 || shape.w == 0)
    return makeError(what, ": shape (", shape.n, ", ", shape.c, ", ", shape.h, ", ", shape.w,
                     ") has a zero dimension");
  if (op.isConst) {
    t.isConst = true;
    t.constValue = op.constValue;
    return t;
  }
  uint32_t lane = op.addr / cfg.lmemBytesPerLane;
  if (lane >= cfg.npuLanes)
    return makeError(what, ": address 0x", std::hex, op.addr, " is beyond local memory (",
                     std::dec, cfg.npuLanes, " lanes x ", cfg.lmemBytesPerLane, " bytes)");
  t.npuOffset = lane;
  t.laneOffset = op.addr % cfg.lmemBytesPerLane;
  if (t.laneOffset % t.elemBytes != 0)
    return makeError(what, ": address 0x", std::hex, op.addr, " is not aligned to ", std::dec,
                     t.elemBytes, " bytes (", isa::precName(op.prec), ")");
  t.stride = localStrides(cfg, op.strideMode, shape, lane, t.elemBytes, op.stride);
  // Strides are non-negative and the in-lane channel index grows with c:
  // the last element is the furthest byte touched in any lane.
  uint64_t last = t.offset(shape.n - 1, shape.c - 1, shape.h - 1, shape.w - 1);
  if (last + t.elemBytes > cfg.lmemBytesPerLane)
    return makeError(what, ": local tensor at 0x", std::hex, op.addr, std::dec, " shape (",
                     shape.n, ", ", shape.c, ", ", shape.h, ", ", shape.w, ") ",
                     isa::strideModeName(op.strideMode), " strides (", t.stride.n, ", ",
                     t.stride.c, ", ", t.stride.h, ", ", t.stride.w, ") ends at byte ",
                     last + t.elemBytes, " of a ", cfg.lmemBytesPerLane, "-byte lane");
  return t;
}

} // namespace tpu::sim
