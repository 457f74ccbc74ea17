// BM1684X commands as assembler text, one line per command, in the BM1684's syntax (docs/isa.md):
//   %B12 = arith.add res0_c=64 res0_addr=0x1000 deps %D7
//   %B13 = s.conv.normal ...        (short form: "s." before the mnemonic)
//   %D8 = dma.tensor src_nsize=1 ... deps %B12
//   lar tsk_eu_typ=2 res0_c=8 ...   (LAR carries no ids)
// The mnemonic stands for the type and sub-type fields and the short bit, the %-names for cmd_id and
// cmd_id_dep; every other field is printed when non-zero, in layout order, so that text and bytes
// convert both ways without loss.
#pragma once

#include "isa/bm1684x/Command.h"
#include "support/Status.h"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace tpu::isa::bm1684x {

// One line, without a newline.
std::string disassemble(const Command &command);
// One line; errors are "column N: message".
Result<Command> assembleLine(std::string_view line);

// Both engines' buffers (decodeBuffer) as text in program order. `annotate`, when given, adds a comment to
// each line (tpuc dis --operands: the command's operands, from memory/bm1684x).
using Annotation = std::function<std::string(const Command &)>;
Result<std::string> disassembleBuffers(const std::vector<uint8_t> &tiu, const std::vector<uint8_t> &dma,
                                       const Annotation &annotate = {});

// Text (commands, blank lines and '#' comments) back into the two buffers (encodeBuffer). Errors are
// "fileName:line:column: message"; the ids must give a program order.
struct CommandBuffers {
  std::vector<uint8_t> tiu, dma;
};
Result<CommandBuffers> assembleText(std::string_view text, const std::string &fileName);

} // namespace tpu::isa::bm1684x
