// The conv inputs that bias correction and weight rounding read: the Top
// interpreter run over calibration samples, keeping each conv's input.
#include "compiler/Dialect/Top/TopOps.h"
#include "compiler/Interpreter/TopInterpreter.h"
#include "compiler/Lowering/Lowering.h"

#include <set>

namespace tpu::lowering {

Result<TensorSamples> convInputSamples(mlir::ModuleOp module, const std::vector<NpzMap> &samples) {
  auto interp = top::TopInterpreter::create(module);
  if (!interp) return interp.status();
  std::set<std::string> wanted;
  module.walk([&](top::ConvOp conv) { wanted.insert((*interp)->nameOf(conv.getInput())); });
  TensorSamples values;
  (*interp)->setResultHook([&](const std::string &name, std::vector<float> &v) {
    if (wanted.count(name)) values[name].push_back(v);
  });
  for (const NpzMap &sample : samples)
    if (auto out = (*interp)->run(sample); !out) return out.status();
  return values;
}

} // namespace tpu::lowering
