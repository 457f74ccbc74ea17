#include "tools/explore/Sweep.h"

#include "isa/GdmaCommand.h"
#include "isa/HwConfig.h"
#include "isa/TiuCommand.h"
#include "isa/bmodel/Bmodel.h"
#include "runtime/RunFiles.h"
#include "support/Npz.h"
#include "timing/GdmaTiming.h"
#include "timing/TiuTiming.h"
#include "tools/explore/Cluster.h"
#include "tools/explore/Html.h"
#include "tools/explore/JobPool.h"
#include "tools/explore/Plot.h"
#include "tools/explore/SimStats.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>
#include <sys/file.h>
#include <thread>
#include <unistd.h>
#include <cstdio>

namespace fs = std::filesystem;

namespace tpu::explore {
namespace {

using Json = nlohmann::ordered_json;

std::string relativeTo(const std::string &baseDir, const std::string &path) {
  if (path.empty() || fs::path(path).is_absolute() || baseDir.empty()) return path;
  return (fs::path(baseDir) / path).lexically_normal().string();
}

// A JSON number for a HwConfig key: integral values stay integers, so
// integer fields (npuLanes) accept them.
Json hwValue(double v) {
  if (v == std::floor(v) && std::fabs(v) < 9e15) return Json(int64_t(v));
  return Json(v);
}

Result<isa::HwConfig> baseConfig(const std::string &path) {
  if (path.empty()) return isa::HwConfig{};
  return isa::HwConfig::load(path);
}

// The point's config: the base with the point's values; HwConfig names a bad key or value.
Result<isa::HwConfig> pointConfig(const isa::HwConfig &base, const std::map<std::string, double> &values,
                                  const std::string &where) {
  Json j = Json::parse(base.toJson());
  for (const auto &[key, v] : values) j[key] = hwValue(v);
  auto cfg = isa::HwConfig::fromJson(j.dump(), where);
  if (!cfg) return cfg.status();
  if (auto st = cfg->validate(); !st) return makeError(where, ": ", st.message());
  return cfg;
}

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

// Deterministic inputs: float32 in [-1, 1) from splitmix64 with a fixed seed.
NpyArray seededInput(const std::vector<int64_t> &shape, uint64_t seed) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(size_t(std::max<int64_t>(n, 0)));
  uint64_t s = seed;
  for (float &x : v) {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    x = float(double(z >> 11) / double(1ull << 53) * 2.0 - 1.0);
  }
  return NpyArray::from(shape, v);
}

void progressBar(const char *phase, size_t done, size_t total) {
  constexpr size_t width = 30;
  size_t filled = total ? done * width / total : width;
  std::cerr << '\r' << phase << " [" << std::string(filled, '#') << std::string(width - filled, '.') << "] " << done
            << '/' << total << (done == total ? "\n" : "") << std::flush;
}

// The simulated launch's own wall time, from the "wall time X ms" line tpuc sim prints.
double wallFromLog(const std::string &logPath) {
  auto text = readTextFile(logPath);
  if (!text) return -1;
  auto at = text->rfind("wall time ");
  if (at == std::string::npos) return -1;
  return std::atof(text->c_str() + at + 10) / 1e3;
}

// One compiled (or given) bmodel of the sweep.
struct Build {
  size_t model;
  CompileOptions compile;
  std::string dir, bmodel, inputs, netName;
  double compileSeconds = 0;                // spent by this process
  std::string error;                        // why its points cannot run
};

// Per-layer work of a bmodel for the roofline: multiply-accumulates of its
// TIU commands and DDR bytes of its GDMA commands under the point's config.
struct LayerWork {
  double macs = 0, ddrBytes = 0;
};
Result<std::map<std::string, LayerWork>> layerWork(const std::string &bmodelPath, const isa::HwConfig &hw) {
  auto model = bmodel::readFile(bmodelPath);
  if (!model) return model.status();
  std::map<std::string, LayerWork> work;
  if (model->nets.empty()) return work;
  for (const bmodel::CmdGroup &g : model->nets[0].groups) {
    for (size_t i = 0; i < g.tiu.size(); ++i) {
      auto cmd = isa::decodeTiu(g.tiu[i].data());
      if (!cmd) return cmd.status();
      work[g.tiuLayer[i]].macs += double(timing::tiuCost(*cmd, hw).macs);
    }
    for (size_t i = 0; i < g.gdma.size(); ++i) {
      auto cmd = isa::decodeGdma(isa::GdmaRaw::decode(g.gdma[i].data()));
      if (!cmd) return cmd.status();
      auto cost = timing::gdmaCost(*cmd, hw);
      if (!cost) return cost.status();
      work[g.gdmaLayer[i]].ddrBytes += double(cost->ddrBytes);
    }
  }
  return work;
}

std::string csvField(const std::string &s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

std::string optional(double v, int digits) { return v < 0 ? "" : fixed(v, digits); }

} // namespace

std::string CompileOptions::key() const { return quantize + (layerGroup ? "_lg" : "_nolg"); }

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
  auto base = baseConfig(spec.baseConfig);
  if (!base) return makeError(origin, ": base_config: ", base.message());

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
        return makeError(where, ": unknown key '", it.key(), "' (known: name, bmodel, onnx, input_shapes, calibration, inputs)");
      if (it.key() != "input_shapes" && !it->is_string()) return makeError(where, ": '", it.key(), "' must be a string");
    }
    SweepModel model;
    auto str = [&](const char *k) { return m.contains(k) ? m[k].get<std::string>() : std::string(); };
    model.bmodel = relativeTo(baseDir, str("bmodel"));
    model.onnx = relativeTo(baseDir, str("onnx"));
    model.calibration = relativeTo(baseDir, str("calibration"));
    model.inputs = relativeTo(baseDir, str("inputs"));
    if (m.contains("input_shapes")) {
      const Json &s = m["input_shapes"];
      if (!s.is_string() && !s.is_array()) return makeError(where, ": 'input_shapes' must be a list like [[1,3,224,224]]");
      model.inputShapes = s.is_string() ? s.get<std::string>() : s.dump();
    }
    if (model.bmodel.empty() == model.onnx.empty()) return makeError(where, ": give exactly one of 'bmodel' and 'onnx'");
    const std::string &file = model.bmodel.empty() ? model.onnx : model.bmodel;
    if (!fs::is_regular_file(file)) return makeError(where, ": model file '", file, "' not found");
    if (!model.inputs.empty() && !fs::is_regular_file(model.inputs))
      return makeError(where, ": inputs file '", model.inputs, "' not found");
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
    Json known = Json::parse(base->toJson());
    for (auto it = h.begin(); it != h.end(); ++it) {
      std::string where = origin + ": hardware." + it.key();
      if (!known.contains(it.key())) return makeError(where, ": unknown HwConfig key '", it.key(), "'");
      std::vector<double> values;
      const Json &v = *it;
      if (v.is_number()) values.push_back(v.get<double>());
      else if (v.is_array() && !v.empty()) {
        for (const Json &e : v) {
          if (!e.is_number()) return makeError(where, ": value ", e.dump(), " is not a number");
          values.push_back(e.get<double>());
        }
      } else return makeError(where, ": must be a number or a non-empty list of numbers");
      // Each value alone on the base config: HwConfig names a bad type or range.
      for (double value : values) {
        auto cfg = pointConfig(*base, {{it.key(), value}}, where);
        if (!cfg) return makeError(where, " = ", fixed(value, 6), ": ", cfg.message());
      }
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
      } else {
        return makeError(where, ": unknown compiler option '", it.key(), "' (known: quantize, layer_group)");
      }
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
    if (!spec.models[m].bmodel.empty()) variants.push_back({"given", true});
    else
      for (const std::string &q : spec.quantize)
        for (bool lg : spec.layerGroup) variants.push_back({q, lg});
    for (const CompileOptions &c : variants)
      for (const auto &h : hw) points.push_back({points.size(), m, c, h});
  }
  return points;
}

