#include "compiler/Flow/Flow.h"
#include "compiler/Flow/CalibrationOnChip.h"

#include "compiler/Calibration/Calibrator.h"
#include "compiler/Dialect/Tpu/TpuOps.h"
#include "compiler/Flow/Deploy.h"
#include "compiler/Import/OnnxImporter.h"
#include "compiler/Import/tflite/TfliteImporter.h"
#include "compiler/Interpreter/TopInterpreter.h"
#include "compiler/Preprocess/PreprocessAttr.h"
#include "compiler/TpuInterpreter/TpuInterpreter.h"
#include "compiler/Transforms/Passes.h"
#include "isa/bmodel/Bmodel.h"
#include "runtime/RunFiles.h"
#include "support/Npz.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cmath>
#include <iomanip>
#include <map>
#include <sstream>

namespace tpu::flow {

bool StageComparison::pass() const { return report.allPass() && (!bitExactRequired || bitExact); }

bool FlowResult::pass() const {
  for (const StageComparison &c : comparisons)
    if (!c.pass()) return false;
  for (const FlowResult &stage : stages)
    if (!stage.pass()) return false;
  return true;
}

kernels::CompareOptions topVsTpuTolerance(lowering::Quantize mode) {
  kernels::CompareOptions o;
  if (mode == lowering::Quantize::INT8) {
    o.minCosine = 0.8;
    o.minEuclidean = 0.5;
  } else {
    o.minCosine = 0.99;
    o.minEuclidean = 0.99;
  }
  return o;
}

kernels::CompareOptions tpuVsBmodelTolerance() {
  kernels::CompareOptions o;
  o.minCosine = 0.99;
  o.minEuclidean = 0.90;
  return o;
}

namespace {

std::string join(const std::string &dir, const std::string &name) {
  llvm::SmallString<256> p(dir);
  llvm::sys::path::append(p, name);
  return p.str().str();
}

// "dir/resnet18.onnx" -> "resnet18".
std::string modelStem(const std::string &modelPath) {
  std::string stem = llvm::sys::path::stem(modelPath).str();
  return stem.empty() ? "model" : stem;
}

Result<StageComparison> compareStages(const std::string &refName, const NpzMap &ref, const std::string &candName,
                                      const NpzMap &cand, const kernels::CompareOptions &tolerance,
                                      bool bitExactRequired) {
  StageComparison c;
  c.reference = refName;
  c.candidate = candName;
  c.tolerance = tolerance;
  c.bitExactRequired = bitExactRequired;
  auto report = kernels::compareArchives(ref, cand, tolerance);
  if (!report) return makeError(refName, " vs ", candName, ": ", report.message());
  c.report = std::move(*report);
  c.bitExact = true;
  for (const kernels::CompareRow &row : c.report.rows)
    if (row.stats.maxAbsDiff != 0 || row.stats.nanMismatch != 0) c.bitExact = false;
  return c;
}

// The named arrays of `all` (an interpreter's dumpAll result).
Result<NpzMap> selectArrays(const NpzMap &all, const std::vector<std::string> &names) {
  NpzMap out;
  for (const std::string &name : names) {
    auto it = all.find(name);
    if (it == all.end()) return makeError("output '", name, "' was not computed");
    out.emplace(name, it->second);
  }
  return out;
}

} // namespace

namespace {

// Where one stage's files go: `dir`, named after the model (stem) and the
// mode (tag).
void setPaths(FlowResult &r, const std::string &dir, const std::string &stem, const std::string &tag) {
  r.topPath = join(dir, stem + ".top.mlir");
  r.bmodelPath = join(dir, tag + ".bmodel");
  r.tpuPath = join(dir, tag + ".tpu.mlir"); // deploy writes it beside the bmodel
  r.topOutputs = join(dir, stem + "_top_outputs.npz");
  r.tpuOutputs = join(dir, tag + "_tpu_outputs.npz");
  r.bmodelOutputs = join(dir, tag + "_bmodel_outputs.npz");
  r.tracePath = join(dir, tag + "_trace.json");
  r.statsPath = join(dir, tag + "_stats.json");
  r.reportPath = join(dir, tag + "_report.html");
  r.graphPath = join(dir, "graph.html");
  r.manifestPath = join(dir, kFlowManifestName);
}

// 1. Import at `shapes` (empty: the model's own).
Status importModel(const FlowOptions &options, const std::vector<std::vector<int64_t>> &shapes,
                   const std::string &topPath, std::ostream &log) {
  log << "flow: import " << options.modelPath;
  if (!shapes.empty()) log << " at " << stageShapesText(shapes);
  log << " -> " << topPath << "\n";
  std::function<void(mlir::ModuleOp)> annotate;
  if (options.preprocess)
    annotate = [&](mlir::ModuleOp m) { preprocess::recordConfig(m, *options.preprocess); };
  if (tflite::isTfliteModel(options.modelPath)) {
    tflite::ImportOptions io;
    io.inputShapes = shapes;
    io.annotateModule = annotate;
    return tflite::importTfliteFile(options.modelPath, topPath, io);
  }
  onnx::ImportOptions io;
  io.inputShapes = shapes;
  io.annotateModule = annotate;
  return onnx::importOnnxFile(options.modelPath, topPath, io);
}

// 2. The calibration table (INT8) of `samples` on `topModule`, written to
// caliPath; the recipe's description goes to r.int8Recipe.
Status calibrateTable(const FlowOptions &options, mlir::ModuleOp topModule, const std::vector<NpzMap> &samples,
                      const std::string &caliPath, const std::string &workDir, bool sampleFreeWeights, FlowResult &r,
                      std::ostream &log) {
  log << "flow: calibrate over " << samples.size() << " sample(s) -> " << caliPath << "\n";
  Result<calib::CalibrationTable> table = makeError("no table");
  if (options.recipe.kind == RecipeChoice::Kind::Auto) {
    RecipeSearchOptions ro;
    ro.calibration = options.calibration;
    ro.fixed = options.levers;
    ro.budgetSeconds = options.int8Budget;
    ro.scratchDir = workDir;
    ro.expectedCos = options.expectedCos;
    ro.maxFloatLayers = options.quantizeTable.empty() ? options.maxFloatLayers : 0;
    ro.sampleFreeWeights = sampleFreeWeights;
    auto found = searchInt8Recipe(topModule, samples, ro, log);
    if (!found) return makeError(options.calibrationData, ": ", found.message());
    r.int8Recipe = "auto: " + found->summary();
    table = std::move(found->table);
  } else {
    const Int8Recipe recipe = options.recipe.fixedRecipe(options.levers);
    // The max check and the per-tensor search lower as the deploy below does.
    auto made = calibrateWithRecipe(topModule, samples, options.calibration, recipe, workDir);
    if (!made) return makeError(options.calibrationData, ": ", made.message());
    table = std::move(made->front());
    r.int8Recipe =
        recipe.text() + (options.recipe.kind == RecipeChoice::Kind::File ? " (from " + options.recipe.file + ")"
                                                                         : " (--int8-recipe none: the lever flags)");
  }
  return table->save(caliPath);
}

// 3. Deploy r.topPath with the table r.caliPath: Tpu module + bmodel.
Result<DeployResult> deployStage(const FlowOptions &options, const FlowResult &r, std::ostream &log) {
  log << "flow: deploy -> " << r.bmodelPath << "\n";
  DeployOptions dopt;
  dopt.mode = options.mode;
  dopt.calibrationTable = r.caliPath;
  dopt.quantizeTable = options.quantizeTable;
  dopt.layerGroup = options.layerGroup;
  dopt.cpuSubnets = options.cpuSubnets;
  dopt.output = r.bmodelPath;
  dopt.levers = options.levers;
  dopt.recipe = options.recipe;
  dopt.weightData = options.calibrationData;
  dopt.weightSamples = options.calibration.tuneSamples;
  auto deployed = deploy(r.topPath, dopt, log);
  if (!deployed) return makeError(deployed.message());
  return deployed;
}

// 4.-8. The test input through the Top and Tpu interpreters and `runBmodel`
// (r.bmodelPath, or the multi-stage bmodel holding it as a stage) on the
// timed simulator, the stages compared, flow.json written. `caliName` is the
// table's name relative to r's directory ("" for F32).
Status runAndCompare(const FlowOptions &options, FlowResult &r, mlir::MLIRContext &context, mlir::ModuleOp topModule,
                     const NpzMap &inputs, const DeployResult &deployed, const std::string &runBmodel,
                     const std::string &caliName, std::ostream &log) {
  const bool int8 = options.mode == lowering::Quantize::INT8;
  const std::string prefix = r.stageName.empty() ? "" : r.stageName + ": ";
  // 4. Top interpreter: the fp32 reference of the ONNX model.
  log << "flow: " << prefix << "Top interpreter\n";
  auto topInterp = top::TopInterpreter::create(topModule);
  if (!topInterp) return makeError(r.topPath, ": ", topInterp.message());
  // Every tensor, for the per-tensor comparison in flow.json.
  auto topAll = (*topInterp)->run(inputs, /*dumpAll=*/true);
  if (!topAll) return makeError(r.inputPath, ": ", topAll.message());
  std::vector<std::string> topNames;
  for (const top::TensorInfo &t : (*topInterp)->outputs()) topNames.push_back(t.name);
  auto topOut = selectArrays(*topAll, topNames);
  if (!topOut) return makeError(r.topPath, ": ", topOut.message());
  TPU_RETURN_IF_ERROR(writeNpz(r.topOutputs, *topOut));

  // 5. Tpu interpreter: the chip's arithmetic.
  log << "flow: " << prefix << "Tpu interpreter\n";
  auto tpuModule = top::loadTopModule(context, r.tpuPath);
  if (!tpuModule) return makeError(tpuModule.message());
  auto tpuInterp = tpuinterp::TpuInterpreter::create(**tpuModule);
  if (!tpuInterp) return makeError(r.tpuPath, ": ", tpuInterp.message());
  auto tpuAll = (*tpuInterp)->run(inputs, /*dumpAll=*/true);
  if (!tpuAll) return makeError(r.inputPath, ": ", tpuAll.message());
  std::vector<std::string> tpuNames;
  for (int id : (*tpuInterp)->graph().outputs) tpuNames.push_back((*tpuInterp)->graph().tensors[size_t(id)].name);
  auto tpuOut = selectArrays(*tpuAll, tpuNames);
  if (!tpuOut) return makeError(r.tpuPath, ": ", tpuOut.message());
  TPU_RETURN_IF_ERROR(writeNpz(r.tpuOutputs, *tpuOut));

  // 6. The bmodel on the timed simulator, with trace and stats.
  log << "flow: " << prefix << "bmodel on the sim backend\n";
  runtime::RunFilesRequest request;
  request.bmodelPath = runBmodel;
  request.inputPath = r.inputPath;
  request.outputPath = r.bmodelOutputs;
  request.configPath = options.configPath;
  request.tracePath = r.tracePath;
  request.statsPath = r.statsPath;
  request.backend = runtime::BackendKind::Sim;
  auto sim = runtime::runBmodelFiles(request);
  if (!sim) return makeError(sim.message());
  r.sim = std::move(*sim);
  auto bmodelOut = readNpz(r.bmodelOutputs);
  if (!bmodelOut) return makeError(bmodelOut.message());

  // 7. Stage to stage.
  auto topTpu = compareStages("top", *topOut, "tpu", *tpuOut, topVsTpuTolerance(options.mode), false);
  if (!topTpu) return makeError(topTpu.message());
  r.comparisons.push_back(std::move(*topTpu));
  auto tpuBmodel = compareStages("tpu", *tpuOut, "bmodel", *bmodelOut, tpuVsBmodelTolerance(), int8);
  if (!tpuBmodel) return makeError(tpuBmodel.message());
  r.comparisons.push_back(std::move(*tpuBmodel));
  auto topBmodel = compareStages("top", *topOut, "bmodel", *bmodelOut, topVsTpuTolerance(options.mode), false);
  if (!topBmodel) return makeError(topBmodel.message());
  r.comparisons.push_back(std::move(*topBmodel));

  // 8. flow.json: the files by role and every per-tensor comparison.
  FlowManifest manifest;
  manifest.quantize = int8 ? "INT8" : "F32";
  if (int8) {
    manifest.int8Recipe = deployed.recipe.text();
    manifest.int8RecipeChoice = r.int8Recipe;
    manifest.keptF32 = r.keptF32;
  }
  const std::vector<std::pair<std::string, std::string>> files = {
      {"top", r.topPath},     {"tpu", r.tpuPath},       {"bmodel", r.bmodelPath}, {"stats", r.statsPath},
      {"trace", r.tracePath}, {"report", r.reportPath}, {"graph", r.graphPath}};
  for (const auto &[role, file] : files)
    if (!file.empty()) manifest.files[role] = llvm::sys::path::filename(file).str();
  if (!caliName.empty()) manifest.files["cali"] = caliName;
  const kernels::CompareOptions everyTensor = topVsTpuTolerance(options.mode);
  manifest.comparisons.push_back({"top", "tpu", everyTensor.minCosine, everyTensor.minEuclidean,
                                  compareCommonTensors(*topAll, *tpuAll, everyTensor)});
  for (size_t i = 1; i < r.comparisons.size(); ++i) {
    const StageComparison &c = r.comparisons[i];
    manifest.comparisons.push_back(
        {c.reference, c.candidate, c.tolerance.minCosine, c.tolerance.minEuclidean, c.report.rows});
  }
  return runtime::writeFileAtomically(r.manifestPath, manifestJson(manifest));
}

// The input shapes of a Top module's inputs, by name.
std::map<std::string, std::vector<int64_t>> moduleInputShapes(const top::TopInterpreter &interp) {
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const top::TensorInfo &t : interp.inputs()) shapes[t.name] = t.shape;
  return shapes;
}

bool takes(const std::map<std::string, std::vector<int64_t>> &inputs, const NpzMap &sample) {
  for (const auto &[name, shape] : inputs) {
    auto it = sample.find(name);
    if (it == sample.end() || it->second.shape != shape) return false;
  }
  return true;
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = stageShapesText({shape}); // "[[1,3,16,32]]"
  return text.substr(1, text.size() - 2);
}

// "'x' [1,3,16,48], 'y' [1,10]"
std::string sampleShapesText(const NpzMap &sample) {
  std::string text;
  for (const auto &[name, array] : sample) text += (text.empty() ? "'" : ", '") + name + "' " + shapeText(array.shape);
  return text;
}

// What a multi-stage flow refuses before anything is written.
Status checkStageOptions(const FlowOptions &options) {
  const bool int8 = options.mode == lowering::Quantize::INT8;
  const size_t n = options.stageShapes.size();
  for (size_t i = 0; i < n; ++i)
    for (size_t k = 0; k < i; ++k)
      if (options.stageShapes[i] == options.stageShapes[k])
        return makeError("--input-shapes: stage ", k, " and stage ", i, " are both ",
                         stageShapesText(options.stageShapes[i]), " (the runtime picks a stage by its input shapes)");
  if (int8 && (options.levers.levers.needSamples() || options.recipe.fixedRecipe(options.levers).levers.needSamples()))
    return makeError("--bias-correction and --round-weights correct the weights on samples of one input shape; the ", n,
                     " stages of --input-shapes share one set of weights: leave them out for a multi-stage flow");
  return Status::ok();
}

// The multi-stage flow (FlowOptions::stageShapes); `inputs` holds the test
// inputs already read (one per stage) unless `image` is given.
Result<FlowResult> runStages(const FlowOptions &options, std::vector<NpzMap> inputs,
                             const std::optional<preprocess::Image> &image, const std::vector<std::string> &inputFiles,
                             std::ostream &log) {
  const bool int8 = options.mode == lowering::Quantize::INT8;
  const size_t n = options.stageShapes.size();
  std::string stagesText;
  for (size_t i = 0; i < n; ++i) stagesText += (i ? "; " : "") + stageShapesText(options.stageShapes[i]);
  const std::string stem = modelStem(options.modelPath);
  const std::string workDir = options.workDir.empty() ? stem + "_flow" : options.workDir;
  const std::string tag = stem + (int8 ? "_int8" : "_f32");
  FlowResult all;
  all.bmodelPath = join(workDir, tag + ".bmodel");
  all.manifestPath = join(workDir, kFlowManifestName);
  all.stages.resize(n);
  mlir::MLIRContext context;
  context.getOrLoadDialect<tpuir::TpuDialect>();
  std::vector<mlir::OwningOpRef<mlir::ModuleOp>> topModules;
  std::vector<std::unique_ptr<top::TopInterpreter>> topInterps;
  // 1. Import at each shape set, each stage in its own directory (the
  // bmodels share one file name: one net name, which the stages need).
  for (size_t i = 0; i < n; ++i) {
    FlowResult &r = all.stages[i];
    r.stageName = "stage " + std::to_string(i);
    r.stageInputShapes = options.stageShapes[i];
    const std::string dir = join(workDir, "stage" + std::to_string(i));
    if (std::error_code ec = llvm::sys::fs::create_directories(dir))
      return makeError(dir, ": cannot create the stage directory: ", ec.message());
    setPaths(r, dir, stem, tag);
    TPU_RETURN_IF_ERROR(importModel(options, r.stageInputShapes, r.topPath, log));
    auto topModule = top::loadTopModule(context, r.topPath);
    if (!topModule) return makeError(topModule.message());
    topModules.push_back(topModule.take());
    auto interp = top::TopInterpreter::create(*topModules.back());
    if (!interp) return makeError(r.topPath, ": ", interp.message());
    topInterps.push_back(interp.take());
    r.inputPath = inputFiles.empty() ? "" : inputFiles[i];
    if (image) {
      auto reader = calib::SampleReader::forModule(*topModules.back());
      if (!reader) return makeError(r.topPath, ": ", reader.message());
      auto made = reader->fromImage(*image, options.testInput);
      if (!made) return made.status();
      r.inputPath = join(dir, stem + "_in.npz");
      TPU_RETURN_IF_ERROR(writeNpz(r.inputPath, *made));
      inputs.push_back(made.take());
    } else if (!takes(moduleInputShapes(*topInterps.back()), inputs[i])) {
      return makeError("--test-input: ", inputFiles[i], " has ", sampleShapesText(inputs[i]), ", ", r.stageName,
                       " takes ", stageShapesText(r.stageInputShapes), " (one .npz per stage, in stage order)");
    }
  }

  // 2. INT8: one table for every stage (thresholds are per tensor name),
  // calibrated at the stage whose input shapes the samples have; images
  // are resized to stage 0's.
  if (int8) {
    auto files = calib::listSampleFiles(options.calibrationData);
    if (!files) return files.status();
    size_t at = 0;
    if (!preprocess::isImageFile(files->front())) {
      auto first = readNpz(files->front());
      if (!first) return makeError(first.message());
      at = n;
      for (size_t i = 0; i < n && at == n; ++i)
        if (takes(moduleInputShapes(*topInterps[i]), *first)) at = i;
      if (at == n)
        return makeError("--calibration-data: ", files->front(), " has ", sampleShapesText(*first),
                         ", no stage's input shapes (stages: ", stagesText,
                         "): a multi-stage flow calibrates once, on samples of one stage's shapes");
    }
    auto reader = calib::SampleReader::forModule(*topModules[at]);
    if (!reader) return makeError(all.stages[at].topPath, ": ", reader.message());
    auto samples = calib::loadSamples(*reader, options.calibrationData, "", options.inputNum,
                                      [&](const std::string &w) { log << "flow: warning: " << w << "\n"; });
    if (!samples) return makeError(samples.message());
    const auto shapes = moduleInputShapes(*topInterps[at]);
    for (size_t k = 0; k < samples->size(); ++k)
      if (!takes(shapes, (*samples)[k]))
        return makeError("--calibration-data: sample ", k, " (in name order) has ", sampleShapesText((*samples)[k]),
                         ", the others ", all.stages[at].stageName, "'s ",
                         stageShapesText(all.stages[at].stageInputShapes),
                         ": a multi-stage flow calibrates once, on samples of one stage's shapes");
    all.caliPath = join(workDir, stem + ".cali");
    log << "flow: calibrating at " << all.stages[at].stageName << " "
        << stageShapesText(all.stages[at].stageInputShapes) << "; the table serves every stage\n";
    TPU_RETURN_IF_ERROR(calibrateTable(options, *topModules[at], *samples, all.caliPath, workDir,
                                       /*sampleFreeWeights=*/true, all, log));
  }

  // 3. Deploy each stage with the one table, then one bmodel of them all.
  std::vector<DeployResult> deployed;
  std::vector<std::string> stageBmodels;
  for (FlowResult &r : all.stages) {
    r.caliPath = all.caliPath;
    r.int8Recipe = all.int8Recipe;
    auto d = deployStage(options, r, log);
    if (!d) return makeError(r.stageName, " ", stageShapesText(r.stageInputShapes), ": ", d.message());
    r.keptF32 = d->keptF32;
    deployed.push_back(d.take());
    stageBmodels.push_back(r.bmodelPath);
  }
  all.keptF32 = all.stages.front().keptF32;
  log << "flow: combine " << n << " stages -> " << all.bmodelPath << "\n";
  auto combined = bmodel::combineFiles(stageBmodels);
  if (!combined) return makeError(combined.message());
  TPU_RETURN_IF_ERROR(runtime::writeFileAtomically(all.bmodelPath, std::string(combined->begin(), combined->end())));

  // 4.-8. Each stage's test input through its interpreters and the
  // multi-stage bmodel (which picks the stage from the input's shape).
  const std::string caliName = all.caliPath.empty() ? "" : "../" + llvm::sys::path::filename(all.caliPath).str();
  for (size_t i = 0; i < n; ++i)
    TPU_RETURN_IF_ERROR(runAndCompare(options, all.stages[i], context, *topModules[i], inputs[i], deployed[i],
                                      all.bmodelPath, caliName, log));

  // The work dir's flow.json: what the stages share, and where each is.
  FlowManifest manifest;
  manifest.quantize = int8 ? "INT8" : "F32";
  if (int8) {
    manifest.int8Recipe = deployed.front().recipe.text();
    manifest.int8RecipeChoice = all.int8Recipe;
    manifest.keptF32 = all.keptF32;
  }
  manifest.files["bmodel"] = llvm::sys::path::filename(all.bmodelPath).str();
  if (!all.caliPath.empty()) manifest.files["cali"] = llvm::sys::path::filename(all.caliPath).str();
  for (const FlowResult &r : all.stages)
    manifest.stages.push_back({r.stageName, stageShapesText(r.stageInputShapes),
                               llvm::sys::path::filename(llvm::sys::path::parent_path(r.manifestPath)).str()});
  TPU_RETURN_IF_ERROR(runtime::writeFileAtomically(all.manifestPath, manifestJson(manifest)));
  return all;
}

} // namespace

