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
#include "runtime/RunFiles.h"
#include "support/Npz.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cmath>
#include <iomanip>
#include <sstream>

namespace tpu::flow {

bool StageComparison::pass() const { return report.allPass() && (!bitExactRequired || bitExact); }

bool FlowResult::pass() const {
  for (const StageComparison &c : comparisons)
    if (!c.pass()) return false;
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

Result<FlowResult> runFlow(const FlowOptions &options, std::ostream &log) {
  const bool int8 = options.mode == lowering::Quantize::INT8;
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
  std::optional<preprocess::Image> image;
  if (testImage) {
    auto decoded = preprocess::decodeImageFile(options.testInput);
    if (!decoded) return decoded.status();
    image = decoded.take();
  } else {
    inputs = readNpz(options.testInput);
    if (!inputs) return makeError(inputs.message());
  }
  if (!int8 && !options.quantizeTable.empty()) return makeError("--quantize-table is only used with --quantize INT8");
  if (!options.quantizeTable.empty())
    if (auto table = lowering::loadQuantizeTable(options.quantizeTable); !table) return makeError(table.message());
  if (int8)
    if (auto files = calib::listSampleFiles(options.calibrationData); !files) return files.status();

  const std::string stem = modelStem(options.modelPath);
  const std::string workDir = options.workDir.empty() ? stem + "_flow" : options.workDir;
  if (std::error_code ec = llvm::sys::fs::create_directories(workDir))
    return makeError(workDir, ": cannot create the work directory: ", ec.message());
  const std::string tag = stem + (int8 ? "_int8" : "_f32");
  FlowResult r;
  r.topPath = join(workDir, stem + ".top.mlir");
  r.bmodelPath = join(workDir, tag + ".bmodel");
  r.tpuPath = join(workDir, tag + ".tpu.mlir"); // deploy writes it beside the bmodel
  r.topOutputs = join(workDir, stem + "_top_outputs.npz");
  r.tpuOutputs = join(workDir, tag + "_tpu_outputs.npz");
  r.bmodelOutputs = join(workDir, tag + "_bmodel_outputs.npz");
  r.tracePath = join(workDir, tag + "_trace.json");
  r.statsPath = join(workDir, tag + "_stats.json");
  r.reportPath = join(workDir, tag + "_report.html");
  r.graphPath = join(workDir, "graph.html");
  r.manifestPath = join(workDir, kFlowManifestName);

  // 1. Import.
  log << "flow: import " << options.modelPath << " -> " << r.topPath << "\n";
  std::function<void(mlir::ModuleOp)> annotate;
  if (options.preprocess)
    annotate = [&](mlir::ModuleOp m) { preprocess::recordConfig(m, *options.preprocess); };
  if (tflite::isTfliteModel(options.modelPath)) {
    tflite::ImportOptions io;
    io.inputShapes = options.inputShapes;
    io.annotateModule = annotate;
    TPU_RETURN_IF_ERROR(tflite::importTfliteFile(options.modelPath, r.topPath, io));
  } else {
    onnx::ImportOptions io;
    io.inputShapes = options.inputShapes;
    io.annotateModule = annotate;
    TPU_RETURN_IF_ERROR(onnx::importOnnxFile(options.modelPath, r.topPath, io));
  }

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
    log << "flow: calibrate over " << samples->size() << " sample(s) -> " << r.caliPath << "\n";
    Result<calib::CalibrationTable> table = makeError("no table");
    if (options.recipe.kind == RecipeChoice::Kind::Auto) {
      RecipeSearchOptions ro;
      ro.calibration = options.calibration;
      ro.fixed = options.levers;
      ro.budgetSeconds = options.int8Budget;
      ro.scratchDir = workDir;
      ro.expectedCos = options.expectedCos;
      ro.maxFloatLayers = options.quantizeTable.empty() ? options.maxFloatLayers : 0;
      auto found = searchInt8Recipe(**topModule, *samples, ro, log);
      if (!found) return makeError(options.calibrationData, ": ", found.message());
      r.int8Recipe = "auto: " + found->summary();
      table = std::move(found->table);
    } else {
      const Int8Recipe recipe = options.recipe.fixedRecipe(options.levers);
      // The max check and the per-tensor search lower as the deploy below does.
      auto made = calibrateWithRecipe(**topModule, *samples, options.calibration, recipe, workDir);
      if (!made) return makeError(options.calibrationData, ": ", made.message());
      table = std::move(made->front());
      r.int8Recipe =
          recipe.text() + (options.recipe.kind == RecipeChoice::Kind::File ? " (from " + options.recipe.file + ")"
                                                                           : " (--int8-recipe none: the lever flags)");
    }
    TPU_RETURN_IF_ERROR(table->save(r.caliPath));
  }

  // 3. Deploy: Tpu module + bmodel.
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
  r.keptF32 = deployed->keptF32;

  // 4. Top interpreter: the fp32 reference of the ONNX model.
  log << "flow: Top interpreter\n";
  auto topInterp = top::TopInterpreter::create(**topModule);
  if (!topInterp) return makeError(r.topPath, ": ", topInterp.message());
  // Every tensor, for the per-tensor comparison in flow.json.
  auto topAll = (*topInterp)->run(*inputs, /*dumpAll=*/true);
  if (!topAll) return makeError(options.testInput, ": ", topAll.message());
  std::vector<std::string> topNames;
  for (const top::TensorInfo &t : (*topInterp)->outputs()) topNames.push_back(t.name);
  auto topOut = selectArrays(*topAll, topNames);
  if (!topOut) return makeError(r.topPath, ": ", topOut.message());
  TPU_RETURN_IF_ERROR(writeNpz(r.topOutputs, *topOut));

  // 5. Tpu interpreter: the chip's arithmetic.
  log << "flow: Tpu interpreter\n";
  auto tpuModule = top::loadTopModule(context, r.tpuPath);
  if (!tpuModule) return makeError(tpuModule.message());
  auto tpuInterp = tpuinterp::TpuInterpreter::create(**tpuModule);
  if (!tpuInterp) return makeError(r.tpuPath, ": ", tpuInterp.message());
  auto tpuAll = (*tpuInterp)->run(*inputs, /*dumpAll=*/true);
  if (!tpuAll) return makeError(options.testInput, ": ", tpuAll.message());
  std::vector<std::string> tpuNames;
  for (int id : (*tpuInterp)->graph().outputs) tpuNames.push_back((*tpuInterp)->graph().tensors[size_t(id)].name);
  auto tpuOut = selectArrays(*tpuAll, tpuNames);
  if (!tpuOut) return makeError(r.tpuPath, ": ", tpuOut.message());
  TPU_RETURN_IF_ERROR(writeNpz(r.tpuOutputs, *tpuOut));

  // 6. The bmodel on the timed simulator, with trace and stats.
  log << "flow: bmodel on the sim backend\n";
  runtime::RunFilesRequest request;
  request.bmodelPath = r.bmodelPath;
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
    manifest.int8Recipe = deployed->recipe.text();
    manifest.int8RecipeChoice = r.int8Recipe;
    manifest.keptF32 = r.keptF32;
  }
  const std::vector<std::pair<std::string, std::string>> files = {
      {"top", r.topPath},     {"cali", r.caliPath},   {"tpu", r.tpuPath},       {"bmodel", r.bmodelPath},
      {"stats", r.statsPath}, {"trace", r.tracePath}, {"report", r.reportPath}, {"graph", r.graphPath}};
  for (const auto &[role, file] : files)
    if (!file.empty()) manifest.files[role] = llvm::sys::path::filename(file).str();
  const kernels::CompareOptions everyTensor = topVsTpuTolerance(options.mode);
  manifest.comparisons.push_back({"top", "tpu", everyTensor.minCosine, everyTensor.minEuclidean,
                                  compareCommonTensors(*topAll, *tpuAll, everyTensor)});
  for (size_t i = 1; i < r.comparisons.size(); ++i) {
    const StageComparison &c = r.comparisons[i];
    manifest.comparisons.push_back(
        {c.reference, c.candidate, c.tolerance.minCosine, c.tolerance.minEuclidean, c.report.rows});
  }
  TPU_RETURN_IF_ERROR(runtime::writeFileAtomically(r.manifestPath, manifestJson(manifest)));
  return r;
}

