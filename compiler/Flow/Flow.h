// The one-command journey behind `tpuc flow`: ONNX or TFLite -> Top (import) ->
// calibration table (INT8) -> Tpu module + bmodel (deploy), then the same
// test input through every stage — Top interpreter (the fp32 reference),
// Tpu interpreter, bmodel on the timed sim backend — and stage-to-stage
// comparisons. Every file goes to the work directory.
#pragma once

#include "compiler/Calibration/Calibrator.h"
#include "compiler/Flow/FlowManifest.h"
#include "compiler/Flow/Int8Recipe.h"
#include "compiler/Lowering/Lowering.h"
#include "kernels/Compare.h"
#include "runtime/Backend.h"
#include "support/Status.h"

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace tpu::flow {

struct FlowOptions {
  std::string modelPath; // .onnx or .tflite
  std::vector<std::vector<int64_t>> inputShapes; // empty: the model's own shapes
  // Two or more shape sets (tpuc flow --input-shapes "[[..]];[[..]]"): a
  // multi-stage flow. The model is imported and deployed at each set in a
  // stage directory of the work dir (stage0, stage1, ...), the bmodels
  // combined into one net of one stage per set (shared weights, as tpuc
  // combine), and each stage run on that bmodel and compared. INT8 is
  // calibrated once, on samples of one stage's shapes (or images, at stage
  // 0's), and the table serves every stage. testInput is then one .npz per
  // stage, comma-separated in stage order, or one image for all.
  std::vector<std::vector<std::vector<int64_t>>> stageShapes;
  lowering::Quantize mode = lowering::Quantize::F32;
  std::optional<preprocess::Config> preprocess; // recorded in the Top module (tpuc import --mean ...)
  std::string calibrationData; // directory of .npz / image samples (required for INT8)
  int64_t inputNum = 0;        // first N samples; 0 = all
  calib::CalibrationOptions calibration;
  Int8Recipe levers;   // the lever flags given (bias correction and weight rounding read the
                       // first calibration.tuneSamples samples)
  RecipeChoice recipe; // auto: searched on held-back calibration samples (Int8Recipe.h)
  double int8Budget = kDefaultInt8BudgetSeconds;
  // With the recipe search: when its held-back cosine is below expectedCos,
  // at most maxFloatLayers tensors kept in fp32 (recorded in the recipe)
  // within what is left of the budget, unless quantizeTable is given.
  double expectedCos = kDefaultExpectedCos;
  size_t maxFloatLayers = kDefaultMaxFloatLayers;
  std::string quantizeTable;   // tensors kept in fp32 (INT8), as tpuc deploy --quantize-table
  std::string testInput;       // .npz, one member per model input, or an image (preprocessed)
  bool layerGroup = true;
  bool cpuSubnets = true;      // false: an op only the host can run is refused (chip-only model)
  std::string configPath;      // HwConfig JSON for the sim run; empty = BM1684
  std::string workDir;         // empty: "<model stem>_flow" in the current directory
};

// One stage-to-stage comparison (a = the earlier stage, the reference).
struct StageComparison {
  std::string reference, candidate; // stage names
  kernels::CompareOptions tolerance;
  kernels::CompareReport report;
  bool bitExactRequired = false;
  bool bitExact = false; // every compared element equal (NaN where NaN)
  bool pass() const;
};

struct FlowResult {
  std::string topPath, caliPath, tpuPath, bmodelPath; // caliPath empty for F32
  std::string inputPath;                              // the test input (.npz; an image's tensor is written)
  std::string topOutputs, tpuOutputs, bmodelOutputs;  // .npz of each stage
  std::string tracePath, statsPath;
  // Where the HTML profile report and the graph page belong; rendered by the
  // caller (tpuc flow, tools/ sits above the compiler).
  std::string reportPath, graphPath;
  std::string manifestPath; // flow.json (FlowManifest.h)
  std::vector<StageComparison> comparisons;
  std::string int8Recipe;           // INT8: the recipe and how it was chosen
  std::vector<std::string> keptF32; // INT8: "name: why" of the ops kept in fp32
  runtime::RunReport sim;
  // A multi-stage flow (FlowOptions::stageShapes): this result holds what
  // the stages share (caliPath, int8Recipe, the combined bmodelPath and the
  // work dir's manifestPath), each stage's own files, runs and comparisons
  // are in `stages` ("stage 0", its shapes and its directory).
  std::string stageName;
  std::vector<std::vector<int64_t>> stageInputShapes;
  std::vector<FlowResult> stages;
  bool pass() const; // every comparison, of every stage
};

// "[[1,3,48,320]];[[1,3,48,640]]" -> one shape list per stage, each as
// tpu::onnx::parseShapeList reads it (one set: one stage). Errors name the set.
Result<std::vector<std::vector<std::vector<int64_t>>>> parseStageShapes(const std::string &text);
// "[[1,3,48,320],[1,10]]"
std::string stageShapesText(const std::vector<std::vector<int64_t>> &shapes);

// The tolerances of a stage pair for a quantization mode (docs/validation.md):
// Top vs Tpu: F32 0.99/0.99, INT8 cosine 0.8 / euclidean 0.5;
// Tpu vs bmodel: 0.99/0.90, and INT8 outputs bit-equal.
kernels::CompareOptions topVsTpuTolerance(lowering::Quantize mode);
kernels::CompareOptions tpuVsBmodelTolerance();

// Progress of the sub-steps goes to `log`. A failed comparison is a
// result (pass() == false), not an error.
Result<FlowResult> runFlow(const FlowOptions &options, std::ostream &log);

// The one summary: accuracy per stage, simulated latency and per-engine
// utilization, the top-10 layers by time and the files written.
std::string formatFlowSummary(const FlowResult &result);

} // namespace tpu::flow
