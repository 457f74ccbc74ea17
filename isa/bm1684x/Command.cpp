#include "isa/bm1684x/Command.h"

#include <algorithm>

namespace tpu::isa::bm1684x {

namespace {
const char *engineName(Engine e) { return e == Engine::Tiu ? "TIU" : "DMA"; }
} // namespace

Result<Command> Command::make(const OpInfo &op, bool isShort, unsigned sub) {
  if (op.longLayout == op.shortLayout) isShort = false;
  const Layout *layout = op.layout(isShort);
  if (!layout) return makeError(op.mnemonic, " has no ", isShort ? "short" : "long", " form");
  Command c;
  c.op_ = &op;
  c.layout_ = layout;
  c.isShort_ = isShort;
  c.values_.assign(layout->fieldCount, 0);
  bool tiu = op.engine == Engine::Tiu;
  TPU_RETURN_IF_ERROR(c.set(tiu ? "tsk_typ" : "cmd_type", op.type));
  unsigned s = op.sub == kAnySub ? sub : unsigned(op.sub);
  TPU_RETURN_IF_ERROR(c.set(tiu ? "tsk_eu_typ" : "cmd_special_function", s));
  if (layout->find("cmd_short") >= 0) TPU_RETURN_IF_ERROR(c.set("cmd_short", isShort));
  return c;
}

Result<Command> Command::decode(Engine engine, const uint8_t *bytes, size_t available) {
  auto sel = select(engine, bytes, available);
  if (!sel) return sel.status();
  Command c;
  c.op_ = sel->op;
  c.layout_ = sel->layout;
  c.isShort_ = sel->isShort;
  c.values_.resize(sel->layout->fieldCount);
  for (size_t i = 0; i < c.values_.size(); ++i) {
    const FieldInfo &f = sel->layout->fields[i];
    c.values_[i] = getBits(bytes, f.offset, f.width);
  }
  return c;
}

uint64_t Command::get(std::string_view name) const {
  int i = layout_->find(name);
  return i < 0 ? 0 : values_[size_t(i)];
}

Status Command::set(std::string_view name, uint64_t value) {
  int i = layout_->find(name);
  if (i < 0) return makeError(op_->mnemonic, " (layout ", layout_->sheet, ") has no field ", name);
  return setField(size_t(i), value);
}

Status Command::setField(size_t field, uint64_t value) {
  const FieldInfo &f = layout_->fields[field];
  if (value > f.maxValue())
    return makeError("field ", f.name, " = ", value, " does not fit in ", unsigned(f.width), " bits");
  values_[field] = value;
  return Status::ok();
}

bool Command::hasIds() const { return layout_->find("cmd_id") >= 0 && layout_->find("cmd_id_dep") >= 0; }

std::vector<uint8_t> Command::encode() const {
  std::vector<uint8_t> out(layout_->bytes(), 0);
  for (size_t i = 0; i < values_.size(); ++i) {
    const FieldInfo &f = layout_->fields[i];
    setBits(out.data(), f.offset, f.width, values_[i]);
  }
  return out;
}

Result<std::vector<Command>> decodeBuffer(Engine engine, const uint8_t *bytes, size_t size) {
  std::vector<Command> out;
  size_t offset = 0;
  while (offset < size) {
    auto c = Command::decode(engine, bytes + offset, size - offset);
    if (!c) return makeError(engineName(engine), " command ", out.size(), " at byte ", offset, ": ", c.message());
    offset += c->layout().bytes();
    bool sys = c->op().isSys();
    out.push_back(std::move(*c));
    size_t rest = size - offset;
    if (sys && rest < 128 && std::all_of(bytes + offset, bytes + size, [](uint8_t b) { return b == 0; })) break;
  }
  return out;
}

std::vector<uint8_t> encodeBuffer(const std::vector<Command> &commands) {
  std::vector<uint8_t> out;
  for (const Command &c : commands) {
    auto bytes = c.encode();
    out.insert(out.end(), bytes.begin(), bytes.end());
  }
  if (!commands.empty() && commands.back().op().isSys()) out.resize((out.size() + 127) / 128 * 128, 0);
  return out;
}

Result<std::vector<OrderedCommand>> programOrder(const std::vector<Command> &tiu, const std::vector<Command> &dma) {
  // Order the commands that carry ids; a TIU command without them follows the one before it.
  std::vector<SyncIds> tiuIds, dmaIds;
  std::vector<uint32_t> tiuIndex; // position in `tiu` of each entry of tiuIds
  for (size_t i = 0; i < tiu.size(); ++i)
    if (tiu[i].hasIds()) {
      tiuIds.push_back({tiu[i].id(), tiu[i].waitId()});
      tiuIndex.push_back(uint32_t(i));
    }
  for (const Command &c : dma) dmaIds.push_back({c.id(), c.waitId()});
  auto order = isa::programOrder(tiuIds, dmaIds);
  if (!order) return order.status();
  std::vector<OrderedCommand> out;
  out.reserve(tiu.size() + dma.size());
  uint32_t nextTiu = 0; // the TIU commands without ids before the next one with ids
  auto flushTiuUpTo = [&](uint32_t end) {
    for (; nextTiu < end; ++nextTiu) out.push_back({Engine::Tiu, nextTiu});
  };
  for (const OrderedCommand &o : *order) {
    if (o.engine == Engine::Gdma) {
      out.push_back(o);
      continue;
    }
    flushTiuUpTo(tiuIndex[o.index] + 1);
  }
  flushTiuUpTo(uint32_t(tiu.size()));
  return out;
}

} // namespace tpu::isa::bm1684x
