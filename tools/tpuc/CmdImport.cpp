// tpuc import: ONNX or TFLite model -> Top dialect .mlir + weight .npz — wiring
// only; the work is in compiler/Import/OnnxImporter.h and
// compiler/Import/tflite/TfliteImporter.h (chosen by the file's content).
#include "compiler/Import/OnnxImporter.h"
#include "compiler/Import/tflite/TfliteImporter.h"
#include "compiler/Preprocess/PreprocessAttr.h"
#include "tools/tpuc/CalibArgs.h"
#include "tools/tpuc/Subcommand.h"
#include "tools/tpuc/SubcommandArgs.h"

#include <sstream>

namespace {

std::vector<std::string> splitNames(const std::string &text) {
  std::vector<std::string> names;
  std::stringstream ss(text);
  for (std::string name; std::getline(ss, name, ',');)
    if (!name.empty()) names.push_back(name);
  return names;
}

int runImport(int argc, char **argv) {
  tpuc::SubcommandArgs args("import", "model.onnx|model.tflite [--input-shapes \"[[1,3,224,224]]\"] "
                                      "[--output-names a,b] [--emit-calibration m.cali] [--mean m --scale s "
                                      "--pixel-format rgb|bgr|gray --channel-format nchw|nhwc --resize-dims h,w "
                                      "--keep-aspect-ratio] -o model.top.mlir");
  args.positionals(1, 1, "model.onnx|model.tflite");
  args.option("--output", "the Top dialect .mlir to write; the weights go beside it as <name>_weights.npz", "-o");
  args.option("--input-shapes", "shapes of the model inputs, in order, e.g. [[1,3,224,224],[1,10]]; required "
                                "when an input has dynamic dimensions");
  args.option("--output-names", "comma-separated tensor names to return instead of the graph outputs");
  args.flag("--no-canonicalize", "keep the op-per-node form (no conv+relu fusion etc.)");
  args.option("--emit-calibration", "TFLite: write the quantized model's own activation ranges as a calibration table");
  tpuc::declarePreprocessOptions(args);
  if (auto done = args.parseCommandLine(argc, argv, {{"--output", "-o model.top.mlir"}})) return *done;
  std::vector<std::vector<int64_t>> inputShapes;
  if (args.has("--input-shapes")) {
    auto shapes = tpu::onnx::parseShapeList(args.get("--input-shapes"));
    if (!shapes) return tpuc::fail("import", shapes.message());
    inputShapes = shapes.take();
  }
  auto preprocess = tpuc::preprocessFromArgs(args);
  if (!preprocess) return tpuc::fail("import", preprocess.message());
  std::function<void(mlir::ModuleOp)> annotate;
  if (*preprocess)
    annotate = [config = **preprocess](mlir::ModuleOp m) { tpu::preprocess::recordConfig(m, config); };
  const std::string &model = args.args()[0];
  if (tpu::tflite::isTfliteModel(model)) {
    if (args.has("--output-names")) return tpuc::fail("import", "--output-names is not supported for TFLite models");
    tpu::tflite::ImportOptions options;
    options.inputShapes = inputShapes;
    options.canonicalize = !args.isSet("--no-canonicalize");
    options.calibrationPath = args.get("--emit-calibration");
    options.annotateModule = annotate;
    auto st = tpu::tflite::importTfliteFile(model, args.get("--output"), options);
    return st ? tpuc::kExitOk : tpuc::fail("import", st.message());
  }
  if (args.has("--emit-calibration")) return tpuc::fail("import", "--emit-calibration is only for TFLite models");
  tpu::onnx::ImportOptions options;
  options.inputShapes = inputShapes;
  options.outputNames = splitNames(args.get("--output-names"));
  options.canonicalize = !args.isSet("--no-canonicalize");
  options.annotateModule = annotate;
  auto st = tpu::onnx::importOnnxFile(model, args.get("--output"), options);
  if (!st) return tpuc::fail("import", st.message());
  return tpuc::kExitOk;
}

tpuc::RegisterSubcommand registerImport("import", "convert an ONNX or TFLite model to the Top dialect (.mlir + weights .npz)",
                                        runImport);

} // namespace
