// tpuc flow: ONNX or TFLite -> Top -> (calibration) -> Tpu -> bmodel, every stage run
// on one test input and compared, one summary — wiring only; the work is in
// compiler/Flow/Flow.h.
#include "compiler/Flow/Flow.h"
#include "compiler/Import/OnnxImporter.h"
#include "tools/explore/ProfileReport.h"
#include "tools/graph/GraphFiles.h"
#include "tools/tpuc/CalibArgs.h"
#include "tools/tpuc/Subcommand.h"
#include "tools/tpuc/SubcommandArgs.h"

#include "llvm/Support/Path.h"

#include <iostream>

namespace {

int runFlowCmd(int argc, char **argv) {
  tpuc::SubcommandArgs args("flow",
                            "model.onnx|model.tflite --quantize F32|INT8 --test-input in.npz|--test-image img.png "
                            "[--input-shapes \"[[1,3,224,224]]\" | \"[[1,3,48,320]];[[1,3,48,640]]\"] "
                            "[preprocessing flags as tpuc import] "
                            "[--calibration-data DIR] [--input-num N] [--calibration-method M] [--tune N] "
                            "[--search-threshold] [--int8-recipe auto|none|FILE] [--int8-budget S] "
                            "[--equalize-weights] [--no-uint8] [--bias-correction] "
                            "[--round-weights] [--per-channel-weights] [--int16-pointwise] "
                            "[--quantize-table keep_fp32.txt] [--expected-cos 0.99 [--max-float-layers 5]] "
                            "[--no-layer-group] [--no-cpu-subnets] [--config hw.json] [--work-dir DIR]");
  args.positionals(1, 1, "model.onnx|model.tflite");
  args.option("--quantize", "F32 or INT8");
  args.option("--input-shapes",
              "shapes of the model inputs, e.g. [[1,3,224,224]]; several sets separated by ';' make one "
              "multi-stage bmodel, one stage per set with shared weights (work dir: stage0/, stage1/, ...; "
              "--test-input a.npz,b.npz one per stage, or one --test-image; INT8 calibrates once, on samples "
              "of one stage's shapes)");
  tpuc::declarePreprocessOptions(args);
  args.option("--calibration-data", "directory of .npz or image samples for the INT8 calibration");
  args.option("--input-num", "calibrate with the first N samples (default: all)");
  tpuc::declareCalibrationOptions(args, "--method");
  tpuc::declareLeverOptions(args);
  tpuc::declareRecipeOptions(args, /*search=*/true);
  args.option("--test-input", "npz with one array per model input, run through every step (several "
                              "--input-shapes sets: one npz per set, comma-separated)");
  args.option("--test-image", "an image made into the test input by the preprocessing flags");
  args.option("--quantize-table", "tensors kept in F32 (INT8; e.g. from tpuc qtable)");
  args.flag("--no-layer-group", "compile every op alone (load, compute, store)");
  args.flag("--no-cpu-subnets", "refuse ops the chip cannot run instead of running them on the host (CPU sub-nets)");
  args.option("--config", "hardware config JSON for the simulated run (default: BM1684)");
  args.option("--work-dir", "where every file goes (default: <model>_flow)");
  if (auto done = args.parseCommandLine(argc, argv, {{"--quantize", "--quantize F32|INT8"}})) return *done;
  auto mode = tpu::lowering::parseQuantize(args.get("--quantize"));
  if (!mode) return tpuc::fail("flow", mode.message());
  if (*mode != tpu::lowering::Quantize::F32 && *mode != tpu::lowering::Quantize::INT8)
    return tpuc::fail("flow", std::string("--quantize ") + tpu::lowering::quantizeName(*mode) +
                                  " is the BM1684X's; flow runs the BM1684 (use tpuc deploy --chip bm1684x)");
  if (args.has("--test-input") == args.has("--test-image"))
    return tpuc::fail("flow", "give one of --test-input in.npz and --test-image img.png");
  auto calibration = tpuc::calibrationFromArgs(args);
  if (!calibration) return tpuc::fail("flow", calibration.message());
  auto preprocess = tpuc::preprocessFromArgs(args);
  if (!preprocess) return tpuc::fail("flow", preprocess.message());
  auto recipe = tpuc::recipeFromArgs(args, /*search=*/true);
  if (!recipe) return tpuc::fail("flow", recipe.message());
  auto num = args.getInt("--input-num", 0);
  if (!num) return tpuc::fail("flow", num.message());
  if (args.has("--input-num") && *num < 1) return tpuc::fail("flow", "--input-num must be >= 1");

  tpu::flow::FlowOptions opt;
  opt.modelPath = args.args()[0];
  if (args.has("--input-shapes")) {
    auto stages = tpu::flow::parseStageShapes(args.get("--input-shapes"));
    if (!stages) return tpuc::fail("flow", stages.message());
    if (stages->size() == 1)
      opt.inputShapes = stages->front();
    else
      opt.stageShapes = stages.take();
  }
  opt.mode = *mode;
  opt.calibrationData = args.get("--calibration-data");
  opt.inputNum = *num;
  opt.calibration = calibration.take();
  opt.levers = recipe->flags;
  opt.recipe = recipe->choice;
  opt.int8Budget = recipe->budgetSeconds;
  opt.expectedCos = recipe->expectedCos;
  opt.maxFloatLayers = recipe->maxFloatLayers;
  opt.preprocess = preprocess.take();
  opt.testInput = args.has("--test-image") ? args.get("--test-image") : args.get("--test-input");
  opt.layerGroup = !args.isSet("--no-layer-group");
  opt.cpuSubnets = !args.isSet("--no-cpu-subnets");
  opt.quantizeTable = args.get("--quantize-table", "");
  opt.configPath = args.get("--config");
  opt.workDir = args.get("--work-dir");
  auto result = tpu::flow::runFlow(opt, std::cerr);
  if (!result) return tpuc::fail("flow", result.message());
  // The HTML profile and the graph page live in the tools layer, above the
  // compiler: one of each per stage (a multi-stage flow's are in its stage dirs).
  std::vector<const tpu::flow::FlowResult *> stages;
  for (const tpu::flow::FlowResult &stage : result->stages) stages.push_back(&stage);
  if (stages.empty()) stages.push_back(&*result);
  for (const tpu::flow::FlowResult *stage : stages) {
    if (auto st = tpu::explore::writeProfileReport(stage->statsPath, stage->tracePath, stage->reportPath); !st)
      return tpuc::fail("flow", st.message());
    tpu::graph::GraphRequest graph;
    graph.inputPath = stage->tpuPath;
    graph.outputPath = stage->graphPath;
    graph.flowDir = llvm::sys::path::parent_path(stage->manifestPath).str();
    if (graph.flowDir.empty()) graph.flowDir = ".";
    if (auto g = tpu::graph::writeGraph(graph); !g) return tpuc::fail("flow", g.message());
  }
  std::cout << tpu::flow::formatFlowSummary(*result);
  return result->pass() ? tpuc::kExitOk : tpuc::kExitMismatch;
}

tpuc::RegisterSubcommand registerFlow("flow", "ONNX or TFLite to bmodel in one command: every stage run, compared and timed",
                                      runFlowCmd);

} // namespace
