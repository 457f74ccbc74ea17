#include "compiler/Preprocess/PreprocessAttr.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace tpu::preprocess {

void recordConfig(mlir::ModuleOp module, const Config &config) {
  mlir::Builder b(module.getContext());
  llvm::SmallVector<mlir::NamedAttribute> fields;
  fields.push_back(b.getNamedAttr(field::kMean, b.getF64ArrayAttr(config.mean)));
  fields.push_back(b.getNamedAttr(field::kScale, b.getF64ArrayAttr(config.scale)));
  fields.push_back(b.getNamedAttr(field::kPixelFormat, b.getStringAttr(pixelFormatName(config.pixelFormat))));
  fields.push_back(b.getNamedAttr(field::kChannelFormat, b.getStringAttr(channelFormatName(config.channelFormat))));
  fields.push_back(b.getNamedAttr(field::kResizeDims, b.getI64ArrayAttr(config.resizeDims)));
  fields.push_back(b.getNamedAttr(field::kKeepAspectRatio, b.getBoolAttr(config.keepAspectRatio)));
  module->setAttr(kPreprocessAttr, b.getDictionaryAttr(fields));
}

Result<Config> readConfig(mlir::ModuleOp module) {
  Config c;
  auto dict = module->getAttrOfType<mlir::DictionaryAttr>(kPreprocessAttr);
  if (!module->hasAttr(kPreprocessAttr)) return c;
  if (!dict) return makeError(kPreprocessAttr, " is not a dictionary");
  auto bad = [](const char *name) {
    return makeError(kPreprocessAttr, ": field '", name, "' is missing or malformed");
  };
  auto numbers = [&](const char *name, std::vector<double> &out) -> Status {
    auto arr = dict.getAs<mlir::ArrayAttr>(name);
    if (!arr) return bad(name);
    for (mlir::Attribute a : arr) {
      auto f = llvm::dyn_cast<mlir::FloatAttr>(a);
      if (!f) return bad(name);
      out.push_back(f.getValueAsDouble());
    }
    return Status::ok();
  };
  TPU_RETURN_IF_ERROR(numbers(field::kMean, c.mean));
  TPU_RETURN_IF_ERROR(numbers(field::kScale, c.scale));
  ConfigText text;
  auto pf = dict.getAs<mlir::StringAttr>(field::kPixelFormat);
  auto cf = dict.getAs<mlir::StringAttr>(field::kChannelFormat);
  if (!pf) return bad(field::kPixelFormat);
  if (!cf) return bad(field::kChannelFormat);
  text.pixelFormat = pf.str();
  text.channelFormat = cf.str();
  auto parsed = parseConfig(text);
  if (!parsed) return makeError(kPreprocessAttr, ": ", parsed.message());
  c.pixelFormat = parsed->pixelFormat;
  c.channelFormat = parsed->channelFormat;
  auto dims = dict.getAs<mlir::ArrayAttr>(field::kResizeDims);
  if (!dims || (dims.size() != 0 && dims.size() != 2)) return bad(field::kResizeDims);
  for (mlir::Attribute a : dims) {
    auto i = llvm::dyn_cast<mlir::IntegerAttr>(a);
    if (!i || i.getInt() < 1) return bad(field::kResizeDims);
    c.resizeDims.push_back(i.getInt());
  }
  auto keep = dict.getAs<mlir::BoolAttr>(field::kKeepAspectRatio);
  if (!keep) return bad(field::kKeepAspectRatio);
  c.keepAspectRatio = keep.getValue();
  return c;
}

} // namespace tpu::preprocess
