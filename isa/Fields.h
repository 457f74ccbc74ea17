// The 128-byte BM1684 command words as data: the field tables in
// isa/tables/*.def are the only place bit positions are written down.
// Fields are packed contiguously, least significant bit first.
#pragma once

#include "support/Status.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace tpu::isa {

constexpr size_t kCommandBytes = 128;
using CommandBytes = std::array<uint8_t, kCommandBytes>;

enum class TiuField : uint16_t {
#define TIU_FIELD(name, offset, width) name,
#include "isa/tables/tiu_fields.def"
#undef TIU_FIELD
  Count
};

enum class GdmaField : uint16_t {
#define GDMA_FIELD(name, offset, width) name,
#include "isa/tables/gdma_fields.def"
#undef GDMA_FIELD
  Count
};

struct FieldInfo {
  std::string_view name;
  uint16_t offset;
  uint8_t width;
  uint64_t maxValue() const { return width >= 64 ? ~0ull : (1ull << width) - 1; }
};

const FieldInfo &fieldInfo(TiuField f);
const FieldInfo &fieldInfo(GdmaField f);

// Reads / writes `width` (<= 64) bits at bit `offset` of a little-endian buffer.
uint64_t getBits(const uint8_t *buf, unsigned offset, unsigned width);
void setBits(uint8_t *buf, unsigned offset, unsigned width, uint64_t value);

// A command as the vector of its field values, for either engine.
template <typename FieldT> class RawCommand {
public:
  static constexpr size_t kFieldCount = size_t(FieldT::Count);

  uint64_t get(FieldT f) const { return values_[size_t(f)]; }
  void set(FieldT f, uint64_t v) { values_[size_t(f)] = v; }
  uint64_t &operator[](FieldT f) { return values_[size_t(f)]; }
  uint64_t operator[](FieldT f) const { return values_[size_t(f)]; }

  // Packs into 128 bytes; a value that does not fit its field's width is an
  // error naming the field and the value.
  Result<CommandBytes> encode() const {
    CommandBytes out{};
    for (size_t i = 0; i < kFieldCount; ++i) {
      const FieldInfo &fi = fieldInfo(FieldT(i));
      if (values_[i] > fi.maxValue())
        return makeError("field ", fi.name, " = ", values_[i], " does not fit in ",
                         unsigned(fi.width), " bits");
      setBits(out.data(), fi.offset, fi.width, values_[i]);
    }
    return out;
  }
  static RawCommand decode(const uint8_t *bytes) {
    RawCommand c;
    for (size_t i = 0; i < kFieldCount; ++i) {
      const FieldInfo &fi = fieldInfo(FieldT(i));
      c.values_[i] = getBits(bytes, fi.offset, fi.width);
    }
    return c;
  }
  // Finds a field by its table name (used by the assembler).
  static bool lookup(std::string_view name, FieldT &out) {
    for (size_t i = 0; i < kFieldCount; ++i)
      if (fieldInfo(FieldT(i)).name == name) {
        out = FieldT(i);
        return true;
      }
    return false;
  }
  bool operator==(const RawCommand &o) const { return values_ == o.values_; }
  bool operator!=(const RawCommand &o) const { return values_ != o.values_; }

private:
  std::array<uint64_t, kFieldCount> values_{};
};

using TiuRaw = RawCommand<TiuField>;
using GdmaRaw = RawCommand<GdmaField>;

} // namespace tpu::isa
