// tpuc profile: stats (and trace) of a timed run -> one self-contained HTML
// report — wiring only; the work is in tools/explore/ProfileReport.h.
#include "tools/explore/ProfileReport.h"
#include "tools/tpuc/Subcommand.h"
#include "tools/tpuc/SubcommandArgs.h"

namespace {

int runProfile(int argc, char **argv) {
  tpuc::SubcommandArgs args("profile", "stats.json [--trace trace.json] -o report.html");
  args.positionals(1, 1, "stats.json");
  args.option("--trace", "the run's Chrome trace (tpuc sim --trace): adds per-command TIU/GDMA rows");
  args.option("--output", "the HTML report to write", "-o");
  if (auto done = args.parseCommandLine(argc, argv, {{"--output", "-o report.html"}})) return *done;
  auto st = tpu::explore::writeProfileReport(args.args()[0], args.get("--trace"), args.get("--output"));
  if (!st) return tpuc::fail("profile", st.message());
  return tpuc::kExitOk;
}

tpuc::RegisterSubcommand registerProfile("profile", "render a timed run's stats as a self-contained HTML report",
                                         runProfile);

} // namespace
