#include "isa/chips/Registry.h"

#include "isa/bm1684x/Command.h"
#include "isa/bm1684x/HwPreset.h"

namespace tpu::isa {

namespace {

Status checkBm1684xStream(Engine engine, const uint8_t *bytes, size_t size, uint32_t count) {
  auto commands = bm1684x::decodeBuffer(engine, bytes, size);
  if (!commands) return commands.status();
  if (commands->size() != count)
    return makeError("count ", count, " does not match the ", commands->size(), " commands its ", size,
                     "-byte binary holds");
  return Status::ok();
}

HwConfig bm1684HwConfig() { return HwConfig(); }

constexpr ChipInfo kChips[] = {
    // Words: the bmodel reader checks each.
    {Chip::BM1684, "bm1684", "BM1684", true, true, kCommandBytes, nullptr, bm1684HwConfig},
    {Chip::BM1684X, "bm1684x", "BM1684X", true, true, 0, checkBm1684xStream, bm1684x::hwConfig},
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

const ChipInfo *chipByBmodelName(std::string_view bmodelName) {
  for (const ChipInfo &c : kChips)
    if (c.bmodelName == bmodelName) return &c;
  return nullptr;
}

} // namespace tpu::isa