Result<std::vector<std::vector<std::vector<int64_t>>>> parseStageShapes(const std::string &text) {
  std::vector<std::vector<std::vector<int64_t>>> stages;
  if (text.find(';') == std::string::npos) {
    auto shapes = onnx::parseShapeList(text);
    if (!shapes) return shapes.status();
    stages.push_back(shapes.take());
    return stages;
  }
  std::stringstream ss(text);
  size_t index = 0;
  for (std::string set; std::getline(ss, set, ';'); ++index) {
    auto shapes = onnx::parseShapeList(set);
    if (!shapes) return makeError("shape set ", index, ": ", shapes.message());
    stages.push_back(shapes.take());
  }
  // "A;" is one set and a stray separator: say so rather than make one stage.
  if (stages.size() < 2 || text.back() == ';')
    return makeError("--input-shapes '", text, "': sets are separated by ';', e.g. [[1,3,48,320]];[[1,3,48,640]]");
  return stages;
}

std::string stageShapesText(const std::vector<std::vector<int64_t>> &shapes) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < shapes.size(); ++i) {
    os << (i ? "," : "") << "[";
    for (size_t k = 0; k < shapes[i].size(); ++k) os << (k ? "," : "") << shapes[i][k];
    os << "]";
  }
  os << "]";
  return os.str();
}

