// The lexical pieces of the assembler text that every chip's command syntax shares (docs/isa.md
// "Assembler syntax"): tokens with their columns, integers, name=value pairs, %B/%D command names, and
// how field values are printed.
#pragma once

#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace tpu::isa::asmsyntax {

// An error at a column of the current line (1-based).
struct LineError {
  size_t col;
  std::string msg;
};
template <typename... Args> LineError errAt(size_t col, const Args &...args) {
  std::ostringstream os;
  (os << ... << args);
  return {col, os.str()};
}
using MaybeError = std::optional<LineError>;

struct Token {
  std::string text; // quotes removed, escapes resolved
  size_t col;       // 1-based column of the first character
};

// Splits a line into whitespace-separated tokens; "..." may appear anywhere
// in a token (type="tpuc asm"); '#' outside quotes starts a comment.
MaybeError tokenize(std::string_view line, std::vector<Token> &out);

// A non-negative integer, decimal or 0x hex.
MaybeError parseUint(std::string_view text, size_t col, uint64_t &out);

// "name=value" split; col of the value.
struct KeyValue {
  std::string key, value;
  size_t keyCol, valueCol;
};
MaybeError splitKeyValue(const Token &t, KeyValue &kv);

// "%B12" / "%D7": the id of a command of the engine `expect` ('B' TIU, 'D' DMA), at most `idBits` bits.
MaybeError parseCmdName(const Token &t, char expect, unsigned idBits, uint64_t &id);

// A field's value as printed: addresses, lane masks and constant bit patterns in hex.
std::string formatValue(std::string_view fieldName, uint64_t v);

} // namespace tpu::isa::asmsyntax
