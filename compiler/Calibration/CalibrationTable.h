// The calibration table: one line per tensor, `name threshold min max`
// (the format TPU-MLIR users know), '#' comments. Thresholds are symmetric
// absolute bounds: an int8 tensor's scale is threshold / 127.
#pragma once

#include "support/Status.h"

#include <map>
#include <string>
#include <vector>

namespace tpu::calib {

struct TensorRange {
  double threshold = 0, min = 0, max = 0;
};

struct CalibrationTable {
  std::map<std::string, TensorRange> tensors; // by tensor name (ONNX name)
  std::string method;                          // the method name (a comment in the file)
  // The INT8 recipe the thresholds were chosen with (the "# int8-recipe:"
  // line, parsed by compiler/Flow/Int8Recipe.h): deploy lowers with it.
  // Empty: none recorded.
  std::string recipe;
  std::vector<std::string> comments;           // how the thresholds were chosen (written, not parsed)

  // Parses a table; an error names the file, line and what is wrong
  // (field count, a number that does not parse, threshold <= 0 or not finite,
  // min > max, a duplicate name).
  static Result<CalibrationTable> parse(const std::string &text, const std::string &origin);
  static Result<CalibrationTable> load(const std::string &path);
  std::string text() const;
  Status save(const std::string &path) const;
};

} // namespace tpu::calib
