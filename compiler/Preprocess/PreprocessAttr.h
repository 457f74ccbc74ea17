// The preprocessing settings as a Top module attribute, so that a model
// carries how its inputs are made from images: `tpuc import --mean ...`
// writes it, calibration, `tpuc run --image` and `tpuc flow --test-image`
// read it, and deploy copies module attributes into the Tpu module.
//
//   module attributes {top.preprocess = {channel_format = "nchw",
//       keep_aspect_ratio = false, mean = [123.675, ...], pixel_format = "rgb",
//       resize_dims = [640, 640], scale = [0.0171, ...]}, ...}
//
// Absent when no preprocessing flag was given (such modules, their Tpu
// modules and bmodels are unchanged byte for byte).
#pragma once

#include "compiler/Preprocess/Preprocess.h"
#include "support/Status.h"

#include "mlir/IR/BuiltinOps.h"

namespace tpu::preprocess {

constexpr const char *kPreprocessAttr = "top.preprocess";
// Its fields (recordConfig writes them, readConfig reads them).
namespace field {
constexpr const char *kMean = "mean", *kScale = "scale", *kPixelFormat = "pixel_format",
                     *kChannelFormat = "channel_format", *kResizeDims = "resize_dims",
                     *kKeepAspectRatio = "keep_aspect_ratio";
} // namespace field

void recordConfig(mlir::ModuleOp module, const Config &config);

// The module's settings, the defaults when it has none; an error names the
// malformed field.
Result<Config> readConfig(mlir::ModuleOp module);

} // namespace tpu::preprocess
