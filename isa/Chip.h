// The chips the toolkit knows: the one place their names are spelled and what each has today. Code that
// differs per chip asks this registry (or lives in the chip's own folder, isa/bm1684x/), never compares
// names itself (docs/architecture.md, "What a second chip touches").
#pragma once

#include "support/Status.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace tpu::isa {

enum class Chip : uint8_t { BM1684, BM1684X };

struct ChipInfo {
  Chip chip;
  std::string_view name; // as --chip spells it
  bool hasCompiler;      // deploy and flow build bmodels for it
  bool hasSimulator;     // sim and func run its bmodels
};

const ChipInfo &chipInfo(Chip chip);
// "bm1684x" -> Chip::BM1684X; otherwise "unknown chip 'x' (bm1684, bm1684x)".
Result<Chip> parseChip(std::string_view name);
// The chip `name`, which must have a compiler backend: the error says what exists for it instead.
Result<Chip> parseCompilerChip(std::string_view name);

} // namespace tpu::isa
