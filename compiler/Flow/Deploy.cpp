#include "compiler/Flow/Deploy.h"

#include "compiler/Backend/BM1684X/CodeGen.h"
#include "compiler/Backend/CodeGen.h"
#include "compiler/Calibration/Calibrator.h"
#include "compiler/Dialect/Top/TopOps.h"
#include "compiler/Dialect/Tpu/TpuOps.h"
#include "compiler/Export/TpuToGraph.h"
#include "compiler/Interpreter/TopInterpreter.h"
#include "compiler/TpuInterpreter/TpuInterpreter.h"
#include "isa/chips/Registry.h"
#include "kernels/Compare.h"
#include "runtime/Runtime.h"
#include "runtime/bm1684x/FuncRun.h"

#include "mlir/IR/OperationSupport.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

namespace tpu::flow {

namespace {

std::string stemOf(const std::string &bmodelPath) {
  llvm::StringRef p(bmodelPath);
  if (p.ends_with(".bmodel")) p = p.drop_back(7);
  return p.str();
}

Status writeModule(mlir::ModuleOp module, const std::string &path) {
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec);
  if (ec) return makeError(path, ": cannot write: ", ec.message());
  // Locations carry the tensor names: keep them.
  module->print(out, mlir::OpPrintingFlags().enableDebugInfo(true, false));
  return Status::ok();
}

// Largest |a - b| over outputs, or -1 when every byte agrees.
double bitDifference(const NpzMap &a, const NpzMap &b, std::string &where) {
  double worst = -1;
  for (const auto &[name, x] : a) {
    auto it = b.find(name);
    if (it == b.end() || it->second.data.size() != x.data.size()) {
      where = name;
      return std::numeric_limits<double>::infinity();
    }
    if (std::memcmp(x.data.data(), it->second.data.data(), x.data.size()) == 0) continue;
    auto fa = x.toFloat(), fb = it->second.toFloat();
    for (size_t i = 0; i < fa.size(); ++i) {
      double d = std::fabs(double(fa[i]) - double(fb[i]));
      if (d > worst || (d != d)) worst = d, where = name;
    }
    if (worst < 0) worst = 0, where = name; // same values, different bits (-0.0, NaN payloads)
  }
  return worst;
}

// What deploy does for each chip: compile the graph to a bmodel, and run that bmodel on the chip's
// functional semantics for --test-input.
struct ChipTarget {
  isa::Chip chip;
  std::initializer_list<lowering::Quantize> modes; // what the chip's compiler takes
  Status (*compile)(const backend::Graph &graph, const DeployOptions &options, std::ostream &log);
  Result<NpzMap> (*runFunc)(const std::string &bmodelPath, const std::string &net, const NpzMap &inputs);
};

Status compileBm1684(const backend::Graph &graph, const DeployOptions &options, std::ostream &log) {
  backend::Options bo;
  bo.layerGroups = options.layerGroup;
  backend::CompileReport report;
  TPU_RETURN_IF_ERROR(backend::writeBmodel(graph, bo, options.output, &report));
  log << report.text();
  if (options.layerGroup) {
    auto gain = backend::layerGroupGain(graph, bo, report);
    if (!gain) return makeError(gain.message());
    log << *gain << "\n";
  }
  return Status::ok();
}

Result<NpzMap> runBm1684(const std::string &bmodelPath, const std::string &net, const NpzMap &inputs) {
  auto rt = runtime::Runtime::create(isa::HwConfig{}, runtime::BackendKind::Func);
  if (!rt) return rt.status();
  TPU_RETURN_IF_ERROR((*rt)->loadBmodel(bmodelPath));
  runtime::RunReport report;
  return (*rt)->run(net, inputs, runtime::RunOptions{}, report);
}

Status compileBm1684x(const backend::Graph &graph, const DeployOptions &options, std::ostream &log) {
  backend::bm1684x::CompileReport report;
  TPU_RETURN_IF_ERROR(backend::bm1684x::writeBmodel(graph, options.output, &report));
  log << "deploy: BM1684X: " << report.tiuCommands << " TIU + " << report.dmaCommands << " DMA commands, "
      << report.coeffBytes << " coefficient bytes, " << report.neuronBytes << " neuron bytes\n";
  return Status::ok();
}

using lowering::Quantize;
const ChipTarget kTargets[] = {
    {isa::Chip::BM1684, {Quantize::F32, Quantize::INT8}, compileBm1684, runBm1684},
    {isa::Chip::BM1684X,
     {Quantize::F32, Quantize::F16, Quantize::BF16, Quantize::INT8},
     compileBm1684x,
     runtime::bm1684x::runFuncFile},
};

} // namespace

