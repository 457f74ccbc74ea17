// tpuc import: ONNX model -> Top dialect .mlir + weight .npz — wiring only;
// the work is in compiler/Import/OnnxImporter.h.
#include "compiler/Import/OnnxImporter.h"
#include "compiler/Preprocess/PreprocessAttr.h"
#include "support/ArgParser.h"
#include "tools/tpuc/CalibArgs.h"
#include "tools/tpuc/Subcommand.h"

#include <iostream>
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
  tpu::ArgParser args("import", "tpuc import model.onnx [--input-shapes \"[[1,3,224,224]]\"] "
                                "[--output-names a,b] [--mean m --scale s --pixel-format rgb|bgr|gray "
                                "--channel-format nchw|nhwc --resize-dims h,w --keep-aspect-ratio] -o model.top.mlir");
  args.positionals(1, 1, "model.onnx");
  args.option("--output", "the Top dialect .mlir to write; the weights go beside it as <name>_weights.npz", "-o");
  args.option("--input-shapes", "shapes of the model inputs, in order, e.g. [[1,3,224,224],[1,10]]; required "
                                "when an input has dynamic dimensions");
  args.option("--output-names", "comma-separated tensor names to return instead of the graph outputs");
  args.flag("--no-canonicalize", "keep the op-per-node form (no conv+relu fusion etc.)");
  tpuc::declarePreprocessOptions(args);
  if (auto st = args.parse(argc, argv); !st) return tpuc::fail("import", st.message());
  if (args.helpRequested()) {
    std::cout << args.help();
    return tpuc::kExitOk;
  }
  if (!args.has("--output")) return tpuc::fail("import", "missing -o model.top.mlir");
  tpu::onnx::ImportOptions options;
  if (args.has("--input-shapes")) {
    auto shapes = tpu::onnx::parseShapeList(args.get("--input-shapes"));
    if (!shapes) return tpuc::fail("import", shapes.message());
    options.inputShapes = shapes.take();
  }
  options.outputNames = splitNames(args.get("--output-names"));
  options.canonicalize = !args.isSet("--no-canonicalize");
  auto preprocess = tpuc::preprocessFromArgs(args);
  if (!preprocess) return tpuc::fail("import", preprocess.message());
  if (*preprocess)
    options.annotateModule = [config = **preprocess](mlir::ModuleOp m) { tpu::preprocess::recordConfig(m, config); };
  auto st = tpu::onnx::importOnnxFile(args.args()[0], args.get("--output"), options);
  if (!st) return tpuc::fail("import", st.message());
  return tpuc::kExitOk;
}

tpuc::RegisterSubcommand registerImport("import", "convert an ONNX model to the Top dialect (.mlir + weights .npz)",
                                        runImport);

} // namespace
