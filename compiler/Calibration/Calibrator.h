// Calibration: runs the Top interpreter over sample inputs and derives a
// symmetric threshold per tensor (docs/quantization.md, "Calibration").
//
// One interpreter run per sample collects, per tensor, min, max, sum, sum of
// squares, the zero count, sum |x - mean| and a 2048-bin histogram of |x|
// (TensorStats). Every method reads these statistics:
//   max            max |x|
//   kl             KL divergence of the histogram and its 128-level merge
//                  (TensorRT / TPU-MLIR; exact zeros left out)
//   mse            the threshold minimising the expected squared error of
//                  clipping plus rounding (Octav's objective), every bin edge tried
//   percentile9999 the 99.99th percentile of |x|
//   aciq-gauss     |mean| + alpha_G * std, aciq-laplace |mean| + alpha_L * b
//                  (Banner et al., ACIQ; alpha minimises the 8-bit MSE of the
//                  fitted distribution: 3.92 and 9.89)
// Then, optionally, per tensor in program order: --tune N candidates between
// the KL threshold and max|x|, --search-threshold the thresholds of every
// method, the best by CalibrationOptions::scoreThresholds (the INT8 output
// cosine on the chip's arithmetic), or by default the one whose consumers'
// outputs (computed from fake-quantized inputs, earlier tensors at their
// chosen thresholds) are closest to fp32.
//
// Always: a bounded output (sigmoid, softmax, hard_sigmoid, clip, a fused
// relu with a limit) keeps its observed range (max), and unless disabled the
// table falls back to max when it scores below max's on the first
// calibration samples (CalibrationOptions::scoreTable).
#pragma once

#include "compiler/Calibration/CalibrationTable.h"
#include "compiler/Preprocess/Preprocess.h"
#include "support/Npz.h"
#include "support/Status.h"

#include "mlir/IR/BuiltinOps.h"

#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace tpu::calib {

enum class Method { Max, Kl, Mse, Percentile9999, AciqGauss, AciqLaplace };
constexpr Method kAllMethods[] = {Method::Max, Method::Kl, Method::Mse, Method::Percentile9999, Method::AciqGauss,
                                  Method::AciqLaplace};
constexpr Method kDefaultMethod = Method::Kl;
const char *methodName(Method m);
// "max, kl, mse, percentile9999, aciq-gauss, aciq-laplace" (for help texts).
std::string methodNames();
Result<Method> parseMethod(const std::string &name);

// Threshold of a histogram of |x| over [0, absMax] by KL divergence: the
// clipping bin count i in [levels, bins] minimising KL(P_i || Q_i) where
// P_i is the first i bins with the tail folded into bin i-1 and Q_i the same
// bins merged into `levels` groups and spread back over their non-empty bins.
// Returns (i + 0.5) * absMax / bins.
double klThreshold(const std::vector<uint64_t> &hist, double absMax, int levels = 128);

// What the methods read about one tensor over all samples.
struct TensorStats {
  double min = std::numeric_limits<double>::infinity(), max = -std::numeric_limits<double>::infinity();
  uint64_t count = 0, zeros = 0; // finite values, exact zeros among them
  double sum = 0, sumSq = 0;
  double sumAbsDev = 0;          // sum |x - mean of its sample|
  // |x| of the non-zero values over [0, histRange] in kOversample times the
  // method's bins: the first sample's max|x|, doubled (adjacent bins merged)
  // whenever a sample exceeds it, so absMax() <= histRange < 2 absMax() and
  // one pass over the samples suffices. The methods read it re-binned over
  // exactly [0, absMax()] (histogramOverAbsMax), as a second pass would have
  // binned it: the doublings cost resolution that KL's threshold search is
  // sensitive to (ResNet-18 b4 INT8 cosine 0.961 without the oversampling,
  // 0.97+ with the exact histogram).
  static constexpr int kOversample = 16;
  std::vector<uint64_t> hist;
  double histRange = 0;
  double absMax() const;
  // `bins` bins over [0, absMax()]: each fine bin goes to the bin of its centre.
  std::vector<uint64_t> histogramOverAbsMax(int bins) const;
  // Adds one sample's values of the tensor.
  void add(const std::vector<float> &values, int bins);
  double mean() const { return count ? sum / double(count) : 0; }
};

// ACIQ's clipping factor: the alpha minimising 2 * E[(|X| - alpha)^2; |X| > alpha]
// + alpha^2 / (3 * 4^bits) for a unit Gaussian or a unit-scale Laplace.
double aciqAlpha(bool laplace, int bits = 8);

// One method's threshold, within (0, absMax] (1e-5 for an all-zero tensor).
// Signedness (min >= 0: uint8, 255 levels; else int8, 127) sets mse's step.
double methodThreshold(Method method, const TensorStats &stats);

// Symmetric fake quantization as the lowering quantizes a tensor: scale
// threshold / 255 when min >= 0 (uint8) else / 127 (int8), round half to
// even, saturate, back to float.
void fakeQuantize(std::vector<float> &values, const TensorRange &range);

