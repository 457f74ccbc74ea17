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
  options.scoreName = "INT8 Tpu interpreter output cosine (min)";
  options.scoreTable = [=, &weights](const calib::CalibrationTable &table, const std::vector<NpzMap> &samples) {
    return int8OutputCosine(topModule, weights, table, samples, levers, held.get());
  };
  options.scoreThresholds = int8ThresholdScorer(topModule, weights, levers, held);
  options.tuneScoreName = "the INT8 Tpu interpreter's output cosine (min)";
  return Status::ok();
}

} // namespace tpu::flow
