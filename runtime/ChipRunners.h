// Bmodels of the chips that Runtime does not load (the BM1684X: no device backend or BMRuntime C API for
// it yet), run by their chip's own runner on its functional semantics or, with the SystemC model built in,
// timed. `tpuc run|sim` (RunFiles.cpp) and the Python module go through here.
#pragma once

#include "isa/HwConfig.h"
#include "isa/bmodel/Model.h"
#include "runtime/Backend.h"
#include "support/Npz.h"
#include "support/Status.h"

#include <string>

namespace tpu::runtime {

// Does a bmodel whose chip field says `bmodelChip` run here rather than on Runtime?
bool runsOutsideRuntime(const std::string &bmodelChip);

// The hardware parameters a run of `model` starts from: its chip's preset, with `configJson` (HwConfig keys)
// over it when not empty; errors name `origin`.
Result<isa::HwConfig> chipConfig(const bmodel::Model &model, const std::string &configJson, const std::string &origin);

// Runs net `netName` (empty: the only one) of `model` on `backend` (func or sim) with `hw`: the outputs, and
// in `report` the backend, the command counts, the wall time and (sim) the timing, stats and, with
// `recordTrace`, the trace.
Result<NpzMap> runOutsideRuntime(const bmodel::Model &model, const std::string &netName, const NpzMap &inputs,
                                 BackendKind backend, const isa::HwConfig &hw, bool recordTrace, RunReport &report);

} // namespace tpu::runtime
