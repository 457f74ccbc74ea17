#include "compiler/Flow/QuantizeTableSearch.h"

#include "compiler/Backend/Ops/Cpu.h"
#include "compiler/Backend/QuantRef.h"
#include "compiler/Dialect/Top/TopOps.h"
#include "compiler/Dialect/Tpu/TpuOps.h"
#include "compiler/Export/TpuToGraph.h"
#include "compiler/Interpreter/TopInterpreter.h"
#include "compiler/Lowering/Lowering.h"
#include "compiler/TpuInterpreter/TpuInterpreter.h"
#include "kernels/Compare.h"
#include "support/Parallel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>

namespace tpu::flow {

namespace {

using backend::Bytes;

// What identifies a lowered op beyond its tensors: the Tpu op and its
// attributes (uniqued in the context, so compared by pointer).
struct OpKey {
  mlir::OperationName op;
  mlir::DictionaryAttr attrs;
  bool operator==(const OpKey &o) const { return op == o.op && attrs == o.attrs; }
};

// A lowered module as the Tpu interpreter runs it: the back-end graph and,
// per graph op (same order), its key.
struct LoweredGraph {
  backend::Graph graph;
  std::vector<OpKey> keys;
  std::map<std::string, int> opByOutput; // output tensor name -> op index
};

bool sameTensorType(const backend::Tensor &a, const backend::Tensor &b) {
  return a.dtype == b.dtype && a.shape == b.shape && a.scale == b.scale && a.data == b.data;
}

// The module lowered to INT8 with `table`, `keep` in fp32 (or the 16-bit
// `floatType`) and `levers`, as the back-end graph the Tpu interpreter runs.
Result<LoweredGraph> lowerGraph(mlir::ModuleOp top, const top::WeightStore &weights,
                                const calib::CalibrationTable &table, const std::set<std::string> &keep,
                                const lowering::Int8Levers &levers, const lowering::TensorSamples *convInputs,
                                lowering::Quantize floatType) {
  lowering::LoweringOptions lo;
  lo.mode = lowering::Quantize::INT8;
  lo.calibration = &table;
  lo.keepF32 = keep;
  if (floatType != lowering::Quantize::F32) lo.keepHalf = keep, lo.halfType = floatType;
  lo.levers = levers;
  lo.samples = convInputs;
  auto lowered = lowering::lowerToTpu(top, weights, lo);
  if (!lowered) return lowered.status();
  auto graph = exporter::toGraph(*lowered->module, lowered->weights.arrays());
  if (!graph) return graph.status();
  TPU_RETURN_IF_ERROR(graph->validate());
  LoweredGraph g;
  g.graph = graph.take();
  // The graph's ops are the function's Tpu ops in order (TpuToGraph).
  lowered->module->walk([&](mlir::Operation *op) {
    if (mlir::isa<tpuir::BackendOpInterface>(op)) g.keys.push_back({op->getName(), op->getAttrDictionary()});
  });
  if (g.keys.size() != g.graph.ops.size()) return makeError("the graph's ops do not match the module's Tpu ops");
  for (size_t k = 0; k < g.graph.ops.size(); ++k)
    g.opByOutput[g.graph.tensors[size_t(g.graph.ops[k].output)].name] = int(k);
  return g;
}

// Scores a set of tensors kept out of int8: the output cosine against the
// Top interpreter, the smallest over the outputs, then the smallest (or the
// mean) over the samples.
class SetScorer {
public:
  virtual ~SetScorer() = default;
  // Score the mean over samples instead of the smallest.
  void setMeanOverSamples(bool mean) { mean_ = mean; }
  // Nothing kept out; prepares the later calls.
  virtual Result<double> init() = 0;
  // `keep` kept out, on the first `count` samples (0: all).
  virtual Result<double> score(const std::set<std::string> &keep, size_t count) = 0;

protected:
  // The samples' cosines (each the smallest over the outputs) as one score.
  double overSamples(const std::vector<double> &cosines) const {
    if (cosines.empty()) return 1;
    if (mean_) return std::accumulate(cosines.begin(), cosines.end(), 0.0) / double(cosines.size());
    return *std::min_element(cosines.begin(), cosines.end());
  }

private:
  bool mean_ = false;
};

// Min output cosine against the Top interpreter's outputs of every sample,
// computed once; evaluations run incrementally against the all-int8 run.
class Evaluator : public SetScorer {
public:
  Evaluator(mlir::ModuleOp top, const top::WeightStore &weights, calib::CalibrationTable cali,
            const std::vector<NpzMap> &samples, std::vector<NpzMap> reference, const lowering::Int8Levers &levers,
            const lowering::TensorSamples *convInputs, lowering::Quantize floatType = lowering::Quantize::F32)
      : top_(top), weights_(weights), cali_(std::move(cali)), samples_(samples), reference_(std::move(reference)),
        levers_(levers), convInputs_(convInputs), floatType_(floatType) {}

