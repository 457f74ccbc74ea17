// Calibration scored on the chip's arithmetic. It lives in Flow, not in
// Calibration/: it lowers the module and runs the Tpu interpreter, and the
// lowering itself reads calibration tables (TpuLowering links TpuCalibration).
#pragma once

#include "compiler/Calibration/Calibrator.h"
#include "compiler/Dialect/Top/WeightStore.h"
#include "compiler/Lowering/Lowering.h"
#include "support/Npz.h"
#include "support/Status.h"

#include "mlir/IR/BuiltinOps.h"

#include <memory>
#include <vector>

namespace tpu::flow {

// Makes calibration score on the lowering's real arithmetic (weights, biases,
// shifts and the given levers included) instead of the fake-quantized Top
// interpreter: the max check scores tables by int8OutputCosine, and the
// per-tensor search (--tune, --search-threshold) scores each candidate
// threshold by the INT8 Tpu interpreter's output cosine with the earlier
// tensors at their chosen thresholds (evaluated incrementally, as qtable).
// Levers that read the conv inputs (levers.needSamples()) take them as read
// on the first options.tuneSamples calibration samples, as deploy reads them
// on its samples (null when the levers need none). `weights` must outlive
// the options.
void scoreCalibrationOnChip(calib::CalibrationOptions &options, mlir::ModuleOp topModule,
                            const top::WeightStore &weights, const lowering::Int8Levers &levers,
                            std::shared_ptr<const lowering::TensorSamples> convInputs);

} // namespace tpu::flow
