// The BM1684X command set as data: its register layouts (tables/layouts.def) and which layout each
// command type uses (tables/ops.def). Unlike the BM1684's fixed 128-byte words, a BM1684X command is 16 to
// 128 bytes long and its length follows from its type: TIU commands select on (cmd_short bit 0, tsk_typ
// bits 41-44, tsk_eu_typ bits 45-49), DMA commands on (cmd_short bit 3, cmd_type bits 32-35,
// cmd_special_function bits 36-38). docs/bm1684x.md has the sources.
#pragma once

#include "isa/Fields.h"
#include "isa/ProgramOrder.h"
#include "support/Status.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tpu::isa::bm1684x {

struct Layout {
  std::string_view id;    // "LongTiu"
  std::string_view sheet; // the register sheet's name, "LONG_TIU"
  unsigned bits;
  const FieldInfo *fields;
  size_t fieldCount;

  size_t bytes() const { return bits / 8; }
  // Index of the field called `name`, or -1.
  int find(std::string_view name) const;
};

// The sub-type of a type that does not select on it: the field is an operand.
constexpr int kAnySub = -1;

struct OpInfo {
  Engine engine;
  unsigned type;             // tsk_typ / cmd_type
  int sub;                   // tsk_eu_typ / cmd_special_function, or kAnySub
  const Layout *longLayout;  // null: no long form
  const Layout *shortLayout; // null: no short form
  std::string_view mnemonic;

  // Both forms exist and differ: bit cmd_short chooses, and the mnemonic of the short one starts "s.".
  bool hasTwoForms() const { return longLayout && shortLayout && longLayout != shortLayout; }
  // A sys command (TIU tsk_typ 15, DMA cmd_type 6): an end, barrier or nop, which ends a buffer and moves no data.
  bool isSys() const { return type == (engine == Engine::Tiu ? 15u : 6u); }
  const Layout *layout(bool isShort) const { return isShort ? shortLayout : longLayout; }
};

const Layout *layoutsBegin();
const Layout *layoutsEnd();
const OpInfo *opsBegin();
const OpInfo *opsEnd();

// The command type whose (type, sub-type) these are, or null.
const OpInfo *findOp(Engine engine, unsigned type, unsigned sub);
// By mnemonic ("arith.add"; without the "s." of a short form), or null.
const OpInfo *findOp(std::string_view mnemonic);

// Which command starts at `bytes` (`available` bytes from there) and with which layout. The selector bits
// lie in the first 8 bytes. Errors: too few bytes, an unknown type, a short form the type does not have,
// or a layout longer than what is left, each naming the values read.
struct Selection {
  const OpInfo *op;
  const Layout *layout;
  bool isShort;
};
Result<Selection> select(Engine engine, const uint8_t *bytes, size_t available);

} // namespace tpu::isa::bm1684x
