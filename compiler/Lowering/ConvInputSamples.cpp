// The conv inputs that bias correction and weight rounding read: the Top
// interpreter run over calibration samples, keeping each conv's input.
#include "compiler/Dialect/Top/TopOps.h"
#include "compiler/Interpreter/TopInterpreter.h"
#include "compiler/Lowering/Lowering.h"

#include <mutex>
#include <set>
#include <tuple>

namespace tpu::lowering {

Result<TensorSamples> convInputSamples(mlir::ModuleOp module, const std::vector<NpzMap> &samples) {
  auto interp = top::TopInterpreter::create(module);
  if (!interp) return interp.status();
  std::set<std::string> wanted;
  module.walk([&](top::ConvOp conv) { wanted.insert((*interp)->nameOf(conv.getInput())); });
  TensorSamples::Values values;
  (*interp)->setResultHook([&](const std::string &name, std::vector<float> &v) {
    if (wanted.count(name)) values[name].push_back(v);
  });
  for (const NpzMap &sample : samples)
    if (auto out = (*interp)->run(sample); !out) return out.status();
  return TensorSamples(std::move(values));
}

struct TensorSamples::MomentCache {
  using Key = std::tuple<std::string, decltype(ConvGeometry().patchFields()), int64_t>; // tensor, geometry, positions
  std::mutex mutex;
  std::map<Key, std::shared_ptr<const std::vector<PatchMoments>>> moments;
};

TensorSamples::TensorSamples(Values values) : values_(std::move(values)), moments_(std::make_shared<MomentCache>()) {}

const std::vector<std::vector<float>> *TensorSamples::find(const std::string &tensor) const {
  auto it = values_.find(tensor);
  return it == values_.end() || it->second.empty() ? nullptr : &it->second;
}

std::shared_ptr<const std::vector<PatchMoments>>
TensorSamples::patchMoments(const std::string &tensor, const ConvGeometry &g, int64_t maxPositions) const {
  MomentCache::Key key{tensor, g.patchFields(), maxPositions};
  {
    std::lock_guard<std::mutex> lock(moments_->mutex);
    if (auto it = moments_->moments.find(key); it != moments_->moments.end()) return it->second;
  }
  // Computed outside the lock (it runs on the worker threads itself); two
  // lowerings asking at once compute the same values.
  auto computed =
      std::make_shared<const std::vector<PatchMoments>>(lowering::patchMoments(*find(tensor), g, maxPositions));
  std::lock_guard<std::mutex> lock(moments_->mutex);
  return moments_->moments.emplace(std::move(key), std::move(computed)).first->second;
}

} // namespace tpu::lowering