std::string formatFlowSummary(const FlowResult &r) {
  std::ostringstream os;
  os << "== flow summary ==\n";
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
  if (!r.int8Recipe.empty()) {
    os << "int8 recipe: " << r.int8Recipe << "\n";
    os << "float layers: " << r.keptF32.size() << (r.keptF32.empty() ? "" : ":") << "\n";
    for (const std::string &k : r.keptF32) os << "  " << k << "\n";
  }
  os << runtime::formatRunReport(r.sim);
  os << "files:\n";
  os << "  top      " << r.topPath << "\n";
  if (!r.caliPath.empty()) os << "  cali     " << r.caliPath << "\n";
  if (r.inputPath != "") os << "  input    " << r.inputPath << "\n";
  os << "  tpu      " << r.tpuPath << "\n";
  os << "  bmodel   " << r.bmodelPath << "\n";
  os << "  outputs  " << r.topOutputs << " " << r.tpuOutputs << " " << r.bmodelOutputs << "\n";
  os << "  trace    " << r.tracePath << "\n";
  os << "  stats    " << r.statsPath << "\n";
  os << "  report   " << r.reportPath << "\n";
  os << "  graph    " << r.graphPath << "\n";
  os << "  manifest " << r.manifestPath << "\n";
  os << (r.pass() ? "flow: PASS\n" : "flow: FAIL\n");
  return os.str();
}

} // namespace tpu::flow