  const calib::CalibrationTable &table() const { return cali_; }

  // The all-int8 lowering and every tensor's value on every sample.
  Result<double> init() override {
    auto base = lowerGraph(top_, weights_, cali_, {}, levers_, convInputs_, floatType_);
    if (!base) return base.status();
    base_ = base.take();
    baseValues_.assign(samples_.size(), {});
    std::vector<Status> errors(samples_.size(), Status::ok());
    parallelFor(int64_t(samples_.size()), 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        auto in = tpuinterp::graphInputs(base_.graph, samples_[size_t(i)]);
        if (!in) {
          errors[size_t(i)] = in.status();
          continue;
        }
        auto values = backend::evalGraph(base_.graph, *in);
        if (!values) errors[size_t(i)] = values.status();
        else baseValues_[size_t(i)] = values.take();
      }
    });
    for (size_t i = 0; i < errors.size(); ++i)
      if (!errors[i]) return makeError("sample ", i + 1, ": ", errors[i].message());
    std::vector<double> cosines;
    for (size_t i = 0; i < samples_.size(); ++i) {
      std::vector<const Bytes *> v;
      for (const Bytes &b : baseValues_[i]) v.push_back(&b);
      auto c = outputCosine(base_.graph, v, i);
      if (!c) return c.status();
      cosines.push_back(*c);
    }
    return baseScore_ = overSamples(cosines);
  }

  // The score of the base (init's, or the last rebase's).
  double baseScore() const { return baseScore_; }

  // Makes `table`'s all-int8 lowering the base. Its values come from the
  // current base's, so only the ops the new thresholds change run.
  Result<double> rebase(const calib::CalibrationTable &table) {
    auto c = lowerGraph(top_, weights_, table, {}, levers_, convInputs_, floatType_);
    if (!c) return c.status();
    std::vector<std::vector<Bytes>> values(samples_.size());
    auto score = runSamples(*c, samples_.size(), &values);
    if (!score) return score.status();
    base_ = c.take();
    baseValues_ = std::move(values);
    cali_ = table;
    return baseScore_ = *score;
  }

  // The score (SetScorer) of the first `count` samples (0: all) with
  // `keep` in fp32 (and `table`'s thresholds: the base's by default).
  Result<double> cosineWith(const std::set<std::string> &keep, size_t count,
                            const calib::CalibrationTable *table = nullptr) {
    auto c = lowerGraph(top_, weights_, table ? *table : cali_, keep, levers_, convInputs_, floatType_);
    if (!c) return c.status();
    return runSamples(*c, count ? std::min(count, samples_.size()) : samples_.size());
  }

