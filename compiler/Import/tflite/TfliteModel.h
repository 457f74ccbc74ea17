// A TFLite model read into plain structs: the FlatBuffer is verified against
// the schema (schema.fbs, the published field ids), then every index it holds
// (operator codes, tensors, buffers) and every constant's size is checked, so
// the importer above works on a consistent graph. No MLIR here: this is the
// part the fuzz target (fuzz/FuzzTflite.cpp) exercises.
#pragma once

#include "support/Npz.h"
#include "support/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tpu::tflite {

// The element types of TFLite tensors the reader decodes (TensorType values).
enum class ElementType : int8_t { Float32 = 0, Float16 = 1, Int32 = 2, UInt8 = 3, Int64 = 4, Int16 = 7, Int8 = 9 };

// Asymmetric linear quantization: real = scale * (q - zeroPoint), one pair per
// tensor or one per slice along `axis`.
struct Quantization {
  std::vector<float> scale, min, max;
  std::vector<int64_t> zeroPoint;
  int32_t axis = 0;
  bool present() const { return !scale.empty(); }
};

struct Tensor {
  std::string name;
  std::vector<int64_t> shape;
  int8_t type = 0;           // TensorType value
  std::string typeName;      // "FLOAT32", "INT8", ...
  Quantization quant;
  std::vector<uint8_t> data; // constant bytes (little-endian); empty for activations
  bool isConstant() const { return !data.empty(); }
  int64_t numel() const;
};

enum class Activation : int8_t { None = 0, Relu = 1, ReluN1To1 = 2, Relu6 = 3, Tanh = 4, SignBit = 5 };
enum class Padding : int8_t { Same = 0, Valid = 1 };

// The builtin options the importer reads, whichever option table held them
// (fields of other tables keep their defaults).
struct Options {
  Padding padding = Padding::Same;
  int32_t strideW = 1, strideH = 1, dilationW = 1, dilationH = 1;
  int32_t filterW = 0, filterH = 0, depthMultiplier = 0;
  Activation activation = Activation::None;
  int32_t axis = 0, numSplits = 0;
  bool keepDims = false, keepNumDims = false, alignCorners = false, halfPixelCenters = false;
  int8_t weightsFormat = 0;
  float beta = 1.0f, alpha = 0.0f;
  std::vector<int64_t> newShape, squeezeDims;
  int32_t beginMask = 0, endMask = 0, ellipsisMask = 0, newAxisMask = 0, shrinkAxisMask = 0;
  bool sliceOffset = false;
};

struct Operator {
  size_t index = 0;          // position in the subgraph's operator list
  int32_t builtinCode = 0;   // BuiltinOperator value (32 = CUSTOM)
  std::string customCode;    // for CUSTOM
  int32_t version = 1;
  std::vector<int32_t> inputs, outputs; // tensor indices; -1 = absent optional input
  Options options;
  std::vector<uint8_t> customOptions;
  // "operator 3 (CONV_2D)" / "operator 7 (CUSTOM 'Convolution2DTransposeBias')".
  std::string describe() const;
  // The BuiltinOperator name, or the custom code for CUSTOM.
  std::string opName() const;
};

struct Model {
  uint32_t schemaVersion = 0;
  std::vector<Tensor> tensors;
  std::vector<int32_t> inputs, outputs;
  std::vector<Operator> operators;
};

// The BuiltinOperator enum name of a code ("CONV_2D"), "" if it has none.
std::string builtinName(int32_t code);

// Errors are one line: not a TFLite file (identifier), a FlatBuffer that does
// not verify (truncated, corrupt), not exactly one subgraph, an index out of
// range (opcode, tensor, buffer), a constant whose size disagrees with its
// shape, sparse or externally stored tensors.
Result<Model> parseModel(const uint8_t *data, size_t size);
Result<Model> loadModel(const std::string &path);

// The real values of a constant as float32: FLOAT32 and FLOAT16 as they are,
// integer tensors dequantized with their (per-tensor or per-axis) parameters,
// or converted as plain numbers when they have none.
Result<NpyArray> realValues(const Tensor &tensor);
// An integer constant (shapes, axes, paddings) as int64 values.
Result<std::vector<int64_t>> integerValues(const Tensor &tensor);

} // namespace tpu::tflite
