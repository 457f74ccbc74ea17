// tpuc qtable: searches the tensors to keep in fp32 so that an INT8 model
// reaches a cosine target — wiring only; the search is in
// compiler/Flow/QuantizeTableSearch.h.
#include "compiler/Calibration/Calibrator.h"
#include "compiler/Flow/QuantizeTableSearch.h"
#include "compiler/Interpreter/TopInterpreter.h"
#include "tools/tpuc/CalibArgs.h"
#include "tools/tpuc/Subcommand.h"
#include "tools/tpuc/SubcommandArgs.h"

#include <cstdio>
#include <fstream>
#include <iostream>

namespace {

int runQtable(int argc, char **argv) {
  tpuc::SubcommandArgs args(
      "qtable", "model.top.mlir --calibration-table model.cali --dataset DIR | --data "
                "a.npz,b.npz [--input-num N] [--expected-cos 0.99] [--max-float-layers N] "
                "[--rank prefix|alone|forward] [--rank-samples 1] [--over-samples min|mean] "
                "[--activation-ceiling] [--no-uint8] [--bias-correction] [--round-weights] "
                "[--per-channel-weights] [--int16-pointwise] [--int8-recipe auto|none|FILE] [--int8-budget S] "
                "-o model.qtable");
  args.positionals(1, 1, "model");
  args.option("--calibration-table", "calibration table from tpuc calibrate");
  args.option("--dataset", "directory of samples to measure on, taken in name order: .npz, or images (.jpg/.png) through the preprocessing recorded at import");
  args.option("--data", "comma-separated samples (.npz or images)");
  args.option("--input-num", "use the first N samples (default: the first 4)");
  args.option("--min-cosine", "target cosine of every output on every sample (default 0.99)", "--expected-cos");
  args.option("--max-layers", "keep at most N tensors in F32 (default: no limit)", "--max-float-layers");
  args.option("--rank", "prefix: the first tensors in program order, count found by bisection (default without "
                        "--max-layers; about log2(N) evaluations) or alone: each tried alone in F32, ranked by the "
                        "final output's cosine, then added best first until the target holds (default with "
                        "--max-layers; N+ evaluations) or forward: each round adds the tensor that raises the "
                        "cosine most together with those already chosen (N evaluations per round)");
  args.option("--rank-samples", "alone, forward: rank each tensor on the first N samples (default 1; the additions "
                                "are checked on all)");
  args.option("--over-samples", "min (default): every sample must reach the target, or mean: their mean cosine "
                                "must (the search ranks by the same)");
  args.flag("--activation-ceiling", "measure a bound instead of the Tpu module: the Top interpreter with fp32 weights "
                                    "and every tensor the INT8 lowering holds in int8 rounded at its scale; the search "
                                    "picks tensors to leave unrounded (the output lists them as comments)");
  args.option("--ranking", "alone: also write every tensor's output cosine with it alone in F32, best first "
                           "(a sensitivity list)");
  tpuc::declareLeverOptions(args);
  tpuc::declareRecipeOptions(args, /*search=*/false);
  args.option("--int8-budget", "seconds the search may take (default " +
                                   std::to_string(int(tpu::flow::kDefaultQtableBudgetSeconds)) +
                                   "); then the best set reached is written and the target reported as not reached");
  args.option("--float-type",
              "what the chosen tensors compute in: F32 (default), or F16 or BF16 for a chip with "
              "16-bit floats (the BM1684X: tpuc deploy --chip bm1684x); the search measures that table");
  args.option("--output", "the quantize table to write (for tpuc deploy --quantize-table)", "-o");
  if (auto done = args.parseCommandLine(
          argc, argv, {{"--output", "-o model.qtable"}, {"--calibration-table", "--calibration-table model.cali"}}))
    return *done;
  auto num = args.getInt("--input-num", 0);
  if (!num) return tpuc::fail("qtable", num.message());
  auto maxLayers = args.getInt("--max-layers", 0);
  if (!maxLayers) return tpuc::fail("qtable", maxLayers.message());
  if (*maxLayers < 0) return tpuc::fail("qtable", "--max-layers must be >= 0");
  tpu::flow::QuantizeTableSearchOptions opt;
  auto minCosine = args.getDouble("--min-cosine", 0.99);
  if (!minCosine) return tpuc::fail("qtable", minCosine.message());
  if (*minCosine <= -1 || *minCosine > 1) return tpuc::fail("qtable", "--min-cosine must be in (-1, 1]");
  opt.minCosine = *minCosine;
  opt.maxLayers = size_t(*maxLayers);
  const std::string rank = args.get("--rank", args.has("--max-layers") ? "alone" : "prefix");
  if (rank != "prefix" && rank != "alone" && rank != "forward")
    return tpuc::fail("qtable", "--rank must be prefix, alone or forward, got '" + rank + "'");
  opt.rank = rank == "prefix"  ? tpu::flow::SearchRank::Prefix
             : rank == "alone" ? tpu::flow::SearchRank::Alone
                               : tpu::flow::SearchRank::Forward;
  opt.activationCeiling = args.isSet("--activation-ceiling");
  const std::string over = args.get("--over-samples", "min");
  if (over != "min" && over != "mean")
    return tpuc::fail("qtable", "--over-samples must be min or mean, got '" + over + "'");
  opt.meanOverSamples = over == "mean";
  auto rankSamples = args.getInt("--rank-samples", 1);
  if (!rankSamples) return tpuc::fail("qtable", rankSamples.message());
  if (*rankSamples < 1) return tpuc::fail("qtable", "--rank-samples must be >= 1");
  opt.rankSamples = size_t(*rankSamples);
  auto floatType = tpu::lowering::parseQuantize(args.get("--float-type", "F32"));
  if (!floatType || *floatType == tpu::lowering::Quantize::INT8)
    return tpuc::fail("qtable", "--float-type must be F32, F16 or BF16, got '" + args.get("--float-type") + "'");
  if (*floatType != tpu::lowering::Quantize::F32 && opt.activationCeiling)
    return tpuc::fail("qtable", "--activation-ceiling measures fp32 tensors: --float-type F32 only");
  opt.floatType = *floatType;
  auto recipe = tpuc::recipeFromArgs(args, /*search=*/false);
  if (!recipe) return tpuc::fail("qtable", recipe.message());
  opt.budgetSeconds = tpu::flow::kDefaultQtableBudgetSeconds;
  if (args.has("--int8-budget")) {
    auto budget = tpu::flow::parseInt8Budget(args.get("--int8-budget"));
    if (!budget) return tpuc::fail("qtable", budget.message());
    opt.budgetSeconds = *budget;
  }
  if (args.has("--ranking") && opt.rank != tpu::flow::SearchRank::Alone)
    return tpuc::fail("qtable", "--ranking needs --rank alone (or --max-float-layers)");

  auto cali = tpu::calib::CalibrationTable::load(args.get("--calibration-table"));
  if (!cali) return tpuc::fail("qtable", cali.message());
  mlir::MLIRContext context;
  auto module = top::loadTopModule(context, args.args()[0]);
  if (!module) return tpuc::fail("qtable", module.message());
  auto reader = tpu::calib::SampleReader::forModule(**module);
  if (!reader) return tpuc::fail("qtable", args.args()[0] + ": " + reader.message());
  auto samples = tpu::calib::loadSamples(*reader, args.get("--dataset", ""), args.get("--data", ""), *num,
                                         [](const std::string &w) { std::cerr << "tpuc qtable: warning: " << w << "\n"; });
  if (!samples) return tpuc::fail("qtable", samples.message());
  // Without --input-num: the first 4 samples (each evaluation runs them all).
  if (!args.has("--input-num") && samples->size() > 4) samples->resize(4);
  // The lowering searched is the one deploy makes from this table.
  auto lowered = tpu::flow::deploymentRecipe(recipe->flags, recipe->choice, *cali, args.get("--calibration-table"));
  if (!lowered) return tpuc::fail("qtable", lowered.message());
  opt.levers = lowered->levers;
  auto scratch = tpuc::ScratchDir::create("tpuc-qtable");
  if (!scratch) return tpuc::fail("qtable", scratch.message());
  if (auto st = tpu::flow::applyTopRecipe(**module, *lowered, (*scratch)->path() + "/equalized_weights.npz"); !st)
    return tpuc::fail("qtable", args.args()[0] + ": " + st.message());
  std::cerr << "qtable: INT8 recipe: " << lowered->text() << "\n";
  auto weights = top::WeightStore::loadFor(**module);
  if (!weights) return tpuc::fail("qtable", args.args()[0] + ": " + weights.message());
  // The sample-reading levers read every conv's input on the search's samples.
  tpu::lowering::TensorSamples convInputs;
  if (opt.levers.needSamples()) {
    auto values = tpu::lowering::convInputSamples(**module, *samples);
    if (!values) return tpuc::fail("qtable", values.message());
    convInputs = values.take();
    opt.convInputs = &convInputs;
  }
  const char *evaluations = opt.activationCeiling ? " Top interpreter evaluations" : " Tpu interpreter evaluations";
  opt.progress = [evaluations](size_t done, size_t total) {
    std::cerr << "\rqtable: " << done << "/" << total << evaluations << (done == total ? "\n" : "")
              << std::flush;
  };
  auto result = tpu::flow::searchQuantizeTable(**module, *weights, *cali, *samples, opt);
  if (!result) return tpuc::fail("qtable", args.args()[0] + ": " + result.message());

  const std::string out = args.get("--output"), tmp = out + ".tmp";
  {
    std::ofstream f(tmp);
    f << result->format(opt.minCosine);
    if (!f.flush()) return tpuc::fail("qtable", out + ": cannot write");
  }
  if (std::rename(tmp.c_str(), out.c_str()) != 0) return tpuc::fail("qtable", out + ": cannot write");
  if (args.has("--ranking")) {
    std::ofstream f(args.get("--ranking"));
    f << "# tpuc qtable ranking: output cosine (min over " << std::min(samples->size(), opt.rankSamples)
      << " sample(s)) with the tensor alone in F32; all int8 " << result->int8Cosine << "\n";
    for (const auto &c : result->ranked) f << c.name << " " << c.cosine << "\n";
    if (!f.flush()) return tpuc::fail("qtable", args.get("--ranking") + ": cannot write");
  }
  char line[300];
  std::snprintf(line, sizeof line,
                opt.activationCeiling
                    ? "qtable: activation ceiling: all rounded cosine %.6f; %zu tensor(s) left "
                      "unrounded give %.6f (target %.6f%s)\n"
                    : "qtable: all int8 cosine %.6f; %zu tensor(s) in F32 give %.6f (target %.6f%s)\n",
                result->int8Cosine, result->chosen.size(), result->finalCosine, opt.minCosine,
                result->reached       ? ", reached"
                : result->budgetSpent ? ", NOT reached: the --int8-budget was spent, the best set reached is kept"
                                      : ", NOT reached");
  std::cout << line;
  for (const auto &c : result->chosen)
    std::cout << "  " << c.name << (c.measured ? "  -> " + std::to_string(c.cosine) : std::string()) << "\n";
  return result->reached ? tpuc::kExitOk : tpuc::kExitMismatch;
}

tpuc::RegisterSubcommand registerQtable("qtable", "mixed precision: search the tensors to keep F32 for a cosine target",
                                        runQtable);

} // namespace