  Result<double> score(const std::set<std::string> &keep, size_t count) override { return cosineWith(keep, count); }

private:
  // The first n samples through `c` in parallel (run), as one score;
  // `values`, if given, receives each sample's tensors.
  Result<double> runSamples(const LoweredGraph &c, size_t n, std::vector<std::vector<Bytes>> *values = nullptr) const {
    std::vector<Result<double>> cos(n, makeError("not run"));
    parallelFor(int64_t(n), 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) cos[size_t(i)] = run(c, size_t(i), values ? &(*values)[size_t(i)] : nullptr);
    });
    std::vector<double> cosines;
    for (size_t i = 0; i < n; ++i) {
      if (!cos[i]) return makeError("sample ", i + 1, ": ", cos[i].message());
      cosines.push_back(*cos[i]);
    }
    return overSamples(cosines);
  }

  // Sample s through `c`: an op identical to the base's op of its output's
  // name, all of whose inputs hold the base run's values, takes the base
  // value; any other op is evaluated, and its value is the base's again
  // when the bytes are the same. `values`, if given, receives every
  // non-weight tensor's value (indexed as c's tensors).
  Result<double> run(const LoweredGraph &c, size_t s, std::vector<Bytes> *values = nullptr) const {
    const backend::Graph &g = c.graph, &bg = base_.graph;
    const std::vector<Bytes> &bv = baseValues_[s];
    std::vector<Bytes> owned(g.tensors.size());
    std::vector<const Bytes *> val(g.tensors.size(), nullptr);
    std::vector<char> same(g.tensors.size(), 0); // holds the base value of the tensor of its name
    auto baseTensor = [&](int t) -> int {
      auto it = base_.opByOutput.find(g.tensors[size_t(t)].name);
      return it == base_.opByOutput.end() ? -1 : bg.ops[size_t(it->second)].output;
    };
    for (size_t t = 0; t < g.tensors.size(); ++t)
      if (g.tensors[t].isWeight()) val[t] = &g.tensors[t].data;
    auto in = tpuinterp::graphInputs(g, samples_[s]);
    if (!in) return in.status();
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      owned[size_t(g.inputs[i])] = std::move((*in)[i]);
      val[size_t(g.inputs[i])] = &owned[size_t(g.inputs[i])];
      same[size_t(g.inputs[i])] = 1;
    }
    for (size_t k = 0; k < g.ops.size(); ++k) {
      const backend::Op &op = g.ops[k];
      const int out = op.output, bout = baseTensor(out);
      bool reuse = false;
      if (bout >= 0) {
        const int bk = base_.opByOutput.at(g.tensors[size_t(out)].name);
        const backend::Op &bop = bg.ops[size_t(bk)];
        reuse = c.keys[k] == base_.keys[size_t(bk)] && op.inputs.size() == bop.inputs.size() &&
                sameTensorType(g.tensors[size_t(out)], bg.tensors[size_t(bout)]);
        for (size_t i = 0; reuse && i < op.inputs.size(); ++i) {
          const backend::Tensor &a = g.tensors[size_t(op.inputs[i])], &b = bg.tensors[size_t(bop.inputs[i])];
          reuse = a.name == b.name && sameTensorType(a, b) && (a.isWeight() || same[size_t(op.inputs[i])]);
        }
      }
      if (reuse) {
        val[size_t(out)] = &bv[size_t(bout)];
        same[size_t(out)] = 1;
        continue;
      }
      std::vector<const Bytes *> args;
      for (int t : op.inputs) args.push_back(val[size_t(t)]);
      TPU_RETURN_IF_ERROR(backend::evalOp(g, op, args, owned[size_t(out)]));
      val[size_t(out)] = &owned[size_t(out)];
      same[size_t(out)] = bout >= 0 && sameTensorType(g.tensors[size_t(out)], bg.tensors[size_t(bout)]) &&
                          owned[size_t(out)] == bv[size_t(bout)];
    }
    auto cosine = outputCosine(g, val, s);
    if (cosine && values) {
      values->assign(g.tensors.size(), {});
      for (size_t t = 0; t < g.tensors.size(); ++t) {
        if (g.tensors[t].isWeight() || !val[t]) continue;
        (*values)[t] = val[t] == &owned[t] ? std::move(owned[t]) : *val[t];
      }
    }
    return cosine;
  }

  Result<double> outputCosine(const backend::Graph &g, const std::vector<const Bytes *> &val, size_t s) const {
    double worst = 1;
    for (const auto &[name, ref] : reference_[s]) {
      int id = -1;
      for (int o : g.outputs)
        if (g.tensors[size_t(o)].name == name) id = o;
      // A host op's result whose shape comes from the data (NMS rows) has no
      // element-wise counterpart when the data differ: the score leaves it out.
      if (id >= 0 && backend::shapeFromData(g, id)) continue;
      if (id < 0 || g.tensors[size_t(id)].numel() != ref.numel())
        return makeError("output '", name, "' of the Tpu module does not match the Top module's");
      // An integer output (a host op's indices, int32; or integers the chip
      // moved, as fp32) scores the share of equal elements.
      const backend::DType dtype = g.tensors[size_t(id)].dtype;
      if ((dtype == backend::DType::I32 || dtype == backend::DType::F32) && ref.dtype != "float32") {
        const std::vector<float> want = ref.toFloat();
        const auto *ints = reinterpret_cast<const int32_t *>(val[size_t(id)]->data());
        const auto *floats = reinterpret_cast<const float *>(val[size_t(id)]->data());
        size_t equal = 0;
        for (size_t i = 0; i < want.size(); ++i)
          equal += (dtype == backend::DType::I32 ? float(ints[i]) : floats[i]) == want[i];
        worst = std::min(worst, want.empty() ? 1.0 : double(equal) / double(want.size()));
        continue;
      }
      if (g.tensors[size_t(id)].dtype != backend::DType::F32 || ref.dtype != "float32")
        return makeError("output '", name, "' of the Tpu module does not match the Top module's");
      auto stats = kernels::compareTensors(reinterpret_cast<const float *>(ref.data.data()),
                                           reinterpret_cast<const float *>(val[size_t(id)]->data()), ref.numel());
      worst = std::min(worst, stats.cosine);
    }
    return worst;
  }

  mlir::ModuleOp top_;
  const top::WeightStore &weights_;
  calib::CalibrationTable cali_;
  const std::vector<NpzMap> &samples_;
  std::vector<NpzMap> reference_;
  lowering::Int8Levers levers_;
  const lowering::TensorSamples *convInputs_;
  lowering::Quantize floatType_;
  LoweredGraph base_;
  std::vector<std::vector<Bytes>> baseValues_;
  double baseScore_ = 0;
};

