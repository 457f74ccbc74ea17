// `tpuc profile`: turns the stats JSON of a timed run (and optionally its
// Chrome trace) into one self-contained HTML page — inline CSS, JS and SVG,
// nothing fetched — with the TIU/GDMA timeline, a sortable per-layer time
// table, engine utilization and LMEM use per group when the stats carry it.
#pragma once

#include "support/Status.h"

#include <string>

namespace tpu::explore {

// `statsJson` as written by `tpuc sim --stats`; `traceJson` as written by
// `--trace`, or empty. `origin` names the stats file in errors and the title.
// Errors name the file and the key that is missing or of the wrong type.
Result<std::string> renderProfileHtml(const std::string &statsJson, const std::string &traceJson,
                                      const std::string &origin);

// Reads the files, renders, writes `htmlPath` atomically.
Status writeProfileReport(const std::string &statsPath, const std::string &tracePath,
                          const std::string &htmlPath);

} // namespace tpu::explore
