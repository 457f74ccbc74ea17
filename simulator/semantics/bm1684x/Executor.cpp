#include "simulator/semantics/bm1684x/Executor.h"

#include "isa/bm1684x/MemoryMap.h"

#include <cstring>

namespace tpu::sim::bm1684x {

using isa::bm1684x::Command;
using memory::bm1684x::Operand;
using memory::bm1684x::Space;
namespace map = isa::bm1684x;

namespace {

isa::HwConfig memoryConfig() {
  isa::HwConfig cfg;
  cfg.npuLanes = map::kLanes;
  cfg.lmemBytesPerLane = uint32_t(map::kLaneBytes);
  cfg.lmemBanks = uint32_t(map::kBanksPerLane);
  cfg.globalMemBase = map::kGlobalStart;
  cfg.globalMemBytes = map::kGlobalEnd - map::kGlobalStart;
  return cfg;
}

using Index = std::array<uint64_t, 4>;

Result<uint64_t> elementBytes(const Operand &v) {
  unsigned bits = v.type.bits();
  if (bits < 8) return makeError(v.type.name(), " elements are not modelled");
  return uint64_t(bits / 8);
}

// Where element `at` of a view lies: for local memory its lane and the byte in it, elsewhere the byte
// offset from the memory's start. Channels of a local view continue lane by lane from the view's own lane.
struct Place {
  uint32_t lane = 0;
  uint64_t byte = 0;
};
Result<Place> placeOf(const Operand &v, const Index &at, uint64_t bytes) {
  if (!v.stride) return makeError(v.name(), ": a weight layout (no strides) is not modelled");
  const auto &s = *v.stride;
  if (v.space == Space::Lmem) {
    uint64_t lane0 = v.address / map::kLaneBytes, channel = lane0 + at[1];
    int64_t elements =
        int64_t(at[0]) * s[0] + int64_t(channel / map::kLanes) * s[1] + int64_t(at[2]) * s[2] + int64_t(at[3]) * s[3];
    return Place{uint32_t(channel % map::kLanes), v.address % map::kLaneBytes + uint64_t(elements) * bytes};
  }
  int64_t elements = int64_t(at[0]) * s[0] + int64_t(at[1]) * s[1] + int64_t(at[2]) * s[2] + int64_t(at[3]) * s[3];
  return Place{0, v.address + uint64_t(elements) * bytes};
}

} // namespace

Memories::Memories()
    : local_(memoryConfig()), global_(memoryConfig()), static_(map::kStaticEnd - map::kStaticStart, 0) {}

// Local and static memory are flat host arrays: the element's bytes there, after the range check.
Result<uint8_t *> Memories::hostBytes(const Operand &v, uint32_t lane, uint64_t byte, uint64_t bytes) {
  if (v.space == Space::Lmem) {
    TPU_RETURN_IF_ERROR(local_.checkLaneRange(byte, bytes, v.name().c_str()));
    return local_.lane(lane) + byte;
  }
  if (v.space != Space::Static) return makeError(v.name(), ": L2 SRAM is not modelled");
  if (byte > static_.size() || bytes > static_.size() - byte)
    return makeError(v.name(), ": static memory access [", byte, ", +", bytes, ") is outside its ", static_.size(),
                     " bytes");
  return static_.data() + byte;
}

Status Memories::read(const Operand &v, const Index &at, void *value) const {
  auto bytes = elementBytes(v);
  if (!bytes) return bytes.status();
  if (v.space == Space::Const) {
    uint32_t bits = uint32_t(v.address);
    std::memcpy(value, &bits, *bytes);
    return Status::ok();
  }
  auto p = placeOf(v, at, *bytes);
  if (!p) return p.status();
  if (v.space == Space::Global) return global_.read(map::kGlobalStart + p->byte, value, *bytes);
  auto src = const_cast<Memories *>(this)->hostBytes(v, p->lane, p->byte, *bytes); // only read here
  if (!src) return src.status();
  std::memcpy(value, *src, *bytes);
  return Status::ok();
}

Status Memories::write(const Operand &v, const Index &at, const void *value, uint64_t laneMask) {
  if (v.space == Space::Const) return makeError(v.name(), ": a constant is not writable");
  auto bytes = elementBytes(v);
  if (!bytes) return bytes.status();
  auto p = placeOf(v, at, *bytes);
  if (!p) return p.status();
  if (v.space == Space::Global) return global_.write(map::kGlobalStart + p->byte, value, *bytes);
  auto dst = hostBytes(v, p->lane, p->byte, *bytes);
  if (!dst) return dst.status();
  if (v.space != Space::Lmem || ((laneMask >> p->lane) & 1)) std::memcpy(*dst, value, *bytes);
  return Status::ok();
}

namespace {

// Calls fn(index) for every index of `shape`, stopping at the first error.
template <typename Fn> Status forEach(const Index &shape, Fn &&fn) {
  for (uint64_t n = 0; n < shape[0]; ++n)
    for (uint64_t c = 0; c < shape[1]; ++c)
      for (uint64_t h = 0; h < shape[2]; ++h)
        for (uint64_t w = 0; w < shape[3]; ++w) TPU_RETURN_IF_ERROR(fn(Index{n, c, h, w}));
  return Status::ok();
}

Status tensorDma(Memories &m, const Command &c, const memory::bm1684x::Operands &ops) {
  enum { None = 0, Transpose = 1, Collect = 2, Broadcast = 3, Distribute = 4 };
  const Operand &dst = ops.results[0], &src = ops.operands[0];
  const bool fill = c.get("fill_constant_en");
  if (!fill && !c.get("stride_enable")) return makeError("dma.tensor without stride_enable is not modelled");
  if (c.get("decompress_enable")) return makeError("decompression is not modelled");
  const uint64_t fn = c.op().sub;
  if (fn == None && !fill && src.shape != dst.shape)
    return makeError("source and destination shapes differ (", src.typeText(), ", ", dst.typeText(), ")");
  const uint64_t mask = (c.get("localmem_mask_h32") << 32) | c.get("localmem_mask_l32");
  uint8_t value[8];
  return forEach(dst.shape, [&](const Index &at) -> Status {
    Index from = at;
    if (fn == Broadcast) from[1] = 0;
    if (fn == Transpose) from = {at[1], at[0], at[2], at[3]};
    if (fn == Collect || fn == Distribute) from = {at[0], at[3], at[2], at[1]};
    TPU_RETURN_IF_ERROR(m.read(src, from, value));
    return m.write(dst, at, value, mask);
  });
}

// fp32 elementwise arithmetic; an operand of extent 1 along a dimension is broadcast along it.
Status fp32Arith(Memories &m, const Command &c, const memory::bm1684x::Operands &ops) {
  const Operand &out = ops.results[0];
  const bool unary = c.op().sub == 19; // copy
  if (ops.operands.size() < (unary ? 1u : 2u))
    return makeError("tsk_opd_num = ", c.get("tsk_opd_num"), " gives too few operands");
  if (c.get("opd2_n_str")) return makeError("round mode ", c.get("opd2_n_str"), " is not modelled");
  for (const Operand *v : {&out, &ops.operands[0], unary ? &ops.operands[0] : &ops.operands[1]})
    if (v->type.prec != 2) return makeError(v->name(), " is ", v->type.name(), ": fp32 only so far");
  auto element = [&](const Operand &v, const Index &at, float &x) {
    Index i = at;
    for (size_t d = 0; d < 4; ++d)
      if (v.shape[d] == 1) i[d] = 0;
    return m.read(v, i, &x);
  };
  return forEach(out.shape, [&](const Index &at) -> Status {
    float a = 0, b = 0, r = 0;
    TPU_RETURN_IF_ERROR(element(ops.operands[0], at, a));
    if (!unary) TPU_RETURN_IF_ERROR(element(ops.operands[1], at, b));
    switch (c.op().sub) {
    case 0:
      r = a * b;
      break;
    case 2:
      r = a + b;
      break;
    case 3:
      r = a - b;
      break;
    case 4:
      r = a > b ? a : b;
      break;
    case 5:
      r = a < b ? a : b;
      break;
    default:
      r = a;
      break;
    }
    return m.write(out, at, &r);
  });
}

} // namespace

Status execute(Memories &m, const Command &c) {
  if (c.op().isSys()) return Status::ok();
  const bool tiu = c.op().engine == isa::Engine::Tiu;
  const bool dmaTensor = !tiu && c.op().type == 0;
  const int sub = c.op().sub;
  const bool arith = tiu && c.op().type == 3 && (sub == 0 || (sub >= 2 && sub <= 5) || sub == 19);
  if (!dmaTensor && !arith) return makeError(c.op().mnemonic, " is not executed yet");
  auto ops = memory::bm1684x::operandsOf(c);
  if (!ops) return ops.status();
  Status st = dmaTensor ? tensorDma(m, c, *ops) : fp32Arith(m, c, *ops);
  return st ? st : st.prefix(std::string(c.op().mnemonic));
}

Status run(Memories &m, const std::vector<Command> &tiu, const std::vector<Command> &dma) {
  auto order = isa::bm1684x::programOrder(tiu, dma);
  if (!order) return order.status();
  for (const isa::OrderedCommand &o : *order) {
    const bool isTiu = o.engine == isa::Engine::Tiu;
    const Command &c = isTiu ? tiu[o.index] : dma[o.index];
    Status st = execute(m, c);
    if (!st)
      return st.prefix(std::string(isTiu ? "TIU" : "DMA") + " command " + std::to_string(o.index) +
                       (c.hasIds() ? std::string(isTiu ? " (%B" : " (%D") + std::to_string(c.id()) + ")" : ""));
  }
  return Status::ok();
}

} // namespace tpu::sim::bm1684x
