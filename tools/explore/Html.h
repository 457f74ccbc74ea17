// Small text helpers shared by the HTML report and the SVG plots: escaping,
// number formatting with a fixed precision (locale-independent, so reports
// are byte-identical across machines), reading a whole file.
#pragma once

#include "support/Status.h"

#include <string>

namespace tpu::explore {

// Escapes & < > " ' for text and attribute values.
std::string escapeXml(const std::string &text);
// `value` with `digits` decimals, "C" locale.
std::string fixed(double value, int digits);
Result<std::string> readTextFile(const std::string &path);

} // namespace tpu::explore
