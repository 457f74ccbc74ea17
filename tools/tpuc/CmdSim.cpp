// tpuc sim: run a bmodel on the simulated BM1684 (timed SystemC model by
// default, or the functional backend) — wiring only; the work is in
// runtime/RunFiles.h.
#include "tools/tpuc/BmodelRunArgs.h"
#include "tools/tpuc/Subcommand.h"
#include "tools/tpuc/SubcommandArgs.h"

namespace {

int runSim(int argc, char **argv) {
  tpuc::SubcommandArgs args("sim", "model.bmodel --input in.npz -o out.npz [options]");
  args.positionals(1, 1, "model.bmodel");
  args.option("--input", "input tensors (.npz, one member per net input)", "-i");
  args.option("--output", "where to write the output tensors (.npz, float32)", "-o");
  tpuc::declareBmodelRunOptions(args);
  if (auto done = args.parseCommandLine(argc, argv, {{"--input", "--input in.npz"}, {"--output", "-o out.npz"}}))
    return *done;

  return tpuc::runBmodelFromArgs("sim", args, args.args()[0]);
}

tpuc::RegisterSubcommand registerSim("sim", "run a bmodel on the simulated BM1684 (sim or func backend)",
                                     runSim);

} // namespace
