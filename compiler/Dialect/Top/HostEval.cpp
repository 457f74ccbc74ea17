#include "compiler/Dialect/Top/HostEval.h"

#include "compiler/Dialect/Top/ShapeRules.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"

using namespace mlir;
namespace k = tpu::kernels;

namespace top {

bool hasHostOp(Operation *op) { return k::findHostOp(op->getName().getStringRef()) != nullptr; }

tpu::Result<k::HostAttrs> hostAttrsOf(Operation *op) {
  return hostAttrsOf(op->getName().getStringRef(), op->getAttrs());
}

tpu::Result<k::HostAttrs> hostAttrsOf(llvm::StringRef opName, llvm::ArrayRef<NamedAttribute> list) {
  k::HostAttrs attrs;
  for (NamedAttribute na : list) {
    const std::string name = na.getName().str();
    Attribute a = na.getValue();
    if (auto b = dyn_cast<BoolAttr>(a)) {
      attrs.setInts(name, {b.getValue() ? 1 : 0});
    } else if (auto i = dyn_cast<IntegerAttr>(a)) {
      attrs.setInts(name, {i.getValue().getSExtValue()});
    } else if (auto f = dyn_cast<FloatAttr>(a)) {
      attrs.setReals(name, {f.getValueAsDouble()});
    } else if (auto ints = dyn_cast<DenseI64ArrayAttr>(a)) {
      attrs.setInts(name, std::vector<int64_t>(ints.asArrayRef().begin(), ints.asArrayRef().end()));
    } else if (auto s = dyn_cast<StringAttr>(a)) {
      attrs.setText(name, s.str());
    } else if (auto t = dyn_cast<TypeAttr>(a)) {
      std::string text;
      llvm::raw_string_ostream os(text);
      t.getValue().print(os);
      attrs.setText(name, os.str());
    } else {
      return tpu::makeError(opName.str(), ": attribute '", name, "' has no host form");
    }
  }
  return attrs;
}

LogicalResult inferShapesOnHost(Operation *op, ArrayRef<Type> elements) {
  const k::HostOp *host = k::findHostOp(op->getName().getStringRef());
  auto attrs = hostAttrsOf(op);
  if (!host || !attrs) return op->emitOpError() << (host ? attrs.message() : "has no host op");
  if (op->getNumOperands() < host->minInputs || op->getNumOperands() > host->maxInputs)
    return op->emitOpError() << "takes " << host->minInputs << ".." << host->maxInputs << " operands, has "
                             << op->getNumOperands();
  std::vector<k::Shape> inputs;
  for (unsigned i = 0; i < op->getNumOperands(); ++i) {
    auto t = rankedOperand(op, i);
    if (failed(t)) return failure();
    inputs.emplace_back(t->getShape().begin(), t->getShape().end());
  }
  auto shapes = host->inferShapes(*attrs, inputs);
  if (!shapes) return op->emitOpError() << shapes.message();
  if (elements.size() > 1 && elements.size() != op->getNumResults())
    return op->emitOpError() << elements.size() << " result types for " << op->getNumResults() << " results";
  const Type data = cast<RankedTensorType>(op->getOperand(0).getType()).getElementType();
  for (unsigned i = 0; i < op->getNumResults(); ++i)
    setResult(op, i, (*shapes)[i], elements.empty() ? data : elements[elements.size() > 1 ? i : 0]);
  return success();
}

bool shapeFromData(Value v) {
  Operation *def = v.getDefiningOp();
  const k::HostOp *host = def ? k::findHostOp(def->getName().getStringRef()) : nullptr;
  if (!host) return false;
  std::vector<bool> fromData;
  std::vector<k::Shape> shapes;
  for (Value in : def->getOperands()) {
    auto t = dyn_cast<RankedTensorType>(in.getType());
    if (!t) return true;
    fromData.push_back(shapeFromData(in));
    shapes.emplace_back(t.getShape().begin(), t.getShape().end());
  }
  auto attrs = hostAttrsOf(def);
  return !attrs || k::resultShapeFromData(*host, *attrs, shapes, fromData);
}

tpu::Status checkShapesFromData(Operation *root) {
  tpu::Status st = tpu::Status::ok();
  root->walk([&](Operation *op) {
    if (hasHostOp(op) || op->hasTrait<mlir::OpTrait::IsTerminator>()) return WalkResult::advance();
    for (Value v : op->getOperands()) {
      if (!shapeFromData(v)) continue;
      std::string where;
      llvm::raw_string_ostream os(where);
      op->getLoc().print(os);
      os << " reads a result of " << v.getDefiningOp()->getName() << " at ";
      v.getDefiningOp()->getLoc().print(os);
      st = tpu::makeError(op->getName().getStringRef().str(), " at ", os.str(),
                          ", whose shape comes from the data: only host ops (gather, cast, ...) and graph outputs "
                          "may read it");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return st;
}

tpu::Status evaluateOnHost(Operation *op, EvalContext &ctx) {
  auto attrs = hostAttrsOf(op);
  if (!attrs) return ctx.error(attrs.message());
  std::vector<k::ConstView> inputs;
  for (unsigned i = 0; i < ctx.numOperands(); ++i) inputs.push_back({ctx.operand(i).shape, ctx.operand(i).ptr()});
  auto results = k::runHostOp(op->getName().getStringRef(), *attrs, inputs);
  if (!results) return ctx.error(results.message());
  for (unsigned i = 0; i < ctx.numResults(); ++i) {
    k::HostTensor &r = (*results)[i];
    ctx.setResult(i, {r.shape, std::make_shared<std::vector<float>>(std::move(r.values))});
  }
  return tpu::Status::ok();
}

} // namespace top
