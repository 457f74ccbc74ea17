#include "compiler/Calibration/Calibrator.h"

#include "compiler/Interpreter/TopInterpreter.h"

#include "llvm/Support/FileSystem.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>

namespace tpu::calib {

Result<Method> parseMethod(const std::string &name) {
  if (name == "max") return Method::Max;
  if (name == "kl") return Method::Kl;
  return makeError("calibration method '", name, "' is not one of max, kl");
}

double klThreshold(const std::vector<uint64_t> &hist, double absMax, int levels) {
  const int bins = int(hist.size());
  if (bins <= levels || absMax <= 0) return absMax;
  double bestKl = std::numeric_limits<double>::infinity();
  int best = bins;
  std::vector<double> p, q;
  for (int i = levels; i <= bins; ++i) {
    p.assign(hist.begin(), hist.begin() + i);
    double tail = 0;
    for (int j = i; j < bins; ++j) tail += double(hist[size_t(j)]);
    p[size_t(i - 1)] += tail;
    // Q: merge the i bins of the unclipped histogram into `levels` groups,
    // spread each group's count evenly over its non-empty bins.
    q.assign(size_t(i), 0.0);
    for (int l = 0; l < levels; ++l) {
      int lo = int(int64_t(l) * i / levels), hi = int(int64_t(l + 1) * i / levels);
      double sum = 0;
      int nonEmpty = 0;
      for (int j = lo; j < hi; ++j) {
        sum += double(hist[size_t(j)]);
        nonEmpty += hist[size_t(j)] != 0;
      }
      for (int j = lo; j < hi; ++j)
        if (hist[size_t(j)] != 0) q[size_t(j)] = sum / nonEmpty;
    }
    double ps = 0, qs = 0;
    for (int j = 0; j < i; ++j) ps += p[size_t(j)], qs += q[size_t(j)];
    if (ps <= 0 || qs <= 0) continue;
    double kl = 0;
    for (int j = 0; j < i; ++j) {
      if (p[size_t(j)] <= 0) continue;
      double pj = p[size_t(j)] / ps;
      // A bin clipped away in Q but present in P: a small epsilon, as TensorRT.
      double qj = q[size_t(j)] > 0 ? q[size_t(j)] / qs : 1e-12;
      kl += pj * std::log(pj / qj);
    }
    if (kl < bestKl) bestKl = kl, best = i;
  }
  return (best + 0.5) * absMax / bins;
}

namespace {
struct Stats {
  double min = std::numeric_limits<double>::infinity(), max = -std::numeric_limits<double>::infinity();
  std::vector<uint64_t> hist;
  double absMax() const { return std::max(std::fabs(min), std::fabs(max)); }
};
} // namespace

Result<CalibrationTable> calibrate(mlir::ModuleOp module, const std::vector<NpzMap> &samples,
                                   const CalibrationOptions &options) {
  if (samples.empty()) return makeError("calibration needs at least one sample");
  auto interp = top::TopInterpreter::create(module);
  if (!interp) return makeError(interp.message());
  const bool kl = options.method == Method::Kl;
  const int total = int(samples.size()) * (kl ? 2 : 1);
  int done = 0;
  std::map<std::string, Stats> stats;
  auto runAll = [&](const std::function<void(const std::string &, const std::vector<float> &)> &visit) -> Status {
    for (size_t s = 0; s < samples.size(); ++s) {
      auto values = (*interp)->run(samples[s], /*dumpAll=*/true);
      if (!values) return makeError("sample ", s, ": ", values.message());
      for (const auto &[name, arr] : *values)
        if (arr.dtype == "float32") visit(name, arr.toFloat());
      if (options.progress) options.progress(++done, total);
    }
    return Status::ok();
  };
  TPU_RETURN_IF_ERROR(runAll([&](const std::string &name, const std::vector<float> &v) {
    Stats &st = stats[name];
    for (float x : v)
      if (std::isfinite(x)) st.min = std::min(st.min, double(x)), st.max = std::max(st.max, double(x));
  }));
  if (kl) {
    const int bins = options.bins;
    TPU_RETURN_IF_ERROR(runAll([&](const std::string &name, const std::vector<float> &v) {
      Stats &st = stats[name];
      double a = st.absMax();
      if (st.hist.empty()) st.hist.assign(size_t(bins), 0);
      if (!(a > 0)) return;
      // Exact zeros (ReLU outputs, padding) quantize to 0 at any threshold:
      // counting them would put a spike in bin 0 that the merge into 128
      // levels smears, biasing KL towards the smallest thresholds.
      for (float x : v) {
        if (!std::isfinite(x) || x == 0.0f) continue;
        int b = int(std::fabs(double(x)) / a * bins);
        ++st.hist[size_t(std::min(b, bins - 1))];
      }
    }));
  }
  CalibrationTable table;
  table.method = kl ? "kl" : "max";
  for (const auto &[name, st] : stats) {
    TensorRange r;
    r.min = std::isfinite(st.min) ? st.min : 0;
    r.max = std::isfinite(st.max) ? st.max : 0;
    double a = std::max(std::fabs(r.min), std::fabs(r.max));
    r.threshold = kl && a > 0 ? klThreshold(st.hist, a) : a;
    // A constant-zero tensor still needs a positive scale.
    if (!(r.threshold > 0)) r.threshold = 1e-5;
    table.tensors[name] = r;
  }
  return table;
}

Result<std::vector<std::string>> listSampleFiles(const std::string &dir) {
  if (!llvm::sys::fs::is_directory(dir)) return makeError(dir, ": not a directory");
  std::vector<std::string> files;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec))
    if (llvm::StringRef(it->path()).ends_with(".npz")) files.push_back(it->path());
  if (ec) return makeError(dir, ": ", ec.message());
  std::sort(files.begin(), files.end());
  if (files.empty()) return makeError(dir, ": no .npz samples");
  return files;
}

Result<std::vector<NpzMap>> loadSamples(const std::string &dataset, const std::string &dataList, int64_t inputNum) {
  if (dataset.empty() == dataList.empty()) return makeError("give exactly one of --dataset DIR and --data a.npz,b.npz");
  if (inputNum < 0) return makeError("--input-num must be >= 1");
  std::vector<std::string> files;
  if (!dataset.empty()) {
    auto listed = listSampleFiles(dataset);
    if (!listed) return listed.status();
    files = listed.take();
  } else {
    std::stringstream list(dataList);
    for (std::string f; std::getline(list, f, ',');)
      if (!f.empty()) files.push_back(f);
    if (files.empty()) return makeError("--data names no file");
  }
  if (inputNum > 0) {
    if (size_t(inputNum) > files.size())
      return makeError("--input-num ", inputNum, " but ", dataset.empty() ? "--data names" : dataset + " holds",
                       " only ", files.size(), " samples");
    files.resize(size_t(inputNum));
  }
  std::vector<NpzMap> samples;
  for (const std::string &f : files) {
    auto s = readNpz(f);
    if (!s) return s.status();
    samples.push_back(s.take());
  }
  return samples;
}

} // namespace tpu::calib
