#include "compiler/Flow/Int8Recipe.h"

#include "compiler/Dialect/Top/HostEval.h"
#include "compiler/Dialect/Top/WeightStore.h"
#include "compiler/Flow/CalibrationOnChip.h"
#include "compiler/Flow/QuantizeTableSearch.h"
#include "compiler/Transforms/Passes.h"
#include "support/ParseNumber.h"
#include "support/ReadFile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <iomanip>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

namespace tpu::flow {

namespace {

// One word per lever: its name and where it lives in the recipe.
struct LeverWord {
  const char *name;
  bool Int8Recipe::*recipeFlag;
  bool lowering::Int8Levers::*leverFlag;
};
constexpr LeverWord kLeverWords[] = {
    {"equalize-weights", &Int8Recipe::equalizeWeights, nullptr},
    {"per-channel-weights", nullptr, &lowering::Int8Levers::perChannelWeights},
    {"int16-pointwise", nullptr, &lowering::Int8Levers::int16Pointwise},
    {"int16-hardswish", nullptr, &lowering::Int8Levers::int16Hardswish},
    {"bias-correction", nullptr, &lowering::Int8Levers::biasCorrection},
    {"round-weights", nullptr, &lowering::Int8Levers::roundWeights},
};
constexpr const char *kNoUint8 = "no-uint8";
constexpr const char *kTune = "tune=";
constexpr const char *kFloat = "f32=";
constexpr const char *kMethod = "method=";
constexpr int kSearchTune = 3;    // the ablation's best tuned tables use 3 candidates
constexpr double kMinGain = 1e-4; // a lever is kept when it raises the cosine by more

bool &flagOf(Int8Recipe &r, const LeverWord &w) { return w.recipeFlag ? r.*w.recipeFlag : r.levers.*w.leverFlag; }
bool flagOf(const Int8Recipe &r, const LeverWord &w) { return w.recipeFlag ? r.*w.recipeFlag : r.levers.*w.leverFlag; }

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string formatCosine(double c) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(6) << c;
  return s.str();
}

// The Top module a recipe calibrates and lowers: the given one, or a copy
// with its weights equalized; its weights and conv inputs loaded once.
struct ModuleVariant {
  mlir::OwningOpRef<mlir::ModuleOp> owned; // the equalized copy
  mlir::ModuleOp module;
  top::WeightStore weights;
  std::unique_ptr<calib::Calibrator> statistics;
  double statisticsSeconds = 0;                              // what gathering them took
  std::shared_ptr<const lowering::TensorSamples> convInputs; // read on first need
};

Result<std::unique_ptr<ModuleVariant>> makeVariant(mlir::ModuleOp topModule, bool equalize,
                                                   const std::string &scratchDir) {
  auto v = std::make_unique<ModuleVariant>();
  v->module = topModule;
  if (equalize) {
    v->owned = topModule.clone();
    v->module = *v->owned;
    llvm::SmallString<256> file(scratchDir);
    llvm::sys::path::append(file, "equalized_weights.npz");
    if (std::error_code ec = llvm::sys::fs::make_absolute(file)) return makeError(file.str().str(), ": ", ec.message());
    TPU_RETURN_IF_ERROR(applyTopRecipe(v->module, Int8Recipe{true, {}, 0}, std::string(file.str())));
  }
  auto weights = top::WeightStore::loadFor(v->module);
  if (!weights) return weights.status();
  v->weights = weights.take();
  return v;
}

Status readConvInputs(ModuleVariant &v, const std::vector<NpzMap> &samples, int tuneSamples) {
  if (v.convInputs) return Status::ok();
  std::vector<NpzMap> first(samples.begin(), samples.begin() + std::min<int64_t>(tuneSamples, int64_t(samples.size())));
  auto values = lowering::convInputSamples(v.module, first);
  if (!values) return values.status();
  v.convInputs = std::make_shared<const lowering::TensorSamples>(values.take());
  return Status::ok();
}

// The first `calibrated` samples (thresholds) and the rest (held back to
// score recipes; the calibration samples themselves when none is).
std::pair<std::vector<NpzMap>, std::vector<NpzMap>> splitHeldBack(const std::vector<NpzMap> &samples,
                                                                  size_t calibrated) {
  std::vector<NpzMap> calibration(samples.begin(), samples.begin() + int64_t(calibrated));
  std::vector<NpzMap> held = calibrated < samples.size()
                                 ? std::vector<NpzMap>(samples.begin() + int64_t(calibrated), samples.end())
                                 : calibration;
  return {std::move(calibration), std::move(held)};
}

// The recipe a table made with `base` records: the tune its thresholds had.
std::string recordedRecipe(Int8Recipe recipe, const calib::CalibrationOptions &base) {
  recipe.tune = std::max(base.tune, recipe.tune);
  return recipe.text();
}

// The recipe's table from the variant's statistics, scored as deploy lowers.
Result<calib::CalibrationTable> recipeTable(ModuleVariant &v, const std::vector<NpzMap> &samples,
                                            const calib::CalibrationOptions &base, const Int8Recipe &recipe,
                                            calib::Method method) {
  calib::CalibrationOptions co = base;
  co.tune = std::max(base.tune, recipe.tune);
  // A method the recipe names is taken as it is: the max check compares
  // with max on a few samples and, on a text recogniser, replaced
  // percentile9999 (held-back cosine 0.951) by max (0.949).
  if (recipe.method) co.maxFallback = false;
  if (recipe.levers.needSamples()) TPU_RETURN_IF_ERROR(readConvInputs(v, samples, co.tuneSamples));
  scoreCalibrationOnChip(co, v.module, v.weights, recipe.levers, recipe.levers.needSamples() ? v.convInputs : nullptr);
  if (!v.statistics) {
    const auto start = std::chrono::steady_clock::now();
    auto st = calib::Calibrator::create(v.module, samples, co);
    if (!st) return st.status();
    v.statistics = st.take();
    v.statisticsSeconds = secondsSince(start);
  }
  auto table = v.statistics->table(recipe.method.value_or(method), co);
  if (!table) return table.status();
  table->recipe = recordedRecipe(recipe, base);
  return table;
}

} // namespace

