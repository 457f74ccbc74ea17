#include "isa/GdmaCommand.h"

#include <type_traits>

namespace tpu::isa {

namespace {

template <typename T> uint64_t toBits(T v) {
  if constexpr (std::is_enum_v<T>) return uint64_t(std::underlying_type_t<T>(v));
  else return uint64_t(v);
}
template <typename T> T fromBits(uint64_t v) {
  if constexpr (std::is_same_v<T, bool>) return v != 0;
  else return T(v);
}
constexpr uint64_t lowMask(unsigned bits) { return bits >= 64 ? ~0ull : (1ull << bits) - 1; }

// Which struct member each GdmaField holds. A member wider than one field is
// split: its low `width` bits in one field, the rest (unmasked, so an
// oversized value fails GdmaRaw::encode naming the field) in another.
struct Binding {
  GdmaField field;
  uint64_t (*get)(const GdmaCommand &);
  void (*set)(GdmaCommand &, uint64_t);
};

#define MEMBER_T(m) std::remove_reference_t<decltype(std::declval<GdmaCommand &>().m)>
#define BIND(F, m)                                                                        \
  Binding{GdmaField::F, [](const GdmaCommand &c) { return toBits(c.m); },                \
          [](GdmaCommand &c, uint64_t v) { c.m = fromBits<MEMBER_T(m)>(v); }}
#define BIND_LOW(F, m, width)                                                             \
  Binding{GdmaField::F, [](const GdmaCommand &c) { return toBits(c.m) & lowMask(width); }, \
          [](GdmaCommand &c, uint64_t v) {                                                 \
            c.m = MEMBER_T(m)((toBits(c.m) & ~lowMask(width)) | (v & lowMask(width)));     \
          }}
#define BIND_HIGH(F, m, shift)                                                            \
  Binding{GdmaField::F, [](const GdmaCommand &c) { return toBits(c.m) >> (shift); },       \
          [](GdmaCommand &c, uint64_t v) {                                                 \
            c.m = MEMBER_T(m)((toBits(c.m) & lowMask(shift)) | (v << (shift)));            \
          }}

const Binding kBindings[] = {
    BIND(pio_gdma_enable, pioGdmaEnable),
    BIND(des_type, desType),
    BIND(chain_end, chainEnd),
    BIND(intr_en, intrEn),
    BIND(barrier_enable, barrierEnable),
    BIND(stride_enable, strideEnable),
    BIND(direction, direction),
    BIND(acc_write_enable, accWriteEnable),
    BIND(common_mode, commonMode),
    BIND(prefetch_disable, prefetchDisable),
    BIND(hold_des_value, holdDesValue),
    BIND(reserved, reserved),
    BIND(cmd_id, cmdId),
    BIND(special_func, specialFunc),
    BIND(dst_data_format, dst.format),
    BIND(chw_copy, chwCopy),
    BIND(sys_mem_type, sysMemType),
    BIND(src_data_format, src.format),
    BIND(lrn_shift_num, lrnShiftNum),
    BIND(lrn_shift_dir, lrnShiftDir),
    BIND(eng0_sync_id, eng0SyncId),
    BIND(eng1_sync_id, eng1SyncId),
    BIND(eng3_sync_id, eng3SyncId),
    BIND(constant_value, constantValue),
    BIND(src_nstride, src.stride[0]),
    BIND(src_cstride, src.stride[1]),
    BIND(src_hstride, src.stride[2]),
    BIND(src_wstride, src.stride[3]),
    BIND(dst_nstride, dst.stride[0]),
    BIND(dst_cstride, dst.stride[1]),
    BIND(dst_hstride, dst.stride[2]),
    BIND(dst_wstride, dst.stride[3]),
    BIND(src_nsize, src.shape[0]),
    BIND(src_csize, src.shape[1]),
    BIND(src_hsize, src.shape[2]),
    BIND(src_wsize, src.shape[3]),
    BIND(dst_nsize, dst.shape[0]),
    BIND(dst_csize, dst.shape[1]),
    BIND(dst_hsize, dst.shape[2]),
    BIND(dst_wsize, dst.shape[3]),
    BIND_LOW(src_start_addr_l32, src.addr, 32),
    BIND_LOW(dst_start_addr_l32, dst.addr, 32),
    BIND_HIGH(src_start_addr_h8, src.addr, 32),
    BIND_HIGH(dst_start_addr_h8, dst.addr, 32),
    BIND(src_hshift, srcHshift),
    BIND(src_wshift, srcWshift),
    BIND(dst_hshift, dstHshift),
    BIND(dst_wshift, dstWshift),
    BIND_LOW(localmem_mask_l32, laneMask, 32),
    BIND_HIGH(localmem_mask_h32, laneMask, 32),
    BIND(single_step, singleStep),
    BIND(debug_mode, debugMode),
};
#undef BIND
#undef BIND_LOW
#undef BIND_HIGH
#undef MEMBER_T
static_assert(std::size(kBindings) == size_t(GdmaField::Count), "every GDMA field is bound once");

// Enumerated fields and how many codes each defines.
struct CodeCheck {
  GdmaField field;
  uint64_t count;
};
constexpr CodeCheck kCodeChecks[] = {
    {GdmaField::direction, 4},
    {GdmaField::special_func, 8},
    {GdmaField::src_data_format, kGdmaFormatCount},
    {GdmaField::dst_data_format, kGdmaFormatCount},
};

} // namespace

Result<GdmaCommand> decodeGdma(const GdmaRaw &raw) {
  for (const CodeCheck &check : kCodeChecks)
    if (raw[check.field] >= check.count)
      return makeError("gdma field ", fieldInfo(check.field).name, " = ", raw[check.field],
                       " is not a defined code (0..", check.count - 1, ")");
  GdmaCommand cmd;
  cmd.src.addr = cmd.dst.addr = cmd.laneMask = 0; // split members are assembled from parts
  for (const Binding &b : kBindings) b.set(cmd, raw[b.field]);
  return cmd;
}

GdmaRaw encode(const GdmaCommand &cmd) {
  GdmaRaw raw;
  for (const Binding &b : kBindings) raw[b.field] = b.get(cmd);
  return raw;
}

// Every member is bound to a field and the binding is lossless, so equal
// field vectors mean equal commands.
bool GdmaCommand::operator==(const GdmaCommand &o) const { return encode(*this) == encode(o); }

std::array<uint32_t, 4> int8x4NStrides(uint32_t h, uint32_t w) {
  return {1, 4 * h * w, 4 * w, 4};
}

} // namespace tpu::isa
