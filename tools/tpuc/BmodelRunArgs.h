// The flags and wiring every subcommand that runs a bmodel shares (tpuc sim,
// tpuc run on a .bmodel), so they read and behave the same.
#pragma once

#include "support/ArgParser.h"

#include <string>

namespace tpuc {

// Declares --backend, --trace, --stats, --config and --net.
void declareBmodelRunOptions(tpu::ArgParser &args);
// The names of those flags, for subcommands that accept them only for bmodels.
const char *const *bmodelRunOptionNames();
// Runs `bmodelPath` on --input, writing -o, as the flags say; prints the run
// report. Returns the exit code.
int runBmodelFromArgs(const std::string &command, const tpu::ArgParser &args,
                      const std::string &bmodelPath);

} // namespace tpuc
