#include "compiler/Transforms/PassWeights.h"
#include "compiler/Dialect/Top/TopOps.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Path.h"

namespace top {

std::optional<WeightStore> loadWeightsOrReport(mlir::ModuleOp module) {
  auto store = WeightStore::loadFor(module);
  if (!store) {
    module.emitError() << store.message();
    return std::nullopt;
  }
  return store.take();
}

tpu::Status saveDerivedWeights(mlir::ModuleOp module, WeightStore &store, const std::string &attrValue,
                               const std::string &suffix) {
  std::string attr = attrValue;
  if (attr.empty()) {
    llvm::SmallString<256> name(module->getAttrOfType<mlir::StringAttr>(kWeightFileAttr).strref());
    llvm::sys::path::replace_extension(name, "");
    attr = std::string(name.str()) + suffix + ".npz";
  }
  module->setAttr(kWeightFileAttr, mlir::StringAttr::get(module.getContext(), attr));
  auto path = WeightStore::pathFor(module);
  if (!path) return path.status();
  return store.saveFor(module, *path, attr);
}

} // namespace top
