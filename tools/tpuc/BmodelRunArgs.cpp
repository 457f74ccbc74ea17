#include "tools/tpuc/BmodelRunArgs.h"

#include "runtime/RunFiles.h"
#include "tools/tpuc/Subcommand.h"

#include <iostream>

namespace tpuc {

namespace {
const char *const kBmodelRunOptions[] = {"--backend", "--trace", "--stats", "--config", "--net", nullptr};
}

void declareBmodelRunOptions(tpu::ArgParser &args) {
  args.option("--backend", "bmodel backend: sim (SystemC, timed; default), func (functional, no timing) "
                           "or device (a BM1684 through libsophon)");
  args.option("--trace", "write a Chrome trace-event JSON (opens in Perfetto); sim backend");
  args.option("--stats", "write a stats JSON; sim backend");
  args.option("--config", "hardware config JSON (default: BM1684)");
  args.option("--net", "net to run when the bmodel holds several");
}

const char *const *bmodelRunOptionNames() { return kBmodelRunOptions; }

int runBmodelFromArgs(const std::string &command, const tpu::ArgParser &args,
                      const std::string &bmodelPath) {
  tpu::runtime::RunFilesRequest rq;
  rq.bmodelPath = bmodelPath;
  rq.inputPath = args.get("--input");
  rq.outputPath = args.get("--output");
  rq.configPath = args.get("--config");
  rq.tracePath = args.get("--trace");
  rq.statsPath = args.get("--stats");
  rq.netName = args.get("--net");
  auto backend = tpu::runtime::parseBackendKind(args.get("--backend", "sim"));
  if (!backend) return fail(command, backend.message());
  rq.backend = *backend;
  auto report = tpu::runtime::runBmodelFiles(rq);
  if (!report) return fail(command, report.message());
  std::cout << tpu::runtime::formatRunReport(*report);
  return kExitOk;
}

} // namespace tpuc
