// Mixed-precision search (TPU-MLIR's "sensitive layer" search): which tensors
// to keep in fp32 so that the INT8 Tpu module's outputs reach a cosine target
// against the Top interpreter on sample inputs. Two strategies:
//  - Prefix (default): the first k calibrated tensors in program order stay
//    fp32, k found by bisection (about log2(N) Tpu-interpreter evaluations).
//    Rounding noise added early is amplified by every later layer, so the
//    front of a network is where fp32 buys the most.
//  - Alone: every candidate is tried alone in fp32 (one evaluation each, on
//    the first rankSamples samples, candidates in parallel), then they are
//    added best first, one evaluation per addition on every sample, each
//    kept only when it raises the cosine (at most 2 x maxLayers tries),
//    until the target is met.
//  - Forward: each round tries every unit added to the set chosen so far
//    (on the first rankSamples samples, in parallel) and adds the one that
//    raises the cosine most (checked on every sample), until the target is
//    met, maxLayers is reached or no unit raises it. A unit is a tensor, or
//    a tensor with the tensors its readers produce (and the relu fused into
//    a reader): an fp32 op's int8 readers round its output again, so only
//    with them does the tensor stay unrounded. 2N evaluations per round: it
//    measures what a unit adds to the others, where Alone ranks tensors in
//    isolation.
// An evaluation lowers the module with the candidate set in fp32 (and the
// INT8 levers given) and runs the Tpu interpreter's arithmetic
// incrementally: an op identical to the all-int8 module's op of the same
// name (same op, attributes, tensor types, weights) whose inputs hold the
// all-int8 run's values reuses that run's value, so only what the fp32
// tensors change is computed again (the outputs are the ones a full run
// gives, bit for bit).
// The result is a quantize table for `tpuc deploy --quantize-table`.
//
// With activationCeiling the same searches measure a bound instead: the Top
// interpreter in fp32 (weights and biases unrounded) with every tensor that
// the INT8 lowering (with the given levers) holds in int8 rounded at that
// tensor's scale and signedness, as tpu.cast rounds; a tensor in the set is
// left unrounded. With nothing left out it is the best output cosine any
// weight quantization can give with per-tensor activation scales; with a set,
// what leaving those tensors unrounded could give (an fp32 op on the chip
// removes less: its int8 readers round its output again).
#pragma once

#include "compiler/Calibration/Calibrator.h"
#include "compiler/Dialect/Top/WeightStore.h"
#include "compiler/Lowering/Lowering.h"
#include "support/Npz.h"
#include "support/Status.h"

#include "mlir/IR/BuiltinOps.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tpu::flow {

enum class SearchRank { Prefix, Alone, Forward };

struct QuantizeTableSearchOptions {
  double minCosine = 0.99;  // target: min over outputs, then min over samples (mean with meanOverSamples)
  bool meanOverSamples = false; // score and target the mean over samples instead of the smallest
  SearchRank rank = SearchRank::Prefix;
  size_t maxLayers = 0;     // stop after this many fp32 tensors (0: no limit)
  size_t rankSamples = 1;   // Alone, Forward: the samples each candidate is ranked on (the first N; 0: all)
  bool activationCeiling = false; // score the activation rounding bound (above), not the Tpu module
  lowering::Int8Levers levers;                           // the INT8 lowering searched for
  // What the chosen tensors compute in: F32, or on a chip with 16-bit floats F16 or BF16 (mixed tables,
  // docs/quantization.md); the search measures the module as that table lowers it.
  lowering::Quantize floatType = lowering::Quantize::F32;
  const lowering::TensorSamples *convInputs = nullptr;   // every conv's input, when levers.needSamples()
  // Seconds the search may take (0: no limit): once spent no evaluation
  // starts and the best set reached so far is the result (budgetSpent).
  double budgetSeconds = 0;
  // Called after each Tpu-interpreter evaluation: (evaluations done, planned).
  std::function<void(size_t, size_t)> progress;
};

struct LayerCosine {
  std::string name;
  double cosine = 0;     // the model's output cosine: with this tensor alone
                         // fp32 (in `ranked`), with it and every earlier one
                         // fp32 (in `chosen`)
  bool measured = true;  // false: a prefix member whose cosine was not run
};

struct QuantizeTableSearchResult {
  double int8Cosine = 0;              // everything int8
  std::vector<LayerCosine> ranked;    // Alone: every candidate, best first
  bool activationCeiling = false;     // the cosines are the activation rounding bound's
  std::vector<LayerCosine> chosen;    // the quantize table, in the order added
  bool reached = false;               // the last cosine (or int8Cosine) >= minCosine
  bool budgetSpent = false;           // the search stopped at options.budgetSeconds
  double finalCosine = 0;             // with every chosen tensor fp32 (int8Cosine if none)
  lowering::Quantize floatType = lowering::Quantize::F32; // the chosen tensors' precision word
  // The table in the format lowering::loadQuantizeTable reads, with the
  // cosines as comments.
  std::string format(double minCosine) const;
};

// `topModule` must be a shape-inferred Top module with its weights; the
// candidates are the calibrated tensors other than the model inputs (with
// activationCeiling: the tensors the INT8 lowering rounds, inputs included).
Result<QuantizeTableSearchResult> searchQuantizeTable(mlir::ModuleOp topModule, const top::WeightStore &weights,
                                                      const calib::CalibrationTable &calibration,
                                                      const std::vector<NpzMap> &samples,
                                                      const QuantizeTableSearchOptions &options);

// The smallest output cosine, over samples and outputs, of the module
// lowered to INT8 with `calibration` and `levers` (nothing kept fp32), run
// by the Tpu interpreter (= the bmodel), against the Top interpreter.
Result<double> int8OutputCosine(mlir::ModuleOp topModule, const top::WeightStore &weights,
                                const calib::CalibrationTable &calibration, const std::vector<NpzMap> &samples,
                                const lowering::Int8Levers &levers = {},
                                const lowering::TensorSamples *convInputs = nullptr);
// The same against the Top interpreter's outputs already computed
// (topReferences), one per sample; with meanOverSamples the mean over the
// samples of each one's smallest output cosine.
Result<double> int8OutputCosine(mlir::ModuleOp topModule, const top::WeightStore &weights,
                                const calib::CalibrationTable &calibration, const std::vector<NpzMap> &samples,
                                const std::vector<NpzMap> &references, const lowering::Int8Levers &levers,
                                const lowering::TensorSamples *convInputs, bool meanOverSamples = false);
// The Top interpreter's outputs of every sample.
Result<std::vector<NpzMap>> topReferences(mlir::ModuleOp topModule, const std::vector<NpzMap> &samples);

// Scores candidate thresholds of one tensor (calib::CalibrationOptions::
// scoreThresholds) by the INT8 Tpu interpreter's output cosine with the other
// tensors at the table's thresholds, evaluated incrementally as the search
// above is. `weights` must outlive the scorer.
using Int8ThresholdScorer = std::function<Result<std::vector<double>>(
    const calib::CalibrationTable &, const std::string &, const std::vector<double> &, const std::vector<NpzMap> &)>;
Int8ThresholdScorer int8ThresholdScorer(mlir::ModuleOp topModule, const top::WeightStore &weights,
                                        const lowering::Int8Levers &levers,
                                        std::shared_ptr<const lowering::TensorSamples> convInputs);

} // namespace tpu::flow
