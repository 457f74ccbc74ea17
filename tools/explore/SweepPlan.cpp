#include "tools/explore/SweepPlan.h"

#include "isa/bmodel/Bmodel.h"
#include "tools/explore/Html.h"

#include <algorithm>
#include <filesystem>

namespace fs = std::filesystem;

namespace tpu::explore {

namespace {

std::string toHex(const std::vector<uint8_t> &bytes) {
  static const char *digits = "0123456789abcdef";
  std::string s;
  for (uint8_t b : bytes) {
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

Result<std::vector<uint8_t>> readBytes(const std::string &path) {
  auto text = readTextFile(path);
  if (!text) return text.status();
  return std::vector<uint8_t>(text->begin(), text->end());
}

} // namespace

Result<Plan> planSweep(const SweepSpec &spec, const SweepOptions &options) {
  if (options.outDir.empty()) return makeError("no output directory");
  Plan plan;
  plan.points = expandSweep(spec);
  // Every point's config, on its chip's preset, is checked before any work starts.
  for (const SweepPoint &p : plan.points) {
    auto base = baseConfig(spec.baseConfig, pointChip(spec, p));
    if (!base) return base.status();
    auto cfg = pointConfig(*base, p.hardware, "point " + p.id());
    if (!cfg) return cfg.status();
    plan.configs.push_back(*cfg);
  }
  for (const auto &kv : spec.hardware) plan.hwKeys.push_back(kv.first);
  std::error_code ec;
  plan.out = fs::absolute(options.outDir).lexically_normal().string();
  for (const char *sub : {"", "/cache", "/points"}) {
    fs::create_directories(plan.out + sub, ec);
    if (ec) return makeError(plan.out + sub, ": cannot create: ", ec.message());
  }
  plan.tpuc = options.tpucPath;

  // One build per (model, compile options), named by a content hash.
  std::map<std::pair<size_t, std::string>, size_t> buildOf;
  // A different compiler may compile differently: its bytes are part of the key.
  std::vector<uint8_t> compilerHash;
  for (const SweepModel &m : spec.models)
    if (!m.onnx.empty()) {
      auto exe = readBytes(plan.tpuc);
      if (!exe) return exe.status();
      compilerHash = bmodel::sha256(*exe);
      break;
    }
  for (const SweepPoint &p : plan.points) {
    auto key = std::make_pair(p.model, p.compile.key());
    auto [it, fresh] = buildOf.emplace(key, plan.builds.size());
    plan.buildOf.push_back(it->second);
    if (!fresh) continue;
    const SweepModel &m = spec.models[p.model];
    Build b{p.model, p.compile, "", "", "", "", std::string(pointChip(spec, p).bmodelName), 0, ""};
    auto bytes = readBytes(m.bmodel.empty() ? m.onnx : m.bmodel);
    if (!bytes) return bytes.status();
    std::vector<uint8_t> h = *bytes;
    std::string opts = "\n" + m.inputShapes + "\n" + p.compile.key() + "\n" + m.inputs + "\n";
    h.insert(h.end(), opts.begin(), opts.end());
    if (m.bmodel.empty()) h.insert(h.end(), compilerHash.begin(), compilerHash.end());
    if (p.compile.quantize == "INT8") {
      std::vector<std::string> samples;
      for (const auto &e : fs::directory_iterator(m.calibration, ec)) samples.push_back(e.path().string());
      std::sort(samples.begin(), samples.end());
      for (const std::string &s : samples) {
        auto sb = readBytes(s);
        if (!sb) return sb.status();
        h.insert(h.end(), s.begin(), s.end());
        h.insert(h.end(), sb->begin(), sb->end());
      }
    }
    b.dir = plan.out + "/cache/" + m.name + "_" + p.compile.key() + "_" + toHex(bmodel::sha256(h)).substr(0, 16);
    b.bmodel = m.bmodel.empty() ? b.dir + "/model.bmodel" : fs::absolute(m.bmodel).string();
    plan.builds.push_back(std::move(b));
  }
  return plan;
}

} // namespace tpu::explore
