#include "compiler/Import/tflite/TfliteImporter.h"
#include "compiler/Calibration/CalibrationTable.h"
#include "compiler/Import/TopBuilder.h"
#include "compiler/Import/tflite/TfliteOpImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"

#include <cmath>
#include <fstream>

using namespace mlir;

namespace tpu::tflite {

const OpTable &tfliteOpTable() {
  static const OpTable table = [] {
    OpTable t;
    for (auto registerFamily :
         {registerActivationOps, registerConvOps, registerDataMovementOps, registerElementwiseOps, registerMatMulOps,
          registerPoolOps, registerQuantizeOps, registerReduceOps, registerResizeOps, registerShapeOps})
      registerFamily(t);
    return t;
  }();
  return table;
}

Status TfliteImporter::run(ModuleOp module, const ImportOptions &opts) {
  // Every unsupported operator at once, each with its index and code.
  std::vector<std::string> unsupported;
  for (const Operator &op : model_.operators) {
    if (!tfliteOpTable().find(op))
      unsupported.push_back(op.describe() + (op.builtinCode == CUSTOM ? "" : " builtin code " + std::to_string(op.builtinCode)));
  }
  if (!unsupported.empty()) {
    std::string msg = "unsupported operator" + std::string(unsupported.size() > 1 ? "s: " : ": ");
    for (size_t i = 0; i < unsupported.size() && i < 5; ++i) msg += (i ? "; " : "") + unsupported[i];
    if (unsupported.size() > 5) msg += " and " + std::to_string(unsupported.size() - 5) + " more";
    return Status::error(msg);
  }
  if (!opts.inputShapes.empty() && opts.inputShapes.size() != model_.inputs.size())
    return makeError("--input-shapes gives ", opts.inputShapes.size(), " shapes but the model has ",
                     model_.inputs.size(), " inputs");
  for (const Tensor &t : model_.tensors) tensorNames_.insert(t.name);
  SmallVector<Type> argTypes;
  for (size_t i = 0; i < model_.inputs.size(); ++i) {
    const Tensor &t = tensor(model_.inputs[i]);
    if (ElementType(t.type) != ElementType::Float32 && !t.quant.present())
      return makeError("input '", t.name, "' has type ", t.typeName, "; float32 or quantized inputs are supported");
    std::vector<int64_t> dims = opts.inputShapes.empty() ? t.shape : opts.inputShapes[i];
    if (!opts.inputShapes.empty() && dims.size() != t.shape.size())
      return makeError("--input-shapes gives rank ", dims.size(), " for input '", t.name, "' of rank ", t.shape.size());
    argTypes.push_back(RankedTensorType::get(dims, b_.getF32Type()));
  }
  b_.setInsertionPointToEnd(module.getBody());
  auto func = b_.create<func::FuncOp>(b_.getUnknownLoc(), "main", b_.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  b_.setInsertionPointToEnd(entry);
  SmallVector<mlir::Attribute> inputNames, outputNames;
  for (size_t i = 0; i < model_.inputs.size(); ++i) {
    const std::string &name = tensor(model_.inputs[i]).name;
    Value in = b_.create<top::InputOp>(loc(name), argTypes[i], entry->getArgument(i)).getOutput();
    if (shapeOf(in).size() == 4) { // the one layout change of an NHWC input
      auto v = toNchw(in, name);
      if (!v) return v.status();
      in = *v;
    }
    bind(model_.inputs[i], in);
    inputNames.push_back(b_.getStringAttr(name));
  }
  for (const Operator &op : model_.operators) {
    if (op.outputs.empty()) return makeError(op.describe(), ": has no output");
    for (int32_t o : op.outputs)
      if (values_.count(o) || folded_.count(o)) return makeError(op.describe(), ": output '", tensor(o).name, "' is produced twice");
    for (int32_t o : op.outputs)
      if (tensor(o).isConstant() && op.builtinCode != DEQUANTIZE)
        return makeError(op.describe(), ": output '", tensor(o).name, "' is a constant");
    TPU_RETURN_IF_ERROR((*tfliteOpTable().find(op))(*this, op));
    for (int32_t o : op.outputs)
      if (const Tensor &t = tensor(o); t.quant.present() && !t.isConstant() && values_.count(o))
        if (auto name = dyn_cast<NameLoc>(values_[o].getLoc())) ranges_.emplace(name.getName().str(), rangeOf(t));
  }
  for (int32_t i : model_.inputs) // the input's range is where the model quantizes it
    for (const Operator &op : model_.operators)
      if (op.builtinCode == QUANTIZE && op.inputs.size() == 1 && op.inputs[0] == i)
        ranges_.emplace(tensor(i).name, rangeOf(tensor(op.outputs[0])));
  SmallVector<Value> results;
  SmallVector<Type> resultTypes;
  for (int32_t o : model_.outputs) {
    auto it = values_.find(o);
    if (it == values_.end()) return makeError("output '", tensor(o).name, "' is not produced by any operator");
    Value v = it->second;
    if (shapeOf(v).size() == 4) { // back to the model's NHWC interface
      const std::string &name = tensor(o).name;
      auto n = toNhwc(v, name);
      if (!n) return n.status();
      // The returned value carries the output's name (every stage names outputs by it), the op before it _nchw.
      auto producer = dyn_cast<NameLoc>(v.getLoc());
      if (*n != v && producer && producer.getName() == name) {
        std::string inner = uniqueName(name + "_nchw");
        v.getDefiningOp()->setLoc(loc(inner));
        n->getDefiningOp()->setLoc(loc(name));
        if (auto r = ranges_.find(name); r != ranges_.end()) ranges_[inner] = r->second;
      }
      v = *n;
    }
    results.push_back(v);
    resultTypes.push_back(v.getType());
    outputNames.push_back(b_.getStringAttr(tensor(o).name));
  }
  b_.create<func::ReturnOp>(b_.getUnknownLoc(), results);
  func.setFunctionType(b_.getFunctionType(argTypes, resultTypes));
  func->setAttr(top::kInputNamesAttr, b_.getArrayAttr(inputNames));
  func->setAttr(top::kOutputNamesAttr, b_.getArrayAttr(outputNames));
  return Status::ok();
}

namespace {

Status writeCalibration(const std::map<std::string, QuantRange> &ranges, ModuleOp module, const std::string &path) {
  calib::CalibrationTable table;
  table.method = "tflite";
  std::set<std::string> names;
  module.walk([&](Operation *op) {
    if (auto name = dyn_cast<NameLoc>(op->getLoc())) names.insert(name.getName().str());
  });
  for (const auto &[name, r] : ranges) {
    double threshold = std::max(std::abs(r.min), std::abs(r.max));
    if (names.count(name) && threshold > 0) table.tensors[name] = {threshold, r.min, r.max};
  }
  if (table.tensors.empty()) return makeError(path, ": the model carries no activation ranges (not a quantized model)");
  return table.save(path);
}

} // namespace

QuantRange rangeOf(const Tensor &t) {
  double lo = 0, hi = 0;
  switch (ElementType(t.type)) {
  case ElementType::Int8: lo = -128, hi = 127; break;
  case ElementType::UInt8: lo = 0, hi = 255; break;
  case ElementType::Int16: lo = -32768, hi = 32767; break;
  default: // a float tensor with recorded min/max
    if (!t.quant.min.empty() && !t.quant.max.empty()) return {t.quant.min[0], t.quant.max[0]};
    return {};
  }
  double scale = t.quant.scale.at(0), zero = t.quant.zeroPoint.empty() ? 0.0 : double(t.quant.zeroPoint[0]);
  return {scale * (lo - zero), scale * (hi - zero)};
}

Result<ImportedModule> importModel(MLIRContext &context, const Model &model, const ImportOptions &options) {
  context.loadDialect<top::TopDialect, func::FuncDialect>();
  ImportedModule out;
  TfliteImporter im(context, model, out.weights);
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    im.diagnostics().push_back(import::diagnosticText(d));
    return success();
  });
  out.module = ModuleOp::create(UnknownLoc::get(&context));
  ModuleOp module = *out.module;
  module->setAttr(top::kWeightFileAttr, StringAttr::get(&context, options.weightFile));
  if (options.annotateModule) options.annotateModule(module);
  TPU_RETURN_IF_ERROR(im.run(module, options));
  TPU_RETURN_IF_ERROR(import::finishTopModule(module, out.weights, options.canonicalize, im.diagnostics()));
  if (!options.calibrationPath.empty()) TPU_RETURN_IF_ERROR(writeCalibration(im.ranges(), module, options.calibrationPath));
  return out;
}

Status importTfliteFile(const std::string &tflitePath, const std::string &mlirPath, ImportOptions options) {
  auto model = loadModel(tflitePath);
  if (!model) return model.status();
  options.weightFile = import::weightFileNameFor(mlirPath);
  MLIRContext context;
  auto imported = importModel(context, *model, options);
  if (!imported) return Status(imported.status()).prefix(tflitePath);
  return import::writeTopModule(*imported->module, imported->weights, mlirPath);
}

bool isTfliteModel(const std::string &path) {
  if (path.size() > 7 && path.compare(path.size() - 7, 7, ".tflite") == 0) return true;
  std::ifstream in(path, std::ios::binary);
  char head[8] = {};
  return in.read(head, sizeof head) && std::string(head + 4, 4) == "TFL3";
}

} // namespace tpu::tflite