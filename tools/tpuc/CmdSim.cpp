// tpuc sim: run a bmodel on the simulated BM1684 (timed SystemC model by
// default, or the functional backend) — wiring only; the work is in
// runtime/RunFiles.h.
#include "support/ArgParser.h"
#include "tools/tpuc/BmodelRunArgs.h"
#include "tools/tpuc/Subcommand.h"

#include <iostream>

namespace {

int runSim(int argc, char **argv) {
  tpu::ArgParser args("sim", "model.bmodel --input in.npz -o out.npz [options]");
  args.positionals(1, 1, "model.bmodel");
  args.option("--input", "input tensors (.npz, one member per net input)", "-i");
  args.option("--output", "where to write the output tensors (.npz, float32)", "-o");
  tpuc::declareBmodelRunOptions(args);
  if (auto st = args.parse(argc, argv); !st) return tpuc::fail("sim", st.message());
  if (args.helpRequested()) {
    std::cout << args.help();
    return tpuc::kExitOk;
  }
  if (!args.has("--input")) return tpuc::fail("sim", "missing --input in.npz");
  if (!args.has("--output")) return tpuc::fail("sim", "missing -o out.npz");

  return tpuc::runBmodelFromArgs("sim", args, args.args()[0]);
}

tpuc::RegisterSubcommand registerSim("sim", "run a bmodel on the simulated BM1684 (sim or func backend)",
                                     runSim);

} // namespace
