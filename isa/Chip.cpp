#include "isa/Chip.h"

#include <iterator>

namespace tpu::isa {

namespace {
constexpr ChipInfo kChips[] = {
    {Chip::BM1684, "bm1684", true, true},
    {Chip::BM1684X, "bm1684x", false, false}, // its command set: isa/bm1684x (tpuc asm/dis --chip bm1684x)
};

std::string chipList() {
  std::string s;
  for (const ChipInfo &c : kChips) s += (s.empty() ? "" : ", ") + std::string(c.name);
  return s;
}
} // namespace

const ChipInfo &chipInfo(Chip chip) { return kChips[size_t(chip)]; }

Result<Chip> parseChip(std::string_view name) {
  for (const ChipInfo &c : kChips)
    if (c.name == name) return c.chip;
  return makeError("unknown chip '", name, "' (", chipList(), ")");
}

Result<Chip> parseCompilerChip(std::string_view name) {
  auto chip = parseChip(name);
  if (!chip) return chip;
  if (!chipInfo(*chip).hasCompiler)
    return makeError("--chip ", name,
                     ": no compiler backend for this chip yet (its command set assembles and "
                     "disassembles: tpuc asm/dis --chip ",
                     name, ")");
  return chip;
}

} // namespace tpu::isa