Result<FlowResult> runFlow(const FlowOptions &options, std::ostream &log) {
  const bool int8 = options.mode == lowering::Quantize::INT8;
  const bool staged = options.stageShapes.size() > 1;
  if (options.modelPath.empty()) return makeError("missing model.onnx or model.tflite");
  if (!llvm::sys::fs::is_regular_file(options.modelPath)) return makeError(options.modelPath, ": no such file");
  if (options.testInput.empty()) return makeError("missing --test-input in.npz");
  if (int8 && options.calibrationData.empty()) return makeError("--quantize INT8 needs --calibration-data DIR");
  if (options.expectedCos > 0 && (!int8 || options.recipe.kind != RecipeChoice::Kind::Auto))
    return makeError("--expected-cos chooses F32 layers after the INT8 recipe search: it needs --quantize INT8 and "
                     "--int8-recipe auto");
  if (!int8 && !options.calibrationData.empty())
    return makeError("--calibration-data is only used with --quantize INT8");
  if (options.inputNum < 0) return makeError("--input-num must be >= 1");
  // Read the inputs before the long steps, so a bad file fails at once (an
  // image becomes a tensor once the module's preprocessing is known).
  const bool testImage = preprocess::isImageFile(options.testInput);
  Result<NpzMap> inputs = makeError("no test input");
  std::vector<NpzMap> stageInputs;
  std::vector<std::string> stageInputFiles;
  std::optional<preprocess::Image> image;
  if (testImage) {
    auto decoded = preprocess::decodeImageFile(options.testInput);
    if (!decoded) return decoded.status();
    image = decoded.take();
  } else if (staged) {
    std::stringstream list(options.testInput);
    for (std::string f; std::getline(list, f, ',');)
      if (!f.empty()) stageInputFiles.push_back(f);
    if (stageInputFiles.size() != options.stageShapes.size())
      return makeError("--test-input: ", options.stageShapes.size(), " stages need ", options.stageShapes.size(),
                       " .npz files, one per stage in --input-shapes order (a.npz,b.npz), or one --test-image; got ",
                       stageInputFiles.size());
    for (const std::string &f : stageInputFiles) {
      auto read = readNpz(f);
      if (!read) return makeError(read.message());
      stageInputs.push_back(read.take());
    }
  } else {
    inputs = readNpz(options.testInput);
    if (!inputs) return makeError(inputs.message());
  }
  if (!int8 && !options.quantizeTable.empty()) return makeError("--quantize-table is only used with --quantize INT8");
  if (!options.quantizeTable.empty())
    if (auto table = lowering::loadQuantizeTable(options.quantizeTable); !table) return makeError(table.message());
  if (int8)
    if (auto files = calib::listSampleFiles(options.calibrationData); !files) return files.status();

  if (staged) TPU_RETURN_IF_ERROR(checkStageOptions(options));

  const std::string stem = modelStem(options.modelPath);
  const std::string workDir = options.workDir.empty() ? stem + "_flow" : options.workDir;
  if (std::error_code ec = llvm::sys::fs::create_directories(workDir))
    return makeError(workDir, ": cannot create the work directory: ", ec.message());
  if (staged) return runStages(options, std::move(stageInputs), image, stageInputFiles, log);
  const std::string tag = stem + (int8 ? "_int8" : "_f32");
  FlowResult r;
  setPaths(r, workDir, stem, tag);

  // 1. Import.
  const std::vector<std::vector<int64_t>> &shapes =
      options.stageShapes.size() == 1 ? options.stageShapes.front() : options.inputShapes;
  TPU_RETURN_IF_ERROR(importModel(options, shapes, r.topPath, log));

  mlir::MLIRContext context;
  context.getOrLoadDialect<tpuir::TpuDialect>();
  auto topModule = top::loadTopModule(context, r.topPath);
  if (!topModule) return makeError(topModule.message());
  auto reader = calib::SampleReader::forModule(**topModule);
  if (!reader) return makeError(r.topPath, ": ", reader.message());
  r.inputPath = options.testInput;
  if (testImage) {
    inputs = reader->fromImage(*image, options.testInput);
    if (!inputs) return inputs.status();
    r.inputPath = join(workDir, stem + "_in.npz");
    TPU_RETURN_IF_ERROR(writeNpz(r.inputPath, *inputs));
  }

  // 2. Calibrate (INT8).
  if (int8) {
    auto samples = calib::loadSamples(*reader, options.calibrationData, "", options.inputNum,
                                      [&](const std::string &w) { log << "flow: warning: " << w << "\n"; });
    if (!samples) return makeError(samples.message());
    r.caliPath = join(workDir, stem + ".cali");
    TPU_RETURN_IF_ERROR(
        calibrateTable(options, **topModule, *samples, r.caliPath, workDir, /*sampleFreeWeights=*/false, r, log));
  }

  // 3. Deploy: Tpu module + bmodel.
  auto deployed = deployStage(options, r, log);
  if (!deployed) return deployed.status();
  r.keptF32 = deployed->keptF32;

  // 4.-8. Run, compare, flow.json.
  TPU_RETURN_IF_ERROR(runAndCompare(options, r, context, **topModule, *inputs, *deployed, r.bmodelPath,
                                    r.caliPath.empty() ? "" : llvm::sys::path::filename(r.caliPath).str(), log));
  return r;
}

