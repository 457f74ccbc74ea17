// A sweep's results: the row file each point leaves (one JSON object, the
// same layout as a line of sweep.jsonl), and the merge of every row file
// into sweep.csv, sweep.jsonl, latency_vs_ddr.svg and roofline_<model>.svg.
#pragma once

#include "tools/explore/SweepPlan.h"

#include <nlohmann/json.hpp>

namespace tpu::explore {

// The row file and the JSON lines share one layout; `error` is null for a point that ran.
nlohmann::ordered_json rowJson(const SweepRow &r, const std::vector<std::string> &hwKeys);

// Point i's row with what the plan knows (model, bmodel) and no figures.
SweepRow blankRow(const Plan &plan, const SweepSpec &spec, size_t i);

// A point's row file, checked against the point: a row another sweep (other
// models, options, values or compiler) left there does not count.
Result<SweepRow> readRow(const Plan &plan, const SweepSpec &spec, size_t i);

// Counts the rows with an error into `failed`, keeping the first.
void countFailures(SweepResult &result);

// Merges the row files of every point (a missing one is an error row) into
// sweep.csv, sweep.jsonl and the plots.
Result<SweepResult> collectRows(const Plan &plan, const SweepSpec &spec, SweepResult result);

} // namespace tpu::explore