Result<SweepEngine> parseEngine(const std::string &name) {
  if (name == "local") return SweepEngine::Local;
  if (name == "parallel") return SweepEngine::Parallel;
  if (name == "slurm") return SweepEngine::Slurm;
  return makeError("unknown engine '", name, "' (known: local, parallel, slurm)");
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

namespace {

// A name no other process on any node uses, for files renamed into the shared cache.
std::string uniqueSuffix() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return std::string(host) + "." + std::to_string(::getpid());
}

// Everything the engines share: the points, their configs and builds, and
// where each file goes under the out-dir.
struct Plan {
  std::string out, tpuc;
  std::vector<SweepPoint> points;
  std::vector<isa::HwConfig> configs;
  std::vector<Build> builds;
  std::vector<size_t> buildOf;              // per point
  std::vector<std::string> hwKeys;
  std::string stem(size_t i) const { return out + "/points/" + points[i].id(); }
  std::string rowPath(size_t i) const { return stem(i) + ".row.json"; }
};

Result<Plan> planSweep(const SweepSpec &spec, const SweepOptions &options) {
  if (options.outDir.empty()) return makeError("no output directory");
  auto base = baseConfig(spec.baseConfig);
  if (!base) return base.status();
  Plan plan;
  plan.points = expandSweep(spec);
  // Every point's config is checked before any work starts.
  for (const SweepPoint &p : plan.points) {
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
    Build b{p.model, p.compile, "", "", "", "", 0, ""};
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

// The build's compile commands, writing into `tmp`; the bmodel is renamed
// into the cache only when the build succeeded, so a reader never sees half a file.
Job compileJob(const Plan &plan, const Build &b, const SweepModel &m, const std::string &tmp) {
  const std::string &tpuc = plan.tpuc;
  // "build": deploy names the net after its output file, as it always has here.
  std::string top = tmp + "/model.top.mlir", part = tmp + "/build.bmodel";
  std::vector<std::string> import{tpuc, "import", fs::absolute(m.onnx).string(), "-o", top};
  if (!m.inputShapes.empty()) import.insert(import.end(), {"--input-shapes", m.inputShapes});
  std::string script = commandLine(import);
  std::vector<std::string> deploy{tpuc, "deploy", top, "--quantize", b.compile.quantize, "-o", part};
  if (b.compile.quantize == "INT8") {
    std::string table = tmp + "/model.cali";
    script += " && " + commandLine({tpuc, "calibrate", top, "--dataset", fs::absolute(m.calibration).string(), "-o", table});
    deploy.insert(deploy.end(), {"--calibration-table", table});
  }
  if (!b.compile.layerGroup) deploy.push_back("--no-layer-group");
  script += " && " + commandLine(deploy) + " && mv " + shellQuote(part) + " " + shellQuote(b.bmodel);
  return {{"/bin/sh", "-c", script}, tmp + "/compile.log"};
}

// Compiles the builds of `needed` that are not in the cache. With `lock`
// (tasks on several nodes) one build at a time under a lock file in its
// directory, so the tasks that need it wait for one compile instead of each
// compiling it; without (the local pool) all at once.
Status compileBuilds(Plan &plan, const SweepSpec &spec, const std::set<size_t> &needed, unsigned workers, bool lock,
                     bool progress) {
  std::vector<size_t> missing;
  for (size_t i : needed)
    if (!fs::exists(plan.builds[i].bmodel)) missing.push_back(i);
  auto start = [&](size_t i) -> Result<Job> {
    Build &b = plan.builds[i];
    std::string tmp = b.dir + "/tmp." + uniqueSuffix();
    std::error_code ec;
    fs::create_directories(tmp, ec);
    if (ec) return makeError(tmp, ": cannot create: ", ec.message());
    return compileJob(plan, b, spec.models[b.model], tmp);
  };
  auto finish = [&](size_t i, const Job &job, const JobOutcome &outcome) {
    Build &b = plan.builds[i];
    std::string log = b.dir + "/compile.log";
    std::error_code ec;
    fs::rename(job.logPath, log, ec);
    fs::remove_all(fs::path(job.logPath).parent_path(), ec);
    if (outcome.exitCode != 0)
      b.error = "compiling " + spec.models[b.model].name + " (" + b.compile.key() + ") failed: " + lastLine(log) +
                " (log: " + log + ")";
    else b.compileSeconds = outcome.wallSeconds;
  };
  if (!lock) {
    std::vector<Job> jobs;
    for (size_t i : missing) {
      auto job = start(i);
      if (!job) return job.status();
      jobs.push_back(job.take());
    }
    if (jobs.empty()) return Status::ok();
    auto outcomes = runJobs(jobs, workers, [&](size_t d, size_t t) {
      if (progress) progressBar("compile ", d, t);
    });
    if (!outcomes) return outcomes.status();
    for (size_t k = 0; k < missing.size(); ++k) finish(missing[k], jobs[k], (*outcomes)[k]);
    return Status::ok();
  }
  for (size_t i : missing) {
    Build &b = plan.builds[i];
    std::error_code ec;
    fs::create_directories(b.dir, ec);
    std::string lockPath = b.dir + "/lock";
    int fd = ::open(lockPath.c_str(), O_RDWR | O_CREAT, 0644);
    if (fd < 0 || ::flock(fd, LOCK_EX) != 0) {
      if (fd >= 0) ::close(fd);
      return makeError(lockPath, ": cannot lock: ", std::strerror(errno));
    }
    Status st = Status::ok();
    if (!fs::exists(b.bmodel)) { // another task may have built it while we waited
      auto job = start(i);
      auto outcome = job ? runJobs({*job}, 1, nullptr) : Result<std::vector<JobOutcome>>(job.status());
      if (outcome) finish(i, *job, (*outcome)[0]);
      else st = outcome.status();
    }
    ::close(fd);
    TPU_RETURN_IF_ERROR(st);
  }
  return Status::ok();
}

// The net to run and its inputs: the model's own, or seeded random ones from
// the bmodel's first net (written once into the cache, atomically).
Status prepareInputs(Build &b, const SweepModel &m) {
  auto model = bmodel::readFile(b.bmodel);
  if (!model) return model.status();
  if (model->nets.empty()) return makeError(b.bmodel, ": no nets");
  const bmodel::Net &net = model->nets[0];
  b.netName = net.name;
  if (!m.inputs.empty()) {
    b.inputs = fs::absolute(m.inputs).string();
    return Status::ok();
  }
  b.inputs = b.dir + "/inputs.npz";
  if (fs::exists(b.inputs)) return Status::ok();
  std::error_code ec;
  fs::create_directories(b.dir, ec);
  NpzMap in;
  uint64_t seed = 1684;
  for (const bmodel::Tensor &t : net.inputs)
    in[t.name] = seededInput(std::vector<int64_t>(t.shape.begin(), t.shape.end()), seed++);
  std::string tmp = b.inputs + ".tmp." + uniqueSuffix();
  TPU_RETURN_IF_ERROR(writeNpz(tmp, in));
  fs::rename(tmp, b.inputs, ec);
  if (ec) return makeError(b.inputs, ": cannot rename ", tmp, " into place: ", ec.message());
  return Status::ok();
}

// The row file and the JSON lines share one layout; `error` is null for a point that ran.
Json rowJson(const SweepRow &r, const std::vector<std::string> &hwKeys) {
  Json o;
  o["point"] = r.point.id();
  o["model"] = r.model;
  o["quantize"] = r.point.compile.quantize;
  o["layer_group"] = r.point.compile.layerGroup;
  for (const std::string &k : hwKeys) o[k] = hwValue(r.point.hardware.at(k));
  o["latency_us"] = r.latencyUs;
  o["total_cycles"] = r.totalCycles;
  o["tiu_utilization"] = r.tiuUtilization;
  o["gdma_utilization"] = r.gdmaUtilization;
  o["ddr_bytes"] = r.ddrBytes;
  o["lmem_peak_bytes"] = r.lmemPeakBytes < 0 ? Json(nullptr) : Json(r.lmemPeakBytes);
  o["compile_s"] = r.compileSeconds;
  o["sim_wall_s"] = r.simWallSeconds;
  o["bmodel"] = r.bmodel;
  o["error"] = r.error.empty() ? Json(nullptr) : Json(r.error);
  return o;
}

SweepRow blankRow(const Plan &plan, const SweepSpec &spec, size_t i) {
  SweepRow row;
  row.point = plan.points[i];
  row.model = spec.models[row.point.model].name;
  row.bmodel = plan.builds[plan.buildOf[i]].bmodel;
  return row;
}

// A point's row file, checked against the point: a row another sweep (other
// models, options, values or compiler) left there does not count.
Result<SweepRow> readRow(const Plan &plan, const SweepSpec &spec, size_t i) {
  const std::string path = plan.rowPath(i);
  if (!fs::exists(path)) return makeError("not run yet (no ", path, ")");
  auto text = readTextFile(path);
  if (!text) return text.status();
  Json j = Json::parse(*text, nullptr, false);
  SweepRow row = blankRow(plan, spec, i);
  Json expected = rowJson(row, plan.hwKeys);
  for (const char *k : {"point", "model", "quantize", "layer_group", "bmodel"})
    if (j.is_discarded() || !j.is_object() || !j.contains(k) || j[k] != expected[k])
      return makeError(path, ": not this sweep's row (", k, " differs)");
  for (const std::string &k : plan.hwKeys)
    if (!j.contains(k) || !j[k].is_number() || j[k].get<double>() != row.point.hardware.at(k))
      return makeError(path, ": not this sweep's row (", k, " differs)");
  if (j.contains("error") && j["error"].is_string()) {
    row.error = j["error"].get<std::string>();
    return row;
  }
  auto num = [&](const char *k) -> Result<double> {
    if (!j.contains(k) || !j[k].is_number()) return makeError(path, ": '", k, "' is missing");
    return j[k].get<double>();
  };
  for (auto [key, field] : std::initializer_list<std::pair<const char *, double *>>{
           {"latency_us", &row.latencyUs}, {"total_cycles", &row.totalCycles},
           {"tiu_utilization", &row.tiuUtilization}, {"gdma_utilization", &row.gdmaUtilization},
           {"compile_s", &row.compileSeconds}, {"sim_wall_s", &row.simWallSeconds}}) {
    auto v = num(key);
    if (!v) return v.status();
    *field = *v;
  }
  auto ddr = num("ddr_bytes");
  if (!ddr) return ddr.status();
  row.ddrBytes = uint64_t(*ddr);
  row.lmemPeakBytes = j.contains("lmem_peak_bytes") && j["lmem_peak_bytes"].is_number()
                          ? j["lmem_peak_bytes"].get<double>()
                          : -1;
  return row;
}

// Compiles and simulates `which` on this machine and writes their row files;
// a failed build or point becomes an error row.
Result<std::vector<SweepRow>> runPointsHere(Plan &plan, const SweepSpec &spec, const std::vector<size_t> &which,
                                            unsigned workers, bool lock, bool progress) {
  std::set<size_t> needed;
  for (size_t i : which) needed.insert(plan.buildOf[i]);
  TPU_RETURN_IF_ERROR(compileBuilds(plan, spec, needed, workers, lock, progress));
  for (size_t i : needed) {
    Build &b = plan.builds[i];
    if (!b.error.empty()) continue;
    if (auto st = prepareInputs(b, spec.models[b.model]); !st) b.error = st.message();
  }
  std::vector<Job> jobs;
  std::vector<size_t> simulated;
  for (size_t i : which) {
    const Build &b = plan.builds[plan.buildOf[i]];
    if (!b.error.empty()) continue;
    std::string stem = plan.stem(i);
    TPU_RETURN_IF_ERROR(runtime::writeFileAtomically(stem + ".config.json", plan.configs[i].toJson()));
    jobs.push_back({{plan.tpuc, "sim", b.bmodel, "--net", b.netName, "--input", b.inputs, "-o", stem + ".out.npz",
                     "--config", stem + ".config.json", "--stats", stem + ".stats.json"},
                    stem + ".log"});
    simulated.push_back(i);
  }
  auto ran = runJobs(jobs, workers, [&](size_t d, size_t t) {
    if (progress) progressBar("simulate", d, t);
  });
  if (!ran) return ran.status();
  std::map<size_t, JobOutcome> outcomeOf;
  for (size_t k = 0; k < simulated.size(); ++k) outcomeOf[simulated[k]] = (*ran)[k];

  std::vector<SweepRow> rows;
  for (size_t i : which) {
    const Build &b = plan.builds[plan.buildOf[i]];
    SweepRow row = blankRow(plan, spec, i);
    row.compileSeconds = b.compileSeconds;
    std::string log = plan.stem(i) + ".log";
    if (!b.error.empty()) row.error = b.error;
    else if (outcomeOf[i].exitCode != 0)
      row.error = "tpuc sim failed: " + lastLine(log) + " (log: " + log + ")";
    else if (auto f = readSimStatsFile(plan.stem(i) + ".stats.json"); !f) row.error = f.message();
    else {
      row.latencyUs = f->timeUs;
      row.totalCycles = f->totalCycles;
      row.tiuUtilization = f->engines[0].utilization;
      row.gdmaUtilization = f->engines[1].utilization;
      row.ddrBytes = uint64_t(f->ddrBytes);
      row.lmemPeakBytes = f->lmemPeakBytes();
      double wall = wallFromLog(log);
      row.simWallSeconds = wall >= 0 ? wall : outcomeOf[i].wallSeconds;
    }
    TPU_RETURN_IF_ERROR(runtime::writeFileAtomically(plan.rowPath(i), rowJson(row, plan.hwKeys).dump() + "\n"));
    rows.push_back(std::move(row));
  }
  return rows;
}

// What this process compiled, for the task logs and the user.
void noteCompiles(const Plan &plan, const SweepSpec &spec, SweepResult &result) {
  for (const Build &b : plan.builds)
    if (b.compileSeconds > 0)
      result.notes.push_back("compiled " + spec.models[b.model].name + " (" + b.compile.key() + ") in " +
                             fixed(b.compileSeconds, 2) + " s into " + b.dir);
}

void countFailures(SweepResult &result) {
  for (const SweepRow &r : result.rows)
    if (!r.error.empty() && result.failed++ == 0) result.firstFailure = r.point.id() + ": " + r.error;
}

// Merges the row files of every point (a missing one is an error row) into
// sweep.csv, sweep.jsonl and the plots.
Result<SweepResult> collectRows(const Plan &plan, const SweepSpec &spec, SweepResult result) {
  const std::string &out = plan.out;
  result.rows.clear();
  std::map<size_t, double> compileOf; // per build: the compile time, whichever task spent it
  for (size_t i = 0; i < plan.points.size(); ++i) {
    auto row = readRow(plan, spec, i);
    SweepRow r = row ? row.take() : blankRow(plan, spec, i);
    if (!row) r.error = row.message();
    compileOf[plan.buildOf[i]] = std::max(compileOf[plan.buildOf[i]], r.compileSeconds);
    result.rows.push_back(std::move(r));
  }
  for (size_t i = 0; i < plan.points.size(); ++i) result.rows[i].compileSeconds = compileOf[plan.buildOf[i]];
  countFailures(result);

  std::ostringstream csv, jsonl;
  csv << "point,model,quantize,layer_group";
  for (const std::string &k : plan.hwKeys) csv << ',' << k;
  csv << ",latency_us,total_cycles,tiu_utilization,gdma_utilization,ddr_bytes,lmem_peak_bytes,compile_s,sim_wall_s,"
         "bmodel,error\n";
  for (const SweepRow &r : result.rows) {
    csv << r.point.id() << ',' << csvField(r.model) << ',' << r.point.compile.quantize << ','
        << (r.point.compile.layerGroup ? "on" : "off");
    for (const std::string &k : plan.hwKeys) {
      double v = r.point.hardware.at(k);
      csv << ',' << fixed(v, v == std::floor(v) ? 0 : 3);
    }
    if (r.error.empty())
      csv << ',' << fixed(r.latencyUs, 3) << ',' << fixed(r.totalCycles, 3) << ',' << fixed(r.tiuUtilization, 4)
          << ',' << fixed(r.gdmaUtilization, 4) << ',' << r.ddrBytes << ',' << optional(r.lmemPeakBytes, 0) << ','
          << fixed(r.compileSeconds, 3) << ',' << fixed(r.simWallSeconds, 6);
    else csv << ",,,,,,," << fixed(r.compileSeconds, 3) << ',';
    csv << ',' << csvField(r.bmodel) << ',' << csvField(r.error) << '\n';
    jsonl << rowJson(r, plan.hwKeys).dump() << '\n';
  }
  auto write = [&](const std::string &name, const std::string &text) -> Status {
    TPU_RETURN_IF_ERROR(runtime::writeFileAtomically(out + "/" + name, text));
    result.files.push_back(out + "/" + name);
    return Status::ok();
  };
  TPU_RETURN_IF_ERROR(write("sweep.csv", csv.str()));
  TPU_RETURN_IF_ERROR(write("sweep.jsonl", jsonl.str()));

  // Latency vs DDR bandwidth: one series per model, compile options and the
  // other hardware values; failed points are left out.
  Plot lat{"latency_vs_ddr", "Latency vs DDR bandwidth", "DDR bandwidth (GB/s)", "latency (ms)", false, false, {}, {}};
  std::map<std::string, size_t> seriesOf;
  for (size_t i = 0; i < plan.points.size(); ++i) {
    const SweepPoint &p = plan.points[i];
    if (!result.rows[i].error.empty()) continue;
    std::string label = result.rows[i].model + " " + p.compile.key();
    for (const auto &[k, v] : p.hardware)
      if (k != "ddrBandwidthGBs") label += " " + k + "=" + fixed(v, v == std::floor(v) ? 0 : 2);
    auto [it, fresh] = seriesOf.emplace(label, lat.series.size());
    if (fresh) lat.series.push_back({label, {}, true, {}});
    lat.series[it->second].points.push_back({plan.configs[i].ddrBandwidthGBs, result.rows[i].latencyUs / 1e3});
  }
  for (PlotSeries &s : lat.series) std::sort(s.points.begin(), s.points.end());
  TPU_RETURN_IF_ERROR(write("latency_vs_ddr.svg", renderSvg(lat)));

  // Roofline per model and compile options, at its first point that ran: per
  // layer arithmetic intensity (ops per DDR byte) vs achieved GOPS, under the DDR roof.
  std::set<size_t> drawn;
  for (size_t i = 0; i < plan.points.size(); ++i) {
    const SweepPoint &p = plan.points[i];
    if (!result.rows[i].error.empty() || !drawn.insert(plan.buildOf[i]).second) continue;
    auto figures = readSimStatsFile(plan.stem(i) + ".stats.json");
    if (!figures) return figures.status();
    auto work = layerWork(result.rows[i].bmodel, plan.configs[i]);
    if (!work) return work.status();
    PlotSeries layers{"layers", {}, false, {}};
    for (const StatsSpan &layer : figures->layers) {
      const double us = (layer.end - layer.start) / figures->clockMhz;
      const std::string &name = layer.name;
      auto w = work->find(name);
      if (w == work->end() || w->second.macs <= 0 || w->second.ddrBytes <= 0 || us <= 0) continue;
      double ops = 2 * w->second.macs;
      layers.points.push_back({ops / w->second.ddrBytes, ops / (us * 1e3)});
      layers.tips.push_back(name + ": " + fixed(ops / w->second.ddrBytes, 2) + " ops/byte, " +
                            fixed(ops / (us * 1e3), 1) + " GOPS");
    }
    std::string name = result.rows[i].model + "_" + p.compile.key();
    const isa::HwConfig &cfg = plan.configs[i];
    Plot roof{"roofline_" + name, "Roofline: " + name + " (point " + p.id() + ")",
              "arithmetic intensity (ops / DDR byte)", "achieved GOPS", true, true, {std::move(layers)},
              {{"DDR " + fixed(cfg.ddrBandwidthGBs, 1) + " GB/s", cfg.ddrBandwidthGBs, 0}}};
    TPU_RETURN_IF_ERROR(write("roofline_" + name + ".svg", renderSvg(roof)));
  }
  return result;
}

} // namespace

Result<SweepResult> runSweep(const SweepSpec &spec, const SweepOptions &options) {
  auto planned = planSweep(spec, options);
  if (!planned) return planned.status();
  Plan &plan = *planned;
  SweepResult result;
  unsigned hardwareThreads = std::max(1u, std::thread::hardware_concurrency());

  // A task: its points here, their row files, no merge.
  if (!options.points.empty()) {
    auto rows = runPointsHere(plan, spec, options.points, options.jobs ? options.jobs : 1, true, options.progress);
    if (!rows) return rows.status();
    noteCompiles(plan, spec, result);
    result.rows = rows.take();
    for (size_t i : options.points) result.files.push_back(plan.rowPath(i));
    countFailures(result);
    return result;
  }
  if (options.collect) return collectRows(plan, spec, std::move(result));

  std::vector<size_t> pending;
  for (size_t i = 0; i < plan.points.size(); ++i) {
    if (options.resume) {
      auto row = readRow(plan, spec, i);
      if (row && row->error.empty()) continue;
    }
    pending.push_back(i);
  }
  if (options.resume)
    result.notes.push_back("resume: " + std::to_string(pending.size()) + " of " + std::to_string(plan.points.size()) +
                           " points to run" + (pending.empty() ? "" : " (" + formatPointList(pending) + ")"));
  if (pending.empty()) return collectRows(plan, spec, std::move(result));

  size_t chunk = options.chunk;
  if (chunk == 0) chunk = options.engine == SweepEngine::Slurm ? (pending.size() + 999) / 1000 : 1;
  SweepTasks tasks{plan.tpuc, fs::absolute(options.sweepFile).lexically_normal().string(), plan.out,
                   chunkPointLists(pending, chunk)};
  if (!options.jobsFile.empty()) {
    std::error_code ec;
    fs::create_directories(plan.out + "/tasks", ec);
    std::string lines;
    for (size_t k = 0; k < tasks.pointLists.size(); ++k) lines += tasks.shellLine(k) + "\n";
    TPU_RETURN_IF_ERROR(runtime::writeFileAtomically(options.jobsFile, lines));
    result.files.push_back(options.jobsFile);
    return result;
  }
  switch (options.engine) {
  case SweepEngine::Local: {
    auto rows = runPointsHere(plan, spec, pending, options.jobs ? options.jobs : hardwareThreads, false,
                              options.progress);
    if (!rows) return rows.status();
    noteCompiles(plan, spec, result);
    break;
  }
  case SweepEngine::Parallel: {
    auto notes = runParallel(tasks, {options.jobs, options.sshLogin, options.sshLoginFile});
    if (!notes) return notes.status();
    result.notes.insert(result.notes.end(), notes->begin(), notes->end());
    break;
  }
  case SweepEngine::Slurm: {
    auto notes = submitSlurm(tasks, {options.jobs, options.partition, options.wait});
    if (!notes) return notes.status();
    result.notes.insert(result.notes.end(), notes->begin(), notes->end());
    if (!options.wait) return result; // the collect job merges the rows
    break;
  }
  }
  return collectRows(plan, spec, std::move(result));
}

} // namespace tpu::explore
