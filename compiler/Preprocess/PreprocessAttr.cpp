#include "compiler/Preprocess/PreprocessAttr.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace tpu::preprocess {

void recordConfig(mlir::ModuleOp module, const Config &config) {
  mlir::Builder b(module.getContext());
  llvm::SmallVector<mlir::NamedAttribute> fields;
  fields.push_back(b.getNamedAttr("mean", b.getF64ArrayAttr(config.mean)));
  fields.push_back(b.getNamedAttr("scale", b.getF64ArrayAttr(config.scale)));
  fields.push_back(b.getNamedAttr("pixel_format", b.getStringAttr(pixelFormatName(config.pixelFormat))));
  fields.push_back(b.getNamedAttr("channel_format", b.getStringAttr(channelFormatName(config.channelFormat))));
  fields.push_back(b.getNamedAttr("resize_dims", b.getI64ArrayAttr(config.resizeDims)));
  fields.push_back(b.getNamedAttr("keep_aspect_ratio", b.getBoolAttr(config.keepAspectRatio)));
  module->setAttr(kPreprocessAttr, b.getDictionaryAttr(fields));
}

Result<Config> readConfig(mlir::ModuleOp module) {
  Config c;
  auto dict = module->getAttrOfType<mlir::DictionaryAttr>(kPreprocessAttr);
  if (!module->hasAttr(kPreprocessAttr)) return c;
  if (!dict) return makeError(kPreprocessAttr, " is not a dictionary");
  auto bad = [](const char *field) { return makeError(kPreprocessAttr, ": field '", field, "' is missing or malformed"); };
  auto numbers = [&](const char *field, std::vector<double> &out) -> Status {
    auto arr = dict.getAs<mlir::ArrayAttr>(field);
    if (!arr) return bad(field);
    for (mlir::Attribute a : arr) {
      auto f = llvm::dyn_cast<mlir::FloatAttr>(a);
      if (!f) return bad(field);
      out.push_back(f.getValueAsDouble());
    }
    return Status::ok();
  };
  TPU_RETURN_IF_ERROR(numbers("mean", c.mean));
  TPU_RETURN_IF_ERROR(numbers("scale", c.scale));
  ConfigText text;
  auto pf = dict.getAs<mlir::StringAttr>("pixel_format");
  auto cf = dict.getAs<mlir::StringAttr>("channel_format");
  if (!pf) return bad("pixel_format");
  if (!cf) return bad("channel_format");
  text.pixelFormat = pf.str();
  text.channelFormat = cf.str();
  auto parsed = parseConfig(text);
  if (!parsed) return makeError(kPreprocessAttr, ": ", parsed.message());
  c.pixelFormat = parsed->pixelFormat;
  c.channelFormat = parsed->channelFormat;
  auto dims = dict.getAs<mlir::ArrayAttr>("resize_dims");
  if (!dims || (dims.size() != 0 && dims.size() != 2)) return bad("resize_dims");
  for (mlir::Attribute a : dims) {
    auto i = llvm::dyn_cast<mlir::IntegerAttr>(a);
    if (!i || i.getInt() < 1) return bad("resize_dims");
    c.resizeDims.push_back(i.getInt());
  }
  auto keep = dict.getAs<mlir::BoolAttr>("keep_aspect_ratio");
  if (!keep) return bad("keep_aspect_ratio");
  c.keepAspectRatio = keep.getValue();
  return c;
}

} // namespace tpu::preprocess