std::string Int8Recipe::text() const {
  std::string out;
  auto add = [&](const std::string &w) { out += (out.empty() ? "" : " ") + w; };
  if (!levers.unsignedActivations) add(kNoUint8);
  for (const LeverWord &w : kLeverWords)
    if (flagOf(*this, w)) add(w.name);
  if (method) add(std::string(kMethod) + calib::methodName(*method));
  if (tune > 0) add(kTune + std::to_string(tune));
  for (const std::string &t : floatTensors) add(kFloat + t);
  return out.empty() ? "none" : out;
}

std::string int8RecipeWords() {
  std::string out = "none, ";
  for (const LeverWord &w : kLeverWords) out += std::string(w.name) + ", ";
  return out + kNoUint8 + ", " + kMethod + "NAME, " + kTune + "N, " + kFloat + "TENSOR";
}

Result<Int8Recipe> Int8Recipe::parse(const std::string &text, const std::string &origin) {
  Int8Recipe r;
  std::istringstream lines(text);
  std::string line;
  for (int lineNo = 1; std::getline(lines, line); ++lineNo) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    for (std::string word; words >> word;) {
      const std::string where = origin + ":" + std::to_string(lineNo) + ": ";
      if (word == "none") continue;
      if (word == kNoUint8) {
        r.levers.unsignedActivations = false;
        continue;
      }
      if (word.rfind(kTune, 0) == 0) {
        double n = 0;
        if (!parseNumber(word.substr(std::string_view(kTune).size()), n) || n != std::floor(n) || n < 2 || n > 1000)
          return makeError(where, "'", word, "': tune needs 2 to 1000 candidates");
        r.tune = int(n);
        continue;
      }
      if (word.rfind(kMethod, 0) == 0) {
        auto m = calib::parseMethod(word.substr(std::string_view(kMethod).size()));
        if (!m) return makeError(where, m.message());
        r.method = *m;
        continue;
      }
      if (word.rfind(kFloat, 0) == 0) {
        if (word.size() == std::string_view(kFloat).size()) return makeError(where, "'", word, "' names no tensor");
        r.floatTensors.push_back(word.substr(std::string_view(kFloat).size()));
        continue;
      }
      auto lever = std::find_if(std::begin(kLeverWords), std::end(kLeverWords),
                                [&](const LeverWord &w) { return word == w.name; });
      if (lever == std::end(kLeverWords))
        return makeError(where, "unknown INT8 lever '", word, "' (known: ", int8RecipeWords(), ")");
      flagOf(r, *lever) = true;
    }
  }
  return r;
}

