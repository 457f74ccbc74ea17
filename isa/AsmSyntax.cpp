#include "isa/AsmSyntax.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace tpu::isa::asmsyntax {

MaybeError tokenize(std::string_view line, std::vector<Token> &out) {
  size_t i = 0;
  while (i < line.size()) {
    if (std::isspace((unsigned char)line[i])) {
      ++i;
      continue;
    }
    if (line[i] == '#') break;
    Token t{std::string(), i + 1};
    while (i < line.size() && !std::isspace((unsigned char)line[i]) && line[i] != '#') {
      if (line[i] != '"') {
        t.text += line[i++];
        continue;
      }
      size_t open = i++;
      while (i < line.size() && line[i] != '"') {
        if (line[i] == '\\' && i + 1 < line.size()) {
          ++i;
          t.text += line[i] == 'n' ? '\n' : line[i]; // \n, \" and \\ escaped
          ++i;
          continue;
        }
        t.text += line[i++];
      }
      if (i >= line.size()) return errAt(open + 1, "unterminated string");
      ++i;
    }
    out.push_back(std::move(t));
  }
  return std::nullopt;
}

MaybeError parseUint(std::string_view text, size_t col, uint64_t &out) {
  std::string s(text);
  if (s.empty() || s[0] == '-' || s[0] == '+' || std::isspace((unsigned char)s[0]))
    return errAt(col, "expected a non-negative integer, got '", s, "'");
  errno = 0;
  char *end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 0);
  if (*end != '\0') return errAt(col, "expected an integer, got '", s, "'");
  if (errno == ERANGE) return errAt(col, "integer '", s, "' does not fit in 64 bits");
  out = v;
  return std::nullopt;
}

MaybeError splitKeyValue(const Token &t, KeyValue &kv) {
  size_t eq = t.text.find('=');
  if (eq == std::string::npos || eq == 0) return errAt(t.col, "expected name=value, got '", t.text, "'");
  kv = {t.text.substr(0, eq), t.text.substr(eq + 1), t.col, t.col + eq + 1};
  return std::nullopt;
}

MaybeError parseCmdName(const Token &t, char expect, unsigned idBits, uint64_t &id) {
  if (t.text.size() < 3 || t.text[0] != '%' || (t.text[1] != 'B' && t.text[1] != 'D'))
    return errAt(t.col, "expected %B<id> or %D<id>, got '", t.text, "'");
  if (t.text[1] != expect)
    return errAt(t.col, "expected a ", expect == 'B' ? "TIU (%B)" : "GDMA (%D)", " command name, got '", t.text, "'");
  if (auto e = parseUint(std::string_view(t.text).substr(2), t.col + 2, id)) return e;
  if (id >> idBits) return errAt(t.col + 2, "command id ", id, " does not fit in ", idBits, " bits");
  return std::nullopt;
}

namespace {
bool printsHex(std::string_view name) {
  return name.find("addr") != std::string_view::npos || name.find("mask") != std::string_view::npos ||
         name == "constant_value";
}
} // namespace

std::string formatValue(std::string_view fieldName, uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, printsHex(fieldName) ? "0x%llx" : "%llu", (unsigned long long)v);
  return buf;
}

} // namespace tpu::isa::asmsyntax
