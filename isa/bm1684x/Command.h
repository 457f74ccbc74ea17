// One BM1684X command as the values of its layout's fields, and whole command buffers (one engine's
// commands back to back, as a bmodel stores them).
#pragma once

#include "isa/bm1684x/Layouts.h"
#include "support/Status.h"

#include <cstdint>
#include <string_view>
#include <vector>

namespace tpu::isa::bm1684x {

class Command {
public:
  // A command of `op` in its short or long form, every field 0 but those that select the type.
  // `sub` is the sub-type of a type that does not select on it (LAR's tsk_eu_typ), ignored otherwise.
  static Result<Command> make(const OpInfo &op, bool isShort, unsigned sub = 0);
  // Decodes the command starting at `bytes`; Selection errors as select().
  static Result<Command> decode(Engine engine, const uint8_t *bytes, size_t available);

  const OpInfo &op() const { return *op_; }
  const Layout &layout() const { return *layout_; }
  bool isShort() const { return isShort_; }

  uint64_t value(size_t field) const { return values_[field]; }
  // By name; a field the layout does not have reads as 0 and is an error to set.
  uint64_t get(std::string_view name) const;
  Status set(std::string_view name, uint64_t value);
  Status setField(size_t field, uint64_t value);

  // The command's id and the id of the other engine's command it waits for (0: none). LAR has neither.
  bool hasIds() const;
  uint32_t id() const { return uint32_t(get("cmd_id")); }
  uint32_t waitId() const { return uint32_t(get("cmd_id_dep")); }

  // layout().bytes() bytes.
  std::vector<uint8_t> encode() const;
  bool operator==(const Command &o) const { return layout_ == o.layout_ && op_ == o.op_ && values_ == o.values_; }

private:
  const OpInfo *op_ = nullptr;
  const Layout *layout_ = nullptr;
  bool isShort_ = false;
  std::vector<uint64_t> values_;
};

// One command group: each engine's commands as its buffer holds them.
struct CommandGroup {
  std::vector<Command> tiu, dma;
};

// Decodes one engine's buffer. It ends at its end: after a TIU sys or DMA sys command, fewer than 128
// zero bytes are padding. An error names the command's index and byte offset.
Result<std::vector<Command>> decodeBuffer(Engine engine, const uint8_t *bytes, size_t size);
// The inverse: the commands back to back, zero-padded to 128 bytes when the last one is a sys command.
std::vector<uint8_t> encodeBuffer(const std::vector<Command> &commands);

// The order the two engines run the commands in (isa/ProgramOrder.h's rule on cmd_id / cmd_id_dep). A
// TIU command without ids (LAR) is placed just before the next TIU command that has them.
Result<std::vector<OrderedCommand>> programOrder(const std::vector<Command> &tiu, const std::vector<Command> &dma);

} // namespace tpu::isa::bm1684x
