// The INT8 recipe: which lowering levers and which threshold tuning one
// deployment uses (docs/quantization.md, "The INT8 recipe"). `auto`, the
// default of tpuc calibrate and tpuc flow, chooses it per model: the
// candidates are scored by the INT8 Tpu interpreter's output cosine on
// calibration samples held back from the thresholds, greedily, within a
// time budget. The choice is written to the calibration table
// ("# int8-recipe:") and to flow.json, and tpuc deploy lowers with the
// table's recipe, so a deployment is reproduced without searching again.
#pragma once

#include "compiler/Calibration/Calibrator.h"
#include "compiler/Lowering/Lowering.h"
#include "support/Npz.h"
#include "support/Status.h"

#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace tpu::flow {

struct Int8Recipe {
  bool equalizeWeights = false; // --top-equalize-weights on the Top module before calibration and lowering
  lowering::Int8Levers levers;
  int tune = 0; // per tensor, candidates between the KL threshold and max (0: none)
  // The thresholds' method ("method=NAME", taken without the max check;
  // unset: --calibration-method).
  std::optional<calib::Method> method;
  // Tensors whose ops stay fp32 (as a quantize table's), in the order the
  // search added them: "f32=NAME" words.
  std::vector<std::string> floatTensors;

  // The levers that are on, space-separated ("per-channel-weights
  // int16-pointwise tune=3"); "none" when none is (uint8 is the lowering's
  // default: "no-uint8" turns it off). parse(text()) gives the recipe back.
  std::string text() const;
  // Lever names separated by white space, '#' starting a comment; an unknown
  // name or a bad tune count is an error naming `origin` and the word.
  static Result<Int8Recipe> parse(const std::string &text, const std::string &origin);
  static Result<Int8Recipe> load(const std::string &path);
  // Every lever on in either (uint8 off when off in either, the larger tune,
  // the float tensors of both, other's method when it has one).
  Int8Recipe unionWith(const Int8Recipe &other) const;
  bool operator==(const Int8Recipe &o) const { return text() == o.text(); }
};

// The words a recipe may hold, for help texts and errors.
std::string int8RecipeWords();

// --int8-recipe: none (the given lever flags only), auto (tpuc calibrate and
// tpuc flow search; tpuc deploy uses the calibration table's recipe), or a
// recipe file.
struct RecipeChoice {
  enum class Kind { None, Auto, File } kind = Kind::Auto;
  std::string file;
  // "none", "auto" or the path of a recipe file (read and checked here).
  static Result<RecipeChoice> parse(const std::string &value);
  Int8Recipe fileRecipe; // Kind::File: the file's recipe
  // The recipe without a search: the lever flags, with the file's levers for
  // Kind::File.
  Int8Recipe fixedRecipe(const Int8Recipe &flags) const {
    return kind == Kind::File ? flags.unionWith(fileRecipe) : flags;
  }
};

// --int8-budget's default (0): twice what the starting point took (its
// statistics, table and score: what calibrating without the search costs),
// within these bounds. Relative, so the search costs about the same share of
// a flow on any machine: a ResNet-50 INT8 flow on 8 samples stays under 3x
// the flow without it (perf/int8_recipe_bench.py), and small models still
// get the seconds their candidates need.
constexpr double kDefaultInt8BudgetSeconds = 0;
constexpr double kDefaultInt8BudgetFactor = 2;
constexpr double kMinDefaultInt8BudgetSeconds = 10, kMaxDefaultInt8BudgetSeconds = 60;
// --expected-cos and --max-float-layers defaults: no fp32 tensors unless a
// target is given (ranking tensors one by one costs minutes on a text
// recogniser, beyond the default budget); few enough that the model stays
// an INT8 model.
constexpr double kDefaultExpectedCos = 0;
constexpr size_t kDefaultMaxFloatLayers = 5;
// tpuc qtable's default budget: a mixed-precision search stops with the best
// set it reached instead of running for hours.
constexpr double kDefaultQtableBudgetSeconds = 600;
// A budget given on the command line: a positive, finite number of seconds.
Result<double> parseInt8Budget(const std::string &value);

