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

void top::TopDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "compiler/Dialect/Top/TopOps.cpp.inc"
      >();
}
