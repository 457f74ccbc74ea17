#include "compiler/Flow/CalibrationOnChip.h"

#include "compiler/Flow/QuantizeTableSearch.h"

#include <memory>

namespace tpu::flow {

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
