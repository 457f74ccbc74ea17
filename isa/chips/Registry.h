// The chips the toolkit knows: the one place their names are spelled and what each has today. Code that
// differs per chip asks this registry (or lives in the chip's own folder, isa/bm1684x/), never compares
// names itself (docs/architecture.md, "What a second chip touches").
#pragma once

#include "isa/HwConfig.h"
#include "isa/ProgramOrder.h"
#include "support/Status.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace tpu::isa {

enum class Chip : uint8_t { BM1684, BM1684X };

struct ChipInfo {
  Chip chip;
  std::string_view name;       // as --chip spells it: "bm1684x"
  std::string_view bmodelName; // as a bmodel's chip field spells it: "BM1684X"
  bool hasCompiler;            // deploy and flow build bmodels for it
  bool hasSimulator;           // sim and func run its bmodels
  // How a command group stores an engine's commands: words of this many bytes, or 0 when commands vary in
  // length and the group keeps each engine's stream as stored.
  uint32_t commandWordBytes;
  // For streams: checks that `size` bytes hold exactly `count` of the engine's commands (each one valid);
  // the error names the command. Null for word chips (the bmodel reader checks each word).
  Status (*checkStream)(Engine engine, const uint8_t *bytes, size_t size, uint32_t count);
  // Its hardware parameters: published facts and its timing model's other values.
  HwConfig (*hwConfig)();
};

const ChipInfo &chipInfo(Chip chip);
// "bm1684x" -> Chip::BM1684X; otherwise "unknown chip 'x' (bm1684, bm1684x)".
Result<Chip> parseChip(std::string_view name);
// The chip `name`, which must have a compiler backend: the error says what exists for it instead.
Result<Chip> parseCompilerChip(std::string_view name);
// The chip a bmodel's chip field names, or null.
const ChipInfo *chipByBmodelName(std::string_view bmodelName);

} // namespace tpu::isa
