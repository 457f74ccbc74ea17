// TFLite -> Top dialect. The model is read by the plain TfliteModel library;
// this builds the same Top module and weight file the ONNX importer does, so
// every later stage is unchanged.
//
// Layout: TFLite is NHWC with OHWI filters, the Top dialect NCHW with OIHW.
// Every 4-D activation is held in NCHW inside the module; filters, axes,
// paddings and broadcast constants are converted at import, so a Permute only
// appears where the model's own semantics need the NHWC element order: one
// after each 4-D model input (the module keeps the model's NHWC interface),
// one before each 4-D model output with more than one channel, and one in
// front of a reshape-like op (RESHAPE, SQUEEZE, FULLY_CONNECTED, TRANSPOSE...)
// that mixes channels with spatial dims. A layout change that only moves
// size-1 dims is a Reshape, not a Permute.
//
// Quantized models: int8/uint8/int16 constants are imported as their real
// (dequantized) values, QUANTIZE/DEQUANTIZE of activations are identities, and
// the activation ranges the model carries can be written as a calibration table.
#pragma once

#include "compiler/Import/OnnxImporter.h"
#include "compiler/Import/tflite/TfliteModel.h"

namespace tpu::tflite {

struct ImportOptions {
  std::vector<std::vector<int64_t>> inputShapes; // NHWC as in the model; empty: the model's own
  std::string weightFile;                        // value of the top.weight_file attribute
  bool canonicalize = true;
  std::string calibrationPath; // non-empty: write the model's activation ranges here
  // Called on the new module before its ops are built, as for ONNX
  // (tpuc import's preprocessing settings, compiler/Preprocess).
  std::function<void(mlir::ModuleOp)> annotateModule;
};

using ImportedModule = onnx::ImportedModule;

// Errors are one line: an unsupported operator (its index, name and builtin
// code), an unsupported tensor type, bad option values (naming the operator).
Result<ImportedModule> importModel(mlir::MLIRContext &context, const Model &model, const ImportOptions &options);

// The calibration table of the model's own quantization parameters: one entry
// per quantized activation, under the name its Top value carries. An int8
// tensor covers [scale * (-128 - zp), scale * (127 - zp)]; BM1684 quantizes
// symmetrically, so the threshold is the larger magnitude of the two ends.
struct QuantRange {
  double min = 0, max = 0;
};
QuantRange rangeOf(const Tensor &tensor);

// `tpuc import model.tflite`: reads `tflitePath`, writes `mlirPath`, the weight
// file beside it and, if asked, the calibration table.
Status importTfliteFile(const std::string &tflitePath, const std::string &mlirPath, ImportOptions options);

// A model for the TFLite importer: the FlatBuffer identifier "TFL3" at bytes
// 4..7, or a .tflite name (whose bad content then gets the TFLite reader's error).
bool isTfliteModel(const std::string &path);

} // namespace tpu::tflite
