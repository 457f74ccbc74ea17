#include "isa/bm1684x/Text.h"

#include "isa/AsmSyntax.h"

#include <algorithm>
#include <set>

namespace tpu::isa::bm1684x {

using namespace asmsyntax;

namespace {

constexpr unsigned kIdBits = 20;
constexpr std::string_view kShortPrefix = "s.";

// Fields the mnemonic or the %-names stand for.
bool implicitField(const Command &c, std::string_view name) {
  bool tiu = c.op().engine == Engine::Tiu;
  if (name == (tiu ? "tsk_typ" : "cmd_type") || name == "cmd_short") return true;
  if (name == (tiu ? "tsk_eu_typ" : "cmd_special_function")) return c.op().sub != kAnySub;
  return (name == "cmd_id" || name == "cmd_id_dep") && c.hasIds();
}

MaybeError parseLine(const std::vector<Token> &toks, Command &out) {
  size_t at = 0;
  const Token *idToken = nullptr;
  if (!toks[0].text.empty() && toks[0].text[0] == '%') {
    if (toks.size() < 3 || toks[1].text != "=")
      return errAt(toks[0].col, "expected '%B<id> = <mnemonic> ...' or '%D<id> = dma.<...> ...'");
    idToken = &toks[0];
    at = 2;
  }
  const Token &mn = toks[at++];
  std::string_view name = mn.text;
  bool isShort = name.substr(0, kShortPrefix.size()) == kShortPrefix;
  if (isShort) name.remove_prefix(kShortPrefix.size());
  const OpInfo *op = findOp(name);
  if (!op) return errAt(mn.col, "unknown BM1684X mnemonic '", mn.text, "'");
  if (isShort && !op->hasTwoForms()) return errAt(mn.col, op->mnemonic, " has no separate short form");
  if (!op->hasTwoForms()) isShort = !op->longLayout;

  // The sub-type of LAR and masked select is an operand, needed before make().
  const char *subName = op->engine == Engine::Tiu ? "tsk_eu_typ" : "cmd_special_function";
  uint64_t sub = 0;
  if (op->sub == kAnySub)
    for (size_t i = at; i < toks.size(); ++i) {
      KeyValue kv;
      if (!splitKeyValue(toks[i], kv) && kv.key == subName)
        if (auto e = parseUint(kv.value, kv.valueCol, sub)) return e;
    }
  auto made = Command::make(*op, isShort, unsigned(std::min<uint64_t>(sub, 0xffffffffu)));
  if (!made) return errAt(mn.col, made.message());
  Command c = std::move(*made);

  char self = op->engine == Engine::Tiu ? 'B' : 'D', other = self == 'B' ? 'D' : 'B';
  if (c.hasIds() != (idToken != nullptr))
    return c.hasIds() ? errAt(mn.col, op->mnemonic, " needs a name: '%", self, "<id> = ", mn.text, " ...'")
                      : errAt(toks[0].col, op->mnemonic, " carries no id: write the mnemonic first");
  if (idToken) {
    uint64_t id;
    if (auto e = parseCmdName(*idToken, self, kIdBits, id)) return e;
    (void)c.set("cmd_id", id); // fits: parseCmdName checked its width
  }
  std::set<std::string> seen;
  for (size_t i = at; i < toks.size(); ++i) {
    const Token &t = toks[i];
    if (t.text == "deps") {
      if (!c.hasIds() || i + 2 != toks.size())
        return errAt(t.col, c.hasIds() ? "'deps' takes exactly one command name and ends the line"
                                       : "a command without ids has no deps");
      uint64_t dep;
      if (auto e = parseCmdName(toks[i + 1], other, kIdBits, dep)) return e;
      (void)c.set("cmd_id_dep", dep);
      break;
    }
    KeyValue kv;
    if (auto e = splitKeyValue(t, kv)) return e;
    int field = c.layout().find(kv.key);
    if (field < 0) return errAt(kv.keyCol, "unknown field '", kv.key, "' of ", mn.text, " (", c.layout().sheet, ")");
    if (implicitField(c, kv.key)) return errAt(kv.keyCol, "field ", kv.key, " is given by the mnemonic or the %-names");
    if (!seen.insert(kv.key).second) return errAt(kv.keyCol, "field ", kv.key, " given twice");
    uint64_t v;
    if (auto e = parseUint(kv.value, kv.valueCol, v)) return e;
    if (Status st = c.setField(size_t(field), v); !st) return errAt(kv.valueCol, st.message());
  }
  out = std::move(c);
  return std::nullopt;
}

} // namespace

std::string disassemble(const Command &c) {
  std::string line;
  bool tiu = c.op().engine == Engine::Tiu;
  if (c.hasIds()) line += std::string(tiu ? "%B" : "%D") + std::to_string(c.id()) + " = ";
  if (c.op().hasTwoForms() && c.isShort()) line += kShortPrefix;
  line += c.op().mnemonic;
  for (size_t i = 0; i < c.layout().fieldCount; ++i) {
    std::string_view name = c.layout().fields[i].name;
    if (c.value(i) == 0 || implicitField(c, name)) continue;
    line += ' ';
    line += name;
    line += '=';
    line += formatValue(name, c.value(i));
  }
  if (c.hasIds() && c.waitId()) line += std::string(" deps ") + (tiu ? "%D" : "%B") + std::to_string(c.waitId());
  return line;
}

Result<Command> assembleLine(std::string_view line) {
  std::vector<Token> toks;
  MaybeError e = tokenize(line, toks);
  if (!e && toks.empty()) e = errAt(1, "empty command line");
  Command parsed;
  if (!e) e = parseLine(toks, parsed);
  if (e) return makeError("column ", e->col, ": ", e->msg);
  return parsed;
}

Result<std::string> disassembleBuffers(const std::vector<uint8_t> &tiuBytes, const std::vector<uint8_t> &dmaBytes,
                                       const Annotation &annotate) {
  auto tiu = decodeBuffer(Engine::Tiu, tiuBytes.data(), tiuBytes.size());
  if (!tiu) return tiu.status();
  auto dma = decodeBuffer(Engine::Gdma, dmaBytes.data(), dmaBytes.size());
  if (!dma) return dma.status();
  auto order = programOrder(*tiu, *dma);
  if (!order) return order.status();
  std::string text;
  for (const OrderedCommand &o : *order) {
    const Command &c = o.engine == Engine::Tiu ? (*tiu)[o.index] : (*dma)[o.index];
    text += disassemble(c);
    if (annotate) text += "  # " + annotate(c);
    text += "\n";
  }
  return text;
}

Result<CommandBuffers> assembleText(std::string_view text, const std::string &fileName) {
  std::vector<Command> tiu, dma;
  size_t lineNo = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++lineNo;
    std::vector<Token> toks;
    MaybeError e = tokenize(line, toks);
    if (!e && toks.empty()) continue;
    Command c;
    if (!e) e = parseLine(toks, c);
    if (e) return makeError(fileName, ":", lineNo, ":", e->col, ": ", e->msg);
    (c.op().engine == Engine::Tiu ? tiu : dma).push_back(std::move(c));
  }
  if (auto order = programOrder(tiu, dma); !order) return makeError(fileName, ": ", order.message());
  return CommandBuffers{encodeBuffer(tiu), encodeBuffer(dma)};
}

} // namespace tpu::isa::bm1684x
