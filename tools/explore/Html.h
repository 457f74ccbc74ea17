// Small text helpers shared by the HTML report and the SVG plots: escaping,
// number formatting with a fixed precision (locale-independent, so reports
// are byte-identical across machines).
#pragma once

#include "support/ReadFile.h"
#include "support/Status.h"

#include <string>

namespace tpu::explore {

// Escapes & < > " ' for text and attribute values.
std::string escapeXml(const std::string &text);
// `value` with `digits` decimals, "C" locale.
std::string fixed(double value, int digits);
// The report readers' name for support/ReadFile.h's reader.
inline Result<std::string> readTextFile(const std::string &path) { return readFile(path); }

} // namespace tpu::explore
