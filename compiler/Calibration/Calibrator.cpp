#include "compiler/Calibration/Calibrator.h"

#include "compiler/Dialect/Top/TopOps.h"
#include "compiler/Dialect/Top/WeightStore.h"
#include "compiler/Interpreter/TopInterpreter.h"
#include "compiler/Preprocess/PreprocessAttr.h"
#include "kernels/Compare.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/FileSystem.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <iomanip>
#include <set>
#include <sstream>

namespace tpu::calib {

const char *methodName(Method m) {
  switch (m) {
  case Method::Max: return "max";
  case Method::Kl: return "kl";
  case Method::Mse: return "mse";
  case Method::Percentile9999: return "percentile9999";
  case Method::AciqGauss: return "aciq-gauss";
  case Method::AciqLaplace: return "aciq-laplace";
  }
  return "?";
}

std::string methodNames() {
  std::string s;
  for (Method m : kAllMethods) s += (s.empty() ? "" : ", ") + std::string(methodName(m));
  return s;
}

Result<Method> parseMethod(const std::string &name) {
  for (Method m : kAllMethods)
    if (name == methodName(m)) return m;
  return makeError("calibration method '", name, "' is not one of ", methodNames());
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

double TensorStats::absMax() const {
  if (!std::isfinite(min) || !std::isfinite(max)) return 0;
  return std::max(std::fabs(min), std::fabs(max));
}

void TensorStats::add(const std::vector<float> &values, int bins) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo, s = 0, sq = 0;
  uint64_t n = 0, z = 0;
  for (float x : values) {
    if (!std::isfinite(x)) continue;
    lo = std::min(lo, double(x)), hi = std::max(hi, double(x));
    ++n, z += x == 0.0f;
    s += x, sq += double(x) * x;
  }
  if (hist.empty()) hist.assign(size_t(bins) * kOversample, 0);
  if (n == 0) return;
  min = std::min(min, lo), max = std::max(max, hi);
  count += n, zeros += z, sum += s, sumSq += sq;
  const double mean = s / double(n), a = std::max(std::fabs(lo), std::fabs(hi));
  for (float x : values)
    if (std::isfinite(x)) sumAbsDev += std::fabs(double(x) - mean);
  if (!(a > 0)) return;
  // The range doubles (adjacent bins merge) until it holds this sample.
  if (!(histRange > 0)) histRange = a;
  while (a > histRange) {
    for (size_t i = 0; i < hist.size(); ++i) hist[i] = i < hist.size() / 2 ? hist[2 * i] + hist[2 * i + 1] : 0;
    histRange *= 2;
  }
  const int fine = int(hist.size());
  // Exact zeros (ReLU outputs, padding) quantize to 0 at any threshold:
  // counting them would put a spike in bin 0 that KL's merge into 128
  // levels smears, biasing it towards the smallest thresholds.
  for (float x : values) {
    if (!std::isfinite(x) || x == 0.0f) continue;
    int b = int(std::fabs(double(x)) / histRange * double(fine));
    ++hist[size_t(std::min(b, fine - 1))];
  }
}

std::vector<uint64_t> TensorStats::histogramOverAbsMax(int bins) const {
  std::vector<uint64_t> out(size_t(bins), 0);
  const double a = absMax(), width = histRange / double(hist.size());
  if (!(a > 0)) return out;
  for (size_t j = 0; j < hist.size(); ++j) {
    if (!hist[j]) continue;
    int b = int((double(j) + 0.5) * width / a * bins);
    out[size_t(std::min(b, bins - 1))] += hist[j];
  }
  return out;
}

double aciqAlpha(bool laplace, int bits) {
  const double noise = 1.0 / (3.0 * std::pow(4.0, bits));
  // Expected squared clipping error of both tails, unit scale.
  auto clip = [&](double a) {
    if (laplace) return 2.0 * std::exp(-a);
    const double phi = std::exp(-0.5 * a * a) / std::sqrt(2 * M_PI), tail = 0.5 * std::erfc(a / std::sqrt(2.0));
    return 2.0 * ((1 + a * a) * tail - a * phi);
  };
  auto mse = [&](double a) { return clip(a) + a * a * noise; };
  // Golden-section search; the objective is unimodal on (0, 64).
  double lo = 0.1, hi = 64;
  const double g = (std::sqrt(5.0) - 1) / 2;
  for (int it = 0; it < 200; ++it) {
    double a = hi - g * (hi - lo), b = lo + g * (hi - lo);
    (mse(a) < mse(b) ? hi : lo) = mse(a) < mse(b) ? b : a;
  }
  return 0.5 * (lo + hi);
}

namespace {

// Bin i's centre and the threshold at the upper edge of bin i.
double binCentre(int i, double absMax, int bins) { return (i + 0.5) * absMax / bins; }

// Octav's objective over the histogram: clipping error of the values beyond
// the threshold plus step^2 / 12 for every value below it, at every bin edge.
double mseThreshold(const TensorStats &st, double levels) {
  const int bins = int(st.hist.size());
  const double a = st.histRange;
  double s0 = 0, s1 = 0, s2 = 0; // count, sum, sum of squares of the bins beyond the edge
  double best = a, bestErr = std::numeric_limits<double>::infinity();
  double below = double(st.count - st.zeros);
  for (int i = bins; i >= 1; --i) {
    const double t = i * a / bins;
    // Bins [i, bins) are clipped at t.
    const double clipErr = s2 - 2 * t * s1 + t * t * s0;
    const double step = t / levels;
    const double err = clipErr + below * step * step / 12.0;
    if (err < bestErr) bestErr = err, best = t;
    const double n = double(st.hist[size_t(i - 1)]), c = binCentre(i - 1, a, bins);
    s0 += n, s1 += n * c, s2 += n * c * c;
    below -= n;
  }
  return best;
}

double percentileThreshold(const TensorStats &st, double fraction) {
  const int bins = int(st.hist.size());
  const double target = fraction * double(st.count);
  double cum = double(st.zeros);
  for (int i = 0; i < bins; ++i) {
    cum += double(st.hist[size_t(i)]);
    if (cum >= target) return (i + 1) * st.histRange / bins;
  }
  return st.absMax();
}

} // namespace

double methodThreshold(Method method, const TensorStats &fine) {
  const double a = fine.absMax();
  if (!(a > 0)) return 1e-5; // a constant-zero tensor still needs a positive scale
  TensorStats st = fine;
  st.hist = fine.histogramOverAbsMax(int(fine.hist.size()) / TensorStats::kOversample);
  st.histRange = a;
  double t = a;
  const double mean = st.mean();
  switch (method) {
  case Method::Max: break;
  case Method::Kl: t = klThreshold(st.hist, st.histRange); break;
  case Method::Mse: t = mseThreshold(st, st.min >= 0 ? 255.0 : 127.0); break;
  case Method::Percentile9999: t = percentileThreshold(st, 0.9999); break;
  case Method::AciqGauss: {
    const double var = std::max(0.0, st.sumSq / double(st.count) - mean * mean);
    t = std::fabs(mean) + aciqAlpha(false) * std::sqrt(var);
    break;
  }
  case Method::AciqLaplace: t = std::fabs(mean) + aciqAlpha(true) * st.sumAbsDev / double(st.count); break;
  }
  return std::clamp(t, a * 1e-6, a);
}

void fakeQuantize(std::vector<float> &values, const TensorRange &range) {
  const bool isUnsigned = range.min >= 0;
  const float scale = float(range.threshold / (isUnsigned ? 255.0 : 127.0));
  const float inv = 1.0f / scale, lo = isUnsigned ? 0.0f : -128.0f, hi = isUnsigned ? 255.0f : 127.0f;
  for (float &x : values) x = std::clamp(std::nearbyint(x * inv), lo, hi) * scale;
}

double minCosine(const NpzMap &ref, const NpzMap &got) {
  double worst = 1;
  for (const auto &[name, r] : ref) {
    auto it = got.find(name);
    if (it == got.end() || r.dtype != "float32" || it->second.numel() != r.numel()) continue;
    std::vector<float> a = r.toFloat(), b = it->second.toFloat();
    worst = std::min(worst, kernels::compareTensors(a.data(), b.data(), r.numel()).cosine);
  }
  return worst;
}

namespace {

mlir::func::FuncOp entryFunction(mlir::ModuleOp module) {
  if (auto f = module.lookupSymbol<mlir::func::FuncOp>("main")) return f;
  auto funcs = module.getOps<mlir::func::FuncOp>();
  return funcs.empty() ? mlir::func::FuncOp() : *funcs.begin();
}

// An op the interpreter computes (not a constant, not the return), other
// than top.input, whose result is its argument under the input's name.
bool isActivationOp(mlir::Operation *op) {
  return mlir::isa<top::EvaluateInterface>(op) && !mlir::isa<top::InputOp>(op);
}

// Outputs whose range is bounded by the op (BoundedOutputInterface, TopBase.td).
bool isBoundedOutput(mlir::Operation *op) {
  auto bounded = mlir::dyn_cast<top::BoundedOutputInterface>(op);
  return bounded && bounded.hasBoundedOutput();
}

using Dump = std::map<std::string, std::vector<float>>;

// Squared error of `got` against `ref` and |ref|^2, accumulated.
struct ErrorSum {
  double err = 0, norm = 0;
  void add(const std::vector<float> &ref, const std::vector<float> &got) {
    for (size_t i = 0; i < ref.size() && i < got.size(); ++i) {
      const double d = double(got[i]) - double(ref[i]);
      err += d * d, norm += double(ref[i]) * double(ref[i]);
    }
  }
  double relative() const { return norm > 0 ? err / norm : err; }
};

// Per-tensor threshold search on single ops: each consumer op is cloned into
// a module of its own (its weights with it) and run by a Top interpreter on
// the fp32 dumps of its inputs, fake-quantized: the tensor being searched at
// the candidate threshold, every other at its current one (the ones earlier
// in program order already searched).
class ThresholdSearch {
public:
  ThresholdSearch(mlir::func::FuncOp func, const top::TopInterpreter &names, NpzMap weights,
                  const std::vector<Dump> &dumps, const CalibrationTable &table)
      : names_(names), weights_(std::move(weights)), dumps_(dumps), table_(table) {
    auto note = [&](mlir::Value v) {
      if (auto t = llvm::dyn_cast<mlir::RankedTensorType>(v.getType()))
        shapes_[names_.nameOf(v)] = std::vector<int64_t>(t.getShape().begin(), t.getShape().end());
    };
    for (mlir::BlockArgument a : func.getArguments()) note(a);
    for (mlir::Operation &op : func.getBody().front())
      for (mlir::Value r : op.getResults()) note(r);
  }

