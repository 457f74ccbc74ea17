#include "compiler/Dialect/Top/WeightStore.h"
#include "compiler/Dialect/Top/TopOps.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Path.h"

#include <set>

using namespace mlir;

namespace top {

std::string dtypeOfElement(Type type) {
  if (type.isF32()) return "float32";
  if (type.isInteger(64)) return "int64";
  if (type.isInteger(1)) return "bool";
  return "";
}

tpu::Result<std::string> WeightStore::pathFor(ModuleOp module) {
  auto attr = module->getAttrOfType<StringAttr>(kWeightFileAttr);
  if (!attr) return tpu::makeError("module has no '", kWeightFileAttr, "' attribute");
  std::string name = attr.str();
  if (llvm::sys::path::is_absolute(name)) return name;
  if (auto file = dyn_cast<FileLineColLoc>(module.getLoc())) {
    llvm::SmallString<256> dir(file.getFilename().strref());
    llvm::sys::path::remove_filename(dir);
    if (!dir.empty()) {
      llvm::sys::path::append(dir, name);
      return std::string(dir.str());
    }
  }
  return name;
}

tpu::Result<WeightStore> WeightStore::loadFor(ModuleOp module) {
  auto path = pathFor(module);
  if (!path) return path.status();
  auto npz = tpu::readNpz(*path);
  if (!npz) return npz.status();
  WeightStore store;
  store.arrays_ = npz.take();
  return store;
}

const tpu::NpyArray *WeightStore::find(const std::string &name) const {
  auto it = arrays_.find(name);
  return it == arrays_.end() ? nullptr : &it->second;
}

tpu::Result<const tpu::NpyArray *> WeightStore::get(WeightOp op) const {
  std::string name = op.getName().str();
  const tpu::NpyArray *a = find(name);
  if (!a) return tpu::makeError("weight '", name, "' is not in the weight file");
  auto type = cast<RankedTensorType>(op.getType());
  std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
  if (a->shape != shape || a->dtype != dtypeOfElement(type.getElementType()))
    return tpu::makeError("weight '", name, "' is ", a->dtype, " ", tpu::shapeToString(a->shape), " in the file but ",
                          dtypeOfElement(type.getElementType()), " ", tpu::shapeToString(shape), " in the module");
  return a;
}

std::string WeightStore::add(const std::string &base, tpu::NpyArray array) {
  std::string name = base;
  for (int i = 1; arrays_.count(name); ++i) name = base + "_" + std::to_string(i);
  arrays_[name] = std::move(array);
  return name;
}

tpu::Status WeightStore::saveFor(ModuleOp module, const std::string &path, const std::string &attrValue) {
  std::set<std::string> used;
  module.walk([&](WeightOp op) { used.insert(op.getName().str()); });
  tpu::NpzMap out;
  for (const std::string &name : used) {
    auto it = arrays_.find(name);
    if (it == arrays_.end()) return tpu::makeError("weight '", name, "' is not in the weight store");
    out[name] = it->second;
  }
  TPU_RETURN_IF_ERROR(tpu::writeNpz(path, out));
  module->setAttr(kWeightFileAttr, StringAttr::get(module.getContext(), attrValue));
  return tpu::Status::ok();
}

} // namespace top
