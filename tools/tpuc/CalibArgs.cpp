#include "tools/tpuc/CalibArgs.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"

#include <iostream>
#include <sstream>

namespace tpuc {

void declarePreprocessOptions(tpu::ArgParser &args) {
  args.option("--mean", "per-channel mean subtracted from the 0-255 pixels, e.g. 123.675,116.28,103.53 (default 0)");
  args.option("--scale", "per-channel factor applied after the mean, e.g. 0.0171,0.0175,0.0174 (default 1)");
  args.option("--pixel-format", "rgb (default), bgr or gray: the channel order the model expects");
  args.option("--channel-format", "nchw (default) or nhwc: the layout of the model input");
  args.option("--resize-dims", "h,w the image is resized to before the centre crop to the input size "
                               "(default: the input size)");
  args.flag("--keep-aspect-ratio", "resize keeping the aspect ratio, centred on a zero canvas");
}

tpu::Result<std::optional<tpu::preprocess::Config>> preprocessFromArgs(const tpu::ArgParser &args) {
  tpu::preprocess::ConfigText text;
  text.mean = args.get("--mean");
  text.scale = args.get("--scale");
  text.pixelFormat = args.get("--pixel-format");
  text.channelFormat = args.get("--channel-format");
  text.resizeDims = args.get("--resize-dims");
  text.keepAspectRatio = args.isSet("--keep-aspect-ratio");
  if (text.empty()) return std::optional<tpu::preprocess::Config>();
  auto config = tpu::preprocess::parseConfig(text);
  if (!config) return config.status();
  return std::optional<tpu::preprocess::Config>(config.take());
}

void declareCalibrationOptions(tpu::ArgParser &args, const std::string &methodAlias) {
  args.option("--calibration-method",
              "threshold method: " + tpu::calib::methodNames() + " (default " +
                  tpu::calib::methodName(tpu::calib::kDefaultMethod) +
                  "); a bounded output (sigmoid, clip...) always keeps its max",
              methodAlias);
  args.option("--tune", "per tensor, try N thresholds between the KL threshold and max|x| and keep the one "
                        "whose consumers' outputs are closest to fp32 (default 0: off)");
  args.flag("--search-threshold", "per tensor, keep the best of every method's threshold (as --tune)");
  args.option("--tune-samples", "samples the per-tensor search and the max check run on (default 4)");
  args.flag("--no-max-fallback", "keep the method's thresholds even when max's give a better INT8 output on the first "
                                   "--tune-samples calibration samples (the check lowers both and runs the Tpu interpreter)");
}

void declareLeverOptions(tpu::ArgParser &args) {
  args.flag("--no-uint8", "INT8: every activation signed int8 (default: uint8 for tensors calibrated >= 0)");
  args.flag("--bias-correction", "INT8: take the mean output error of each conv's rounded weights out of its bias "
                                 "(reads the conv inputs on the calibration data)");
  args.flag("--round-weights", "INT8: round each conv weight up or down to minimise the conv's output error on the "
                               "calibration data (AdaRound-style)");
  args.flag("--per-channel-weights", "INT8: quantize conv weights per output channel; the conv writes its int16 "
                                     "accumulator and a per-channel affine requantizes it to int8");
  args.flag("--int16-pointwise", "INT8: a conv (per-channel weights) read only by a 1x1 conv hands it its int16 "
                                 "accumulator: no int8 rounding between them (depthwise -> pointwise)");
}

tpu::lowering::Int8Levers leversFromArgs(const tpu::ArgParser &args) {
  tpu::lowering::Int8Levers l;
  l.unsignedActivations = !args.isSet("--no-uint8");
  l.biasCorrection = args.isSet("--bias-correction");
  l.roundWeights = args.isSet("--round-weights");
  l.perChannelWeights = args.isSet("--per-channel-weights");
  l.int16Pointwise = args.isSet("--int16-pointwise");
  return l;
}

void declareRecipeOptions(tpu::ArgParser &args, bool search) {
  args.option("--int8-recipe",
              search ? "INT8: auto (default) chooses the levers on held-back calibration samples within --int8-budget "
                       "and records them in the table; none: only the lever flags given; or a recipe file of lever "
                       "names (" +
                           tpu::flow::int8RecipeWords() + ")"
                     : "INT8: auto (default) lowers with the recipe recorded in the calibration table; none: only the "
                       "lever flags given; or a recipe file of lever names (" +
                           tpu::flow::int8RecipeWords() + ")");
  if (!search) return;
  std::ostringstream budget;
  budget << "INT8: seconds the recipe search may take, besides the statistics pass (default: twice what the "
            "starting point took, "
         << tpu::flow::kMinDefaultInt8BudgetSeconds << " to " << tpu::flow::kMaxDefaultInt8BudgetSeconds
         << " s); a candidate that would end later is not tried";
  args.option("--int8-budget", budget.str());
  std::ostringstream expected;
  expected << "INT8 auto: when the levers leave the held-back cosine below this (default: no target), keep the "
              "tensors that raise it most in F32 within what is left of --int8-budget, recorded in the recipe "
              "(f32=NAME)";
  args.option("--expected-cos", expected.str());
  args.option("--max-float-layers", "INT8 auto: at most N tensors in F32 (default " +
                                        std::to_string(tpu::flow::kDefaultMaxFloatLayers) + "; 0: none)");
  args.flag("--equalize-weights", "INT8: cross-layer weight equalization of conv -> relu -> conv chains before "
                                  "calibration (tpuc-opt --top-equalize-weights); deploy repeats it from the table");
}

tpu::Result<RecipeArgs> recipeFromArgs(const tpu::ArgParser &args, bool search) {
  RecipeArgs r;
  r.flags.levers = leversFromArgs(args);
  r.flags.equalizeWeights = search && args.isSet("--equalize-weights");
  auto choice = tpu::flow::RecipeChoice::parse(args.get("--int8-recipe", "auto"));
  if (!choice) return choice.status();
  r.choice = choice.take();
  if (search && args.has("--int8-budget")) {
    auto budget = tpu::flow::parseInt8Budget(args.get("--int8-budget"));
    if (!budget) return budget.status();
    r.budgetSeconds = *budget;
  }
  if (!search) return r;
  auto expectedCos = args.getDouble("--expected-cos", tpu::flow::kDefaultExpectedCos);
  if (!expectedCos) return expectedCos.status();
  if (args.has("--expected-cos") && !(*expectedCos > 0 && *expectedCos <= 1))
    return tpu::makeError("--expected-cos must be in (0, 1], got '", args.get("--expected-cos"), "'");
  r.expectedCos = *expectedCos;
  auto maxFloat = args.getInt("--max-float-layers", int64_t(tpu::flow::kDefaultMaxFloatLayers));
  if (!maxFloat) return maxFloat.status();
  if (*maxFloat < 0) return tpu::makeError("--max-float-layers must be >= 0, got ", *maxFloat);
  if (args.has("--max-float-layers") && !args.has("--expected-cos"))
    return tpu::makeError("--max-float-layers needs --expected-cos");
  r.maxFloatLayers = size_t(*maxFloat);
  return r;
}

tpu::Result<tpu::calib::CalibrationOptions> calibrationFromArgs(const tpu::ArgParser &args,
                                                               std::vector<tpu::calib::Method> *methods) {
  tpu::calib::CalibrationOptions opt;
  std::stringstream list(args.get("--calibration-method", tpu::calib::methodName(opt.method)));
  std::vector<tpu::calib::Method> parsed;
  for (std::string name; std::getline(list, name, ',');) {
    auto method = tpu::calib::parseMethod(name);
    if (!method) return method.status();
    parsed.push_back(*method);
  }
  if (parsed.empty()) return tpu::makeError("--calibration-method names no method");
  if (parsed.size() > 1 && !methods) return tpu::makeError("--calibration-method takes one method here");
  opt.method = parsed.front();
  if (methods) *methods = parsed;
  auto tune = args.getInt("--tune", 0);
  if (!tune) return tune.status();
  if (*tune < 0 || *tune == 1 || *tune > 1000) return tpu::makeError("--tune must be 0 (off) or 2 to 1000 candidates");
  opt.tune = int(*tune);
  auto tuneSamples = args.getInt("--tune-samples", opt.tuneSamples);
  if (!tuneSamples) return tuneSamples.status();
  if (*tuneSamples < 1 || *tuneSamples > 1000) return tpu::makeError("--tune-samples must be between 1 and 1000");
  opt.tuneSamples = int(*tuneSamples);
  opt.searchThreshold = args.isSet("--search-threshold");
  opt.maxFallback = !args.isSet("--no-max-fallback");
  opt.progress = printCalibrationProgress;
  return opt;
}

tpu::Result<std::unique_ptr<ScratchDir>> ScratchDir::create(const std::string &prefix) {
  llvm::SmallString<128> path;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory(prefix, path))
    return tpu::makeError("cannot create a temporary directory: ", ec.message());
  return std::unique_ptr<ScratchDir>(new ScratchDir(path.str().str()));
}

ScratchDir::~ScratchDir() { llvm::sys::fs::remove_directories(path_); }

void printCalibrationProgress(const std::string &stage, int done, int total) {
  std::cerr << "\rcalibrate: " << stage << " " << done << "/" << total << (done == total ? "\n" : "") << std::flush;
}

} // namespace tpuc
