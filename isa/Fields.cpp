#include "isa/Fields.h"

namespace tpu::isa {

namespace {
constexpr FieldInfo kTiuFields[] = {
#define TIU_FIELD(name, offset, width) {#name, offset, width},
#include "isa/tables/tiu_fields.def"
#undef TIU_FIELD
};
constexpr FieldInfo kGdmaFields[] = {
#define GDMA_FIELD(name, offset, width) {#name, offset, width},
#include "isa/tables/gdma_fields.def"
#undef GDMA_FIELD
};
static_assert(std::size(kTiuFields) == size_t(TiuField::Count));
static_assert(std::size(kGdmaFields) == size_t(GdmaField::Count));

// The tables must be contiguous and fit the 1024-bit command.
constexpr bool contiguous(const FieldInfo *f, size_t n) {
  unsigned next = 0;
  for (size_t i = 0; i < n; ++i) {
    if (f[i].offset != next || f[i].width == 0 || f[i].width > 64) return false;
    next += f[i].width;
  }
  return next <= kCommandBytes * 8;
}
static_assert(contiguous(kTiuFields, std::size(kTiuFields)));
static_assert(contiguous(kGdmaFields, std::size(kGdmaFields)));
} // namespace

const FieldInfo &fieldInfo(TiuField f) { return kTiuFields[size_t(f)]; }
const FieldInfo &fieldInfo(GdmaField f) { return kGdmaFields[size_t(f)]; }

uint64_t getBits(const uint8_t *buf, unsigned offset, unsigned width) {
  uint64_t v = 0;
  for (unsigned i = 0; i < width;) {
    unsigned bit = offset + i, byte = bit / 8, shift = bit % 8;
    unsigned take = std::min(8 - shift, width - i);
    uint64_t chunk = (buf[byte] >> shift) & ((1u << take) - 1);
    v |= chunk << i;
    i += take;
  }
  return v;
}

void setBits(uint8_t *buf, unsigned offset, unsigned width, uint64_t value) {
  for (unsigned i = 0; i < width;) {
    unsigned bit = offset + i, byte = bit / 8, shift = bit % 8;
    unsigned take = std::min(8 - shift, width - i);
    uint8_t mask = uint8_t(((1u << take) - 1) << shift);
    buf[byte] = uint8_t((buf[byte] & ~mask) | ((uint8_t(value >> i) << shift) & mask));
    i += take;
  }
}

} // namespace tpu::isa
