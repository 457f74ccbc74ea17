// Top -> Tpu lowering for the BM1684: every Top op becomes Tpu ops in fp32 or
// int8. INT8 is symmetric per tensor (scale = threshold / 127 from the
// calibration table) with the chip's per-tensor rounding right shift: weights
// are quantized so that s_in * s_w / s_out is exactly 2^-rshift, biases are
// int16; an op whose shift or bias cannot be represented stays fp32 (a
// fallback, reported). Ops named in the quantize table stay fp32; casts are
// inserted wherever a value crosses precisions. Formulas: docs/quantization.md.
#pragma once

#include "compiler/Calibration/CalibrationTable.h"
#include "compiler/Dialect/Top/WeightStore.h"
#include "compiler/Lowering/WeightRounding.h"
#include "support/Npz.h"
#include "support/Status.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace tpu::lowering {

// F16 and BF16 (the BM1684X's 16-bit floats): the F32 lowering retyped (convertToHalf).
enum class Quantize { F32, INT8, F16, BF16 };
Result<Quantize> parseQuantize(const std::string &name); // "F32" / "INT8" / "F16" / "BF16"
const char *quantizeName(Quantize mode);

// fp32 values of Top tensors on calibration samples: name -> one C-order
// array per sample (what bias correction and weight rounding read), and the
// moments of a conv's input patches computed from them once: a threshold
// search lowers the module hundreds of times with the same samples, and the
// moments were half its time (a pose landmark net's tuning with bias
// correction). Copies share the moments; the values never change.
class TensorSamples {
public:
  using Values = std::map<std::string, std::vector<std::vector<float>>>;
  TensorSamples() = default;
  explicit TensorSamples(Values values);
  // The tensor's samples; null when it has none.
  const std::vector<std::vector<float>> *find(const std::string &tensor) const;
  // patchMoments (WeightRounding.h) of the tensor's samples as the input of
  // a conv of geometry `g`; the tensor must have samples (find).
  std::shared_ptr<const std::vector<PatchMoments>> patchMoments(const std::string &tensor, const ConvGeometry &g,
                                                                int64_t maxPositions) const;

private:
  struct MomentCache;
  Values values_;
  std::shared_ptr<MomentCache> moments_;
};
// The fp32 input of every conv of a Top module on each sample (the Top
// interpreter's values, named as the lowering names them; ConvInputSamples.cpp).
Result<TensorSamples> convInputSamples(mlir::ModuleOp module, const std::vector<NpzMap> &samples);

// INT8 accuracy levers of the lowering (docs/quantization.md, "Accuracy levers").
struct Int8Levers {
  bool unsignedActivations = true; // uint8 for tensors calibrated >= 0; false: every int8 tensor signed
  bool biasCorrection = false;     // conv: the mean output error of rounded weights taken out of the int16 bias
  bool roundWeights = false;       // conv: each weight rounded up or down to minimise the output error
  // conv: weights quantized per output channel (each channel's own int8
  // step); the conv writes its int16 accumulator, a per-channel tpu.affine
  // requantizes it to the output's int8 scale (and adds the bias).
  bool perChannelWeights = false;
  // with perChannelWeights: a conv (and the per-channel affine ops behind
  // it) whose only consumer is a 1x1 conv without padding hands that conv
  // its int16 accumulator: no int8 rounding between them (depthwise ->
  // pointwise blocks).
  bool int16Pointwise = false;
  // with perChannelWeights: a conv (and the per-channel affine ops behind
  // it) read only by a hard_swish hands it its int16 accumulator; the
  // function is computed from two int8 tensors of it, a fine one over the
  // curved part [-3, 3] (a table) and the linear part above 3 (an affine),
  // added: the wide pre-activation is never rounded to 8 bits.
  bool int16Hardswish = false;
  bool needSamples() const { return biasCorrection || roundWeights; }
};

struct LoweringOptions {
  Quantize mode = Quantize::F32;
  const calib::CalibrationTable *calibration = nullptr; // required for INT8
  std::set<std::string> keepF32;                        // names of Top op results kept in fp32 (INT8)
  // INT8 with the BM1684X's 16-bit floats: of keepF32, the ones whose ops compute in `halfType` (F16 or
  // BF16) instead of fp32: the fp32 island retyped (convertToHalf), casts at its edges.
  std::set<std::string> keepHalf;
  Quantize halfType = Quantize::F32;
  Int8Levers levers;
  const TensorSamples *samples = nullptr; // every conv input, when levers.needSamples()
  // An op the chip cannot run but the host can (kernels/HostOps.h) goes to
  // a CPU sub-net; false: it is refused like any op without a lowering.
  bool cpuOps = true;
};

struct LoweredModule {
  mlir::OwningOpRef<mlir::ModuleOp> module; // tpu ops + top.input/top.weight/top.none
  top::WeightStore weights;                 // the arrays its top.weight ops name
  std::vector<std::string> fallbacks;       // "name: why" for int8 ops kept in fp32
  std::vector<std::string> hostOps;         // "top.op 'name': why" for ops placed in CPU sub-nets
};

// Lowers the entry function of a Top module (shapes inferred, weights in
// `weights`). Errors: a Top op with no lowering (naming the op, its tensor
// and location), tensors missing from the calibration table (naming them).
Result<LoweredModule> lowerToTpu(mlir::ModuleOp topModule, const top::WeightStore &weights,
                                 const LoweringOptions &options);

// An F32-lowered module in F16 or BF16 (HalfFloat.cpp): chip tensors and weights (but biases) in the
// 16-bit type, casts at graph inputs, outputs and host ops. With `only`, just the chip ops whose results it
// names (an INT8 module's fp32 islands of a mixed quantize table); the other ops read them through casts.
Status convertToHalf(LoweredModule &module, Quantize mode, const std::set<std::string> *only = nullptr);

// The quantize table: one tensor (op result) name per line, '#' comments;
// optionally followed by a precision word: F32 (the default), or F16 or BF16
// (one of the two per table: the op computes in that 16-bit float, a chip
// with 16-bit floats only).
struct QuantizeTable {
  std::set<std::string> keepFloat;   // every name (its op is not int8)
  std::set<std::string> half;        // those of F16 or BF16
  Quantize halfType = Quantize::F32; // F16 or BF16 when `half` is not empty
};
Result<QuantizeTable> loadQuantizeTable(const std::string &path);

// Loads the calibration table into `table` (options.calibration then points
// at it) and the quantize table into options.keepF32 (and keepHalf,
// halfType), each if its path is not empty; an error names the file.
Status loadLoweringTables(const std::string &calibrationPath, const std::string &quantizeTablePath,
                          calib::CalibrationTable &table, LoweringOptions &options);

} // namespace tpu::lowering
