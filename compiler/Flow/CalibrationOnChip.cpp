#include "compiler/Flow/CalibrationOnChip.h"

#include "compiler/Flow/QuantizeTableSearch.h"

#include <algorithm>
#include <memory>

namespace tpu::flow {

Status checkCalibrationOnChip(calib::CalibrationOptions &options, mlir::ModuleOp topModule,
                              const top::WeightStore &weights, const lowering::Int8Levers &levers,
                              const std::vector<NpzMap> &samples) {
  std::shared_ptr<const lowering::TensorSamples> held;
  if (levers.needSamples()) {
    std::vector<NpzMap> first(samples.begin(),
                              samples.begin() + std::min<int64_t>(options.tuneSamples, int64_t(samples.size())));
    auto values = lowering::convInputSamples(topModule, first);
    if (!values) return values.status();
    held = std::make_shared<const lowering::TensorSamples>(values.take());
  }
  scoreCalibrationOnChip(options, topModule, weights, levers, held);
  return Status::ok();
}

void scoreCalibrationOnChip(calib::CalibrationOptions &options, mlir::ModuleOp topModule,
                            const top::WeightStore &weights, const lowering::Int8Levers &levers,
                            std::shared_ptr<const lowering::TensorSamples> held) {
  options.scoreName = "INT8 Tpu interpreter output cosine (min)";
  // The max check scores two tables on the same samples: their fp32
  // references are computed once.
  auto references = std::make_shared<std::vector<NpzMap>>();
  options.scoreTable = [=, &weights](const calib::CalibrationTable &table,
                                     const std::vector<NpzMap> &samples) -> Result<double> {
    if (references->size() != samples.size()) {
      auto computed = topReferences(topModule, samples);
      if (!computed) return computed.status();
      *references = computed.take();
    }
    return int8OutputCosine(topModule, weights, table, samples, *references, levers, held.get());
  };
  options.scoreThresholds = int8ThresholdScorer(topModule, weights, levers, held);
  options.tuneScoreName = "the INT8 Tpu interpreter's output cosine (min)";
}

} // namespace tpu::flow
