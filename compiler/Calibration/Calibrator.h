// Calibration: runs the Top interpreter over sample inputs and derives a
// symmetric threshold per tensor, by the absolute maximum ("max") or by
// minimising the KL divergence between the 2048-bin histogram of |x| and
// its 128-level quantization ("kl", the TensorRT / TPU-MLIR method; exact
// zeros are left out of the histogram).
#pragma once

#include "compiler/Calibration/CalibrationTable.h"
#include "support/Npz.h"
#include "support/Status.h"

#include "mlir/IR/BuiltinOps.h"

#include <functional>
#include <string>
#include <vector>

namespace tpu::calib {

enum class Method { Max, Kl };
Result<Method> parseMethod(const std::string &name); // "max" / "kl"

// Threshold of a histogram of |x| over [0, absMax] by KL divergence: the
// clipping bin count i in [levels, bins] minimising KL(P_i || Q_i) where
// P_i is the first i bins with the tail folded into bin i-1 and Q_i the same
// bins merged into `levels` groups and spread back over their non-empty bins.
// Returns (i + 0.5) * absMax / bins.
double klThreshold(const std::vector<uint64_t> &hist, double absMax, int levels = 128);

struct CalibrationOptions {
  Method method = Method::Max;
  int bins = 2048;
  // Called after each interpreter run: (runs done, runs in total).
  std::function<void(int, int)> progress;
};

// Every activation tensor of the module (inputs included) gets a line.
// Errors name the sample that failed.
Result<CalibrationTable> calibrate(mlir::ModuleOp module, const std::vector<NpzMap> &samples,
                                   const CalibrationOptions &options);

// The .npz samples of a dataset directory, in name order; an error when
// `dir` is not a directory or holds none.
Result<std::vector<std::string>> listSampleFiles(const std::string &dir);

// The samples a command was given: `dataset` (a directory, listSampleFiles)
// or `dataList` (comma-separated .npz paths), exactly one non-empty, cut to
// the first `inputNum` (0 = all) and read.
Result<std::vector<NpzMap>> loadSamples(const std::string &dataset, const std::string &dataList, int64_t inputNum);

} // namespace tpu::calib