Result<Int8Recipe> Int8Recipe::load(const std::string &path) {
  auto text = readFile(path, "INT8 recipe");
  if (!text) return text.status();
  return parse(*text, path);
}

Int8Recipe Int8Recipe::unionWith(const Int8Recipe &other) const {
  Int8Recipe r = *this;
  for (const LeverWord &w : kLeverWords) flagOf(r, w) = flagOf(*this, w) || flagOf(other, w);
  r.levers.unsignedActivations = levers.unsignedActivations && other.levers.unsignedActivations;
  r.tune = std::max(tune, other.tune);
  if (other.method) r.method = other.method;
  for (const std::string &t : other.floatTensors)
    if (std::find(r.floatTensors.begin(), r.floatTensors.end(), t) == r.floatTensors.end()) r.floatTensors.push_back(t);
  return r;
}

Result<RecipeChoice> RecipeChoice::parse(const std::string &value) {
  RecipeChoice c;
  if (value == "auto") return c;
  if (value == "none") {
    c.kind = Kind::None;
    return c;
  }
  if (value.empty()) return makeError("--int8-recipe needs none, auto or a recipe file");
  c.kind = Kind::File;
  c.file = value;
  auto recipe = Int8Recipe::load(value);
  if (!recipe) return makeError("--int8-recipe: ", recipe.message());
  c.fileRecipe = recipe.take();
  return c;
}

Result<double> parseInt8Budget(const std::string &value) {
  double seconds = 0;
  if (!parseNumber(value, seconds) || !std::isfinite(seconds) || seconds <= 0)
    return makeError("--int8-budget must be a positive number of seconds, got '", value, "'");
  return seconds;
}

size_t heldBackSamples(size_t n) { return n < 2 ? 0 : std::clamp<size_t>(n / 4, 1, 4); }

std::string RecipeSearchResult::summary() const {
  std::ostringstream s;
  size_t tried = 0;
  for (const RecipeTrial &t : trials) tried += t.skipped.empty();
  s << recipe.text() << " (cosine " << formatCosine(cosine) << " on " << (heldBack ? heldBack : calibrated) << " "
    << (heldBack ? "held-back" : "calibration") << " sample(s), " << tried << " of " << trials.size()
    << " candidates tried)";
  return s.str();
}

