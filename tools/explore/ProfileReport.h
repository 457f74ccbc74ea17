// `tpuc profile`: turns the stats JSON of a timed run (and optionally its
// Chrome trace) into one self-contained HTML page — inline CSS, JS and SVG,
// nothing fetched — with the TIU/GDMA timeline, a sortable per-layer time
// table, engine utilization and LMEM use per group when the stats carry it.
#pragma once

#include "support/Status.h"

#include <string>

namespace tpu::explore {

// The chip a run was simulated for, when the report knows it (a stats file does not record it).
struct ProfileChip {
  std::string name;               // the bmodel's chip field: "BM1684X"
  double presetClockMhz = 0;      // its HwConfig preset's TIU clock (isa::ChipInfo::hwConfig)
  bool commandsNameLayers = true; // false: the bmodel has no layer names on its commands
};

// `statsJson` as written by `tpuc sim --stats`; `traceJson` as written by
// `--trace`, or empty. `origin` names the stats file in errors and the title.
// `chip`: the run's chip for the header, or null (the stats file alone:
// the header says the chip is not known).
// Errors name the file and the key that is missing or of the wrong type.
Result<std::string> renderProfileHtml(const std::string &statsJson, const std::string &traceJson,
                                      const std::string &origin, const ProfileChip *chip = nullptr);

// Reads the files, renders, writes `htmlPath` atomically.
Status writeProfileReport(const std::string &statsPath, const std::string &tracePath,
                          const std::string &htmlPath);

// Runs net `netName` (empty: the only one) of the bmodel at `bmodelPath` (any chip of the registry) timed,
// on the sim backend of the runtime, with the inputs of `inputPath` and the HwConfig keys of `configPath`
// (empty: none) over its chip's preset, and writes the report of the run to `htmlPath`: the chip and its
// clock in the header.
Status writeBmodelProfileReport(const std::string &bmodelPath, const std::string &netName, const std::string &inputPath,
                                const std::string &configPath, const std::string &htmlPath);

} // namespace tpu::explore