  // Relative squared error of the consumers' outputs (of the tensor itself
  // when nothing reads it) with `tensor` at `threshold`.
  Result<double> distance(const std::string &tensor, const std::vector<mlir::Operation *> &consumers,
                          double threshold) {
    TensorRange candidate = table_.tensors.at(tensor);
    candidate.threshold = threshold;
    ErrorSum sum;
    for (const Dump &dump : dumps_) {
      if (consumers.empty()) {
        std::vector<float> v = dump.at(tensor);
        fakeQuantize(v, candidate);
        sum.add(dump.at(tensor), v);
      }
      for (mlir::Operation *op : consumers) {
        NpzMap inputs;
        for (mlir::Value in : activationOperands(op)) {
          const std::string &name = names_.nameOf(in);
          std::vector<float> v = dump.at(name);
          auto r = table_.tensors.find(name);
          if (name == tensor) fakeQuantize(v, candidate);
          else if (r != table_.tensors.end()) fakeQuantize(v, r->second);
          inputs[name] = NpyArray::from(shapes_.at(name), v.data(), v.size());
        }
        auto interp = interpreterFor(op);
        if (!interp) return interp.status();
        auto out = (*interp)->run(inputs);
        if (!out) return makeError("evaluating '", names_.nameOf(op->getResult(0)), "' alone: ", out.message());
        for (const auto &[name, a] : *out) {
          auto ref = dump.find(name);
          if (ref != dump.end() && a.dtype == "float32") sum.add(ref->second, a.toFloat());
        }
      }
    }
    return sum.relative();
  }

