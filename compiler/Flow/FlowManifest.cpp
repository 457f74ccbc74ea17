#include "compiler/Flow/FlowManifest.h"

#include "support/ReadFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

namespace tpu::flow {

using Json = nlohmann::ordered_json;

std::string FlowManifest::path(const std::string &role) const {
  auto it = files.find(role);
  if (it == files.end() || it->second.empty()) return "";
  llvm::SmallString<256> p(dir);
  llvm::sys::path::append(p, it->second);
  return p.str().str();
}

std::vector<kernels::CompareRow> compareCommonTensors(const NpzMap &a, const NpzMap &b,
                                                      const kernels::CompareOptions &tolerance) {
  std::vector<kernels::CompareRow> rows;
  for (const auto &[name, ref] : a) {
    auto it = b.find(name);
    if (it == b.end() || it->second.shape != ref.shape) continue;
    std::vector<float> x = ref.toFloat(), y = it->second.toFloat();
    kernels::CompareRow row;
    row.name = name;
    row.shape = ref.shape;
    row.stats = kernels::compareTensors(x.data(), y.data(), int64_t(x.size()));
    row.pass = row.stats.cosine >= tolerance.minCosine && row.stats.euclidean >= tolerance.minEuclidean;
    rows.push_back(std::move(row));
  }
  return rows;
}

namespace {

// JSON has no NaN or infinity: those become null (and NaN when read back).
Json number(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

} // namespace

std::string manifestJson(const FlowManifest &m) {
  Json j;
  j["quantize"] = m.quantize;
  if (!m.int8Recipe.empty()) {
    j["int8_recipe"] = m.int8Recipe;
    j["int8_recipe_choice"] = m.int8RecipeChoice;
    j["kept_f32"] = m.keptF32;
  }
  j["files"] = Json::object();
  for (const auto &[role, name] : m.files)
    if (!name.empty()) j["files"][role] = name;
  Json cs = Json::array();
  for (const TensorComparisons &c : m.comparisons) {
    Json o;
    o["reference"] = c.reference;
    o["candidate"] = c.candidate;
    o["min_cosine"] = c.minCosine;
    o["min_euclidean"] = c.minEuclidean;
    Json ts = Json::array();
    for (const kernels::CompareRow &r : c.rows)
      ts.push_back(Json{{"name", r.name},
                        {"cosine", number(r.stats.cosine)},
                        {"euclidean", number(r.stats.euclidean)},
                        {"max_abs_diff", number(r.stats.maxAbsDiff)},
                        {"pass", r.pass}});
    o["tensors"] = std::move(ts);
    cs.push_back(std::move(o));
  }
  j["comparisons"] = std::move(cs);
  if (!m.stages.empty()) {
    Json ss = Json::array();
    for (const FlowStage &st : m.stages)
      ss.push_back(Json{{"name", st.name}, {"input_shapes", st.inputShapes}, {"dir", st.dir}});
    j["stages"] = std::move(ss);
  }
  return j.dump(1) + "\n";
}

namespace {

// Typed access: an error names the manifest and the key path.
struct ManifestReader {
  std::string origin;
  Result<const Json *> get(const Json &obj, const std::string &key, const std::string &path,
                           Json::value_t type) const {
    auto it = obj.find(key);
    if (it == obj.end()) return makeError(origin, ": missing key '", path + key, "'");
    bool ok = type == Json::value_t::number_float ? it->is_number() || it->is_null() : it->type() == type;
    if (!ok) return makeError(origin, ": key '", path + key, "' has the wrong type");
    return &*it;
  }
  Result<double> number(const Json &obj, const std::string &key, const std::string &path) const {
    auto v = get(obj, key, path, Json::value_t::number_float);
    if (!v) return v.status();
    return (*v)->is_null() ? std::numeric_limits<double>::quiet_NaN() : (*v)->get<double>();
  }
};

} // namespace

Result<FlowManifest> readFlowManifest(const std::string &dir) {
  if (!llvm::sys::fs::is_directory(dir)) return makeError(dir, ": not a directory");
  llvm::SmallString<256> p(dir);
  llvm::sys::path::append(p, kFlowManifestName);
  const std::string origin = p.str().str();
  auto text = readFile(origin);
  if (!text) return makeError(dir, ": not a tpuc flow work dir (no ", kFlowManifestName, ")");
  Json j = Json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return makeError(origin, ": not a JSON object");
  ManifestReader rd{origin};
  FlowManifest m;
  m.dir = dir;
  auto quantize = rd.get(j, "quantize", "", Json::value_t::string);
  if (!quantize) return quantize.status();
  m.quantize = (*quantize)->get<std::string>();
  // Optional (F32 flows have none).
  if (j.contains("int8_recipe")) {
    if (!j["int8_recipe"].is_string()) return makeError(origin, ": key 'int8_recipe' is not a string");
    m.int8Recipe = j["int8_recipe"].get<std::string>();
    if (j.contains("int8_recipe_choice") && j["int8_recipe_choice"].is_string())
      m.int8RecipeChoice = j["int8_recipe_choice"].get<std::string>();
    if (j.contains("kept_f32") && j["kept_f32"].is_array())
      for (const Json &k : j["kept_f32"])
        if (k.is_string()) m.keptF32.push_back(k.get<std::string>());
  }
  auto files = rd.get(j, "files", "", Json::value_t::object);
  if (!files) return files.status();
  for (const auto &[role, name] : (*files)->items()) {
    if (!name.is_string()) return makeError(origin, ": key 'files.", role, "' is not a string");
    m.files[role] = name.get<std::string>();
  }
  auto comparisons = rd.get(j, "comparisons", "", Json::value_t::array);
  if (!comparisons) return comparisons.status();
  for (size_t i = 0; i < (*comparisons)->size(); ++i) {
    const Json &c = (**comparisons)[i];
    const std::string at = "comparisons[" + std::to_string(i) + "].";
    if (!c.is_object()) return makeError(origin, ": '", at, "' is not an object");
    TensorComparisons tc;
    auto ref = rd.get(c, "reference", at, Json::value_t::string);
    if (!ref) return ref.status();
    auto cand = rd.get(c, "candidate", at, Json::value_t::string);
    if (!cand) return cand.status();
    tc.reference = (*ref)->get<std::string>();
    tc.candidate = (*cand)->get<std::string>();
    auto minCos = rd.number(c, "min_cosine", at);
    if (!minCos) return minCos.status();
    auto minEuc = rd.number(c, "min_euclidean", at);
    if (!minEuc) return minEuc.status();
    tc.minCosine = *minCos;
    tc.minEuclidean = *minEuc;
    auto tensors = rd.get(c, "tensors", at, Json::value_t::array);
    if (!tensors) return tensors.status();
    for (size_t k = 0; k < (*tensors)->size(); ++k) {
      const Json &t = (**tensors)[k];
      const std::string tat = at + "tensors[" + std::to_string(k) + "].";
      if (!t.is_object()) return makeError(origin, ": '", tat, "' is not an object");
      kernels::CompareRow row;
      auto name = rd.get(t, "name", tat, Json::value_t::string);
      if (!name) return name.status();
      row.name = (*name)->get<std::string>();
      auto cos = rd.number(t, "cosine", tat);
      if (!cos) return cos.status();
      auto euc = rd.number(t, "euclidean", tat);
      if (!euc) return euc.status();
      auto pass = rd.get(t, "pass", tat, Json::value_t::boolean);
      if (!pass) return pass.status();
      row.stats.cosine = *cos;
      row.stats.euclidean = *euc;
      row.pass = (*pass)->get<bool>();
      tc.rows.push_back(std::move(row));
    }
    m.comparisons.push_back(std::move(tc));
  }
  // Optional (multi-stage flows).
  if (j.contains("stages")) {
    if (!j["stages"].is_array()) return makeError(origin, ": key 'stages' is not an array");
    for (size_t i = 0; i < j["stages"].size(); ++i) {
      const Json &st = j["stages"][i];
      const std::string at = "stages[" + std::to_string(i) + "].";
      if (!st.is_object()) return makeError(origin, ": '", at, "' is not an object");
      FlowStage stage;
      for (auto [key, field] : {std::pair{"name", &stage.name}, std::pair{"input_shapes", &stage.inputShapes},
                                std::pair{"dir", &stage.dir}}) {
        auto v = rd.get(st, key, at, Json::value_t::string);
        if (!v) return v.status();
        *field = (*v)->get<std::string>();
      }
      m.stages.push_back(std::move(stage));
    }
  }
  return m;
}

} // namespace tpu::flow
