// The whole "run a bmodel on files" job behind `tpuc sim` (and `tpuc run`
// for bmodels): read the config, load the model, read the inputs, launch,
// and write outputs / trace / stats. Either every requested file is written
// or none is (each goes to a temporary name first and is renamed at the end).
#pragma once

#include "runtime/Backend.h"
#include "support/Status.h"

#include <string>

namespace tpu::runtime {

struct RunFilesRequest {
  std::string bmodelPath;
  std::string inputPath;   // .npz, one member per net input (float32 or the input's dtype)
  std::string outputPath;  // .npz, one float32 member per net output
  std::string configPath;  // HwConfig JSON; empty = BM1684 defaults
  std::string tracePath;   // Chrome trace JSON (sim backend); empty = none
  std::string statsPath;   // stats JSON (sim backend); empty = none
  std::string netName;     // empty = the model's only net
  BackendKind backend = BackendKind::Sim;
};

Result<RunReport> runBmodelFiles(const RunFilesRequest &request);

// What the CLI prints after a run: backend, commands, wall time, the host
// time of CPU sub-nets and, when timed, total cycles / time of the TPU
// sub-nets and per-engine utilization.
std::string formatRunReport(const RunReport &report);

// Writes `bytes` to `path` through a temporary file in the same directory
// and a rename, so a failed write never leaves a partial file at `path`.
Status writeFileAtomically(const std::string &path, const std::string &bytes);

} // namespace tpu::runtime
