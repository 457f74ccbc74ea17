// Builds a Top dialect module from a model's named tensors; shared by the
// model importers (ONNX in OnnxImporter.cpp, any other format beside it).
//
// A tensor is either a constant (an NpyArray the importer computed or read:
// initializers, folded shape arithmetic) or the value of a Top op already
// built. A constant becomes a top.weight (and an entry of the weight .npz)
// only when an op uses it. Ops are created with unranked results, checked by
// their verifier and typed by their shape rule; the first diagnostic is the
// error. The module is func @main with one top.input per model input.
#pragma once

#include "support/Npz.h"
#include "support/Status.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include "compiler/Dialect/Top/TopOps.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tpu::import {

// f32 for every float dtype, i64 for "int64", i1 for "bool".
mlir::Type elementTypeOf(mlir::MLIRContext *ctx, const std::string &dtype);

class TopBuilder {
public:
  // Loads the Top and func dialects; collects the context's diagnostics
  // while the builder lives (they become the error messages).
  TopBuilder(mlir::MLIRContext &ctx, NpzMap &weights);

  mlir::MLIRContext &ctx() { return ctx_; }
  mlir::OpBuilder &b() { return b_; }
  std::vector<std::string> &diagnostics() { return diags_; }

  // --- named tensors ---
  bool isKnown(const std::string &name) const { return values_.count(name) || consts_.count(name); }
  const NpyArray *constOf(const std::string &name) const {
    auto it = consts_.find(name);
    return it == consts_.end() ? nullptr : &it->second;
  }
  void bindConst(const std::string &name, NpyArray a) {
    if (!name.empty()) consts_[name] = std::move(a);
  }
  void bind(const std::string &name, mlir::Value v) {
    if (!name.empty()) values_[name] = v;
  }
  // `to` names the same tensor as `from`.
  void alias(const std::string &to, const std::string &from) {
    if (const NpyArray *c = constOf(from)) consts_[to] = *c;
    else values_[to] = values_[from];
  }
  // The value of a tensor, creating its top.weight if it is a constant.
  Result<mlir::Value> value(const std::string &name);
  // What `v` holds when every shape that comes from the data is at its bound
  // (a top.shape gives its operand's type), by the ops' own evaluate. Only
  // shape arithmetic is followed (tensors of at most 64 elements, from
  // top.shape and constants); anything computed from the data is an error.
  Result<std::vector<int64_t>> intsAtBounds(mlir::Value v);
  mlir::Value none();

  // --- ops ---
  // Creates OpT, verifies it and infers its result types; the error is the
  // last diagnostic (without context: the caller names the model node).
  template <typename OpT>
  Result<OpT> create(mlir::Location loc, mlir::ArrayRef<mlir::Value> operands,
                     mlir::ArrayRef<mlir::NamedAttribute> attrs, unsigned numResults = 1) {
    mlir::Type unranked = mlir::UnrankedTensorType::get(b_.getF32Type());
    llvm::SmallVector<mlir::Type> types(numResults, unranked);
    auto op = b_.create<OpT>(loc, types, operands, attrs);
    diags_.clear();
    // Attributes first (the verifier), then shapes: the shape rules rely on valid attributes.
    if (mlir::failed(mlir::verify(op)) ||
        mlir::failed(mlir::cast<top::ShapeInferInterface>(op.getOperation()).inferShapes()))
      return Status::error(diags_.empty() ? "invalid operation" : diags_.back());
    return op;
  }
  mlir::Location nameLoc(const std::string &name) { return mlir::NameLoc::get(b_.getStringAttr(name)); }

  // --- attributes ---
  mlir::NamedAttribute attr(llvm::StringRef name, mlir::Attribute a) { return b_.getNamedAttr(name, a); }
  mlir::NamedAttribute ints(llvm::StringRef name, llvm::ArrayRef<int64_t> v) {
    return attr(name, b_.getDenseI64ArrayAttr(v));
  }
  mlir::NamedAttribute f64(llvm::StringRef name, double v) { return attr(name, b_.getF64FloatAttr(v)); }
  mlir::NamedAttribute i64(llvm::StringRef name, int64_t v) { return attr(name, b_.getI64IntegerAttr(v)); }
  mlir::NamedAttribute boolean(llvm::StringRef name, bool v) { return attr(name, b_.getBoolAttr(v)); }
  mlir::NamedAttribute str(llvm::StringRef name, llvm::StringRef v) { return attr(name, b_.getStringAttr(v)); }

  // --- the module ---
  // Appends func @main to `module` with one top.input per (name, type) and
  // leaves the builder inside it.
  void beginMain(mlir::ModuleOp module, const std::vector<std::pair<std::string, mlir::Type>> &inputs);
  // Returns the named tensors from @main; an unknown name is an error.
  Status endMain(const std::vector<std::string> &outputs);

protected:
  mlir::MLIRContext &ctx_;
  mlir::OpBuilder b_;
  NpzMap &weights_;
  std::map<std::string, mlir::Value> values_;
  std::map<std::string, NpyArray> consts_;
  std::vector<std::string> diags_;

private:
  mlir::ScopedDiagnosticHandler diagHandler_;
  mlir::func::FuncOp main_;
  llvm::SmallVector<mlir::Type> argTypes_;
  llvm::SmallVector<mlir::Attribute> inputNames_;
};

// A diagnostic as one line, prefixed with the op's name location: "'conv1': message".
std::string diagnosticText(mlir::Diagnostic &d);

// After the ops are built: the structural rewrites (fusions, canonicalizer)
// if `canonicalize`, the module verifier, and only the weights still used
// kept in `weights`. `diagnostics` collects the context's messages (for the
// error); the first form takes the builder's.
Status finishTopModule(mlir::ModuleOp module, NpzMap &weights, bool canonicalize,
                       std::vector<std::string> &diagnostics);
Status finishTopModule(TopBuilder &builder, mlir::ModuleOp module, NpzMap &weights, bool canonicalize);

// Weight file name used for an output .mlir path ("dir/m.top.mlir" -> "m_top_weights.npz").
std::string weightFileNameFor(const std::string &mlirPath);

// Writes the module to `mlirPath` (op locations printed, the module's own
// left out) and its weights beside it under the module's top.weight_file name.
Status writeTopModule(mlir::ModuleOp module, const NpzMap &weights, const std::string &mlirPath);

} // namespace tpu::import