Result<RecipeSearchResult> searchInt8Recipe(mlir::ModuleOp topModule, const std::vector<NpzMap> &samples,
                                            const RecipeSearchOptions &options, std::ostream &log) {
  if (samples.empty()) return makeError("the INT8 recipe search needs at least one sample");
  const auto start = std::chrono::steady_clock::now();
  RecipeSearchResult result;
  result.heldBack = heldBackSamples(samples.size());
  result.calibrated = samples.size() - result.heldBack;
  const auto [calibration, held] = splitHeldBack(samples, result.calibrated);
  log << "int8 recipe: thresholds on " << result.calibrated << " sample(s), candidates scored on "
      << (result.heldBack ? std::to_string(result.heldBack) + " held-back" : std::string("the same (only one)"))
      << " sample(s), budget "
      << (options.budgetSeconds > 0
              ? std::to_string(int64_t(options.budgetSeconds)) + " s"
              : "twice the starting point's time, " + std::to_string(int64_t(kMinDefaultInt8BudgetSeconds)) + " to " +
                    std::to_string(int64_t(kMaxDefaultInt8BudgetSeconds)) + " s")
      << "\n";
  // Outputs whose shape comes from the data (after NMS or NonZero) are left
  // out of the score (QuantizeTableSearch): say so when that leaves none.
  bool scored = false;
  topModule.walk([&](mlir::func::ReturnOp ret) {
    for (mlir::Value v : ret.getOperands()) scored = scored || !top::shapeFromData(v);
  });
  if (!scored)
    log << "int8 recipe: warning: every output's shape comes from the data (NMS or NonZero rows): no candidate "
           "scores above the starting recipe, which is kept\n";

  // The held-back samples' fp32 outputs, once the first table was made (so a
  // bad sample is reported by the statistics, by its index).
  std::optional<std::vector<NpzMap>> references;
  std::unique_ptr<ModuleVariant> variants[2];
  auto variant = [&](bool equalize) -> Result<ModuleVariant *> {
    if (!variants[equalize]) {
      auto v = makeVariant(topModule, equalize, options.scratchDir);
      if (!v) return v.status();
      variants[equalize] = v.take();
    }
    return variants[equalize].get();
  };
  struct Scored {
    double cosine;
    calib::CalibrationTable table;
  };
  // A candidate still running when the budget is spent is stopped (its
  // per-tensor threshold search asks) and not kept.
  // The budget counts the search's own work: not the statistics pass of the
  // starting point, which calibrating without a search needs too.
  double baseStatistics = 0;
  auto searchSeconds = [&] { return secondsSince(start) - baseStatistics; };
  double budget = options.budgetSeconds > 0 ? options.budgetSeconds : kMaxDefaultInt8BudgetSeconds;
  bool stopped = false;
  calib::CalibrationOptions calibrationOptions = options.calibration;
  calibrationOptions.cancelled = [&] { return stopped = stopped || searchSeconds() > budget; };
  const calib::Method method = options.calibration.method;
  auto evaluateAs = [&](const Int8Recipe &recipe) -> Result<std::optional<Scored>> {
    auto v = variant(recipe.equalizeWeights);
    if (!v) return v.status();
    auto table = recipeTable(**v, calibration, calibrationOptions, recipe, method);
    if (!table && stopped) return std::optional<Scored>();
    if (!table) return table.status();
    if (!references) {
      auto computed = topReferences(topModule, held);
      if (!computed) return computed.status();
      references = computed.take();
    }
    auto cosine = int8OutputCosine((*v)->module, (*v)->weights, *table, held, *references, recipe.levers,
                                   recipe.levers.needSamples() ? (*v)->convInputs.get() : nullptr,
                                   /*meanOverSamples=*/true);
    if (!cosine) return cosine.status();
    return std::optional<Scored>(Scored{*cosine, table.take()});
  };
  // The max check chooses between the method and max on the first
  // --tune-samples calibration samples, a coin toss where they score close
  // there (on a pose landmark net the search scored per-channel weights with
  // max's thresholds, and the final table's check then chose KL: test cosine
  // 0.73 instead of 0.84). The search has held-back samples: it scores both
  // tables on them and names the better method in the recipe, so the final
  // table takes it as it is.
  const bool chooseMethod = calibrationOptions.maxFallback && method != calib::Method::Max;
  auto evaluate = [&](Int8Recipe &recipe) -> Result<std::optional<Scored>> {
    if (recipe.method || !chooseMethod) return evaluateAs(recipe);
    Int8Recipe withMax = recipe;
    withMax.method = calib::Method::Max;
    recipe.method = method;
    auto mine = evaluateAs(recipe);
    if (!mine || !*mine) return mine;
    auto max = evaluateAs(withMax);
    if (!max) return max.status();
    if (!*max || (*max)->cosine <= (**mine).cosine) return mine;
    recipe = withMax;
    return max;
  };
  auto record = [&](RecipeTrial trial) {
    log << "int8 recipe: " << trial.recipe.text() << ": ";
    if (!trial.skipped.empty())
      log << trial.skipped << "\n";
    else
      log << "cosine " << formatCosine(trial.cosine) << (trial.kept ? ", kept" : "") << " (" << std::fixed
          << std::setprecision(1) << trial.seconds << " s)\n"
          << std::defaultfloat;
    result.trials.push_back(std::move(trial));
  };

  // The starting point: the flags given, nothing else.
  Int8Recipe base = options.fixed;
  auto first = evaluate(base);
  if (!first) return first.status();
  if (!*first) {
    // Even the starting point did not finish: its table without the budget.
    calibrationOptions.cancelled = nullptr;
    base = options.fixed;
    first = evaluate(base);
    if (!first) return first.status();
  }
  result.recipe = base;
  result.cosine = (*first)->cosine;
  result.table = std::move((*first)->table);
  record({base, result.cosine, true, secondsSince(start), ""});
  if (options.budgetSeconds <= 0) {
    budget = std::clamp(kDefaultInt8BudgetFactor * secondsSince(start), kMinDefaultInt8BudgetSeconds,
                        kMaxDefaultInt8BudgetSeconds);
    log << "int8 recipe: budget " << std::setprecision(3) << budget << " s\n" << std::setprecision(6);
  }
  baseStatistics = variants[base.equalizeWeights]->statisticsSeconds;
  // What the next candidate is expected to take: the last one's time
  // without the statistics it gathered once, plus a pass of its own for a
  // module not calibrated yet (equalization).
  double lastSeconds = searchSeconds();

  std::vector<std::function<bool(Int8Recipe &)>> steps;
  auto leverStep = [&](const char *name) {
    if (options.sampleFreeWeights &&
        (std::string_view(name) == "bias-correction" || std::string_view(name) == "round-weights"))
      return;
    const LeverWord &w = *std::find_if(std::begin(kLeverWords), std::end(kLeverWords),
                                       [&](const LeverWord &l) { return std::string_view(l.name) == name; });
    steps.push_back([&w](Int8Recipe &r) {
      // The int16 hand-off needs per-channel weights.
      if (flagOf(r, w) || (w.leverFlag == &lowering::Int8Levers::int16Pointwise && !r.levers.perChannelWeights))
        return false;
      flagOf(r, w) = true;
      return true;
    });
  };
  // Another threshold method costs a table from the statistics already
  // gathered: cheaper than bias correction, rounding or equalization, which
  // read every conv's input moments or gather statistics again (ResNet-50,
  // one run: 3.2 s against 20.3 s for bias correction), so it comes first.
  auto methodStep = [&](calib::Method m) {
    steps.push_back([m, method](Int8Recipe &r) {
      if (r.method.value_or(method) == m) return false;
      r.method = m;
      return true;
    });
  };
  for (const char *name : {"per-channel-weights", "int16-pointwise"}) leverStep(name);
  for (calib::Method m : {calib::Method::Percentile9999, calib::Method::Mse}) methodStep(m);
  for (const char *name : {"bias-correction", "round-weights", "equalize-weights"}) leverStep(name);
  auto tuneStep = [](Int8Recipe &r) {
    if (r.tune >= kSearchTune) return false;
    r.tune = kSearchTune;
    return true;
  };
  // Scores one candidate (the first pass records one it has no time for)
  // and keeps it when it raises the held-back cosine.
  std::set<std::string> scoredRecipes;
  std::vector<std::pair<Int8Recipe, double>> turnedDown;
  auto tryCandidate = [&](Int8Recipe candidate, bool firstPass) -> Result<bool> {
    // A new lever may change which of the two methods does better: chosen
    // again (not for tuning, whose candidates span both).
    if (chooseMethod && candidate.method == result.recipe.method && candidate.tune == 0 && result.recipe.tune == 0 &&
        (candidate.method == method || candidate.method == calib::Method::Max))
      candidate.method.reset();
    if (!scoredRecipes.insert(candidate.text()).second) return false;
    const double elapsed = searchSeconds();
    const double expected = lastSeconds + (variants[candidate.equalizeWeights] ? 0 : baseStatistics);
    if (elapsed + expected > budget) {
      std::ostringstream why;
      why << "not tried (the budget of " << std::setprecision(3) << budget << " s is spent)";
      if (firstPass) record({candidate, 0, false, 0, why.str()});
      return false;
    }
    const bool newVariant = !variants[candidate.equalizeWeights];
    auto scored = evaluate(candidate);
    if (!scored) return scored.status();
    lastSeconds = searchSeconds() - elapsed;
    const double trialSeconds = lastSeconds;
    if (newVariant && variants[candidate.equalizeWeights])
      lastSeconds -= variants[candidate.equalizeWeights]->statisticsSeconds;
    if (!*scored) {
      std::ostringstream why;
      why << "stopped after " << std::fixed << std::setprecision(1) << trialSeconds << " s (the budget of "
          << std::defaultfloat << std::setprecision(3) << budget << " s is spent)";
      log << "\n"; // the stopped search's progress line is left unfinished
      record({candidate, 0, false, trialSeconds, why.str()});
      return false;
    }
    const bool kept = (*scored)->cosine > result.cosine + kMinGain;
    // A lever turned down that changed the score (one that changed nothing,
    // like a hand-off the model has no place for, scores the same).
    if (!kept && candidate.tune == 0 && (*scored)->cosine != result.cosine)
      turnedDown.push_back({candidate, (*scored)->cosine});
    record({candidate, (*scored)->cosine, kept, trialSeconds, ""});
    if (kept) {
      result.recipe = candidate;
      result.cosine = (*scored)->cosine;
      result.table = std::move((*scored)->table);
    }
    return kept;
  };
  // The levers and methods in passes until one keeps nothing: a lever
  // turned down beside one method may win beside a method kept later, so
  // the next pass tries it again. Tuning, the costliest, comes after them.
  for (bool firstPass = true, changed = true; changed; firstPass = false) {
    changed = false;
    for (const auto &step : steps) {
      Int8Recipe candidate = result.recipe;
      if (!step(candidate)) continue;
      auto kept = tryCandidate(candidate, firstPass);
      if (!kept) return kept.status();
      changed |= *kept;
    }
  }
  // Tuning refits the thresholds to what the levers changed, so a lever
  // turned down untuned may win tuned (on a pose landmark net bias
  // correction lowered the held-back cosine untuned, 0.739 against 0.791,
  // and raised it tuned, 0.837 against 0.814; test inputs 0.897 against
  // 0.833): the chosen recipe is tuned, then the best lever candidate the
  // passes turned down. A candidate differing only in its method is left
  // out: the tuned thresholds span both methods.
  auto levers = [](Int8Recipe r) {
    r.method.reset();
    return r.text();
  };
  const std::pair<Int8Recipe, double> *runnerUp = nullptr;
  for (const auto &t : turnedDown)
    if (levers(t.first) != levers(result.recipe) && (!runnerUp || t.second > runnerUp->second)) runnerUp = &t;
  std::vector<Int8Recipe> toTune{result.recipe};
  if (runnerUp) toTune.push_back(runnerUp->first);
  for (Int8Recipe candidate : toTune) {
    if (!tuneStep(candidate)) continue;
    auto kept = tryCandidate(candidate, /*firstPass=*/true);
    if (!kept) return kept.status();
  }
  // Mixed precision when the levers stay below the target: the tensors that
  // raise the held-back cosine most kept in fp32 (each ranked alone on one
  // held-back sample, added best first while they raise it), within what is
  // left of the budget.
  if (options.expectedCos > 0 && options.maxFloatLayers > 0 && result.cosine < options.expectedCos) {
    const double left = budget - searchSeconds();
    Int8Recipe candidate = result.recipe;
    if (left <= 0) {
      std::ostringstream why;
      why << "F32 tensors for --expected-cos " << options.expectedCos << ": not searched (the budget of "
          << std::setprecision(3) << budget << " s is spent)";
      log << "int8 recipe: " << why.str() << "\n";
    } else {
      ModuleVariant &v = *variants[result.recipe.equalizeWeights];
      QuantizeTableSearchOptions q;
      q.minCosine = options.expectedCos;
      q.maxLayers = options.maxFloatLayers;
      q.rank = SearchRank::Alone;
      q.rankSamples = 1;
      q.meanOverSamples = true; // as the levers were scored
      q.levers = result.recipe.levers;
      q.budgetSeconds = left;
      if (q.levers.needSamples()) {
        TPU_RETURN_IF_ERROR(readConvInputs(v, calibration, options.calibration.tuneSamples));
        q.convInputs = v.convInputs.get();
      }
      const double elapsed = searchSeconds();
      auto found = searchQuantizeTable(v.module, v.weights, result.table, held, q);
      if (!found) return found.status();
      for (const LayerCosine &l : found->chosen) candidate.floatTensors.push_back(l.name);
      // The user asked for a target: any gain counts (each tensor was added
      // only when it raised the cosine).
      const bool kept = !found->chosen.empty() && found->finalCosine > result.cosine;
      record({candidate, found->finalCosine, kept, searchSeconds() - elapsed,
              found->chosen.empty()
                  ? "no F32 tensor raises the cosine" + std::string(found->budgetSpent ? " within the budget" : "")
                  : ""});
      if (kept) {
        result.recipe = candidate;
        result.cosine = found->finalCosine;
        // The thresholds stay; the table must name the tensors deploy keeps
        // (a tuned table is not made again below).
        result.table.recipe = recordedRecipe(result.recipe, options.calibration);
      }
    }
  }
  // The chosen recipe's table on every sample, the held-back ones added to
  // its statistics: `--int8-recipe <chosen>` without a search gives the
  // same (a tuned table keeps the thresholds its search chose on the
  // calibration part).
  if (result.recipe.tune == 0 && result.heldBack) {
    ModuleVariant &v = *variants[result.recipe.equalizeWeights];
    TPU_RETURN_IF_ERROR(v.statistics->addSamples(held));
    auto table = recipeTable(v, calibration, options.calibration, result.recipe, options.calibration.method);
    if (!table) return table.status();
    result.table = table.take();
  }
  result.seconds = secondsSince(start);
  result.table.comments.push_back("int8 recipe chosen by tpuc: " + result.summary());
  return result;
}

