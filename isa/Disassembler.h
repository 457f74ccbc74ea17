// Command text, one line per command, on raw fields so that every task type
// and every field (also those no typed struct uses) is shown:
//   %B12 = conv.mac res0_c=64 res0_addr=0x1000 deps %D7
//   %D7 = gdma.s2l.copy src_nsize=1 dst_start_addr_l32=0x0 deps %B3
// The mnemonic carries tsk_typ/tsk_eu_typ (TIU) or direction/special_func
// (GDMA); the %-names carry the command's own id and the id it waits for.
// Other fields are printed when non-zero, in table order. Syntax:
// docs/isa.md "Assembler syntax".
#pragma once

#include "isa/Fields.h"
#include "isa/bmodel/Model.h"
#include "support/Status.h"

#include <map>
#include <string>

namespace tpu::isa {

// Is this command one the hardware defines? TIU: a known (tsk_typ,
// tsk_eu_typ) pair. GDMA: known data formats and no bits set past the last
// field of the table. The error names the offending field and value.
Status checkTiuCommand(const CommandBytes &cmd);
Status checkGdmaCommand(const CommandBytes &cmd);

// One line, without a newline.
Result<std::string> disassembleTiu(const CommandBytes &cmd);
Result<std::string> disassembleGdma(const CommandBytes &cmd);

struct DisassembleOptions {
  // Net index -> path to print as `.coeff_file PATH` instead of inline
  // `.coeff_data` hex (the caller writes the file). Nets not listed, or
  // without coefficients, are printed inline.
  std::map<size_t, std::string> coeffFiles;
};

// A whole model as assembler text (directives, then every group's commands
// in program order); `tpuc asm` of the result rebuilds the same model.
// Errors name the net, group and command index.
Result<std::string> disassembleModel(const bmodel::Model &model,
                                     const DisassembleOptions &options = {});

// Printed name of a data type ("int8", "fp32", ...) and store mode ("1N").
std::string_view dataTypeName(bmodel::DataType t);
std::string_view storeModeName(bmodel::StoreMode m);

} // namespace tpu::isa