// The activation rounding bound (QuantizeTableSearch.h): the Top
// interpreter with every tensor the all-int8 lowering holds in int8 rounded
// as tpu.cast rounds it, those kept out left unrounded. The rounding is a
// hook of the interpreter, so concurrent scores each take an interpreter of
// their own from a pool.
class CeilingScorer : public SetScorer {
public:
  CeilingScorer(mlir::ModuleOp top, const top::WeightStore &weights, const calib::CalibrationTable &cali,
                const std::vector<NpzMap> &samples, std::vector<NpzMap> reference, const lowering::Int8Levers &levers,
                const lowering::TensorSamples *convInputs)
      : top_(top), weights_(weights), cali_(cali), samples_(samples), reference_(std::move(reference)),
        levers_(levers), convInputs_(convInputs) {}

  // The rounded tensors by Top tensor name, each as the range whose fake
  // quantization is its int8 type's rounding.
  const std::map<std::string, calib::TensorRange> &rounded() const { return rounded_; }

  Result<double> init() override {
    auto lowered = lowerGraph(top_, weights_, cali_, {}, levers_, convInputs_, lowering::Quantize::F32);
    if (!lowered) return lowered.status();
    auto interp = acquire();
    if (!interp) return interp.status();
    auto dump = (*interp)->run(samples_.front(), true);
    if (!dump) return makeError("sample 1: ", dump.message());
    release(interp.take());
    // An int8 tensor is a Top tensor, or one cast to int8 (`<name>_i8`);
    // the lowering's own tensors (a requant for a concat) have no Top value.
    for (const backend::Tensor &t : lowered->graph.tensors) {
      if (t.isWeight() || !backend::isInt8Like(t.dtype)) continue;
      std::string name = t.name;
      if (!dump->count(name) && name.size() > 3 && name.compare(name.size() - 3, 3, "_i8") == 0)
        name.resize(name.size() - 3);
      if (!dump->count(name)) continue;
      const bool isUnsigned = t.dtype == backend::DType::U8;
      const double levels = isUnsigned ? 255.0 : 127.0;
      rounded_[name] = calib::TensorRange{double(t.scale) * levels, isUnsigned ? 0.0 : -1.0, double(t.scale) * levels};
    }
    return score({}, 0);
  }

