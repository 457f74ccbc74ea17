// Whole-string number parsing for text formats and command-line values.
#pragma once

#include <cmath>
#include <sstream>
#include <string>

namespace tpu {

// `text` (and nothing after it) as a finite number into `v`.
inline bool parseNumber(const std::string &text, double &v) {
  std::istringstream in(text);
  in >> v;
  return !in.fail() && in.eof() && std::isfinite(v);
}

} // namespace tpu
