#include "compiler/Flow/QuantizeTableSearch.h"

#include "compiler/Export/TpuToGraph.h"
#include "compiler/Interpreter/TopInterpreter.h"
#include "compiler/Kernels/Compare.h"
#include "compiler/Kernels/Parallel.h"
#include "compiler/Lowering/Lowering.h"
#include "compiler/TpuInterpreter/TpuInterpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <algorithm>
#include <cstdio>
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
    kernels::parallelFor(int64_t(samples_.size()), 1, [&](int64_t b, int64_t e) {
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
    std::snprintf(line, sizeof line, " F32  # cosine %.6f with this and the lines above\n", c.cosine);
    os << c.name << line;
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
  auto topInterp = top::TopInterpreter::create(topModule);
  if (!topInterp) return topInterp.status();
  std::vector<NpzMap> reference;
  for (size_t i = 0; i < samples.size(); ++i) {
    auto out = (*topInterp)->run(samples[i]);
    if (!out) return makeError("sample ", i + 1, ": ", out.message());
    reference.push_back(std::move(*out));
  }
  Evaluator eval(topModule, weights, calibration, samples, std::move(reference));

  const std::set<std::string> inputs = inputNames(topModule);
  std::vector<std::string> candidates;
  for (const auto &entry : calibration.tensors)
    if (!inputs.count(entry.first)) candidates.push_back(entry.first);

  QuantizeTableSearchResult r;
  const size_t limit = options.maxLayers ? std::min(options.maxLayers, candidates.size()) : candidates.size();
  // All int8, each candidate alone, then one run per added tensor after the first.
  size_t done = 0, planned = 1 + candidates.size() + (limit ? limit - 1 : 0);
  auto tick = [&] {
    if (options.progress) options.progress(++done, planned);
  };
  auto base = eval.cosineWith({});
  if (!base) return base.status();
  r.int8Cosine = *base;
  tick();
  r.reached = r.int8Cosine >= options.minCosine;
  if (r.reached) return r;

  for (const std::string &name : candidates) {
    auto c = eval.cosineWith({name});
    if (!c) return makeError("with '", name, "' in F32: ", c.message());
    r.alone.push_back({name, *c});
    tick();
  }
  // Best first; names break ties so the order is deterministic.
  std::stable_sort(r.alone.begin(), r.alone.end(),
                   [](const LayerCosine &a, const LayerCosine &b) { return a.cosine > b.cosine; });

  std::set<std::string> keep;
  for (size_t i = 0; i < limit && !r.reached; ++i) {
    keep.insert(r.alone[i].name);
    double c = r.alone[i].cosine;
    if (i > 0) { // the first one alone was measured already
      auto m = eval.cosineWith(keep);
      if (!m) return m.status();
      c = *m;
    }
    if (i > 0) tick();
    r.chosen.push_back({r.alone[i].name, c});
    r.reached = c >= options.minCosine;
  }
  if (options.progress && done < planned) options.progress(planned, planned); // finished early
  return r;
}

} // namespace tpu::flow
