// tpuc sim: run a bmodel on the simulated BM1684 (timed SystemC model by
// default, or the functional backend) — wiring only; the work is in
// runtime/RunFiles.h.
#include "runtime/RunFiles.h"
#include "support/ArgParser.h"
#include "tools/tpuc/Subcommand.h"

#include <iostream>

namespace {

int runSim(int argc, char **argv) {
  tpu::ArgParser args("sim", "tpuc sim model.bmodel --input in.npz -o out.npz [options]");
  args.positionals(1, 1, "model.bmodel");
  args.option("--input", "input tensors (.npz, one member per net input)", "-i");
  args.option("--output", "where to write the output tensors (.npz, float32)", "-o");
  args.option("--config", "hardware config JSON (default: BM1684)");
  args.option("--trace", "write a Chrome trace-event JSON (opens in Perfetto); sim backend");
  args.option("--stats", "write a stats JSON; sim backend");
  args.option("--backend", "sim (SystemC, timed; default), func (functional, no timing) or device (a BM1684 through libsophon)");
  args.option("--net", "net to run when the bmodel holds several");
  if (auto st = args.parse(argc, argv); !st) return tpuc::fail("sim", st.message());
  if (args.helpRequested()) {
    std::cout << args.help();
    return tpuc::kExitOk;
  }
  if (!args.has("--input")) return tpuc::fail("sim", "missing --input in.npz");
  if (!args.has("--output")) return tpuc::fail("sim", "missing -o out.npz");

  tpu::runtime::RunFilesRequest rq;
  rq.bmodelPath = args.args()[0];
  rq.inputPath = args.get("--input");
  rq.outputPath = args.get("--output");
  rq.configPath = args.get("--config");
  rq.tracePath = args.get("--trace");
  rq.statsPath = args.get("--stats");
  rq.netName = args.get("--net");
  auto backend = tpu::runtime::parseBackendKind(args.get("--backend", "sim"));
  if (!backend) return tpuc::fail("sim", backend.message());
  rq.backend = *backend;

  auto report = tpu::runtime::runBmodelFiles(rq);
  if (!report) return tpuc::fail("sim", report.message());
  std::cout << tpu::runtime::formatRunReport(*report);
  return tpuc::kExitOk;
}

tpuc::RegisterSubcommand registerSim("sim", "run a bmodel on the simulated BM1684 (sim or func backend)",
                                     runSim);

} // namespace