  Result<double> score(const std::set<std::string> &keep, size_t count) override {
    auto interp = acquire();
    if (!interp) return interp.status();
    (*interp)->setResultHook([&](const std::string &name, std::vector<float> &values) {
      auto it = rounded_.find(name);
      if (it != rounded_.end() && !keep.count(name)) calib::fakeQuantize(values, it->second);
    });
    const size_t n = count ? std::min(count, samples_.size()) : samples_.size();
    std::vector<double> cosines;
    for (size_t i = 0; i < n; ++i) {
      auto out = (*interp)->run(samples_[i]);
      if (!out) return makeError("sample ", i + 1, ": ", out.message());
      cosines.push_back(calib::minCosine(reference_[i], *out));
    }
    release(interp.take());
    return overSamples(cosines);
  }

private:
  Result<std::unique_ptr<top::TopInterpreter>> acquire() {
    {
      std::lock_guard<std::mutex> lock(poolMutex_);
      if (!pool_.empty()) {
        auto interp = std::move(pool_.back());
        pool_.pop_back();
        return interp;
      }
    }
    return top::TopInterpreter::create(top_, weights_.arrays());
  }
  void release(std::unique_ptr<top::TopInterpreter> interp) {
    std::lock_guard<std::mutex> lock(poolMutex_);
    pool_.push_back(std::move(interp));
  }

  mlir::ModuleOp top_;
  const top::WeightStore &weights_;
  const calib::CalibrationTable &cali_;
  const std::vector<NpzMap> &samples_;
  std::vector<NpzMap> reference_;
  lowering::Int8Levers levers_;
  const lowering::TensorSamples *convInputs_;
  std::map<std::string, calib::TensorRange> rounded_;
  std::mutex poolMutex_;
  std::vector<std::unique_ptr<top::TopInterpreter>> pool_;
};

// `names` in program order: inputs first, then the ops' results, then any
// named only by the function's result list (the model outputs).
std::vector<std::string> inProgramOrder(mlir::ModuleOp module, const std::set<std::string> &names,
                                        const std::set<std::string> &inputs) {
  std::vector<std::string> ordered;
  std::set<std::string> seen;
  for (const std::string &n : inputs)
    if (names.count(n) && seen.insert(n).second) ordered.push_back(n);
  module.walk([&](mlir::func::FuncOp f) {
    for (mlir::Operation &op : f.getBody().front())
      if (auto nl = mlir::dyn_cast<mlir::NameLoc>(op.getLoc())) {
        std::string n = nl.getName().str();
        if (names.count(n) && seen.insert(n).second) ordered.push_back(n);
      }
  });
  for (const std::string &n : names)
    if (seen.insert(n).second) ordered.push_back(n);
  return ordered;
}

std::set<std::string> inputNames(mlir::ModuleOp module) {
  std::set<std::string> names;
  module.walk([&](mlir::func::FuncOp f) {
    if (auto a = f->getAttrOfType<mlir::ArrayAttr>(top::kInputNamesAttr))
      for (mlir::Attribute n : a)
        if (auto s = mlir::dyn_cast<mlir::StringAttr>(n)) names.insert(s.str());
  });
  return names;
}

// Per tensor of `names`, the tensors of `names` that the ops reading it
// produce, each with the relu that is its only reader (the lowering fuses
// it into the op: the op's int8 result is the relu's).
std::map<std::string, std::vector<std::string>> readersIn(mlir::ModuleOp module, const std::set<std::string> &names) {
  std::map<std::string, std::vector<std::string>> readers;
  auto nameOf = [&](mlir::Operation *op) -> std::string {
    auto nl = op ? mlir::dyn_cast<mlir::NameLoc>(op->getLoc()) : mlir::NameLoc();
    return nl && names.count(nl.getName().str()) ? nl.getName().str() : std::string();
  };
  auto add = [](std::vector<std::string> &list, const std::string &n) {
    if (!n.empty() && std::find(list.begin(), list.end(), n) == list.end()) list.push_back(n);
  };
  module.walk([&](mlir::Operation *op) {
    const std::string reader = nameOf(op);
    if (reader.empty()) return;
    for (mlir::Value v : op->getOperands()) {
      const std::string read = nameOf(v.getDefiningOp());
      if (read.empty()) continue;
      add(readers[read], reader);
      if (op->getNumResults() == 1)
        if (mlir::Operation *relu = top::fusibleActivation(op->getResult(0))) add(readers[read], nameOf(relu));
    }
  });
  return readers;
}

} // namespace