Result<DeployResult> deploy(const std::string &topPath, const DeployOptions &options, std::ostream &log) {
  auto chip = isa::parseCompilerChip(options.chip);
  if (!chip) return chip.status();
  const ChipTarget &target =
      *std::find_if(std::begin(kTargets), std::end(kTargets), [&](const ChipTarget &t) { return t.chip == *chip; });
  if (std::find(target.modes.begin(), target.modes.end(), options.mode) == target.modes.end()) {
    std::string modes;
    for (lowering::Quantize m : target.modes)
      modes += std::string(modes.empty() ? "" : ", ") + lowering::quantizeName(m);
    return makeError("--chip ", options.chip, " takes --quantize ", modes, ", not ",
                     lowering::quantizeName(options.mode));
  }
  if (options.output.empty()) return makeError("missing -o model.bmodel");
  lowering::LoweringOptions lo;
  lo.mode = options.mode;
  lo.cpuOps = options.cpuSubnets;
  if (options.calibrationTable.empty() && options.mode == lowering::Quantize::INT8)
    return makeError("--quantize INT8 needs --calibration-table model.cali");
  calib::CalibrationTable table;
  TPU_RETURN_IF_ERROR(lowering::loadLoweringTables(options.calibrationTable, options.quantizeTable, table, lo));
  if (!lo.keepHalf.empty()) { // a mixed table: its 16-bit float islands need the chip's 16-bit floats
    if (options.mode != lowering::Quantize::INT8)
      return makeError(options.quantizeTable, ": F16/BF16 tensors in a quantize table need --quantize INT8");
    if (std::find(target.modes.begin(), target.modes.end(), lo.halfType) == target.modes.end())
      return makeError(options.quantizeTable, ": ", lowering::quantizeName(lo.halfType), " tensors, but --chip ",
                       options.chip, " has no ", lowering::quantizeName(lo.halfType), " arithmetic");
  }

  mlir::MLIRContext context;
  context.getOrLoadDialect<tpuir::TpuDialect>();
  auto module = top::loadTopModule(context, topPath);
  if (!module) return makeError(module.message());
  const std::string stem = stemOf(options.output);
  Int8Recipe recipe;
  if (options.mode == lowering::Quantize::INT8) {
    std::string from;
    auto r = deploymentRecipe(options.levers, options.recipe, table, options.calibrationTable, &from);
    if (!r) return r.status();
    recipe = r.take();
    log << "deploy: INT8 recipe: " << recipe.text() << " (from " << from << ")\n";
    lo.keepF32.insert(recipe.floatTensors.begin(), recipe.floatTensors.end());
    llvm::SmallString<256> equalized(stem + "_top_equalized.npz");
    if (std::error_code ec = llvm::sys::fs::make_absolute(equalized))
      return makeError(equalized.str().str(), ": ", ec.message());
    if (auto st = applyTopRecipe(**module, recipe, equalized.str().str()); !st)
      return makeError(topPath, ": ", st.message());
  }
  auto weights = top::WeightStore::loadFor(**module);
  if (!weights) return makeError(topPath, ": ", weights.message());
  lo.levers = recipe.levers;
  lowering::TensorSamples convInputs;
  if (options.mode == lowering::Quantize::INT8 && recipe.levers.needSamples()) {
    if (options.weightData.empty())
      return makeError(
          "the INT8 recipe '", recipe.text(),
          "' corrects weights on samples (bias-correction, round-weights): it needs --calibration-data DIR");
    auto reader = calib::SampleReader::forModule(**module);
    if (!reader) return makeError(topPath, ": ", reader.message());
    auto samples = calib::loadSamples(*reader, options.weightData, "", options.weightSamples,
                                      [&](const std::string &w) { log << "deploy: warning: " << w << "\n"; });
    if (!samples) return makeError(samples.message());
    auto values = lowering::convInputSamples(**module, *samples);
    if (!values) return makeError(options.weightData, ": ", values.message());
    convInputs = values.take();
    lo.samples = &convInputs;
    log << "deploy: conv weights " << (recipe.levers.roundWeights ? "rounded" : "bias-corrected") << " on "
        << samples->size() << " sample(s)\n";
  }
  auto lowered = lowering::lowerToTpu(**module, *weights, lo);
  if (!lowered) return makeError(topPath, ": ", lowered.message());
  for (const std::string &f : lowered->fallbacks) log << "deploy: kept in F32: " << f << "\n";
  for (const std::string &h : lowered->hostOps) log << "deploy: on the host (CPU sub-net): " << h << "\n";

  const std::string tpuPath = stem + ".tpu.mlir", weightPath = stem + "_tpu_weights.npz";
  TPU_RETURN_IF_ERROR(
      lowered->weights.saveFor(*lowered->module, weightPath, llvm::sys::path::filename(weightPath).str()));
  TPU_RETURN_IF_ERROR(writeModule(*lowered->module, tpuPath));
  log << "deploy: wrote " << tpuPath << " and " << weightPath << "\n";

  auto graph = exporter::toGraph(*lowered->module, lowered->weights.arrays());
  if (!graph) return makeError(tpuPath, ": ", graph.message());
  graph->name = llvm::sys::path::stem(llvm::sys::path::filename(stem)).str();
  if (graph->name.empty()) graph->name = "net";
  TPU_RETURN_IF_ERROR(target.compile(*graph, options, log));
  log << "deploy: wrote " << options.output << "\n";

  DeployResult result;
  result.recipe = recipe;
  for (const std::string &name : lo.keepF32)
    result.keptF32.push_back(name + (std::count(recipe.floatTensors.begin(), recipe.floatTensors.end(), name)
                                         ? ": in the INT8 recipe"
                                         : ": in the quantize table"));
  result.keptF32.insert(result.keptF32.end(), lowered->fallbacks.begin(), lowered->fallbacks.end());
  if (options.testInput.empty()) return result;
  result.tested = true;
  auto inputs = readNpz(options.testInput);
  if (!inputs) return makeError(inputs.message());
  auto outputs = target.runFunc(options.output, graph->name, *inputs);
  if (!outputs) return makeError(options.testInput, ": ", outputs.message());
  auto interp = tpuinterp::TpuInterpreter::create(std::move(*graph));
  if (!interp) return makeError(interp.message());
  auto expected = (*interp)->run(*inputs);
  if (!expected) return makeError(options.testInput, ": ", expected.message());
  std::string where;
  double diff = bitDifference(*expected, *outputs, where);
  result.bitExact = diff < 0;
  if (result.bitExact)
    log << "deploy: bmodel outputs equal the Tpu interpreter's bit for bit\n";
  else
    log << "deploy: bmodel differs from the Tpu interpreter: max |diff| " << diff << " in '" << where << "'\n";
  if (!options.testReference.empty()) {
    auto ref = readNpz(options.testReference);
    if (!ref) return makeError(ref.message());
    kernels::CompareOptions co;
    const bool f32 = options.mode == lowering::Quantize::F32;
    co.minCosine = options.minCosine > 0 ? options.minCosine : f32 ? 0.9999 : 0.99;
    co.minEuclidean = f32 ? 0.99 : 0.5;
    auto cmp = kernels::compareArchives(*ref, *outputs, co);
    if (!cmp) return makeError(options.testReference, ": ", cmp.message());
    log << kernels::formatReport(*cmp, co);
    result.referencePass = cmp->allPass();
  }
  return result;
}

} // namespace tpu::flow