namespace {

void formatAccuracy(std::ostream &os, const FlowResult &r) {
  os << "accuracy:\n";
  for (const StageComparison &c : r.comparisons) {
    double minCos = 1, minEuc = 1;
    for (const kernels::CompareRow &row : c.report.rows) {
      minCos = std::min(minCos, row.stats.cosine);
      minEuc = std::min(minEuc, row.stats.euclidean);
    }
    os << "  " << std::left << std::setw(14) << (c.reference + " vs " + c.candidate) << std::right << std::fixed
       << std::setprecision(6) << " cosine " << minCos << " euclid " << minEuc << " (need "
       << std::setprecision(2) << c.tolerance.minCosine << "/" << c.tolerance.minEuclidean << ")";
    if (c.bitExactRequired || c.bitExact) os << (c.bitExact ? ", bit-equal" : ", NOT bit-equal");
    os << (c.pass() ? "  PASS" : "  FAIL") << "\n";
    for (const kernels::CompareRow &row : c.report.rows)
      if (!row.pass)
        os << "    " << row.name << ": cosine " << std::setprecision(6) << row.stats.cosine << " euclid "
           << row.stats.euclidean << "\n";
  }
  os << std::defaultfloat << std::setprecision(6);
}

void formatRecipe(std::ostream &os, const FlowResult &r) {
  if (r.int8Recipe.empty()) return;
  os << "int8 recipe: " << r.int8Recipe << "\n";
  os << "float layers: " << r.keptF32.size() << (r.keptF32.empty() ? "" : ":") << "\n";
  for (const std::string &k : r.keptF32) os << "  " << k << "\n";
}

// A stage's own files (all of them for a single-stage flow).
void formatFiles(std::ostream &os, const FlowResult &r, bool withShared) {
  os << "  top      " << r.topPath << "\n";
  if (withShared && !r.caliPath.empty()) os << "  cali     " << r.caliPath << "\n";
  if (r.inputPath != "") os << "  input    " << r.inputPath << "\n";
  os << "  tpu      " << r.tpuPath << "\n";
  os << "  bmodel   " << r.bmodelPath << (withShared ? "" : " (this stage alone)") << "\n";
  os << "  outputs  " << r.topOutputs << " " << r.tpuOutputs << " " << r.bmodelOutputs << "\n";
  os << "  trace    " << r.tracePath << "\n";
  os << "  stats    " << r.statsPath << "\n";
  os << "  report   " << r.reportPath << "\n";
  os << "  graph    " << r.graphPath << "\n";
  os << "  manifest " << r.manifestPath << "\n";
}

} // namespace

