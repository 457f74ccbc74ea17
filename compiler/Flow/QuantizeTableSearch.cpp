#include "compiler/Flow/QuantizeTableSearch.h"

#include "compiler/Export/TpuToGraph.h"
#include "compiler/Interpreter/TopInterpreter.h"
#include "compiler/Kernels/Compare.h"
#include "support/Parallel.h"
#include "compiler/Lowering/Lowering.h"
#include "compiler/TpuInterpreter/TpuInterpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

namespace tpu::flow {

namespace {

// The Top interpreter's outputs for every sample, computed once.
class Evaluator {
public:
  Evaluator(mlir::ModuleOp top, const top::WeightStore &weights, const calib::CalibrationTable &cali,
            const std::vector<NpzMap> &samples, std::vector<NpzMap> reference)
      : top_(top), weights_(weights), cali_(cali), samples_(samples), reference_(std::move(reference)) {}

  // The min output cosine over samples and outputs with `keep` in fp32.
  Result<double> cosineWith(const std::set<std::string> &keep) {
    lowering::LoweringOptions lo;
    lo.mode = lowering::Quantize::INT8;
    lo.calibration = &cali_;
    lo.keepF32 = keep;
    auto lowered = lowering::lowerToTpu(top_, weights_, lo);
    if (!lowered) return lowered.status();
    auto graph = exporter::toGraph(*lowered->module, lowered->weights.arrays());
    if (!graph) return graph.status();
    auto interp = tpuinterp::TpuInterpreter::create(std::move(*graph));
    if (!interp) return interp.status();
    // Samples run in parallel (the interpreter is const and pure); the
    // minimum does not depend on the order.
    std::vector<Result<NpzMap>> outs(samples_.size(), makeError("not run"));
    parallelFor(int64_t(samples_.size()), 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) outs[size_t(i)] = (*interp)->run(samples_[size_t(i)]);
    });
    double worst = 1;
    for (size_t i = 0; i < samples_.size(); ++i) {
      const auto &out = outs[i];
      if (!out) return makeError("sample ", i + 1, ": ", out.message());
      for (const auto &[name, ref] : reference_[i]) {
        auto it = out->find(name);
        if (it == out->end() || it->second.dtype != "float32" || ref.dtype != "float32" ||
            it->second.numel() != ref.numel())
          return makeError("output '", name, "' of the Tpu module does not match the Top module's");
        auto stats = kernels::compareTensors(reinterpret_cast<const float *>(ref.data.data()),
                                             reinterpret_cast<const float *>(it->second.data.data()), ref.numel());
        worst = std::min(worst, stats.cosine);
      }
    }
    return worst;
  }

private:
  mlir::ModuleOp top_;
  const top::WeightStore &weights_;
  const calib::CalibrationTable &cali_;
  const std::vector<NpzMap> &samples_;
  std::vector<NpzMap> reference_;
};

// The Top interpreter's outputs of every sample.
Result<std::vector<NpzMap>> topReferences(mlir::ModuleOp topModule, const std::vector<NpzMap> &samples) {
  auto topInterp = top::TopInterpreter::create(topModule);
  if (!topInterp) return topInterp.status();
  std::vector<NpzMap> reference;
  for (size_t i = 0; i < samples.size(); ++i) {
    auto out = (*topInterp)->run(samples[i]);
    if (!out) return makeError("sample ", i + 1, ": ", out.message());
    reference.push_back(std::move(*out));
  }
  return reference;
}

// Calibrated tensors other than the inputs, in program order.
std::vector<std::string> candidatesInOrder(mlir::ModuleOp module, const calib::CalibrationTable &calibration,
                                           const std::set<std::string> &inputs) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  module.walk([&](mlir::func::FuncOp f) {
    for (mlir::Operation &op : f.getBody().front())
      if (auto nl = mlir::dyn_cast<mlir::NameLoc>(op.getLoc())) {
        std::string n = nl.getName().str();
        if (calibration.tensors.count(n) && !inputs.count(n) && seen.insert(n).second) names.push_back(n);
      }
  });
  // Named only by the function's result list (the model outputs): last.
  for (const auto &entry : calibration.tensors)
    if (!inputs.count(entry.first) && seen.insert(entry.first).second) names.push_back(entry.first);
  return names;
}

std::set<std::string> inputNames(mlir::ModuleOp module) {
  std::set<std::string> names;
  module.walk([&](mlir::func::FuncOp f) {
    if (auto a = f->getAttrOfType<mlir::ArrayAttr>("top.input_names"))
      for (mlir::Attribute n : a)
        if (auto s = mlir::dyn_cast<mlir::StringAttr>(n)) names.insert(s.str());
  });
  return names;
}

} // namespace

std::string QuantizeTableSearchResult::format(double minCosine) const {
  std::ostringstream os;
  char line[160];
  os << "# quantize table from tpuc qtable: tensors kept in F32\n";
  std::snprintf(line, sizeof line, "# all int8: cosine %.6f; target %.6f (%s)\n", int8Cosine, minCosine,
                reached ? "reached" : "not reached");
  os << line;
  for (const LayerCosine &c : chosen) {
    std::snprintf(line, sizeof line, "  # cosine %.6f with this and the lines above", c.cosine);
    os << c.name << " F32" << (c.measured ? line : "") << "\n";
  }
  return os.str();
}