std::string QuantizeTableSearchResult::format(double minCosine) const {
  std::ostringstream os;
  char line[160];
  if (activationCeiling) {
    // A bound, not a table for deploy: every line is a comment.
    os << "# tpuc qtable --activation-ceiling: Top interpreter, fp32 weights, the INT8 lowering's int8 tensors "
          "rounded; tensors left unrounded:\n";
    std::snprintf(line, sizeof line, "# all rounded: cosine %.6f; target %.6f (%s)\n", int8Cosine, minCosine,
                  reached ? "reached" : "not reached");
    os << line;
    for (const LayerCosine &c : chosen) {
      std::snprintf(line, sizeof line, " cosine %.6f with this and the lines above\n", c.cosine);
      os << "# " << c.name << line;
    }
    return os.str();
  }
  const char *word = lowering::quantizeName(floatType);
  os << "# quantize table from tpuc qtable: tensors kept in " << word << "\n";
  std::snprintf(line, sizeof line, "# all int8: cosine %.6f; target %.6f (%s)\n", int8Cosine, minCosine,
                reached       ? "reached"
                : budgetSpent ? "not reached: the budget was spent, the best reached is kept"
                              : "not reached");
  os << line;
  for (const LayerCosine &c : chosen) {
    std::snprintf(line, sizeof line, "  # cosine %.6f with this and the lines above", c.cosine);
    os << c.name << " " << word << (c.measured ? line : "") << "\n";
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
  std::unique_ptr<SetScorer> scorer;
  CeilingScorer *ceiling = nullptr;
  if (options.activationCeiling) {
    auto c = std::make_unique<CeilingScorer>(topModule, weights, calibration, samples, reference.take(),
                                             options.levers, options.convInputs);
    ceiling = c.get();
    scorer = std::move(c);
  } else {
    scorer = std::make_unique<Evaluator>(topModule, weights, calibration, samples, reference.take(), options.levers,
                                         options.convInputs, options.floatType);
  }
  scorer->setMeanOverSamples(options.meanOverSamples);
  QuantizeTableSearchResult r;
  r.activationCeiling = options.activationCeiling;
  r.floatType = options.floatType;
  auto base = scorer->init();
  if (!base) return base.status();
  const std::set<std::string> inputs = inputNames(topModule);
  std::set<std::string> names;
  if (ceiling) {
    for (const auto &entry : ceiling->rounded()) names.insert(entry.first);
  } else {
    for (const auto &entry : calibration.tensors)
      if (!inputs.count(entry.first)) names.insert(entry.first);
  }
  const std::vector<std::string> candidates = inProgramOrder(topModule, names, inputs);
  const size_t limit = options.maxLayers ? std::min(options.maxLayers, candidates.size()) : candidates.size();
  const bool rankOnAll = !options.rankSamples || options.rankSamples >= samples.size();

  std::mutex progressMutex;
  size_t done = 0, planned = 1;
  if (options.rank == SearchRank::Prefix) {
    for (size_t n = limit; n; n /= 2) ++planned; // bisection steps
  } else if (options.rank == SearchRank::Alone) {
    planned += candidates.size() + 2 * limit;
  } else {
    planned += limit * ((ceiling ? 1 : 2) * candidates.size() + (rankOnAll ? 0 : 1));
  }
  auto tick = [&] {
    std::lock_guard<std::mutex> lock(progressMutex);
    if (options.progress) options.progress(++done, planned);
  };
  // The budget: once spent, no further evaluation starts (one running in
  // parallel may finish) and the best reached so far is the result.
  const auto start = std::chrono::steady_clock::now();
  std::atomic<bool> budgetHit{false};
  bool rankingCut = false; // Alone: the budget's half for ranking was spent
  auto spent = [&](double share = 1) {
    if (options.budgetSeconds <= 0) return false;
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >=
        share * options.budgetSeconds)
      budgetHit = true;
    return budgetHit.load();
  };
  auto finish = [&] {
    if (options.progress && done < planned) options.progress(planned, planned); // finished early
    r.budgetSpent = budgetHit || rankingCut;
  };
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
    while (lo <= hi && !spent()) {
      size_t mid = lo + (hi - lo) / 2;
      auto c = scorer->score(prefix(mid), 0);
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

  if (options.rank == SearchRank::Forward) {
    // The units a round may add: each tensor, and (on the chip) each tensor
    // with the tensors its readers produce: an fp32 op's int8 readers round
    // its output again, so only with its readers in fp32 too does the
    // tensor itself stay unrounded.
    std::vector<std::vector<std::string>> units;
    const auto readers = readersIn(topModule, names);
    for (const std::string &c : candidates) {
      units.push_back({c});
      auto it = readers.find(c);
      if (!ceiling && it != readers.end()) {
        units.push_back({c});
        units.back().insert(units.back().end(), it->second.begin(), it->second.end());
      }
    }
    // Each round: every unit that adds something within the layer cap,
    // added to the chosen set (in parallel, on the first rankSamples
    // samples); the best is kept when it raises the cosine on every sample.
    std::set<std::string> keep;
    while (!r.reached && !spent()) {
      std::vector<std::set<std::string>> tries;
      std::vector<std::vector<std::string>> added;
      for (const auto &unit : units) {
        std::set<std::string> k = keep;
        std::vector<std::string> fresh;
        for (const std::string &n : unit)
          if (k.insert(n).second) fresh.push_back(n);
        if (!fresh.empty() && k.size() <= limit && std::find(tries.begin(), tries.end(), k) == tries.end()) {
          tries.push_back(std::move(k));
          added.push_back(std::move(fresh));
        }
      }
      if (tries.empty()) break;
      std::vector<Result<double>> with(tries.size(), makeError("not run"));
      std::vector<char> run(tries.size(), 0);
      parallelFor(int64_t(tries.size()), 1, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          if (spent()) return;
          with[size_t(i)] = scorer->score(tries[size_t(i)], options.rankSamples);
          run[size_t(i)] = 1;
          tick();
        }
      });
      // The best of the units the budget let run.
      std::optional<size_t> bestRun;
      for (size_t i = 0; i < tries.size(); ++i) {
        if (!run[i]) continue;
        if (!with[i]) return makeError("with '", added[i].front(), "' out of int8: ", with[i].message());
        // Of equal cosines the unit that adds fewer tensors, then the first.
        if (!bestRun || *with[i] > *with[*bestRun] ||
            (*with[i] == *with[*bestRun] && added[i].size() < added[*bestRun].size()))
          bestRun = i;
      }
      if (!bestRun) break;
      const size_t best = *bestRun;
      double cosine = *with[best];
      if (!rankOnAll) {
        auto all = scorer->score(tries[best], 0);
        if (!all) return all.status();
        tick();
        cosine = *all;
      }
      if (cosine <= r.finalCosine) break; // no unit raises it
      keep = tries[best];
      for (size_t i = 0; i < added[best].size(); ++i)
        r.chosen.push_back({added[best][i], cosine, i + 1 == added[best].size()});
      r.finalCosine = cosine;
      r.reached = cosine >= options.minCosine;
    }
    return finish(), r;
  }

  // Candidates in parallel (each on the first rankSamples samples, one
  // thread); results in candidate order. The ranking may take half the
  // budget: the rest is for adding the best of those it ranked.
  std::vector<Result<double>> alone(candidates.size(), makeError("not run"));
  std::vector<char> ranked(candidates.size(), 0);
  parallelFor(int64_t(candidates.size()), 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      if (spent(0.5)) return;
      alone[size_t(i)] = scorer->score({candidates[size_t(i)]}, options.rankSamples);
      ranked[size_t(i)] = 1;
      tick();
    }
  });
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (!ranked[i]) continue; // the budget was spent before it was tried
    if (!alone[i]) return makeError("with '", candidates[i], "' out of int8: ", alone[i].message());
    r.ranked.push_back({candidates[i], *alone[i]});
  }
  // Best first; the candidates' order breaks ties (deterministic).
  std::stable_sort(r.ranked.begin(), r.ranked.end(),
                   [](const LayerCosine &a, const LayerCosine &b) { return a.cosine > b.cosine; });
  // The ranking is not additive (two tensors that each help alone may not
  // help together): a tensor is kept only when it raises the cosine, and at
  // most 2 * limit additions are tried.
  rankingCut = budgetHit;
  budgetHit = false; // the additions have the other half
  std::set<std::string> keep;
  for (size_t i = 0, tried = 0;
       i < r.ranked.size() && r.chosen.size() < limit && tried < 2 * limit && !r.reached && !spent(); ++i, ++tried) {
    keep.insert(r.ranked[i].name);
    auto c = scorer->score(keep, 0);
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

Result<double> int8OutputCosine(mlir::ModuleOp topModule, const top::WeightStore &weights,
                                const calib::CalibrationTable &calibration, const std::vector<NpzMap> &samples,
                                const lowering::Int8Levers &levers, const lowering::TensorSamples *convInputs) {
  auto reference = topReferences(topModule, samples);
  if (!reference) return reference.status();
  return int8OutputCosine(topModule, weights, calibration, samples, *reference, levers, convInputs);
}

Result<double> int8OutputCosine(mlir::ModuleOp topModule, const top::WeightStore &weights,
                                const calib::CalibrationTable &calibration, const std::vector<NpzMap> &samples,
                                const std::vector<NpzMap> &references, const lowering::Int8Levers &levers,
                                const lowering::TensorSamples *convInputs, bool meanOverSamples) {
  if (samples.empty()) return makeError("scoring a calibration table needs at least one sample");
  if (references.size() != samples.size()) return makeError("one reference per sample needed");
  Evaluator evaluator(topModule, weights, calibration, samples, references, levers, convInputs);
  evaluator.setMeanOverSamples(meanOverSamples);
  return evaluator.init();
}

Int8ThresholdScorer int8ThresholdScorer(mlir::ModuleOp topModule, const top::WeightStore &weights,
                                        const lowering::Int8Levers &levers,
                                        std::shared_ptr<const lowering::TensorSamples> convInputs) {
  // The evaluator runs the table it was built for once per sample and moves
  // its base to each accepted threshold (rebase: the ops from that tensor
  // on); every candidate then costs the ops from the tensor to the outputs,
  // and the current threshold costs nothing (its score is the base's).
  struct TuneState {
    std::unique_ptr<Evaluator> eval;
    std::vector<NpzMap> samples;
  };
  auto state = std::make_shared<TuneState>();
  return [=, &weights](const calib::CalibrationTable &table, const std::string &tensor,
                       const std::vector<double> &candidates,
                       const std::vector<NpzMap> &samples) -> Result<std::vector<double>> {
    auto sameThresholds = [&](const calib::CalibrationTable &a) {
      if (a.tensors.size() != table.tensors.size()) return false;
      for (const auto &[name, r] : a.tensors)
        if (auto it = table.tensors.find(name); it == table.tensors.end() || it->second.threshold != r.threshold)
          return false;
      return true;
    };
    if (!state->eval) {
      state->samples = samples;
      auto reference = topReferences(topModule, state->samples);
      if (!reference) return reference.status();
      state->eval = std::make_unique<Evaluator>(topModule, weights, table, state->samples, reference.take(), levers,
                                                convInputs.get());
      if (auto base = state->eval->init(); !base) return base.status();
    } else if (!sameThresholds(state->eval->table())) {
      if (auto base = state->eval->rebase(table); !base) return base.status();
    }
    const double current = table.tensors.at(tensor).threshold;
    std::vector<Result<double>> scores(candidates.size(), makeError("not run"));
    parallelFor(int64_t(candidates.size()), 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        if (candidates[size_t(i)] == current) {
          scores[size_t(i)] = state->eval->baseScore();
          continue;
        }
        calib::CalibrationTable t = table;
        t.tensors.at(tensor).threshold = candidates[size_t(i)];
        scores[size_t(i)] = state->eval->cosineWith({}, 0, &t);
      }
    });
    std::vector<double> out;
    for (auto &sc : scores) {
      if (!sc) return sc.status();
      out.push_back(*sc);
    }
    return out;
  };
}

} // namespace tpu::flow