std::string formatFlowSummary(const FlowResult &r) {
  std::ostringstream os;
  os << "== flow summary ==\n";
  if (r.stages.empty()) {
    formatAccuracy(os, r);
    formatRecipe(os, r);
    os << runtime::formatRunReport(r.sim);
    os << "files:\n";
    formatFiles(os, r, /*withShared=*/true);
    os << (r.pass() ? "flow: PASS\n" : "flow: FAIL\n");
    return os.str();
  }
  os << "stages: " << r.stages.size() << " in one bmodel (shared weights):";
  for (size_t i = 0; i < r.stages.size(); ++i)
    os << (i ? "; " : " ") << r.stages[i].stageName << " " << stageShapesText(r.stages[i].stageInputShapes);
  os << "\n";
  formatRecipe(os, r);
  for (const FlowResult &stage : r.stages) {
    os << "== " << stage.stageName << " " << stageShapesText(stage.stageInputShapes)
       << (stage.pass() ? ": PASS" : ": FAIL") << " ==\n";
    formatAccuracy(os, stage);
    os << runtime::formatRunReport(stage.sim);
  }
  os << "files:\n";
  os << "  bmodel   " << r.bmodelPath << " (" << r.stages.size() << " stages)\n";
  if (!r.caliPath.empty()) os << "  cali     " << r.caliPath << " (every stage)\n";
  os << "  manifest " << r.manifestPath << "\n";
  for (const FlowResult &stage : r.stages) {
    os << stage.stageName << ":\n";
    formatFiles(os, stage, /*withShared=*/false);
  }
  os << (r.pass() ? "flow: PASS\n" : "flow: FAIL\n");
  return os.str();
}

} // namespace tpu::flow
