#include "compiler/Calibration/CalibrationTable.h"

#include "support/ParseNumber.h"
#include "support/ReadFile.h"

#include <cmath>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <string_view>
#include <vector>

namespace tpu::calib {

namespace {
constexpr const char *kRecipePrefix = "# int8-recipe:";
} // namespace

Result<CalibrationTable> CalibrationTable::parse(const std::string &text, const std::string &origin) {
  CalibrationTable table;
  std::istringstream in(text);
  std::string line;
  for (int lineNo = 1; std::getline(in, line); ++lineNo) {
    auto hash = line.find('#');
    if (hash != std::string::npos) {
      std::string comment = line.substr(hash);
      if (comment.rfind("# method:", 0) == 0) {
        std::istringstream m(comment.substr(9));
        m >> table.method;
      } else if (comment.rfind(kRecipePrefix, 0) == 0) {
        std::string r = comment.substr(std::string_view(kRecipePrefix).size());
        const size_t b = r.find_first_not_of(" \t\r"), e = r.find_last_not_of(" \t\r");
        table.recipe = b == std::string::npos ? "" : r.substr(b, e - b + 1);
      }
      line.resize(hash);
    }
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string w; fields >> w;) f.push_back(w);
    if (f.empty()) continue;
    const std::string where = origin + ":" + std::to_string(lineNo) + ": ";
    if (f.size() != 4)
      return makeError(where, "expected 'name threshold min max', got ", f.size(), " fields");
    TensorRange r;
    if (!parseNumber(f[1], r.threshold) || !parseNumber(f[2], r.min) || !parseNumber(f[3], r.max))
      return makeError(where, "tensor '", f[0], "': threshold, min and max must be finite numbers");
    if (!(r.threshold > 0)) return makeError(where, "tensor '", f[0], "': threshold ", f[1], " must be > 0");
    if (r.min > r.max) return makeError(where, "tensor '", f[0], "': min ", f[2], " > max ", f[3]);
    if (!table.tensors.emplace(f[0], r).second)
      return makeError(where, "tensor '", f[0], "' appears twice");
  }
  return table;
}

Result<CalibrationTable> CalibrationTable::load(const std::string &path) {
  auto text = readFile(path, "calibration table");
  if (!text) return text.status();
  return parse(*text, path);
}

std::string CalibrationTable::text() const {
  std::ostringstream out;
  out << "# tpuc calibration table\n";
  if (!method.empty()) out << "# method: " << method << "\n";
  if (!recipe.empty()) out << kRecipePrefix << " " << recipe << "\n";
  for (const std::string &c : comments) out << "# " << c << "\n";
  out << "# name threshold min max\n";
  out << std::setprecision(9);
  for (const auto &[name, r] : tensors) out << name << ' ' << r.threshold << ' ' << r.min << ' ' << r.max << '\n';
  return out.str();
}

Status CalibrationTable::save(const std::string &path) const {
  std::ofstream out(path, std::ios::binary);
  if (!out) return makeError(path, ": cannot write calibration table");
  out << text();
  if (!out) return makeError(path, ": write failed");
  return Status::ok();
}

} // namespace tpu::calib