  // Whether every activation input of the tensor's consumers was dumped.
  bool covered(const std::vector<mlir::Operation *> &consumers) const {
    for (mlir::Operation *op : consumers)
      for (mlir::Value in : activationOperands(op))
        if (!dumps_.front().count(names_.nameOf(in))) return false;
    return true;
  }

private:
  static std::vector<mlir::Value> activationOperands(mlir::Operation *op) {
    std::vector<mlir::Value> out;
    for (mlir::Value v : op->getOperands()) {
      mlir::Operation *def = v.getDefiningOp();
      if (def && def->hasTrait<top::OpTrait::Constant>()) continue;
      if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    }
    return out;
  }

  Result<top::TopInterpreter *> interpreterFor(mlir::Operation *op) {
    Compiled &slot = cache_[op];
    if (slot.interp) return slot.interp.get();
    mlir::OpBuilder b(op->getContext());
    slot.module = mlir::ModuleOp::create(op->getLoc());
    b.setInsertionPointToEnd(slot.module->getBody());
    std::vector<mlir::Value> acts = activationOperands(op);
    llvm::SmallVector<mlir::Type> argTypes;
    llvm::SmallVector<mlir::Attribute> inNames, outNames;
    for (mlir::Value v : acts) {
      argTypes.push_back(v.getType());
      inNames.push_back(b.getStringAttr(names_.nameOf(v)));
    }
    for (mlir::Value r : op->getResults()) outNames.push_back(b.getStringAttr(names_.nameOf(r)));
    auto fn = b.create<mlir::func::FuncOp>(op->getLoc(), "main", b.getFunctionType(argTypes, op->getResultTypes()));
    fn->setAttr(top::kInputNamesAttr, b.getArrayAttr(inNames));
    fn->setAttr(top::kOutputNamesAttr, b.getArrayAttr(outNames));
    mlir::Block *block = fn.addEntryBlock();
    b.setInsertionPointToStart(block);
    mlir::IRMapping map;
    for (size_t i = 0; i < acts.size(); ++i) map.map(acts[i], block->getArgument(unsigned(i)));
    for (mlir::Value v : op->getOperands())
      if (mlir::Operation *def = v.getDefiningOp(); def && !map.contains(v)) b.clone(*def, map);
    mlir::Operation *clone = b.clone(*op, map);
    b.create<mlir::func::ReturnOp>(op->getLoc(), clone->getResults());
    auto interp = top::TopInterpreter::create(*slot.module, weights_);
    if (!interp) return makeError("evaluating '", names_.nameOf(op->getResult(0)), "' alone: ", interp.message());
    slot.interp = interp.take();
    return slot.interp.get();
  }

