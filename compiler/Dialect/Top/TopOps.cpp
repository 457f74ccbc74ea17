// Top dialect registration. The ops are defined family by family in
// Ops/<Family>.cpp.
#include "compiler/Dialect/Top/TopOps.h"

#include "compiler/Dialect/Top/TopDialect.cpp.inc"
#include "compiler/Dialect/Top/TopInterfaces.cpp.inc"

mlir::Operation *top::fusibleActivation(mlir::Value v) {
  if (!v.hasOneUse()) return nullptr;
  mlir::Operation *user = *v.getUsers().begin();
  return user->hasTrait<OpTrait::FusesIntoProducer>() ? user : nullptr;
}

tpu::Result<std::vector<top::TensorValue>> top::evaluateOp(mlir::Operation *op, std::vector<TensorValue> operands,
                                                           std::string label) {
  auto evaluable = mlir::dyn_cast<EvaluateInterface>(op);
  if (!evaluable) return tpu::makeError(label, ": the interpreter does not implement this op");
  std::vector<std::vector<int64_t>> shapes;
  for (mlir::Value r : op->getResults()) {
    auto t = mlir::cast<mlir::RankedTensorType>(r.getType()).getShape();
    shapes.emplace_back(t.begin(), t.end());
  }
  EvalContext ctx(std::move(operands), std::move(shapes), std::move(label));
  TPU_RETURN_IF_ERROR(evaluable.evaluate(ctx));
  std::vector<TensorValue> results;
  for (unsigned i = 0; i < op->getNumResults(); ++i) results.push_back(std::move(ctx.result(i)));
  return results;
}

void top::TopDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "compiler/Dialect/Top/TopOps.cpp.inc"
      >();
}
