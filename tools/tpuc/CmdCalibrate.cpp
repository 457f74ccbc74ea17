// tpuc calibrate: per-tensor thresholds from the Top interpreter over
// samples — wiring only; the work is in compiler/Calibration/Calibrator.h.
#include "compiler/Calibration/Calibrator.h"
#include "compiler/Dialect/Top/WeightStore.h"
#include "compiler/Flow/Int8Recipe.h"
#include "compiler/Interpreter/TopInterpreter.h"
#include "tools/tpuc/CalibArgs.h"
#include "tools/tpuc/Subcommand.h"
#include "tools/tpuc/SubcommandArgs.h"

#include <iostream>

namespace {

int runCalibrate(int argc, char **argv) {
  tpuc::SubcommandArgs args("calibrate",
                            "model.top.mlir --dataset DIR | --data a.npz,b.png "
                            "[--input-num N] [--calibration-method M] [--tune N] [--search-threshold] "
                            "[--tune-samples 4] [--no-max-fallback] [--int8-recipe auto|none|FILE] [--int8-budget S] "
                            "[--equalize-weights] [deploy's INT8 lever flags] -o model.cali");
  args.positionals(1, 1, "model");
  args.option("--dataset", "directory of samples taken in name order: .npz (one array per model input) and "
                           "images (.png, .jpg, .jpeg, .bmp; through the model's preprocessing)");
  args.option("--data", "comma-separated sample files (.npz or images)");
  args.option("--input-num", "use the first N samples (default: all)");
  tpuc::declareCalibrationOptions(args, "--method");
  // The max check and the per-tensor search lower as deploy will.
  tpuc::declareLeverOptions(args);
  tpuc::declareRecipeOptions(args, /*search=*/true);
  args.option("--output", "the calibration table to write; with several methods (--calibration-method max,kl) "
                          "a name with %m, replaced by each method's name", "-o");
  if (auto done = args.parseCommandLine(argc, argv, {{"--output", "-o model.cali"}})) return *done;
  std::vector<tpu::calib::Method> methods;
  auto opt = tpuc::calibrationFromArgs(args, &methods);
  if (!opt) return tpuc::fail("calibrate", opt.message());
  const std::string output = args.get("--output");
  const size_t placeholder = output.find("%m");
  if (methods.size() > 1 && placeholder == std::string::npos)
    return tpuc::fail("calibrate", "several methods need an output name with %m (replaced by the method name)");
  auto num = args.getInt("--input-num", 0);
  if (!num) return tpuc::fail("calibrate", num.message());
  auto recipe = tpuc::recipeFromArgs(args, /*search=*/true);
  if (!recipe) return tpuc::fail("calibrate", recipe.message());
  using Kind = tpu::flow::RecipeChoice::Kind;
  if (args.has("--expected-cos") && recipe->choice.kind != Kind::Auto)
    return tpuc::fail("calibrate", "--expected-cos chooses F32 layers after the INT8 recipe search: it needs "
                                   "--int8-recipe auto");
  if (methods.size() > 1 && recipe->choice.kind == Kind::Auto)
    return tpuc::fail("calibrate", "several methods make several tables: give --int8-recipe none or a recipe file "
                                   "(auto chooses one table)");

  mlir::MLIRContext context;
  auto module = top::loadTopModule(context, args.args()[0]);
  if (!module) return tpuc::fail("calibrate", module.message());
  auto reader = tpu::calib::SampleReader::forModule(**module);
  if (!reader) return tpuc::fail("calibrate", args.args()[0] + ": " + reader.message());
  auto samples = tpu::calib::loadSamples(*reader, args.get("--dataset", ""), args.get("--data", ""), *num,
                                         [](const std::string &w) { std::cerr << "tpuc calibrate: warning: " << w << "\n"; });
  if (!samples) return tpuc::fail("calibrate", samples.message());
  std::cerr << "calibrate: " << samples->size() << " sample(s)\n";
  // Where an equalized module's weights go while the table is made.
  auto scratch = tpuc::ScratchDir::create("tpuc-calibrate");
  if (!scratch) return tpuc::fail("calibrate", scratch.message());

  std::vector<tpu::calib::CalibrationTable> tables;
  if (recipe->choice.kind == Kind::Auto) {
    tpu::flow::RecipeSearchOptions ro;
    ro.calibration = *opt;
    ro.fixed = recipe->flags;
    ro.budgetSeconds = recipe->budgetSeconds;
    ro.expectedCos = recipe->expectedCos;
    ro.maxFloatLayers = recipe->maxFloatLayers;
    ro.scratchDir = (*scratch)->path();
    auto found = tpu::flow::searchInt8Recipe(**module, *samples, ro, std::cerr);
    if (!found) return tpuc::fail("calibrate", args.args()[0] + ": " + found.message());
    std::cerr << "calibrate: INT8 recipe " << found->summary() << "\n";
    tables.push_back(std::move(found->table));
  } else {
    auto made = tpu::flow::calibrateWithRecipe(**module, *samples, *opt, recipe->choice.fixedRecipe(recipe->flags),
                                               (*scratch)->path(), methods);
    if (!made) return tpuc::fail("calibrate", args.args()[0] + ": " + made.message());
    tables = made.take();
  }
  for (size_t i = 0; i < tables.size(); ++i) {
    std::string path = output;
    if (placeholder != std::string::npos) path.replace(placeholder, 2, tpu::calib::methodName(methods[i]));
    if (auto st = tables[i].save(path); !st) return tpuc::fail("calibrate", st.message());
  }
  return tpuc::kExitOk;
}

tpuc::RegisterSubcommand registerCalibrate("calibrate", "per-tensor int8 thresholds from sample runs (" +
                                                            tpu::calib::methodNames() + ")",
                                           runCalibrate);

} // namespace
