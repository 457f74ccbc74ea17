// What the TFLite operator handlers (compiler/Import/tflite/Ops/<Family>.cpp)
// share: the importer's operator-level API (operands in the module's NCHW
// layout or the model's NHWC order, op building, fused activations), the
// handler table they register into, and the helpers for the common handler
// shapes (unary, broadcast binary).
//
// Adding a TFLite operator: give its BuiltinOperator code a name in `Code`,
// write its handler in the file of its family and add it in that file's
// register function; a new family adds its register function to the list in
// TfliteImporter.cpp.
#pragma once

#include "compiler/Import/tflite/TfliteImporter.h"

#include "compiler/Dialect/Top/TopOps.h"
#include "compiler/Import/ConstFold.h"

#include "mlir/IR/Builders.h"

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace tpu::tflite {

// BuiltinOperator codes of the operators imported here.
enum Code : int32_t {
  ADD = 0,
  AVERAGE_POOL_2D = 1,
  CONCATENATION = 2,
  CONV_2D = 3,
  DEPTHWISE_CONV_2D = 4,
  DEQUANTIZE = 6,
  FULLY_CONNECTED = 9,
  LOGISTIC = 14,
  MAX_POOL_2D = 17,
  MUL = 18,
  RELU = 19,
  RELU6 = 21,
  RESHAPE = 22,
  RESIZE_BILINEAR = 23,
  SOFTMAX = 25,
  TANH = 28,
  CUSTOM = 32,
  PAD = 34,
  TRANSPOSE = 39,
  MEAN = 40,
  SUB = 41,
  DIV = 42,
  SQUEEZE = 43,
  STRIDED_SLICE = 45,
  SPLIT = 49,
  PRELU = 54,
  MAXIMUM = 55,
  MINIMUM = 57,
  PADV2 = 60,
  SLICE = 65,
  TRANSPOSE_CONV = 67,
  EXPAND_DIMS = 70,
  SUM = 74,
  REDUCE_MAX = 82,
  QUANTIZE = 114,
  RESIZE_NEAREST_NEIGHBOR = 97,
  LEAKY_RELU = 98,
  HARD_SWISH = 117,
};

// NHWC dim i is NCHW dim kToNchwAxis[i]; NCHW = permute(NHWC, kNhwcToNchw).
inline constexpr int64_t kToNchwAxis[4] = {0, 2, 3, 1};
inline const std::vector<int64_t> kNhwcToNchw = {0, 3, 1, 2}, kNchwToNhwc = {0, 2, 3, 1};

std::vector<int64_t> shapeOf(mlir::Value v);
std::vector<int64_t> permuted(const std::vector<int64_t> &shape, const std::vector<int64_t> &order);

// SAME: TFLite's padding, the extra row/column at the end; VALID: none.
std::pair<int64_t, int64_t> windowPads(Padding p, int64_t in, int64_t k, int64_t s, int64_t d);

// Builds the Top module of one TFLite subgraph: tensors by index, 4-D
// activations held in NCHW, constants turned into weights on first use.
class TfliteImporter {
public:
  TfliteImporter(mlir::MLIRContext &ctx, const Model &model, NpzMap &weights)
      : ctx_(ctx), b_(&ctx), model_(model), weights_(weights) {}
  std::vector<std::string> &diagnostics() { return diags_; }
  const std::map<std::string, QuantRange> &ranges() const { return ranges_; }
  Status run(mlir::ModuleOp module, const ImportOptions &options);

  // --- operator inputs ---
  const Tensor &tensor(int32_t i) const { return model_.tensors[i]; }
  bool present(const Operator &op, size_t i) const { return i < op.inputs.size() && op.inputs[i] >= 0; }
  // Input i if it is a constant (of the model or folded at import), else null.
  const Tensor *constant(const Operator &op, size_t i) const;
  // A constant input as integers (shape, axes, paddings...).
  Result<std::vector<int64_t>> ints(const Operator &op, size_t i, const std::string &what);
  Result<int64_t> axisIn(const Operator &op, int64_t axis, int64_t rank);
  // Input i as held in the module (4-D in NCHW); constants become weights.
  Result<mlir::Value> operand(const Operator &op, size_t i);
  // Input i in the model's own (NHWC) element order.
  Result<mlir::Value> nativeOperand(const Operator &op, size_t i);
  // The model's (NHWC) shape of input i.
  Result<std::vector<int64_t>> nativeShape(const Operator &op, size_t i);
  // Elementwise operand i broadcast against an output of rank `rank`: for a
  // 4-D output, a lower-rank operand is first given the NHWC rank-4 shape.
  Result<mlir::Value> broadcastOperand(const Operator &op, size_t i, size_t rank);
  // The rank of input i if it is known yet (a constant or a produced value), else 0.
  size_t rankOf(const Operator &op, size_t i);

  // --- names and attributes ---
  std::string outName(const Operator &op, size_t k = 0) const { return tensor(op.outputs.at(k)).name; }
  // `base` if still free (a tensor's own name is kept for the op producing it),
  // else base_1, base_2... avoiding every tensor name of the model.
  std::string uniqueName(const std::string &base);
  mlir::Location loc(const std::string &name) { return mlir::NameLoc::get(b_.getStringAttr(name)); }
  mlir::NamedAttribute attr(mlir::StringRef n, mlir::Attribute a) { return b_.getNamedAttr(n, a); }
  mlir::NamedAttribute i64s(mlir::StringRef n, mlir::ArrayRef<int64_t> v) {
    return attr(n, b_.getDenseI64ArrayAttr(v));
  }
  mlir::NamedAttribute f64s(mlir::StringRef n, mlir::ArrayRef<double> v) { return attr(n, b_.getDenseF64ArrayAttr(v)); }
  mlir::NamedAttribute i64(mlir::StringRef n, int64_t v) { return attr(n, b_.getI64IntegerAttr(v)); }
  mlir::NamedAttribute f64(mlir::StringRef n, double v) { return attr(n, b_.getF64FloatAttr(v)); }
  mlir::NamedAttribute boolean(mlir::StringRef n, bool v) { return attr(n, b_.getBoolAttr(v)); }
  mlir::NamedAttribute str(mlir::StringRef n, mlir::StringRef v) { return attr(n, b_.getStringAttr(v)); }

  // --- building ---
  mlir::OpBuilder &builder() { return b_; }
  // Verifies a new op and infers its result types; the error names `context`,
  // with the last diagnostic or `fallback`.
  Status verified(mlir::Operation *op, const std::string &context, const char *fallback);
  // Creates op OpT named `name`, verifies it and infers its result types.
  template <typename OpT>
  Result<mlir::Value> build(const std::string &name, mlir::ArrayRef<mlir::Value> operands,
                            mlir::ArrayRef<mlir::NamedAttribute> attrs, const std::string &context) {
    auto op = b_.create<OpT>(loc(uniqueName(name)), mlir::TypeRange{mlir::UnrankedTensorType::get(b_.getF32Type())},
                             operands, attrs);
    TPU_RETURN_IF_ERROR(verified(op, context, "invalid operation"));
    return op->getResult(0);
  }
  mlir::Value none();
  mlir::Value weight(const std::string &base, NpyArray array);
  // Reorders v; a reorder that moves no data is a reshape.
  Result<mlir::Value> permute(mlir::Value v, const std::vector<int64_t> &order, const std::string &name);
  Result<mlir::Value> toNchw(mlir::Value nhwc, const std::string &name) {
    return permute(nhwc, kNhwcToNchw, name + "_nchw");
  }
  Result<mlir::Value> toNhwc(mlir::Value nchw, const std::string &name) {
    return permute(nchw, kNchwToNhwc, name + "_nhwc");
  }

  // --- outputs ---
  void bind(int32_t idx, mlir::Value v) { values_[idx] = v; }
  // Binds output k to `native`, a value in the model's NHWC order.
  Status bindNative(const Operator &op, size_t k, mlir::Value native);
  // Output `idx` is the constant `folded` (computed at import, float32).
  void bindConstant(int32_t idx, Tensor folded) { folded_[idx] = std::move(folded); }
  // The fused activation on v, the last op carrying the output tensor's name.
  Result<mlir::Value> activate(mlir::Value v, Activation a, const std::string &name, const Operator &op);
  // op's main Top op built as `name` (+ "_pre_act" when an activation follows), then the activation.
  template <typename OpT>
  Status emit(const Operator &op, mlir::ArrayRef<mlir::Value> operands, mlir::ArrayRef<mlir::NamedAttribute> attrs,
              Activation a = Activation::None) {
    std::string name = outName(op);
    auto v = build<OpT>(a == Activation::None ? name : name + "_pre_act", operands, attrs, op.describe());
    if (!v) return v.status();
    auto out = activate(*v, a, name, op);
    if (!out) return out.status();
    bind(op.outputs[0], *out);
    return Status::ok();
  }

private:
  mlir::MLIRContext &ctx_;
  mlir::OpBuilder b_;
  const Model &model_;
  NpzMap &weights_;
  std::map<int32_t, mlir::Value> values_;    // activations by tensor index
  std::map<int32_t, Tensor> folded_;         // constants computed at import (DEQUANTIZE of a constant), float32
  std::set<std::string> tensorNames_, used_; // the model's tensor names; names given to values
  std::map<std::string, QuantRange> ranges_; // Top value name -> the model's range
  std::vector<std::string> diags_;
};

using OpHandler = std::function<Status(TfliteImporter &, const Operator &)>;

// The handlers by BuiltinOperator code, and of CUSTOM operators by custom code.
class OpTable {
public:
  void add(int32_t builtinCode, OpHandler handler) { builtin_[builtinCode] = std::move(handler); }
  void addCustom(const std::string &customCode, OpHandler handler) { custom_[customCode] = std::move(handler); }
  const OpHandler *find(const Operator &op) const;

private:
  std::map<int32_t, OpHandler> builtin_;
  std::map<std::string, OpHandler> custom_;
};

// Every handler.
const OpTable &tfliteOpTable();

// One per file under compiler/Import/tflite/Ops/.
void registerActivationOps(OpTable &t);
void registerConvOps(OpTable &t);
void registerDataMovementOps(OpTable &t);
void registerElementwiseOps(OpTable &t);
void registerMatMulOps(OpTable &t);
void registerPoolOps(OpTable &t);
void registerQuantizeOps(OpTable &t);
void registerReduceOps(OpTable &t);
void registerResizeOps(OpTable &t);
void registerShapeOps(OpTable &t);

// --- helpers for the common handler shapes ---

// A two-input op broadcasting its operands, with the operator's fused activation.
template <typename OpT> OpHandler binaryHandler() {
  return [](TfliteImporter &im, const Operator &op) -> Status {
    if (op.inputs.size() != 2) return makeError(op.describe(), ": needs 2 inputs");
    size_t rank = std::max(im.rankOf(op, 0), im.rankOf(op, 1));
    auto a = im.broadcastOperand(op, 0, rank), b = im.broadcastOperand(op, 1, rank);
    if (!a) return a.status();
    if (!b) return b.status();
    return im.emit<OpT>(op, {*a, *b}, {}, op.options.activation);
  };
}

// A one-input op with the attributes `attrs` gives.
template <typename OpT>
OpHandler
unaryHandler(std::function<std::vector<mlir::NamedAttribute>(TfliteImporter &, const Operator &)> attrs = nullptr) {
  return [attrs](TfliteImporter &im, const Operator &op) -> Status {
    auto x = im.operand(op, 0);
    if (!x) return x.status();
    return im.emit<OpT>(op, {*x}, attrs ? attrs(im, op) : std::vector<mlir::NamedAttribute>{});
  };
}

} // namespace tpu::tflite
