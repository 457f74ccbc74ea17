// tpuc run: execute a Top-dialect model with the fp32 reference interpreter,
// a Tpu-dialect model with the Tpu interpreter, or a bmodel on the runtime
// (the same code as tpuc sim) — wiring only; the work is in
// compiler/Interpreter/TopInterpreter.h, compiler/TpuInterpreter and
// runtime/RunFiles.h.
#include "compiler/Calibration/Calibrator.h"
#include "compiler/Dialect/Tpu/TpuOps.h"
#include "compiler/Interpreter/TopInterpreter.h"
#include "compiler/TpuInterpreter/TpuInterpreter.h"
#include "support/Npz.h"
#include "support/Parallel.h"
#include "tools/tpuc/BmodelRunArgs.h"
#include "tools/tpuc/Subcommand.h"
#include "tools/tpuc/SubcommandArgs.h"

namespace {

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

int runRun(int argc, char **argv) {
  tpuc::SubcommandArgs args("run",
                            "model.top.mlir|model.tpu.mlir|model.bmodel --input in.npz|--image img.png -o out.npz "
                            "[--dump-all] [--backend sim|func] [--trace t.json] [--stats s.json] [--config hw.json]");
  args.positionals(1, 1, "model");
  args.option("--input", "npz with one array per model input, named like the inputs", "-i");
  args.option("--image", "an image (.png, .jpg, .bmp) made into the input by the module's preprocessing "
                         "(tpuc import --mean ...); .mlir models with one input");
  args.option("--output", "npz to write the outputs (named by the ONNX output names) to", "-o");
  args.flag("--dump-all", "write every intermediate tensor too, named by its ONNX tensor name");
  args.option("--threads", "host threads for the interpreter kernels and the simulator's commands (default: all cores; results do not depend on it)");
  tpuc::declareBmodelRunOptions(args);
  if (auto done = args.parseCommandLine(argc, argv)) return *done;
  const std::string &modelPath = args.args()[0];
  if (args.has("--input") == args.has("--image")) return tpuc::fail("run", "give one of --input in.npz and --image img.png");
  if (!args.has("--output")) return tpuc::fail("run", "missing -o out.npz");
  const bool bmodel = endsWith(modelPath, ".bmodel");
  for (const char *const *flag = tpuc::bmodelRunOptionNames(); *flag; ++flag)
    if (!bmodel && args.has(*flag)) return tpuc::fail("run", std::string(*flag) + " applies to .bmodel files only");
  auto threads = args.getInt("--threads", 0);
  if (!threads) return tpuc::fail("run", threads.message());
  if (*threads < 0 || *threads > 1024) return tpuc::fail("run", "--threads must be between 1 and 1024");
  if (*threads > 0) tpu::setNumThreads(static_cast<int>(*threads));
  if (bmodel) {
    if (args.isSet("--dump-all")) return tpuc::fail("run", "--dump-all applies to .mlir models only");
    if (args.has("--image"))
      return tpuc::fail("run", "--image applies to .mlir models only (a bmodel does not record the preprocessing)");
    return tpuc::runBmodelFromArgs("run", args, modelPath);
  }

  mlir::MLIRContext context;
  context.getOrLoadDialect<tpuir::TpuDialect>();
  auto module = top::loadTopModule(context, modelPath);
  if (!module) return tpuc::fail("run", module.message());
  const std::string inputPath = args.has("--image") ? args.get("--image") : args.get("--input");
  auto readInputs = [&]() -> tpu::Result<tpu::NpzMap> {
    if (!args.has("--image")) return tpu::readNpz(inputPath);
    auto reader = tpu::calib::SampleReader::forModule(**module);
    if (!reader) return tpu::makeError(modelPath, ": ", reader.message());
    return reader->read(inputPath);
  };
  auto inputs = readInputs();
  if (!inputs) return tpuc::fail("run", inputs.message());
  // A Tpu-dialect module runs on the Tpu interpreter (the chip's arithmetic).
  if (tpu::tpuinterp::isTpuModule(**module)) {
    auto tpuInterp = tpu::tpuinterp::TpuInterpreter::create(**module);
    if (!tpuInterp) return tpuc::fail("run", modelPath + ": " + tpuInterp.message());
    auto outputs = (*tpuInterp)->run(*inputs, args.isSet("--dump-all"));
    if (!outputs) return tpuc::fail("run", inputPath + ": " + outputs.message());
    if (auto st = tpu::writeNpz(args.get("--output"), *outputs); !st) return tpuc::fail("run", st.message());
    return tpuc::kExitOk;
  }
  auto interp = top::TopInterpreter::create(**module);
  if (!interp) return tpuc::fail("run", modelPath + ": " + interp.message());
  auto outputs = (*interp)->run(*inputs, args.isSet("--dump-all"));
  if (!outputs) return tpuc::fail("run", inputPath + ": " + outputs.message());
  if (auto st = tpu::writeNpz(args.get("--output"), *outputs); !st) return tpuc::fail("run", st.message());
  return tpuc::kExitOk;
}

tpuc::RegisterSubcommand registerRun("run", "run a Top/Tpu-dialect model (interpreters) or a bmodel (runtime, sim or func)",
                                     runRun);

} // namespace