Result<std::vector<calib::CalibrationTable>>
calibrateWithRecipe(mlir::ModuleOp topModule, const std::vector<NpzMap> &samples,
                    const calib::CalibrationOptions &calibration, const Int8Recipe &recipe,
                    const std::string &scratchDir, const std::vector<calib::Method> &methods) {
  if (recipe.method && methods.size() > 1)
    return makeError("the INT8 recipe names method=", calib::methodName(*recipe.method),
                     ": it makes one table, not one per --calibration-method");
  auto v = makeVariant(topModule, recipe.equalizeWeights, scratchDir);
  if (!v) return v.status();
  std::vector<calib::CalibrationTable> tables;
  for (calib::Method m : methods.empty() ? std::vector<calib::Method>{calibration.method} : methods) {
    auto table = recipeTable(**v, samples, calibration, recipe, m);
    if (!table) return table.status();
    tables.push_back(table.take());
  }
  return tables;
}

Result<Int8Recipe> deploymentRecipe(const Int8Recipe &flags, const RecipeChoice &choice,
                                    const calib::CalibrationTable &table, const std::string &tablePath,
                                    std::string *from) {
  Int8Recipe recorded;
  if (!table.recipe.empty()) {
    auto parsed = Int8Recipe::parse(table.recipe, tablePath + " (int8-recipe)");
    if (!parsed) return parsed.status();
    recorded = parsed.take();
  }
  Int8Recipe r = choice.fixedRecipe(flags);
  std::string source = "the lever flags";
  if (choice.kind == RecipeChoice::Kind::File) {
    source = choice.file;
  } else if (choice.kind == RecipeChoice::Kind::Auto && !table.recipe.empty()) {
    r = r.unionWith(recorded);
    source = tablePath;
  }
  // Equalization rescales activations channel by channel: the thresholds
  // hold only for the module they were calibrated on.
  if (r.equalizeWeights != recorded.equalizeWeights)
    return makeError(tablePath, ": the table was calibrated ", recorded.equalizeWeights ? "with" : "without",
                     " equalized weights (int8-recipe: ", recorded.text(), ") but the deployment's recipe is '",
                     r.text(), "': calibrate with the same recipe");
  if (from) *from = source;
  return r;
}

Status applyTopRecipe(mlir::ModuleOp module, const Int8Recipe &recipe, const std::string &weightFile) {
  if (!recipe.equalizeWeights) return Status::ok();
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(module.getContext(), [&](mlir::Diagnostic &d) {
    diagnostics += d.str();
    return mlir::success();
  });
  if (mlir::failed(top::equalizeWeights(module, weightFile)))
    return makeError("weight equalization failed: ", diagnostics);
  return Status::ok();
}

} // namespace tpu::flow
