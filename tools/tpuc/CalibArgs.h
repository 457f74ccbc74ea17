// Flags shared by the subcommands that preprocess images (tpuc import,
// tpuc flow) and that calibrate (tpuc calibrate, tpuc flow), so they are
// named and read the same everywhere.
#pragma once

#include "compiler/Calibration/Calibrator.h"
#include "compiler/Flow/Int8Recipe.h"
#include "compiler/Lowering/Lowering.h"
#include "compiler/Preprocess/Preprocess.h"
#include "support/ArgParser.h"

#include <memory>
#include <optional>
#include <string>

namespace tpuc {

// --mean, --scale, --pixel-format, --channel-format, --resize-dims, --keep-aspect-ratio.
void declarePreprocessOptions(tpu::ArgParser &args);
// The settings given, nullopt when no preprocessing flag was given.
tpu::Result<std::optional<tpu::preprocess::Config>> preprocessFromArgs(const tpu::ArgParser &args);

// --calibration-method (also spelled `methodAlias` when given), --tune,
// --search-threshold, --tune-samples, --no-max-fallback.
void declareCalibrationOptions(tpu::ArgParser &args, const std::string &methodAlias = "");
// The options; --calibration-method names one method, or when `methods`
// is given a comma-separated list (returned there).
tpu::Result<tpu::calib::CalibrationOptions> calibrationFromArgs(const tpu::ArgParser &args,
                                                               std::vector<tpu::calib::Method> *methods = nullptr);

// The INT8 lowering's levers (tpuc deploy, tpuc flow): --no-uint8,
// --bias-correction, --round-weights, --per-channel-weights, --int16-pointwise.
void declareLeverOptions(tpu::ArgParser &args);
tpu::lowering::Int8Levers leversFromArgs(const tpu::ArgParser &args);

// The INT8 recipe (compiler/Flow/Int8Recipe.h): --int8-recipe none|auto|FILE;
// where the table is made (tpuc calibrate, tpuc flow: `search`) also
// --int8-budget SECONDS, --expected-cos X, --max-float-layers N and
// --equalize-weights.
void declareRecipeOptions(tpu::ArgParser &args, bool search);
struct RecipeArgs {
  tpu::flow::Int8Recipe flags; // the lever flags given (leversFromArgs, --equalize-weights)
  tpu::flow::RecipeChoice choice;
  double budgetSeconds = tpu::flow::kDefaultInt8BudgetSeconds;
  double expectedCos = tpu::flow::kDefaultExpectedCos;
  size_t maxFloatLayers = tpu::flow::kDefaultMaxFloatLayers;
};
// A recipe file that does not parse, a budget that is not a positive
// number, a cosine outside (0, 1] or a negative layer count is an error.
tpu::Result<RecipeArgs> recipeFromArgs(const tpu::ArgParser &args, bool search);

// A temporary directory, removed with everything in it when this goes out
// of scope: where an equalized module's weights go while a table or a
// search is made.
class ScratchDir {
public:
  static tpu::Result<std::unique_ptr<ScratchDir>> create(const std::string &prefix);
  ~ScratchDir();
  const std::string &path() const { return path_; }

private:
  explicit ScratchDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

// Progress of calibration stages on stderr, one line rewritten in place.
void printCalibrationProgress(const std::string &stage, int done, int total);

} // namespace tpuc