Result<QuantizeTableSearchResult> searchQuantizeTable(mlir::ModuleOp topModule, const top::WeightStore &weights,
                                                      const calib::CalibrationTable &calibration,
                                                      const std::vector<NpzMap> &samples,
                                                      const QuantizeTableSearchOptions &options) {
  if (samples.empty()) return makeError("the search needs at least one sample input");
  if (!(options.minCosine > -1 && options.minCosine <= 1))
    return makeError("the cosine target must be in (-1, 1], got ", options.minCosine);
  auto reference = topReferences(topModule, samples);
  if (!reference) return reference.status();
  Evaluator eval(topModule, weights, calibration, samples, reference.take());
  const std::vector<std::string> candidates = candidatesInOrder(topModule, calibration, inputNames(topModule));
  const size_t limit = options.maxLayers ? std::min(options.maxLayers, candidates.size()) : candidates.size();

  QuantizeTableSearchResult r;
  size_t done = 0, planned = 1;
  if (options.rank == SearchRank::Prefix) {
    for (size_t n = limit; n; n /= 2) ++planned; // bisection steps
  } else {
    planned += candidates.size() + 2 * limit;
  }
  auto tick = [&] {
    if (options.progress) options.progress(++done, planned);
  };
  auto finish = [&] {
    if (options.progress && done < planned) options.progress(planned, planned); // finished early
  };
  auto base = eval.cosineWith({});
  if (!base) return base.status();
  r.int8Cosine = r.finalCosine = *base;
  tick();
  r.reached = r.int8Cosine >= options.minCosine;
  if (r.reached) return finish(), r;

  if (options.rank == SearchRank::Prefix) {
    auto prefix = [&](size_t k) { return std::set<std::string>(candidates.begin(), candidates.begin() + k); };
    // The smallest k in [1, limit] whose prefix reaches the target, assuming
    // more fp32 never hurts; the best tried if none does.
    size_t lo = 1, hi = limit, best = 0;
    double bestCosine = r.int8Cosine;
    std::map<size_t, double> tried;
    while (lo <= hi) {
      size_t mid = lo + (hi - lo) / 2;
      auto c = eval.cosineWith(prefix(mid));
      if (!c) return c.status();
      tick();
      tried[mid] = *c;
      if (*c >= options.minCosine) {
        r.reached = true, best = mid, bestCosine = *c;
        hi = mid - 1;
      } else {
        if (!r.reached && *c > bestCosine) best = mid, bestCosine = *c;
        lo = mid + 1;
      }
    }
    for (size_t i = 0; i < best; ++i) {
      auto t = tried.find(i + 1);
      r.chosen.push_back({candidates[i], t == tried.end() ? 0 : t->second, t != tried.end()});
    }
    r.finalCosine = best ? bestCosine : r.int8Cosine;
    return finish(), r;
  }

  for (const std::string &name : candidates) {
    auto c = eval.cosineWith({name});
    if (!c) return makeError("with '", name, "' in F32: ", c.message());
    r.ranked.push_back({name, *c});
    tick();
  }
  // Best first; the candidates' order breaks ties (deterministic).
  std::stable_sort(r.ranked.begin(), r.ranked.end(),
                   [](const LayerCosine &a, const LayerCosine &b) { return a.cosine > b.cosine; });
  // The ranking is not additive (two tensors that each help alone may not
  // help together): a tensor is kept only when it raises the cosine, and at
  // most 2 * limit additions are tried.
  std::set<std::string> keep;
  for (size_t i = 0, tried = 0; i < r.ranked.size() && r.chosen.size() < limit && tried < 2 * limit && !r.reached;
       ++i, ++tried) {
    keep.insert(r.ranked[i].name);
    auto c = eval.cosineWith(keep);
    if (!c) return c.status();
    tick();
    if (*c <= r.finalCosine) {
      keep.erase(r.ranked[i].name);
      continue;
    }
    r.chosen.push_back({r.ranked[i].name, *c});
    r.finalCosine = *c;
    r.reached = *c >= options.minCosine;
  }
  return finish(), r;
}

Result<double> int8OutputCosine(mlir::ModuleOp topModule, const top::WeightStore &weights,
                                const calib::CalibrationTable &calibration, const std::vector<NpzMap> &samples) {
  if (samples.empty()) return makeError("scoring a calibration table needs at least one sample");
  auto reference = topReferences(topModule, samples);
  if (!reference) return reference.status();
  return Evaluator(topModule, weights, calibration, samples, reference.take()).cosineWith({});
}

void checkCalibrationOnChip(calib::CalibrationOptions &options, mlir::ModuleOp topModule,
                            const top::WeightStore &weights) {
  options.scoreName = "INT8 Tpu interpreter output cosine (min)";
  options.scoreTable = [topModule, &weights](const calib::CalibrationTable &table,
                                             const std::vector<NpzMap> &samples) {
    return int8OutputCosine(topModule, weights, table, samples);
  };
}

} // namespace tpu::flow