// The cosine of every float32 output of `got` against `ref` (by name), the smallest.
double minCosine(const NpzMap &ref, const NpzMap &got);

struct CalibrationOptions {
  Method method = kDefaultMethod;
  int bins = 2048;
  int tune = 0;                  // candidates between KL and max per tensor; 0 = no tuning
  bool searchThreshold = false;  // best of all methods per tensor
  int tuneSamples = 4;           // samples the per-tensor search and the max check run on
  bool maxFallback = true;       // fall back to max when it scores better
  // How the max check scores a table on the first tuneSamples samples
  // (higher = better). Empty: the mean output cosine of the Top interpreter
  // with every tensor fake-quantized (activations only); tpuc calibrate and
  // tpuc flow use the INT8 Tpu interpreter (flow::scoreCalibrationOnChip).
  std::function<Result<double>(const CalibrationTable &, const std::vector<NpzMap> &)> scoreTable;
  std::string scoreName = "fake-quantized output cosine";
  // How --tune / --search-threshold score one tensor's candidate thresholds
  // (one score per candidate, higher = better), the other tensors at the
  // table's thresholds (the earlier ones already chosen), on the first
  // tuneSamples samples. Empty: each consumer op run alone by the Top
  // interpreter on fake-quantized fp32 dumps (relative error of its
  // outputs); tpuc calibrate and tpuc flow score on the INT8 Tpu
  // interpreter's output cosine (flow::scoreCalibrationOnChip).
  std::function<Result<std::vector<double>>(const CalibrationTable &, const std::string &,
                                            const std::vector<double> &, const std::vector<NpzMap> &)>
      scoreThresholds;
  std::string tuneScoreName;
  // Called after each step of a stage: (stage, done, total).
  std::function<void(const std::string &, int, int)> progress;
  // Asked before each tensor of the per-tensor search: true stops the
  // calibration with an error (a time budget spent).
  std::function<bool()> cancelled;
};

// Every activation tensor of the module (inputs included) gets a line; the
// table's comments record the method, the tuning and the max check.
// Errors name the sample that failed.
Result<CalibrationTable> calibrate(mlir::ModuleOp module, const std::vector<NpzMap> &samples,
                                   const CalibrationOptions &options);
// The fp32 statistics of a module over samples, gathered once (one Top
// interpreter run per sample); tables of any method are made from them with
// any scorers, so comparing methods or INT8 lowering levers costs their
// tuning and checks, not the interpreter passes. The module must outlive it.
class Calibrator {
public:
  // `options` decide what is kept: the check samples (tuneSamples) and, for
  // a fake-quantized threshold search (tune or searchThreshold without
  // scoreThresholds), every tensor's dump of them.
  static Result<std::unique_ptr<Calibrator>> create(mlir::ModuleOp module, const std::vector<NpzMap> &samples,
                                                    const CalibrationOptions &options);
  ~Calibrator();
  // One method's table, tuned and checked with `options` (tuneSamples as
  // at creation); `options` must stay alive during the call only.
  Result<CalibrationTable> table(Method method, const CalibrationOptions &options);
  // Adds samples to the statistics (as if given after the others at
  // creation; the check samples stay the first ones).
  Status addSamples(const std::vector<NpzMap> &extra);

private:
  Calibrator();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One table per method of `methods` (options.method ignored) from one
// collection of statistics: what comparing methods costs is their tuning
// and checks, not the interpreter passes.
Result<std::vector<CalibrationTable>> calibrateMethods(mlir::ModuleOp module, const std::vector<NpzMap> &samples,
                                                      const CalibrationOptions &options,
                                                      const std::vector<Method> &methods);

// How sample files become model inputs: a .npz as it is, an image file
// (compiler/Preprocess) through the module's preprocessing into its only input.
class SampleReader {
public:
  static Result<SampleReader> forModule(mlir::ModuleOp module);
  Result<NpzMap> read(const std::string &path) const;
  // An image already decoded (`path` names it in errors).
  Result<NpzMap> fromImage(const preprocess::Image &image, const std::string &path) const;

private:
  std::string inputName_;
  std::vector<int64_t> inputShape_;
  std::string noImageReason_; // why images cannot feed this model ("" = they can)
  preprocess::Config config_;
};

// The samples of a dataset directory (.npz and image files), in name order;
// an error when `dir` is not a directory or holds none.
Result<std::vector<std::string>> listSampleFiles(const std::string &dir);

// The samples a command was given: `dataset` (a directory, listSampleFiles)
// or `dataList` (comma-separated paths), exactly one non-empty, read until
// `inputNum` samples (0 = all). An image that does not decode is skipped
// with a warning naming it (`warn`); no usable sample is an error.
Result<std::vector<NpzMap>> loadSamples(const SampleReader &reader, const std::string &dataset,
                                        const std::string &dataList, int64_t inputNum,
                                        const std::function<void(const std::string &)> &warn);

} // namespace tpu::calib
