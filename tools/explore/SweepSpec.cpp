#include "tools/explore/SweepSpec.h"

#include "isa/bmodel/Bmodel.h"
#include "tools/explore/Html.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace tpu::explore {

using Json = nlohmann::ordered_json;

namespace {

std::string relativeTo(const std::string &baseDir, const std::string &path) {
  if (path.empty() || fs::path(path).is_absolute() || baseDir.empty()) return path;
  return (fs::path(baseDir) / path).lexically_normal().string();
}

} // namespace

Json hwValue(double v) {
  if (v == std::floor(v) && std::fabs(v) < 9e15) return Json(int64_t(v));
  return Json(v);
}

const isa::ChipInfo &pointChip(const SweepSpec &spec, const SweepPoint &point) {
  const SweepModel &m = spec.models[point.model];
  if (!m.chip.empty())
    if (const isa::ChipInfo *info = isa::chipByBmodelName(m.chip)) return *info;
  if (!point.compile.chip.empty())
    if (auto chip = isa::parseChip(point.compile.chip)) return isa::chipInfo(*chip);
  // tpuc deploy without --chip compiles for the BM1684 (DeployOptions::chip); the run checks the compiled
  // bmodel's chip against this (SweepEngines.cpp, prepareInputs).
  return isa::chipInfo(isa::Chip::BM1684);
}

Result<isa::HwConfig> baseConfig(const std::string &path, const isa::ChipInfo &chip) {
  if (path.empty()) return chip.hwConfig();
  return isa::HwConfig::load(path, chip.hwConfig());
}

Result<isa::HwConfig> pointConfig(const isa::HwConfig &base, const std::map<std::string, double> &values,
                                  const std::string &where) {
  Json j = Json::parse(base.toJson());
  for (const auto &[key, v] : values) j[key] = hwValue(v);
  auto cfg = isa::HwConfig::fromJson(j.dump(), where);
  if (!cfg) return cfg.status();
  if (auto st = cfg->validate(); !st) return makeError(where, ": ", st.message());
  return cfg;
}

std::string CompileOptions::key() const {
  return quantize + (layerGroup ? "_lg" : "_nolg") + (chip.empty() ? "" : "_" + chip);
}

std::string SweepPoint::id() const {
  char buf[16];
  std::snprintf(buf, sizeof buf, "p%04zu", index);
  return buf;
}

