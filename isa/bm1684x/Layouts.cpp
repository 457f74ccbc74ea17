#include "isa/bm1684x/Layouts.h"

#include <iterator>

namespace tpu::isa::bm1684x {

namespace {

// One field array per layout ...
#define LAYOUT_BEGIN(id, sheet, bits) constexpr FieldInfo k##id##Fields[] = {
#define FIELD(name, offset, width) {#name, offset, width},
#define LAYOUT_END()                                                                                                   \
  }                                                                                                                    \
  ;
#include "isa/bm1684x/tables/layouts.def"
#undef LAYOUT_BEGIN
#undef FIELD
#undef LAYOUT_END

// ... then the layouts, in table order.
enum LayoutId {
#define LAYOUT_BEGIN(id, sheet, bits) id,
#define FIELD(name, offset, width)
#define LAYOUT_END()
#include "isa/bm1684x/tables/layouts.def"
#undef LAYOUT_BEGIN
  LayoutCount
};
constexpr Layout kLayouts[] = {
#define LAYOUT_BEGIN(id, sheet, bits) {#id, sheet, bits, k##id##Fields, std::size(k##id##Fields)},
#include "isa/bm1684x/tables/layouts.def"
#undef LAYOUT_BEGIN
#undef FIELD
#undef LAYOUT_END
};
static_assert(std::size(kLayouts) == LayoutCount);

// Every layout covers its bits exactly, LSB first, and no field straddles a 64-bit word.
constexpr bool wellFormed(const Layout &l) {
  unsigned next = 0;
  for (size_t i = 0; i < l.fieldCount; ++i) {
    const FieldInfo &f = l.fields[i];
    if (f.offset != next || f.width == 0 || f.width > 64 || f.offset / 64 != (f.offset + f.width - 1) / 64)
      return false;
    next += f.width;
  }
  return next == l.bits && l.bits % 128 == 0;
}
constexpr bool allWellFormed() {
  for (const Layout &l : kLayouts)
    if (!wellFormed(l)) return false;
  return true;
}
static_assert(allWellFormed());

constexpr const Layout *None = nullptr;
#define TIU_OP(type, sub, longLayout, shortLayout, mnemonic)                                                           \
  {Engine::Tiu, type, sub, &kLayouts[longLayout], &kLayouts[shortLayout], mnemonic},
#define DMA_OP(type, sub, longLayout, shortLayout, mnemonic)                                                           \
  {Engine::Gdma, type, sub, layoutOrNull(longLayout), layoutOrNull(shortLayout), mnemonic},
constexpr const Layout *layoutOrNull(LayoutId id) { return &kLayouts[id]; }
constexpr const Layout *layoutOrNull(const Layout *none) { return none; }
constexpr OpInfo kOps[] = {
#include "isa/bm1684x/tables/ops.def"
};
#undef TIU_OP
#undef DMA_OP

struct SelectorBits {
  unsigned shortBit, typeOffset, typeWidth, subOffset, subWidth;
};
constexpr SelectorBits kTiuSelector{0, 41, 4, 45, 5};
constexpr SelectorBits kDmaSelector{3, 32, 4, 36, 3};

} // namespace

int Layout::find(std::string_view name) const {
  for (size_t i = 0; i < fieldCount; ++i)
    if (fields[i].name == name) return int(i);
  return -1;
}

const Layout *layoutsBegin() { return std::begin(kLayouts); }
const Layout *layoutsEnd() { return std::end(kLayouts); }
const OpInfo *opsBegin() { return std::begin(kOps); }
const OpInfo *opsEnd() { return std::end(kOps); }

const OpInfo *findOp(Engine engine, unsigned type, unsigned sub) {
  for (const OpInfo &op : kOps)
    if (op.engine == engine && op.type == type && (op.sub == kAnySub || unsigned(op.sub) == sub)) return &op;
  return nullptr;
}

const OpInfo *findOp(std::string_view mnemonic) {
  for (const OpInfo &op : kOps)
    if (op.mnemonic == mnemonic) return &op;
  return nullptr;
}

Result<Selection> select(Engine engine, const uint8_t *bytes, size_t available) {
  const char *name = engine == Engine::Tiu ? "TIU" : "DMA";
  if (available < 8)
    return makeError(name, " command truncated: ", available, " bytes left, a command needs 16 or more");
  const SelectorBits &s = engine == Engine::Tiu ? kTiuSelector : kDmaSelector;
  unsigned type = unsigned(getBits(bytes, s.typeOffset, s.typeWidth));
  unsigned sub = unsigned(getBits(bytes, s.subOffset, s.subWidth));
  bool isShort = getBits(bytes, s.shortBit, 1);
  const char *typeName = engine == Engine::Tiu ? "tsk_typ" : "cmd_type";
  const char *subName = engine == Engine::Tiu ? "tsk_eu_typ" : "cmd_special_function";
  const OpInfo *op = findOp(engine, type, sub);
  if (!op) return makeError("unknown ", name, " command type ", typeName, "=", type, " ", subName, "=", sub);
  // LAR and SYS have one layout for both, and bit 0 is theirs.
  if (op->longLayout == op->shortLayout) isShort = false;
  const Layout *layout = op->layout(isShort);
  if (!layout) return makeError(name, " command ", op->mnemonic, " has no ", isShort ? "short" : "long", " form");
  if (available < layout->bytes())
    return makeError(name, " command ", op->mnemonic, " truncated: ", available, " bytes left of its ",
                     layout->bytes());
  return Selection{op, layout, isShort};
}

} // namespace tpu::isa::bm1684x
