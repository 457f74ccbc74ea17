// libFuzzer target: the calibration table parser (compiler/Calibration).
// Accepted tables hold what the parser promises (finite threshold > 0,
// min <= max) and survive text() -> parse() unchanged.
#include "compiler/Calibration/CalibrationTable.h"

#include <cmath>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  auto table = tpu::calib::CalibrationTable::parse(text, "fuzz.txt");
  if (!table.isOk()) return 0;
  for (const auto &[name, r] : table->tensors)
    if (!(r.threshold > 0) || !std::isfinite(r.threshold) || !(r.min <= r.max)) std::abort();
  auto again = tpu::calib::CalibrationTable::parse(table->text(), "round trip");
  if (!again.isOk() || again->text() != table->text()) std::abort();
  return 0;
}
