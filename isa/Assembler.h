// Assembler text -> bmodel::Model (syntax in docs/isa.md "Assembler syntax";
// the inverse of isa/Disassembler.h). Every error carries the line and
// column: "conv_add.s:12:20: field res0_c = 70000 does not fit in 16 bits".
#pragma once

#include "isa/Fields.h"
#include "isa/bmodel/Model.h"
#include "support/Status.h"

#include <string>
#include <string_view>

namespace tpu::isa {

struct AssembleOptions {
  // Check that each group's queues can be merged into a program order (ids
  // increasing, no deadlock). Off only to build deliberately broken streams
  // for tests of the simulator and runtime.
  bool checkOrder = true;
};

// `fileName` is used in messages; `.coeff_file` paths are relative to
// `baseDir`.
Result<bmodel::Model> assemble(std::string_view text, const std::string &fileName,
                               const std::string &baseDir, const AssembleOptions &options = {});
// Reads and assembles a .s file.
Result<bmodel::Model> assembleFile(const std::string &path, const AssembleOptions &options = {});

// Which engine a command line is for, and its 128 bytes.
struct AssembledCommand {
  bool isTiu = true;
  CommandBytes bytes{};
};
// Assembles one command line ("%B1 = ar.add ... deps %D2"); errors carry the
// column (1-based) but no line number.
Result<AssembledCommand> assembleCommand(std::string_view line);

} // namespace tpu::isa
