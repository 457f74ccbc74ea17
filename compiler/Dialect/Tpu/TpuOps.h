// The Tpu dialect (TpuOps.td): BM1684 chip-level ops in fp32 and int8.
#pragma once

#include "compiler/Backend/Graph.h"
#include "compiler/Backend/Ops/Move.h"
#include "support/Status.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "compiler/Dialect/Tpu/TpuDialect.h.inc"

namespace tpuir {
// The verifier of every Tpu op (TpuOps.td, "Verification").
mlir::LogicalResult verifyTpuOp(mlir::Operation *op);
} // namespace tpuir

// ODS-generated adaptors have unused parameters; this header is also
// included outside compiler/ (tpuc), where that warning is on.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "compiler/Dialect/Tpu/TpuInterfaces.h.inc"
#define GET_OP_CLASSES
#include "compiler/Dialect/Tpu/TpuOps.h.inc"
#pragma GCC diagnostic pop

namespace tpuir {
// tpu.move's `pieces`: values per box (input, 4 sizes, source offset and 4
// strides, destination offset and 4 strides).
constexpr size_t kMovePieceValues = 15;
// The boxes of `pieces` (a count not a multiple of kMovePieceValues is the
// verifier's error; a trailing partial box is ignored here), and back.
std::vector<tpu::backend::MovePiece> movePiecesOf(llvm::ArrayRef<int64_t> pieces);
std::vector<int64_t> movePieceValues(llvm::ArrayRef<tpu::backend::MovePiece> pieces);
// An int8 activation type: element i8 (ui8 if isUnsigned), encoding = its
// scale (f32 attr).
mlir::RankedTensorType int8Type(llvm::ArrayRef<int64_t> shape, float scale, mlir::MLIRContext *ctx,
                                bool isUnsigned = false);
// The scale of an int8/uint8 activation type, nullopt for any other type.
std::optional<float> scaleOf(mlir::Type type);

// The back-end tensor of a value's type: name, shape, dtype and (int8
// activations) scale, no data. An error if the element type has no back-end
// dtype or an int8 activation (`isWeight` false) has no scale.
tpu::Result<tpu::backend::Tensor> backendTensor(mlir::Value v, std::string name, bool isWeight);

// The tensor name an op of a Top or Tpu module carries (its NameLoc), or "".
std::string opName(mlir::Operation *op);
} // namespace tpuir