  struct Compiled {
    mlir::OwningOpRef<mlir::ModuleOp> module;
    std::unique_ptr<top::TopInterpreter> interp;
  };
  const top::TopInterpreter &names_;
  NpzMap weights_;
  const std::vector<Dump> &dumps_;
  const CalibrationTable &table_;
  std::map<std::string, std::vector<int64_t>> shapes_;
  std::map<mlir::Operation *, Compiled> cache_;
};

} // namespace

namespace {

// A tensor to tune, with the ops that read it.
struct TunedTensor {
  std::string name;
  std::vector<mlir::Operation *> consumers;
};

// One calibration of a module: the fp32 statistics are gathered once
// (runSamples), every method's table is made from them (tableFor).
class Calibration {
public:
  Calibration(mlir::ModuleOp module, top::TopInterpreter &interp, const std::vector<NpzMap> &samples,
              const CalibrationOptions &options)
      : module_(module), func_(entryFunction(module)), interp_(interp), samples_(samples), options_(&options),
        checkSamples_(std::min(samples.size(), size_t(std::max(1, options.tuneSamples)))),
        checkInputs_(samples.begin(), samples.begin() + int64_t(checkSamples_)), tuneSamples_(options.tuneSamples),
        bins_(options.bins), sampleCount_(samples.size()), keepDumps_(searches(options) && !options.scoreThresholds) {}

  // One interpreter run per sample: every tensor's values are read once for
  // all statistics (TensorStats::add); the fp32 outputs (and, for the
  // per-tensor search, every tensor) of the first samples are kept.
  Status runSamples();
  // More samples into the statistics only (the check samples stay).
  Status addSamples(const std::vector<NpzMap> &extra);
  // The tensors whose op bounds its output (BoundedOutputInterface).
  void findBoundedOutputs();
  // The table of one method from the statistics, tuned and checked with
  // `options` (their tuneSamples must be the creation options'; a
  // fake-quantized search needs the dumps the creation options kept).
  Result<CalibrationTable> tableFor(Method method, const CalibrationOptions &options);

private:
  static bool searches(const CalibrationOptions &o) { return o.tune > 0 || o.searchThreshold; }
  void progress(const std::string &stage, int done, int total) const {
    if (options_->progress) options_->progress(stage, done, total);
  }
  // The method's threshold of every tensor (max for bounded outputs).
  CalibrationTable initialTable(Method method) const;
  // The per-tensor threshold search (--tune, --search-threshold).
  Status tuneThresholds(CalibrationTable &table);
  // The tensors to tune in program order with the ops that read them.
  std::vector<TunedTensor> tuneOrder(const CalibrationTable &table, const ThresholdSearch &ts, bool onChip);
  std::vector<double> candidatesFor(const std::string &name) const;
  // A method's threshold of one tensor (methodThreshold), computed once per
  // statistics: KL's search is the costly part of making a table.
  double threshold(Method method, const std::string &name) const;
  // The candidate that scores best for `t` (`start` when none does better).
  Result<double> bestThreshold(const CalibrationTable &table, ThresholdSearch &ts, const TunedTensor &t,
                               const std::vector<double> &candidates, bool onChip) const;
  // The max check: fake-quantize every tensor in the Top interpreter and
  // compare the outputs with fp32 on the first samples; max's thresholds
  // replace the table's when they score higher.
  Status checkAgainstMax(CalibrationTable &table);
  Result<double> score(const CalibrationTable &t);