Result<SweepSpec> parseSweep(const std::string &text, const std::string &origin, const std::string &baseDir) {
  Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded()) return makeError(origin, ": not valid JSON");
  if (!j.is_object()) return makeError(origin, ": the sweep file must hold a JSON object");
  SweepSpec spec;
  static const std::set<std::string> topKeys{"models", "hardware", "compiler", "base_config"};
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!topKeys.count(it.key()))
      return makeError(origin, ": unknown key '", it.key(), "' (known: models, hardware, compiler, base_config)");
  if (j.contains("base_config")) {
    if (!j["base_config"].is_string()) return makeError(origin, ": 'base_config' must be a file name");
    spec.baseConfig = relativeTo(baseDir, j["base_config"].get<std::string>());
  }
  if (!spec.baseConfig.empty() && !fs::is_regular_file(spec.baseConfig))
    return makeError(origin, ": base_config: ", spec.baseConfig, ": no such file");

  if (!j.contains("models") || !j["models"].is_array() || j["models"].empty())
    return makeError(origin, ": 'models' must be a non-empty list");
  std::set<std::string> names;
  static const std::set<std::string> modelKeys{"name", "bmodel", "onnx", "input_shapes", "calibration", "inputs"};
  for (size_t i = 0; i < j["models"].size(); ++i) {
    const Json &m = j["models"][i];
    std::string where = origin + ": models[" + std::to_string(i) + "]";
    if (!m.is_object()) return makeError(where, ": must be an object");
    for (auto it = m.begin(); it != m.end(); ++it) {
      if (!modelKeys.count(it.key()))
        return makeError(where, ": unknown key '", it.key(),
                         "' (known: name, bmodel, onnx, input_shapes, calibration, inputs)");
      if (it.key() != "input_shapes" && !it->is_string())
        return makeError(where, ": '", it.key(), "' must be a string");
    }
    SweepModel model;
    auto str = [&](const char *k) { return m.contains(k) ? m[k].get<std::string>() : std::string(); };
    model.bmodel = relativeTo(baseDir, str("bmodel"));
    model.onnx = relativeTo(baseDir, str("onnx"));
    model.calibration = relativeTo(baseDir, str("calibration"));
    model.inputs = relativeTo(baseDir, str("inputs"));
    if (m.contains("input_shapes")) {
      const Json &s = m["input_shapes"];
      if (!s.is_string() && !s.is_array())
        return makeError(where, ": 'input_shapes' must be a list like [[1,3,224,224]]");
      model.inputShapes = s.is_string() ? s.get<std::string>() : s.dump();
    }
    if (model.bmodel.empty() == model.onnx.empty())
      return makeError(where, ": give exactly one of 'bmodel' and 'onnx'");
    const std::string &file = model.bmodel.empty() ? model.onnx : model.bmodel;
    if (!fs::is_regular_file(file)) return makeError(where, ": model file '", file, "' not found");
    if (!model.inputs.empty() && !fs::is_regular_file(model.inputs))
      return makeError(where, ": inputs file '", model.inputs, "' not found");
    if (!model.bmodel.empty()) {
      auto chip = bmodel::readChip(model.bmodel);
      if (!chip) return makeError(where, ": ", chip.message());
      if (!isa::chipByBmodelName(*chip))
        return makeError(where, ": '", model.bmodel, "' is for unknown chip '", *chip, "'");
      model.chip = *chip;
    }
    if (!model.calibration.empty() && !fs::is_directory(model.calibration))
      return makeError(where, ": calibration directory '", model.calibration, "' not found");
    model.name = m.contains("name") ? m["name"].get<std::string>() : fs::path(file).stem().string();
    if (model.name.empty() || model.name.find_first_of("/\\ ") != std::string::npos)
      return makeError(where, ": name '", model.name, "' must be non-empty without spaces or slashes");
    if (!names.insert(model.name).second) return makeError(where, ": model name '", model.name, "' is used twice");
    spec.models.push_back(std::move(model));
  }

  if (j.contains("hardware")) {
    const Json &h = j["hardware"];
    if (!h.is_object()) return makeError(origin, ": 'hardware' must map HwConfig keys to value lists");
    // Every chip's HwConfig has the same keys.
    Json known = Json::parse(isa::HwConfig{}.toJson());
    for (auto it = h.begin(); it != h.end(); ++it) {
      std::string where = origin + ": hardware." + it.key();
      if (!known.contains(it.key())) return makeError(where, ": unknown HwConfig key '", it.key(), "'");
      std::vector<double> values;
      const Json &v = *it;
      if (v.is_number())
        values.push_back(v.get<double>());
      else if (v.is_array() && !v.empty()) {
        for (const Json &e : v) {
          if (!e.is_number()) return makeError(where, ": value ", e.dump(), " is not a number");
          values.push_back(e.get<double>());
        }
      } else
        return makeError(where, ": must be a number or a non-empty list of numbers");
      spec.hardware[it.key()] = values;
    }
  }

  if (j.contains("compiler")) {
    const Json &c = j["compiler"];
    if (!c.is_object()) return makeError(origin, ": 'compiler' must be an object");
    for (auto it = c.begin(); it != c.end(); ++it) {
      std::string where = origin + ": compiler." + it.key();
      Json v = it->is_array() ? *it : Json::array({*it});
      if (v.empty()) return makeError(where, ": empty list");
      if (it.key() == "quantize") {
        spec.quantize.clear();
        for (const Json &e : v) {
          if (!e.is_string() || (e != "F32" && e != "INT8"))
            return makeError(where, ": value ", e.dump(), " is not F32 or INT8");
          spec.quantize.push_back(e.get<std::string>());
        }
      } else if (it.key() == "layer_group") {
        spec.layerGroup.clear();
        for (const Json &e : v) {
          if (!e.is_boolean()) return makeError(where, ": value ", e.dump(), " is not true or false");
          spec.layerGroup.push_back(e.get<bool>());
        }
      } else if (it.key() == "chip") {
        spec.chips.clear();
        for (const Json &e : v) {
          if (!e.is_string()) return makeError(where, ": value ", e.dump(), " is not a chip name");
          auto chip = isa::parseCompilerChip(e.get<std::string>());
          if (!chip) return makeError(where, ": ", chip.message());
          spec.chips.push_back(std::string(isa::chipInfo(*chip).name));
        }
      } else {
        return makeError(where, ": unknown compiler option '", it.key(), "' (known: quantize, layer_group, chip)");
      }
    }
  }

  // Each hardware value alone on the base config of every chip a point runs on: HwConfig names a bad type
  // or range.
  std::set<const isa::ChipInfo *> chips;
  for (const SweepPoint &p : expandSweep(spec)) chips.insert(&pointChip(spec, p));
  for (const isa::ChipInfo *chip : chips) {
    auto base = baseConfig(spec.baseConfig, *chip);
    if (!base) return makeError(origin, ": base_config: ", base.message());
    std::string on = chips.size() > 1 ? std::string(" (") + std::string(chip->bmodelName) + ")" : "";
    for (const auto &[key, values] : spec.hardware)
      for (double value : values) {
        std::string where = origin + ": hardware." + key;
        auto cfg = pointConfig(*base, {{key, value}}, where);
        if (!cfg) return makeError(where, " = ", fixed(value, 6), on, ": ", cfg.message());
      }
  }
  bool int8 = std::count(spec.quantize.begin(), spec.quantize.end(), "INT8") > 0;
  for (const SweepModel &m : spec.models)
    if (int8 && !m.onnx.empty() && m.calibration.empty())
      return makeError(origin, ": model '", m.name, "': INT8 needs a 'calibration' directory of .npz samples");
  return spec;
}

