// tpuc combine: bmodels of one net at several input shapes -> one bmodel with
// a multi-stage net (as TPU-MLIR's model_tool --combine) — wiring only; the
// work is in isa/bmodel/Bmodel.h (bmodel::combine) and docs/bmodel.md "Stages".
#include "isa/bmodel/Bmodel.h"
#include "runtime/RunFiles.h"
#include "tools/tpuc/Subcommand.h"
#include "tools/tpuc/SubcommandArgs.h"

namespace {

int runCombine(int argc, char **argv) {
  tpuc::SubcommandArgs args("combine", "a.bmodel b.bmodel [...] -o out.bmodel");
  args.positionals(2, tpu::bmodel::kMaxNets, "a.bmodel b.bmodel ...");
  args.option("--output", "the bmodel to write: equally named nets become the stages of one net", "-o");
  if (auto done = args.parseCommandLine(argc, argv, {{"--output", "-o out.bmodel"}})) return *done;
  auto bytes = tpu::bmodel::combineFiles(args.args());
  if (!bytes) return tpuc::fail("combine", bytes.message());
  // Nothing is written unless everything above succeeded; a failed write leaves no partial file.
  const std::string out = args.get("--output");
  if (auto st = tpu::runtime::writeFileAtomically(out, std::string(bytes->begin(), bytes->end())); !st)
    return tpuc::fail("combine", st.message());
  return tpuc::kExitOk;
}

tpuc::RegisterSubcommand
    registerCombine("combine", "join bmodels of one net at several input shapes into a multi-stage bmodel", runCombine);

} // namespace