  mlir::ModuleOp module_;
  mlir::func::FuncOp func_;
  top::TopInterpreter &interp_;
  const std::vector<NpzMap> &samples_;
  // The options of the table being made (of the statistics' creation
  // until the first table: only read while they are alive).
  const CalibrationOptions *options_;
  const size_t checkSamples_;
  const std::vector<NpzMap> checkInputs_;
  const int tuneSamples_;
  const int bins_;
  size_t sampleCount_;   // in the statistics
  const bool keepDumps_; // the fp32 dumps of the check samples, for the fake-quantized search
  std::map<std::string, TensorStats> stats_;
  mutable std::map<std::pair<std::string, Method>, double> thresholds_; // of stats_
  std::vector<NpzMap> referenceOutputs_;
  std::vector<Dump> dumps_;
  std::set<std::string> bounded_; // by tensor name
};

Status Calibration::runSamples() {
  // The fake-quantized search reads every tensor's fp32 dump of the first samples.
  const bool keepDumps = keepDumps_;
  for (size_t s = 0; s < samples_.size(); ++s) {
    auto values = interp_.run(samples_[s], /*dumpAll=*/true);
    if (!values) return makeError("sample ", s, ": ", values.message());
    if (s < checkSamples_) referenceOutputs_.emplace_back();
    if (keepDumps && s < checkSamples_) dumps_.emplace_back();
    for (const auto &[name, arr] : *values) {
      if (arr.dtype != "float32") continue;
      std::vector<float> v = arr.toFloat();
      stats_[name].add(v, options_->bins);
      if (keepDumps && s < checkSamples_) dumps_.back()[name] = std::move(v);
    }
    if (s < checkSamples_)
      for (const top::TensorInfo &o : interp_.outputs())
        if (values->count(o.name)) referenceOutputs_.back()[o.name] = values->at(o.name);
    progress("statistics", int(s + 1), int(samples_.size()));
  }
  return Status::ok();
}

Status Calibration::addSamples(const std::vector<NpzMap> &extra) {
  for (const NpzMap &sample : extra) {
    auto values = interp_.run(sample, /*dumpAll=*/true);
    if (!values) return makeError("sample ", sampleCount_, ": ", values.message());
    for (const auto &[name, arr] : *values)
      if (arr.dtype == "float32") stats_[name].add(arr.toFloat(), bins_);
    ++sampleCount_;
    thresholds_.clear();
  }
  return Status::ok();
}

void Calibration::findBoundedOutputs() {
  func_.walk([&](mlir::Operation *op) {
    if (isActivationOp(op) && isBoundedOutput(op))
      for (mlir::Value r : op->getResults()) bounded_.insert(interp_.nameOf(r));
  });
}

Result<double> Calibration::score(const CalibrationTable &t) {
  if (options_->scoreTable) {
    progress("max check", 0, 1);
    auto r = options_->scoreTable(t, checkInputs_);
    progress("max check", 1, 1);
    return r;
  }
  interp_.setResultHook([&](const std::string &name, std::vector<float> &v) {
    auto it = t.tensors.find(name);
    if (it != t.tensors.end()) fakeQuantize(v, it->second);
  });
  double sum = 0;
  for (size_t s = 0; s < checkSamples_; ++s) {
    auto out = interp_.run(samples_[s]);
    if (!out) {
      interp_.setResultHook(nullptr);
      return makeError("sample ", s, ": ", out.message());
    }
    sum += minCosine(referenceOutputs_[s], *out);
    progress("max check", int(s + 1), int(checkSamples_));
  }
  interp_.setResultHook(nullptr);
  return sum / double(checkSamples_);
}

CalibrationTable Calibration::initialTable(Method method) const {
  CalibrationTable table;
  auto rangeOf = [&](const TensorStats &st, double threshold) {
    TensorRange r;
    r.min = std::isfinite(st.min) ? st.min : 0;
    r.max = std::isfinite(st.max) ? st.max : 0;
    r.threshold = threshold;
    return r;
  };
  for (const auto &[name, st] : stats_)
    table.tensors[name] = rangeOf(st, threshold(bounded_.count(name) ? Method::Max : method, name));
  table.method = methodName(method);
  if (!bounded_.empty())
    table.comments.push_back(std::to_string(bounded_.size()) + " bounded output(s) (sigmoid, softmax, hard_sigmoid, "
                                                               "clip, relu with a limit) keep their max");
  return table;
}

std::vector<TunedTensor> Calibration::tuneOrder(const CalibrationTable &table, const ThresholdSearch &ts, bool onChip) {
  std::vector<TunedTensor> order;
  auto addValue = [&](mlir::Value v) {
    const std::string &name = interp_.nameOf(v);
    if (!table.tensors.count(name) || bounded_.count(name)) return;
    std::vector<mlir::Operation *> users;
    std::function<void(mlir::Value)> collect = [&](mlir::Value x) {
      for (mlir::Operation *u : x.getUsers()) {
        if (mlir::isa<top::InputOp>(u))
          collect(u->getResult(0)); // the same tensor
        else if (isActivationOp(u) && std::find(users.begin(), users.end(), u) == users.end())
          users.push_back(u);
      }
    };
    collect(v);
    if (onChip || ts.covered(users)) order.push_back({name, users});
  };
  for (mlir::BlockArgument a : func_.getArguments()) addValue(a);
  for (mlir::Operation &op : func_.getBody().front())
    if (isActivationOp(&op))
      for (mlir::Value r : op.getResults()) addValue(r);
  return order;
}

double Calibration::threshold(Method method, const std::string &name) const {
  auto [it, added] = thresholds_.try_emplace({name, method}, 0.0);
  if (added) it->second = methodThreshold(method, stats_.at(name));
  return it->second;
}

std::vector<double> Calibration::candidatesFor(const std::string &name) const {
  std::vector<double> candidates;
  if (options_->tune > 0) {
    const double kl = threshold(Method::Kl, name), mx = threshold(Method::Max, name);
    for (int k = 0; k < options_->tune; ++k) candidates.push_back(kl + (mx - kl) * k / (options_->tune - 1));
  }
  if (options_->searchThreshold)
    for (Method m : kAllMethods) candidates.push_back(threshold(m, name));
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  return candidates;
}

Result<double> Calibration::bestThreshold(const CalibrationTable &table, ThresholdSearch &ts, const TunedTensor &t,
                                          const std::vector<double> &candidates, bool onChip) const {
  const double start = table.tensors.at(t.name).threshold;
  double best = start;
  if (candidates.size() > 1 && onChip) {
    auto scores = options_->scoreThresholds(table, t.name, candidates, checkInputs_);
    if (!scores) return makeError("tuning '", t.name, "': ", scores.message());
    // Ties keep the current threshold, then the larger (clipping less).
    double bestScore = -std::numeric_limits<double>::infinity();
    for (size_t k = 0; k < candidates.size(); ++k)
      if ((*scores)[k] > bestScore || ((*scores)[k] == bestScore && best != start))
        bestScore = (*scores)[k], best = candidates[k];
  } else if (candidates.size() > 1) {
    double bestErr = std::numeric_limits<double>::infinity();
    for (double c : candidates) {
      auto err = ts.distance(t.name, t.consumers, c);
      if (!err) return makeError("tuning '", t.name, "': ", err.message());
      if (*err < bestErr) bestErr = *err, best = c;
    }
  }
  return best;
}

Status Calibration::tuneThresholds(CalibrationTable &table) {
  auto weights = top::WeightStore::loadFor(module_);
  if (!weights) return makeError(weights.message());
  ThresholdSearch ts(func_, interp_, std::move(weights->arrays()), dumps_, table);
  const bool onChip = bool(options_->scoreThresholds);
  const std::vector<TunedTensor> order = tuneOrder(table, ts, onChip);
  // On the chip's arithmetic each candidate is scored at the final output,
  // so the tensors not tuned yet hold max's thresholds meanwhile (no
  // clipping: a method's low thresholds downstream would decide the
  // score instead of the tensor being tuned).
  if (onChip)
    for (const TunedTensor &t : order) table.tensors.at(t.name).threshold = threshold(Method::Max, t.name);
  int done = 0, changed = 0;
  for (const TunedTensor &t : order) {
    if (options_->cancelled && options_->cancelled()) return makeError("the threshold search was stopped");
    const double start = table.tensors.at(t.name).threshold;
    auto best = bestThreshold(table, ts, t, candidatesFor(t.name), onChip);
    if (!best) return best.status();
    changed += *best != start;
    table.tensors.at(t.name).threshold = *best;
    progress("tune", ++done, int(order.size()));
  }
  std::ostringstream c;
  if (options_->tune > 0) c << "tune: " << options_->tune << " candidates between kl and max";
  if (options_->tune > 0 && options_->searchThreshold) c << " and ";
  if (options_->searchThreshold) c << "search-threshold: the thresholds of " << methodNames();
  c << ", per tensor, by "
    << (onChip ? options_->tuneScoreName + " (the tensors after it at max)" : "its consumers' fake-quantized error")
    << " on " << checkSamples_ << " sample(s); " << changed << " of " << order.size() << " thresholds changed";
  table.comments.push_back(c.str());
  return Status::ok();
}

Status Calibration::checkAgainstMax(CalibrationTable &table) {
  CalibrationTable maxTable = table;
  for (auto &[name, r] : maxTable.tensors) r.threshold = threshold(Method::Max, name);
  auto mine = score(table);
  if (!mine) return mine.status();
  auto maxScore = score(maxTable);
  if (!maxScore) return maxScore.status();
  const double reference = *maxScore;
  std::ostringstream c;
  c << std::setprecision(6) << options_->scoreName << " on " << checkSamples_
    << " calibration sample(s): " << table.method << " " << *mine << ", max " << reference;
  if (*mine < reference) {
    c << ": max thresholds used";
    maxTable.comments = table.comments;
    maxTable.method = "max (" + table.method + " scored lower)";
    table = std::move(maxTable);
  }
  table.comments.push_back(c.str());
  return Status::ok();
}

Result<CalibrationTable> Calibration::tableFor(Method method, const CalibrationOptions &options) {
  if (options.tuneSamples != tuneSamples_)
    return makeError("a table's --tune-samples (", options.tuneSamples, ") differs from the statistics' (",
                     tuneSamples_, ")");
  if (searches(options) && !options.scoreThresholds && !keepDumps_)
    return makeError("the fake-quantized threshold search needs the dumps the statistics did not keep");
  options_ = &options;
  const bool search = searches(options);
  CalibrationTable table = initialTable(method);
  if (search) TPU_RETURN_IF_ERROR(tuneThresholds(table));
  if (options.maxFallback && (method != Method::Max || search)) TPU_RETURN_IF_ERROR(checkAgainstMax(table));
  return table;
}

} // namespace

struct Calibrator::Impl {
  std::unique_ptr<top::TopInterpreter> interp;
  std::vector<NpzMap> samples;
  std::optional<Calibration> calibration;
};

Calibrator::Calibrator() : impl_(std::make_unique<Impl>()) {}
Calibrator::~Calibrator() = default;

Result<std::unique_ptr<Calibrator>> Calibrator::create(mlir::ModuleOp module, const std::vector<NpzMap> &samples,
                                                       const CalibrationOptions &options) {
  if (samples.empty()) return makeError("calibration needs at least one sample");
  if (options.tune < 0 || options.tune == 1) return makeError("--tune needs at least 2 candidates (or 0: no tuning)");
  auto interp = top::TopInterpreter::create(module);
  if (!interp) return makeError(interp.message());
  std::unique_ptr<Calibrator> c(new Calibrator());
  c->impl_->interp = interp.take();
  c->impl_->samples = samples;
  c->impl_->calibration.emplace(module, *c->impl_->interp, c->impl_->samples, options);
  TPU_RETURN_IF_ERROR(c->impl_->calibration->runSamples());
  c->impl_->calibration->findBoundedOutputs();
  return c;
}

Status Calibrator::addSamples(const std::vector<NpzMap> &extra) { return impl_->calibration->addSamples(extra); }

Result<CalibrationTable> Calibrator::table(Method method, const CalibrationOptions &options) {
  if (options.tune < 0 || options.tune == 1) return makeError("--tune needs at least 2 candidates (or 0: no tuning)");
  return impl_->calibration->tableFor(method, options);
}

Result<std::vector<CalibrationTable>> calibrateMethods(mlir::ModuleOp module, const std::vector<NpzMap> &samples,
                                                       const CalibrationOptions &options,
                                                       const std::vector<Method> &methods) {
  if (methods.empty()) return makeError("no calibration method given");
  auto statistics = Calibrator::create(module, samples, options);
  if (!statistics) return statistics.status();
  std::vector<CalibrationTable> tables;
  for (Method m : methods) {
    auto t = (*statistics)->table(m, options);
    if (!t) return t.status();
    tables.push_back(t.take());
  }
  return tables;
}

Result<CalibrationTable> calibrate(mlir::ModuleOp module, const std::vector<NpzMap> &samples,
                                   const CalibrationOptions &options) {
  auto tables = calibrateMethods(module, samples, options, {options.method});
  if (!tables) return tables.status();
  return std::move(tables->front());
}

Result<SampleReader> SampleReader::forModule(mlir::ModuleOp module) {
  SampleReader r;
  mlir::func::FuncOp func = entryFunction(module);
  if (!func) return makeError("the module has no function");
  auto args = func.getArguments();
  auto type = args.size() == 1 ? llvm::dyn_cast<mlir::RankedTensorType>(args[0].getType()) : nullptr;
  auto names = func->getAttrOfType<mlir::ArrayAttr>(top::kInputNamesAttr);
  if (args.size() != 1) r.noImageReason_ = "the model has " + std::to_string(args.size()) + " inputs";
  else if (!type || !type.hasStaticShape() || !type.getElementType().isF32())
    r.noImageReason_ = "the model input is not a static f32 tensor";
  else if (names && names.size() == 1 && llvm::isa<mlir::StringAttr>(names[0]))
    r.inputName_ = llvm::cast<mlir::StringAttr>(names[0]).str();
  else if (auto interp = top::TopInterpreter::create(module))
    r.inputName_ = (*interp)->inputs()[0].name;
  else
    r.noImageReason_ = "the module does not name its input (top.input_names)";
  if (r.noImageReason_.empty()) r.inputShape_ = std::vector<int64_t>(type.getShape().begin(), type.getShape().end());
  auto config = preprocess::readConfig(module);
  if (!config) return config.status();
  r.config_ = config.take();
  return r;
}

Result<NpzMap> SampleReader::fromImage(const preprocess::Image &image, const std::string &path) const {
  if (!noImageReason_.empty())
    return makeError(path, ": an image sample needs a model with one float input, ", noImageReason_);
  auto t = preprocess::imageToTensor(image, config_, inputShape_);
  if (!t) return makeError(path, ": ", t.message());
  NpzMap m;
  m[inputName_] = t.take();
  return m;
}

Result<NpzMap> SampleReader::read(const std::string &path) const {
  if (!preprocess::isImageFile(path)) return readNpz(path);
  auto image = preprocess::decodeImageFile(path);
  if (!image) return image.status();
  return fromImage(*image, path);
}

Result<std::vector<std::string>> listSampleFiles(const std::string &dir) {
  if (!llvm::sys::fs::is_directory(dir)) return makeError(dir, ": not a directory");
  std::vector<std::string> files;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec))
    if (llvm::StringRef(it->path()).ends_with(".npz") || preprocess::isImageFile(it->path()))
      files.push_back(it->path());
  if (ec) return makeError(dir, ": ", ec.message());
  std::sort(files.begin(), files.end());
  if (files.empty()) return makeError(dir, ": no samples (.npz, .png, .jpg, .jpeg or .bmp files)");
  return files;
}

Result<std::vector<NpzMap>> loadSamples(const SampleReader &reader, const std::string &dataset,
                                        const std::string &dataList, int64_t inputNum,
                                        const std::function<void(const std::string &)> &warn) {
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
  const std::string where = dataset.empty() ? "--data" : dataset;
  std::vector<NpzMap> samples;
  size_t skipped = 0;
  for (const std::string &f : files) {
    if (inputNum > 0 && int64_t(samples.size()) == inputNum) break;
    Result<NpzMap> sample = makeError("unread");
    if (preprocess::isImageFile(f)) {
      auto image = preprocess::decodeImageFile(f);
      if (!image) {
        ++skipped;
        if (warn) warn("skipping " + image.message());
        continue;
      }
      sample = reader.fromImage(*image, f);
    } else {
      sample = readNpz(f);
    }
    if (!sample) return sample.status();
    samples.push_back(sample.take());
  }
  if (samples.empty()) return makeError(where, ": no usable sample (", skipped, " image(s) skipped)");
  if (inputNum > 0 && int64_t(samples.size()) < inputNum)
    return makeError("--input-num ", inputNum, " but ", where, " has only ", samples.size(), " usable samples");
  return samples;
}

} // namespace tpu::calib
