#include "memory/GdmaAccess.h"

namespace tpu::sim {

using isa::GdmaCommand;
using isa::GdmaFormat;
using isa::GdmaSpecialFunc;
using isa::GdmaTensor;

namespace {

constexpr const char *kDimNames = "nchw";

// Default strides when stride_enable is 0: compact NCHW in DDR, the aligned
// LMEM layout TIU operands use (c_stride = align(h*w, EU)) in local memory.
std::array<uint64_t, 4> defaultStrides(const isa::HwConfig &cfg, const GdmaView &v) {
  uint64_t hw = uint64_t(v.shape[2]) * v.shape[3];
  if (!v.local) return {v.shape[1] * hw, hw, v.shape[3], 1};
  isa::Shape4 shape{v.shape[0], v.shape[1], v.shape[2], v.shape[3]};
  isa::Strides4 s = localStrides(cfg, isa::StrideMode::Aligned, shape, v.lmem.npuOffset, v.bytes, {});
  return {s.n, s.c, s.h, s.w};
}

Result<GdmaView> resolveSide(const isa::HwConfig &cfg, const GdmaCommand &cmd,
                             const GdmaTensor &t, bool local, const char *side) {
  if (t.format == GdmaFormat::Fp16)
    return makeError(side, "_data_format = fp16 is not supported (BM1684 has no fp16)");
  GdmaView v;
  v.local = local;
  v.format = t.format;
  v.bytes = isa::gdmaFormatBytes(t.format);
  v.shape = t.shape;
  v.addr = t.addr;
  for (int d = 0; d < 4; ++d)
    if (t.shape[d] == 0) return makeError(side, "_", kDimNames[d], "size = 0");
  if (t.addr % v.bytes)
    return makeError(side, "_start_addr = 0x", std::hex, t.addr, std::dec,
                     " is not aligned to the ", v.bytes, "-byte ",
                     isa::gdmaFormatName(t.format), " element");
  if (local) {
    if (t.addr >= cfg.lmemBytes())
      return makeError(side, "_start_addr = 0x", std::hex, t.addr, " is beyond local memory (0x",
                       cfg.lmemBytes(), " bytes)");
    v.lmem.shape = {t.shape[0], t.shape[1], t.shape[2], t.shape[3]};
    v.lmem.elemBytes = v.bytes;
    v.lmem.lanes = cfg.npuLanes;
    v.lmem.npuOffset = uint32_t(t.addr / cfg.lmemBytesPerLane);
    v.lmem.laneOffset = uint32_t(t.addr % cfg.lmemBytesPerLane);
  }
  if (cmd.strideEnable)
    for (int d = 0; d < 4; ++d) v.stride[d] = t.stride[d];
  else
    v.stride = defaultStrides(cfg, v);

  if (local) {
    v.lmem.stride = {uint32_t(v.stride[0]), uint32_t(v.stride[1]), uint32_t(v.stride[2]),
                     uint32_t(v.stride[3])};
    // Strides are unsigned and the in-lane channel step grows with c: the
    // last element ends furthest into its lane.
    uint64_t end = v.lmem.offset(t.shape[0] - 1, t.shape[1] - 1, t.shape[2] - 1, t.shape[3] - 1) + v.bytes;
    if (end > cfg.lmemBytesPerLane)
      return makeError(side, ": local access from offset 0x", std::hex, v.lmem.laneOffset,
                       " of lane ", std::dec, v.lmem.npuOffset, " ends at byte ", end,
                       " of a ", cfg.lmemBytesPerLane, "-byte lane");
  } else {
    uint64_t extent = uint64_t(t.shape[0] - 1) * v.stride[0] + uint64_t(t.shape[1] - 1) * v.stride[1] +
                      uint64_t(t.shape[2] - 1) * v.stride[2] + uint64_t(t.shape[3] - 1) * v.stride[3];
    extent = (extent + 1) * v.bytes;
    if (t.addr < cfg.globalMemBase || extent > cfg.globalMemBytes ||
        t.addr - cfg.globalMemBase > cfg.globalMemBytes - extent)
      return makeError(side, ": global access [0x", std::hex, t.addr, ", +0x", extent,
                       ") is outside global memory [0x", cfg.globalMemBase, ", 0x",
                       cfg.globalMemBase + cfg.globalMemBytes, ")");
  }
  // Bounds the work of one command (stride-0 shapes could name 2^64 elements).
  uint64_t capacity = local ? cfg.lmemBytes() : cfg.globalMemBytes;
  if (v.elements() > capacity / v.bytes)
    return makeError(side, ": ", v.elements(), " elements exceed the ", capacity,
                     " bytes of ", local ? "local" : "global", " memory");
  return v;
}

std::string shapeText(const std::array<uint32_t, 4> &s) {
  return std::to_string(s[0]) + "x" + std::to_string(s[1]) + "x" + std::to_string(s[2]) + "x" +
         std::to_string(s[3]);
}

// The contiguous run (in elements) an access forms: grows from w outwards
// while a dimension's stride equals the run so far; on the local side c moves
// to another lane and never merges.
uint64_t runElements(const GdmaView &v) {
  uint64_t run = 1;
  for (int d = 3; d >= 0; --d) {
    if (v.shape[d] == 1) continue;
    if ((v.local && d == 1) || v.stride[d] != run) break;
    run *= v.shape[d];
  }
  return run;
}

GdmaSideAccess sideAccess(const GdmaView &v, uint64_t elements) {
  uint64_t run = runElements(v);
  GdmaSideAccess a;
  a.local = v.local;
  a.elementBytes = v.bytes;
  a.bytes = elements * v.bytes;
  a.runBytes = run * v.bytes;
  a.runs = elements / run;
  if (v.local && v.shape[1]) {
    const uint64_t rounds = (uint64_t(v.lmem.npuOffset) + v.shape[1] + v.lmem.lanes - 1) / v.lmem.lanes;
    a.laneBytes = a.bytes / v.shape[1] * rounds;
  }
  return a;
}

} // namespace

Result<GdmaPlan> planGdma(const isa::HwConfig &cfg, const GdmaCommand &cmd) {
  GdmaSpecialFunc sf = cmd.specialFunc;
  if (sf == GdmaSpecialFunc::Winograd || sf == GdmaSpecialFunc::Filter)
    return makeError("special_func = ", isa::gdmaSpecialFuncName(sf), " is not supported");
  if (cmd.accWriteEnable) return makeError("acc_write_enable = 1 is not supported");

  GdmaPlan plan;
  plan.readsSrc = sf != GdmaSpecialFunc::ConstantFill;
  auto dst = resolveSide(cfg, cmd, cmd.dst, cmd.dstIsLocal(), "dst");
  if (!dst) return dst.status();
  plan.dst = *dst;
  if (!plan.readsSrc) return plan;
  auto src = resolveSide(cfg, cmd, cmd.src, cmd.srcIsLocal(), "src");
  if (!src) return src.status();
  plan.src = *src;

  if (sf != GdmaSpecialFunc::FormatConvert && cmd.src.format != cmd.dst.format)
    return makeError("src_data_format = ", isa::gdmaFormatName(cmd.src.format),
                     " differs from dst_data_format = ", isa::gdmaFormatName(cmd.dst.format),
                     " but special_func is ", isa::gdmaSpecialFuncName(sf));
  const auto &s = cmd.src.shape;
  std::array<uint32_t, 4> want = s;
  switch (sf) {
  case GdmaSpecialFunc::None:
  case GdmaSpecialFunc::FormatConvert:
    if (plan.src.elements() != plan.dst.elements())
      return makeError("src has ", plan.src.elements(), " elements (", shapeText(s),
                       ") but dst has ", plan.dst.elements(), " (", shapeText(cmd.dst.shape), ")");
    return plan;
  case GdmaSpecialFunc::Transpose: want = {s[1], s[0], s[2], s[3]}; break;
  case GdmaSpecialFunc::CwTranspose: want = {s[0], s[3], s[2], s[1]}; break;
  default: break; // LrnShift keeps the shape
  }
  if (cmd.dst.shape != want)
    return makeError(isa::gdmaSpecialFuncName(sf), ": dst shape ", shapeText(cmd.dst.shape),
                     " must be ", shapeText(want), " for src shape ", shapeText(s));
  return plan;
}

GdmaAccess gdmaAccess(const GdmaPlan &plan, const GdmaCommand &cmd) {
  GdmaAccess a;
  if (plan.readsSrc) a.read = sideAccess(plan.src, plan.src.elements());
  const GdmaView &d = plan.dst;
  uint64_t written = d.elements();
  if (d.local) {
    uint64_t enabled = 0;
    for (uint32_t c = 0; c < d.shape[1]; ++c) enabled += laneEnabled(cmd.laneMask, d.lmem.laneOf(c));
    written = written / d.shape[1] * enabled;
  }
  a.write = sideAccess(d, written);
  return a;
}

Result<GdmaAccess> gdmaAccess(const isa::HwConfig &cfg, const GdmaCommand &cmd) {
  auto plan = planGdma(cfg, cmd);
  if (!plan) return plan.status();
  return gdmaAccess(*plan, cmd);
}

} // namespace tpu::sim
