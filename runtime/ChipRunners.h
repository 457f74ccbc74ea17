// Bmodels of the chips whose commands Runtime's backends do not execute (the BM1684X: no device backend for
// it yet), run by their chip's own runner on its functional semantics or, with the SystemC model built in,
// timed. `tpuc run|sim` (RunFiles.cpp) and the Python module call runOutsideRuntime directly; Runtime loads
// such a bmodel too (its IO staged in the device's memory, each launch a runOutsideRuntime), so the C++ API
// and the BMRuntime C API (CApi.cpp) run it with the same tensor handling as a BM1684 bmodel.
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

// Whether the chip's runner runs on `backend`; not: "a BM1684X bmodel runs on the func or sim backend (no
// device yet)".
Status runnerTakesBackend(const std::string &bmodelChip, BackendKind backend);

// The hardware parameters a run of `model` starts from: its chip's preset, with `configJson` (HwConfig keys)
// over it when not empty; errors name `origin`.
Result<isa::HwConfig> chipConfig(const bmodel::Model &model, const std::string &configJson, const std::string &origin);

// Runs net `netName` (empty: the only one) of `model` on `backend` (func or sim) with `hw`: the outputs, and
// in `report` the backend, the command counts, the wall time and (sim) the timing, stats and, with
// `recordTrace`, the trace.
Result<NpzMap> runOutsideRuntime(const bmodel::Model &model, const std::string &netName, const NpzMap &inputs,
                                 BackendKind backend, const isa::HwConfig &hw, bool recordTrace, RunReport &report);

} // namespace tpu::runtime
