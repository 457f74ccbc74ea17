// The work a bmodel asks of the chip, read from its commands alone (no
// timing model): `tpuc dis --work`, and the work report of the latency set
// (perf/validate_latency.py, docs/validation.md).
#pragma once

#include "isa/bmodel/Bmodel.h"
#include "support/Status.h"

#include <string>

namespace tpu::explore {

// {"nets": [...]}: per net (each stage of a multi-stage net, in file order)
// its coefficient bytes; per command group its TIU / GDMA command counts and
// its layers in first-command order; per layer its commands, the
// multiply-accumulates of its TIU commands (recomputed halo rows included)
// and the payload bytes its GDMA commands read from DDR (those from the
// coefficient area counted apart as well) and write to DDR (a DDR->DDR copy
// counts on both sides).
Result<std::string> workJson(const bmodel::Model &model);

} // namespace tpu::explore
