#include "compiler/Dialect/Tpu/TpuOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

#include "compiler/Dialect/Tpu/TpuDialect.cpp.inc"

void tpuir::TpuDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "compiler/Dialect/Tpu/TpuOps.cpp.inc"
      >();
}

namespace tpuir {

mlir::RankedTensorType int8Type(llvm::ArrayRef<int64_t> shape, float scale, mlir::MLIRContext *ctx,
                                bool isUnsigned) {
  mlir::Builder b(ctx);
  mlir::Type elem = isUnsigned ? mlir::Type(b.getIntegerType(8, /*isSigned=*/false)) : b.getIntegerType(8);
  return mlir::RankedTensorType::get(shape, elem, b.getF32FloatAttr(scale));
}

std::optional<float> scaleOf(mlir::Type type) {
  auto t = mlir::dyn_cast<mlir::RankedTensorType>(type);
  if (!t || !t.getElementType().isInteger(8)) return std::nullopt;
  auto s = mlir::dyn_cast_or_null<mlir::FloatAttr>(t.getEncoding());
  if (!s) return std::nullopt;
  return float(s.getValueAsDouble());
}

} // namespace tpuir

#define GET_OP_CLASSES
#include "compiler/Dialect/Tpu/TpuOps.cpp.inc"