// The samples the search holds back from the thresholds to score recipes
// on: the last quarter, 1 to 4 of them (none with a single sample: the
// recipe is then scored on the sample it was calibrated on).
size_t heldBackSamples(size_t sampleCount);

struct RecipeSearchOptions {
  calib::CalibrationOptions calibration;            // method, tuneSamples (the check and conv-input samples), progress
  Int8Recipe fixed;                                 // levers the user turned on: part of every candidate
  double budgetSeconds = kDefaultInt8BudgetSeconds; // 0: the default
  // When the levers leave the held-back cosine below expectedCos, at most
  // maxFloatLayers tensors kept in fp32 (0: none), within the budget.
  double expectedCos = kDefaultExpectedCos;
  size_t maxFloatLayers = kDefaultMaxFloatLayers;
  std::string scratchDir; // where an equalized module's weights are written (a temporary directory)
  // The levers that correct weights on samples (bias-correction,
  // round-weights) are not tried: a multi-stage flow's stages share one set
  // of weights, which samples of one input shape cannot correct for all.
  bool sampleFreeWeights = false;
};

struct RecipeTrial {
  Int8Recipe recipe;
  // The INT8 Tpu interpreter's output cosine on the held-back samples: per
  // sample the smallest over the outputs, then the mean (the ablation's
  // criterion; the smallest over 4 samples let one sample decide).
  double cosine = 0;
  bool kept = false;
  double seconds = 0;
  std::string skipped; // why it was not tried or not finished ("" = scored)
};

struct RecipeSearchResult {
  Int8Recipe recipe;             // the chosen one
  double cosine = 0;             // its score
  calib::CalibrationTable table; // its thresholds (calibrated on the samples not held back), recipe recorded
  std::vector<RecipeTrial> trials;
  size_t heldBack = 0, calibrated = 0; // sample counts
  double seconds = 0;
  std::string summary() const; // "per-channel-weights ... (cosine 0.9876 on 2 held-back sample(s), 5 tried, 12 s)"
};

// Greedy, in a fixed order (per-channel weights, int16 hand-off, bias
// correction, the percentile9999 and mse threshold methods, weight rounding,
// equalization), in passes until one keeps nothing, then tune 3: each lever
// is added to the recipe kept so far and kept when it raises the held-back
// cosine.
// Unless --calibration-method is max or --no-max-fallback is given, each
// candidate is scored with the method's thresholds and with max's, and the
// better one is named in the recipe (method=NAME) in place of the max check. A
// candidate that would start after the budget is spent is not tried. Then,
// below options.expectedCos, fp32 tensors (the recipe's "f32=" words).
// Progress, one line per candidate, goes to `log`.
Result<RecipeSearchResult> searchInt8Recipe(mlir::ModuleOp topModule, const std::vector<NpzMap> &samples,
                                            const RecipeSearchOptions &options, std::ostream &log);

// The calibration tables of a given recipe on every sample, one per method
// (empty: calibration.method), from one collection of statistics: its
// equalization applied to a copy of the module (its weights written under
// scratchDir), scored on the chip's arithmetic as deploy lowers; the recipe
// is recorded in each.
Result<std::vector<calib::CalibrationTable>>
calibrateWithRecipe(mlir::ModuleOp topModule, const std::vector<NpzMap> &samples,
                    const calib::CalibrationOptions &calibration, const Int8Recipe &recipe,
                    const std::string &scratchDir, const std::vector<calib::Method> &methods = {});

// The recipe a deployment lowers with: the lever flags given, joined with
// the table's recipe (auto), the file's (a file) or nothing (none). `from`
// says where it came from, for the log. A table recipe that does not parse
// is an error naming the table.
Result<Int8Recipe> deploymentRecipe(const Int8Recipe &flags, const RecipeChoice &choice,
                                    const calib::CalibrationTable &table, const std::string &tablePath,
                                    std::string *from = nullptr);

// Weight equalization of `module` in place when the recipe asks for it; the
// new weights go to `weightFile` (an absolute path).
Status applyTopRecipe(mlir::ModuleOp module, const Int8Recipe &recipe, const std::string &weightFile);

} // namespace tpu::flow
