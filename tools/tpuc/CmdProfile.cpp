// tpuc profile: stats (and trace) of a timed run, or a bmodel run timed here
// (any chip the simulator runs) -> one self-contained HTML report — wiring
// only; the work is in tools/explore/ProfileReport.h.
#include "tools/explore/ProfileReport.h"
#include "tools/tpuc/Subcommand.h"
#include "tools/tpuc/SubcommandArgs.h"

namespace {

bool isBmodel(const std::string &path) { return path.size() >= 7 && path.compare(path.size() - 7, 7, ".bmodel") == 0; }

int runProfile(int argc, char **argv) {
  tpuc::SubcommandArgs args("profile", "stats.json [--trace trace.json] -o report.html | "
                                       "model.bmodel --input in.npz [--net N] [--config hw.json] -o report.html");
  args.positionals(1, 1, "stats.json or model.bmodel");
  args.option("--trace", "the run's Chrome trace (tpuc sim --trace): adds per-command TIU/GDMA rows");
  args.option("--input", "a bmodel: the inputs (.npz) of the timed run the report shows");
  args.option("--net", "a bmodel: the net to run (default: its only net)");
  args.option("--config", "a bmodel: HwConfig keys over its chip's preset (JSON)");
  args.option("--output", "the HTML report to write", "-o");
  if (auto done = args.parseCommandLine(argc, argv, {{"--output", "-o report.html"}})) return *done;
  const std::string &in = args.args()[0];
  tpu::Status st;
  if (isBmodel(in)) {
    if (args.has("--trace")) return tpuc::fail("profile", "--trace: a bmodel's run records its own trace");
    if (!args.has("--input")) return tpuc::fail("profile", "missing --input in.npz (the inputs of the bmodel's run)");
    st = tpu::explore::writeBmodelProfileReport(in, args.get("--net"), args.get("--input"), args.get("--config"),
                                                args.get("--output"));
  } else {
    for (const char *o : {"--input", "--net", "--config"})
      if (args.has(o)) return tpuc::fail("profile", std::string(o) + " applies to a bmodel, not to a stats file");
    st = tpu::explore::writeProfileReport(in, args.get("--trace"), args.get("--output"));
  }
  if (!st) return tpuc::fail("profile", st.message());
  return tpuc::kExitOk;
}

tpuc::RegisterSubcommand registerProfile("profile", "render a timed run's stats as a self-contained HTML report",
                                         runProfile);

} // namespace