Result<SweepSpec> loadSweep(const std::string &path) {
  auto text = readTextFile(path);
  if (!text) return text.status();
  return parseSweep(*text, path, fs::path(path).parent_path().string());
}

std::vector<SweepPoint> expandSweep(const SweepSpec &spec) {
  // Hardware combinations: keys in name order, the last varying fastest.
  std::vector<std::map<std::string, double>> hw{{}};
  for (const auto &[key, values] : spec.hardware) {
    std::vector<std::map<std::string, double>> next;
    for (const auto &partial : hw)
      for (double v : values) {
        auto p = partial;
        p[key] = v;
        next.push_back(std::move(p));
      }
    hw = std::move(next);
  }
  std::vector<SweepPoint> points;
  for (size_t m = 0; m < spec.models.size(); ++m) {
    std::vector<CompileOptions> variants;
    if (!spec.models[m].bmodel.empty())
      variants.push_back({"given", true, ""});
    else
      for (const std::string &chip : spec.chips)
        for (const std::string &q : spec.quantize)
          for (bool lg : spec.layerGroup) variants.push_back({q, lg, chip});
    for (const CompileOptions &c : variants)
      for (const auto &h : hw) points.push_back({points.size(), m, c, h});
  }
  return points;
}

Result<std::vector<size_t>> parsePointList(const std::string &text, size_t count) {
  std::vector<size_t> points;
  std::istringstream in(text);
  std::string item;
  auto bad = [&] { return makeError("'", text, "' is not a list of point indices like 0-3,7"); };
  while (std::getline(in, item, ',')) {
    size_t dash = item.find('-');
    std::string lo = item.substr(0, dash), hi = dash == std::string::npos ? lo : item.substr(dash + 1);
    for (const std::string &n : {lo, hi})
      if (n.empty() || n.size() > 9 || n.find_first_not_of("0123456789") != std::string::npos) return bad();
    size_t a = std::stoul(lo), b = std::stoul(hi);
    if (a > b) return bad();
    if (b >= count) return makeError("point ", b, " is out of range (the sweep has ", count, " points)");
    for (size_t i = a; i <= b; ++i) points.push_back(i);
  }
  if (points.empty()) return bad();
  return points;
}

std::string formatPointList(const std::vector<size_t> &points) {
  std::string text;
  for (size_t i = 0; i < points.size();) {
    size_t j = i;
    while (j + 1 < points.size() && points[j + 1] == points[j] + 1) ++j;
    text += (text.empty() ? "" : ",") + std::to_string(points[i]) + (j > i ? "-" + std::to_string(points[j]) : "");
    i = j + 1;
  }
  return text;
}

} // namespace tpu::explore
