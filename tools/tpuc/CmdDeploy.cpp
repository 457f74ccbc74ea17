// tpuc deploy: Top module -> Tpu module -> bmodel, optionally tested —
// wiring only; the work is in compiler/Flow/Deploy.h.
#include "compiler/Flow/Deploy.h"
#include "tools/tpuc/CalibArgs.h"
#include "tools/tpuc/Subcommand.h"
#include "tools/tpuc/SubcommandArgs.h"

#include <iostream>

namespace {

int runDeploy(int argc, char **argv) {
  tpuc::SubcommandArgs args(
      "deploy",
      "model.top.mlir --quantize F32|INT8|F16|BF16 [--calibration-table model.cali] "
      "[--quantize-table keep_fp32.txt] [--no-uint8] [--bias-correction] [--round-weights] "
      "[--per-channel-weights] [--int16-pointwise] [--int8-recipe auto|none|FILE] "
      "[--calibration-data DIR [--input-num 4]] [--no-layer-group] [--no-cpu-subnets] [--chip bm1684] -o model.bmodel "
      "[--test-input in.npz [--test-reference ref.npz]]");
  args.positionals(1, 1, "model");
  args.option("--quantize", "F32 or INT8 (BM1684); F32, F16, BF16 or INT8 (BM1684X)");
  args.option("--calibration-table", "calibration table from tpuc calibrate (INT8)");
  args.option("--quantize-table",
              "tensor names (one per line, optionally F32, or F16|BF16 on the BM1684X) whose ops stay float");
  tpuc::declareLeverOptions(args);
  tpuc::declareRecipeOptions(args, /*search=*/false);
  args.option("--calibration-data", "samples (.npz / images) that --bias-correction and --round-weights read");
  args.option("--input-num", "how many of them (default 4)");
  args.flag("--no-layer-group", "compile every op alone (load, compute, store), for comparison with layer groups");
  args.flag("--no-cpu-subnets", "refuse ops the chip cannot run instead of running them on the host (CPU sub-nets)");
  args.option("--chip", "target chip: bm1684 (default) or bm1684x");
  args.option("--output", "the bmodel to write; model.tpu.mlir is written beside it", "-o");
  args.option("--test-input", "npz of inputs: run the bmodel (func backend) and the Tpu interpreter");
  args.option("--test-reference", "npz of reference outputs (e.g. from tpuc run) to compare the bmodel with");
  args.option("--min-cosine", "cosine the comparison needs (default 0.9999 for F32, 0.99 for INT8, F16 and BF16)");
  if (auto done = args.parseCommandLine(argc, argv, {{"--quantize", "--quantize F32|INT8|F16|BF16"}})) return *done;
  auto mode = tpu::lowering::parseQuantize(args.get("--quantize"));
  if (!mode) return tpuc::fail("deploy", mode.message());
  if (!args.has("--output")) return tpuc::fail("deploy", "missing -o model.bmodel");
  if (args.has("--test-reference") && !args.has("--test-input"))
    return tpuc::fail("deploy", "--test-reference needs --test-input");
  auto minCosine = args.getDouble("--min-cosine", 0);
  if (!minCosine) return tpuc::fail("deploy", minCosine.message());
  if (*minCosine < 0 || *minCosine > 1) return tpuc::fail("deploy", "--min-cosine must be in [0, 1]");

  auto weightSamples = args.getInt("--input-num", 4);
  if (!weightSamples) return tpuc::fail("deploy", weightSamples.message());
  if (*weightSamples < 1) return tpuc::fail("deploy", "--input-num must be >= 1");

  auto recipe = tpuc::recipeFromArgs(args, /*search=*/false);
  if (!recipe) return tpuc::fail("deploy", recipe.message());

  tpu::flow::DeployOptions opt;
  opt.mode = *mode;
  opt.levers = recipe->flags;
  opt.recipe = recipe->choice;
  opt.weightData = args.get("--calibration-data");
  opt.weightSamples = *weightSamples;
  opt.calibrationTable = args.get("--calibration-table");
  opt.quantizeTable = args.get("--quantize-table");
  opt.layerGroup = !args.isSet("--no-layer-group");
  opt.cpuSubnets = !args.isSet("--no-cpu-subnets");
  opt.chip = args.get("--chip", "bm1684");
  opt.output = args.get("--output");
  opt.testInput = args.get("--test-input");
  opt.testReference = args.get("--test-reference");
  opt.minCosine = *minCosine;
  auto result = tpu::flow::deploy(args.args()[0], opt, std::cerr);
  if (!result) return tpuc::fail("deploy", result.message());
  bool int8 = *mode == tpu::lowering::Quantize::INT8;
  if (result->tested && ((int8 && !result->bitExact) || !result->referencePass)) return tpuc::kExitMismatch;
  return tpuc::kExitOk;
}

tpuc::RegisterSubcommand registerDeploy("deploy", "lower a Top model to the Tpu dialect and compile it to a bmodel",
                                        runDeploy);

} // namespace
