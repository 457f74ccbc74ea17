#include "compiler/Import/tflite/TfliteImporter.h"
#include "compiler/Calibration/CalibrationTable.h"
#include "compiler/Dialect/Top/TopOps.h"
#include "compiler/Import/ConstFold.h"
#include "compiler/Import/TopBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <set>

using namespace mlir;

namespace tpu::tflite {

namespace {

// BuiltinOperator codes of the operators imported here.
enum Code : int32_t {
  ADD = 0, AVERAGE_POOL_2D = 1, CONCATENATION = 2, CONV_2D = 3, DEPTHWISE_CONV_2D = 4, DEQUANTIZE = 6,
  FULLY_CONNECTED = 9, LOGISTIC = 14, MAX_POOL_2D = 17, MUL = 18, RELU = 19, RELU6 = 21, RESHAPE = 22,
  RESIZE_BILINEAR = 23, SOFTMAX = 25, TANH = 28, CUSTOM = 32, PAD = 34, TRANSPOSE = 39, MEAN = 40, SUB = 41,
  DIV = 42, SQUEEZE = 43, STRIDED_SLICE = 45, SPLIT = 49, PRELU = 54, MAXIMUM = 55, MINIMUM = 57, PADV2 = 60,
  SLICE = 65, TRANSPOSE_CONV = 67, EXPAND_DIMS = 70, SUM = 74, REDUCE_MAX = 82, QUANTIZE = 114,
  RESIZE_NEAREST_NEIGHBOR = 97, LEAKY_RELU = 98, HARD_SWISH = 117,
};
const char *const kTransposeConvBias = "Convolution2DTransposeBias"; // MediaPipe's custom op

// NHWC dim i is NCHW dim kToNchwAxis[i]; NCHW = permute(NHWC, kNhwcToNchw).
constexpr int64_t kToNchwAxis[4] = {0, 2, 3, 1};
const std::vector<int64_t> kNhwcToNchw = {0, 3, 1, 2}, kNchwToNhwc = {0, 2, 3, 1};

std::vector<int64_t> shapeOf(Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  return std::vector<int64_t>(t.getShape().begin(), t.getShape().end());
}
std::vector<int64_t> permuted(const std::vector<int64_t> &shape, const std::vector<int64_t> &order) {
  std::vector<int64_t> out;
  for (int64_t o : order) out.push_back(shape[o]);
  return out;
}
// A permutation that keeps the relative order of the dims larger than 1 moves no data.
bool movesData(const std::vector<int64_t> &shape, const std::vector<int64_t> &order) {
  int64_t last = -1;
  for (int64_t o : order)
    if (shape[o] != 1) {
      if (o < last) return true;
      last = o;
    }
  return false;
}

// SAME: TFLite's padding, the extra row/column at the end; VALID: none.
std::pair<int64_t, int64_t> windowPads(Padding p, int64_t in, int64_t k, int64_t s, int64_t d) {
  if (p == Padding::Valid) return {0, 0};
  int64_t out = (in + s - 1) / s;
  int64_t total = std::max<int64_t>(0, (out - 1) * s + (k - 1) * d + 1 - in);
  return {total / 2, total - total / 2};
}

class Importer {
public:
  Importer(MLIRContext &ctx, const Model &model, NpzMap &weights) : ctx_(ctx), b_(&ctx), model_(model), weights_(weights) {}
  std::vector<std::string> &diagnostics() { return diags_; }
  const std::map<std::string, QuantRange> &ranges() const { return ranges_; }
  Status run(ModuleOp module, const ImportOptions &options);

private:
  using Handler = std::function<Status(Importer &, const Operator &)>;
  static const std::map<int32_t, Handler> &handlers();

  const Tensor &tensor(int32_t i) const { return model_.tensors[i]; }
  bool present(const Operator &op, size_t i) const { return i < op.inputs.size() && op.inputs[i] >= 0; }
  const Tensor *constant(const Operator &op, size_t i) const {
    if (!present(op, i) || values_.count(op.inputs[i])) return nullptr;
    if (auto it = folded_.find(op.inputs[i]); it != folded_.end()) return &it->second;
    const Tensor &t = tensor(op.inputs[i]);
    return t.isConstant() ? &t : nullptr;
  }
  Result<std::vector<int64_t>> ints(const Operator &op, size_t i, const std::string &what) {
    const Tensor *t = constant(op, i);
    if (!t) return makeError(op.describe(), ": input ", i, " (", what, ") must be a constant");
    auto v = integerValues(*t);
    if (!v) return Status(v.status()).prefix(op.describe());
    return v;
  }
  Result<int64_t> axisIn(const Operator &op, int64_t axis, int64_t rank) {
    auto a = onnx::normalizeAxis(axis, rank);
    if (!a) return Status(a.status()).prefix(op.describe());
    return a;
  }
  std::string outName(const Operator &op, size_t k = 0) const { return tensor(op.outputs.at(k)).name; }
  // `base` if still free (a tensor's own name is kept for the op producing it),
  // else base_1, base_2... avoiding every tensor name of the model.
  std::string uniqueName(const std::string &base) {
    if (used_.insert(base).second) return base;
    std::string name;
    for (int i = 1;; ++i) {
      name = base + "_" + std::to_string(i);
      if (!tensorNames_.count(name) && used_.insert(name).second) return name;
    }
  }
  Location loc(const std::string &name) { return NameLoc::get(b_.getStringAttr(name)); }
  NamedAttribute attr(StringRef n, mlir::Attribute a) { return b_.getNamedAttr(n, a); }
  NamedAttribute i64s(StringRef n, ArrayRef<int64_t> v) { return attr(n, b_.getDenseI64ArrayAttr(v)); }
  NamedAttribute i64(StringRef n, int64_t v) { return attr(n, b_.getI64IntegerAttr(v)); }
  NamedAttribute f64(StringRef n, double v) { return attr(n, b_.getF64FloatAttr(v)); }
  NamedAttribute boolean(StringRef n, bool v) { return attr(n, b_.getBoolAttr(v)); }
  NamedAttribute str(StringRef n, StringRef v) { return attr(n, b_.getStringAttr(v)); }

  // Creates op OpT named `name`, verifies it and infers its result types.
  template <typename OpT>
  Result<Value> build(const std::string &name, ArrayRef<Value> operands, ArrayRef<NamedAttribute> attrs,
                      const std::string &context) {
    auto op = b_.create<OpT>(loc(uniqueName(name)), TypeRange{UnrankedTensorType::get(b_.getF32Type())}, operands, attrs);
    diags_.clear();
    if (failed(verify(op)) || failed(cast<top::ShapeInferInterface>(op.getOperation()).inferShapes()))
      return makeError(context, ": ", diags_.empty() ? "invalid operation" : diags_.back());
    return op->getResult(0);
  }
  Value none() { return b_.create<top::NoneOp>(b_.getUnknownLoc(), NoneType::get(&ctx_)).getOutput(); }
  Value weight(const std::string &base, NpyArray array) {
    std::string name = uniqueName(base);
    auto type = RankedTensorType::get(array.shape, b_.getF32Type());
    weights_[name] = std::move(array);
    return b_.create<top::WeightOp>(loc(name), type, b_.getStringAttr(name)).getOutput();
  }

  // Reorders v; a reorder that moves no data is a reshape.
  Result<Value> permute(Value v, const std::vector<int64_t> &order, const std::string &name) {
    std::vector<int64_t> shape = shapeOf(v);
    if (!movesData(shape, order)) {
      if (permuted(shape, order) == shape) return v;
      return build<top::ReshapeOp>(name, {v}, {i64s("shape", permuted(shape, order))}, name);
    }
    return build<top::PermuteOp>(name, {v}, {i64s("order", order)}, name);
  }
  Result<Value> toNchw(Value nhwc, const std::string &name) { return permute(nhwc, kNhwcToNchw, name + "_nchw"); }
  Result<Value> toNhwc(Value nchw, const std::string &name) { return permute(nchw, kNchwToNhwc, name + "_nhwc"); }

  // Input i as held in the module (4-D in NCHW); constants become weights.
  Result<Value> operand(const Operator &op, size_t i) {
    if (!present(op, i)) return makeError(op.describe(), ": input ", i, " is missing");
    int32_t idx = op.inputs[i];
    if (auto it = values_.find(idx); it != values_.end()) return it->second;
    const Tensor *c = constant(op, i);
    if (!c) return makeError(op.describe(), ": input tensor '", tensor(idx).name, "' is used before it is produced");
    const Tensor &t = *c;
    auto real = realValues(t);
    if (!real) return Status(real.status()).prefix(op.describe());
    if (t.shape.size() == 4) return weight(t.name, onnx::transposeArray(*real, kNhwcToNchw));
    return weight(t.name, real.take());
  }
  // Input i in the model's own (NHWC) element order.
  Result<Value> nativeOperand(const Operator &op, size_t i) {
    auto v = operand(op, i);
    if (!v || shapeOf(*v).size() != 4) return v;
    return toNhwc(*v, tensor(op.inputs[i]).name);
  }
  // The model's (NHWC) shape of input i.
  Result<std::vector<int64_t>> nativeShape(const Operator &op, size_t i) {
    auto v = nativeOperand(op, i);
    if (!v) return v.status();
    return shapeOf(*v);
  }
  void bind(int32_t idx, Value v) { values_[idx] = v; }
  // Binds output k to `native`, a value in the model's NHWC order.
  Status bindNative(const Operator &op, size_t k, Value native) {
    if (shapeOf(native).size() != 4) {
      bind(op.outputs.at(k), native);
      return Status::ok();
    }
    auto v = toNchw(native, outName(op, k));
    if (!v) return v.status();
    bind(op.outputs.at(k), *v);
    return Status::ok();
  }

  // The fused activation on v, the last op carrying the output tensor's name.
  Result<Value> activate(Value v, Activation a, const std::string &name, const Operator &op) {
    switch (a) {
    case Activation::None: return v;
    case Activation::Relu: return build<top::ReluOp>(name, {v}, {}, op.describe());
    case Activation::Relu6: return build<top::ClipOp>(name, {v}, {f64("min", 0.0), f64("max", 6.0)}, op.describe());
    case Activation::ReluN1To1: return build<top::ClipOp>(name, {v}, {f64("min", -1.0), f64("max", 1.0)}, op.describe());
    case Activation::Tanh: return build<top::TanhOp>(name, {v}, {}, op.describe());
    default: return makeError(op.describe(), ": fused activation ", int(a), " is not supported");
    }
  }
  // op's main Top op built as `name` (+ "_pre_act" when an activation follows), then the activation.
  template <typename OpT>
  Status emit(const Operator &op, ArrayRef<Value> operands, ArrayRef<NamedAttribute> attrs,
              Activation a = Activation::None) {
    std::string name = outName(op);
    auto v = build<OpT>(a == Activation::None ? name : name + "_pre_act", operands, attrs, op.describe());
    if (!v) return v.status();
    auto out = activate(*v, a, name, op);
    if (!out) return out.status();
    bind(op.outputs[0], *out);
    return Status::ok();
  }

  // Elementwise operand i broadcast against an output of rank `rank`: for a
  // 4-D output, a lower-rank operand is first given the NHWC rank-4 shape.
  Result<Value> broadcastOperand(const Operator &op, size_t i, size_t rank) {
    if (rank != 4) return nativeOperand(op, i);
    if (const Tensor *t = constant(op, i); t && t->shape.size() < 4) {
      auto real = realValues(*t);
      if (!real) return Status(real.status()).prefix(op.describe());
      std::vector<int64_t> shape(4 - t->shape.size(), 1);
      shape.insert(shape.end(), t->shape.begin(), t->shape.end());
      return weight(t->name, onnx::transposeArray(onnx::reshapeArray(real.take(), shape), kNhwcToNchw));
    }
    auto v = operand(op, i);
    if (!v || shapeOf(*v).size() == 4) return v;
    std::vector<int64_t> shape = shapeOf(*v);
    shape.insert(shape.begin(), 4 - shape.size(), 1);
    std::string name = tensor(op.inputs[i]).name;
    auto r = build<top::ReshapeOp>(name + "_rank4", {*v}, {i64s("shape", shape)}, op.describe());
    if (!r) return r;
    return toNchw(*r, name);
  }
  size_t rankOf(const Operator &op, size_t i) {
    if (const Tensor *t = constant(op, i)) return t->shape.size();
    auto it = values_.find(op.inputs[i]);
    return it == values_.end() ? 0 : shapeOf(it->second).size();
  }

  template <typename OpT> static Handler binary() {
    return [](Importer &im, const Operator &op) -> Status {
      if (op.inputs.size() != 2) return makeError(op.describe(), ": needs 2 inputs");
      size_t rank = std::max(im.rankOf(op, 0), im.rankOf(op, 1));
      auto a = im.broadcastOperand(op, 0, rank), b = im.broadcastOperand(op, 1, rank);
      if (!a) return a.status();
      if (!b) return b.status();
      return im.emit<OpT>(op, {*a, *b}, {}, op.options.activation);
    };
  }
  template <typename OpT> static Handler unary(std::function<std::vector<NamedAttribute>(Importer &, const Operator &)> attrs = nullptr) {
    return [attrs](Importer &im, const Operator &op) -> Status {
      auto x = im.operand(op, 0);
      if (!x) return x.status();
      return im.emit<OpT>(op, {*x}, attrs ? attrs(im, op) : std::vector<NamedAttribute>{});
    };
  }

  Status conv(const Operator &op, bool depthwise);
  Status transposeConv(const Operator &op, bool customBias);
  template <typename OpT> Status pool(const Operator &op);
  Status fullyConnected(const Operator &op);
  template <typename OpT> Status reduce(const Operator &op);
  Status pad(const Operator &op);
  Status reshapeTo(const Operator &op, std::vector<int64_t> shape);
  Status reshape(const Operator &op);
  Status concat(const Operator &op);
  Status split(const Operator &op);
  Status slice(const Operator &op, bool strided);
  Status transpose(const Operator &op);
  Status resize(const Operator &op, bool bilinear);
  Status softmax(const Operator &op);
  Status prelu(const Operator &op);
  Status identity(const Operator &op);

  MLIRContext &ctx_;
  OpBuilder b_;
  const Model &model_;
  NpzMap &weights_;
  std::map<int32_t, Value> values_;  // activations by tensor index
  std::map<int32_t, Tensor> folded_; // constants computed at import (DEQUANTIZE of a constant), float32
  std::set<std::string> tensorNames_, used_; // the model's tensor names; names given to values
  std::map<std::string, QuantRange> ranges_; // Top value name -> the model's range
  std::vector<std::string> diags_;
};

Status Importer::conv(const Operator &op, bool depthwise) {
  const Options &o = op.options;
  auto x = operand(op, 0);
  if (!x) return x.status();
  const Tensor *filter = constant(op, 1);
  if (!filter) return makeError(op.describe(), ": the filter must be a constant");
  std::vector<int64_t> xs = shapeOf(*x), ws = filter->shape;
  if (xs.size() != 4 || ws.size() != 4)
    return makeError(op.describe(), ": input ", shapeToString(xs), " and filter ", shapeToString(ws), " must be 4-D");
  if (o.strideH < 1 || o.strideW < 1 || o.dilationH < 1 || o.dilationW < 1)
    return makeError(op.describe(), ": strides and dilations must be >= 1");
  auto real = realValues(*filter);
  if (!real) return Status(real.status()).prefix(op.describe());
  int64_t kh = ws[1], kw = ws[2], group = 1;
  NpyArray oihw;
  if (depthwise) { // [1, kh, kw, ic * multiplier] -> [ic * multiplier, 1, kh, kw], one group per input channel
    group = xs[1];
    oihw = onnx::transposeArray(*real, {3, 0, 1, 2});
  } else { // OHWI -> OIHW
    oihw = onnx::transposeArray(*real, kNhwcToNchw);
    if (ws[3] > 0 && xs[1] % ws[3] == 0) group = xs[1] / ws[3];
  }
  Value filterValue = weight(filter->name, std::move(oihw));
  Value bias = none();
  if (present(op, 2)) {
    auto bv = operand(op, 2);
    if (!bv) return bv.status();
    bias = *bv;
  }
  auto [pt, pb] = windowPads(o.padding, xs[2], kh, o.strideH, o.dilationH);
  auto [pl, pr] = windowPads(o.padding, xs[3], kw, o.strideW, o.dilationW);
  return emit<top::ConvOp>(op, {*x, filterValue, bias},
                           {i64s("kernel_shape", {kh, kw}), i64s("strides", {o.strideH, o.strideW}),
                            i64s("pads", {pt, pl, pb, pr}), i64s("dilations", {o.dilationH, o.dilationW}),
                            i64("group", group)},
                           o.activation);
}

// TRANSPOSE_CONV: (output_shape, filter OHWI, input[, bias]); MediaPipe's
// Convolution2DTransposeBias: (input, filter OHWI, bias) with the padding and
// strides as three int32 in custom_options.
Status Importer::transposeConv(const Operator &op, bool customBias) {
  Padding padding = op.options.padding;
  int64_t sh = op.options.strideH, sw = op.options.strideW;
  size_t xi = customBias ? 0 : 2, wi = 1;
  if (customBias) {
    if (op.customOptions.size() < 12)
      return makeError(op.describe(), ": custom options hold ", op.customOptions.size(),
                       " bytes, expected 12 (padding, stride_w, stride_h)");
    int32_t fields[3];
    std::memcpy(fields, op.customOptions.data(), sizeof fields);
    if (fields[0] != 1 && fields[0] != 2) return makeError(op.describe(), ": unknown padding ", fields[0]);
    padding = fields[0] == 1 ? Padding::Same : Padding::Valid; // TfLitePadding: 1 SAME, 2 VALID
    sw = fields[1];
    sh = fields[2];
  }
  if (sh < 1 || sw < 1) return makeError(op.describe(), ": strides must be >= 1");
  auto x = operand(op, xi);
  if (!x) return x.status();
  const Tensor *filter = constant(op, wi);
  if (!filter || filter->shape.size() != 4) return makeError(op.describe(), ": the filter must be a 4-D constant");
  std::vector<int64_t> xs = shapeOf(*x);
  if (xs.size() != 4) return makeError(op.describe(), ": input ", shapeToString(xs), " must be 4-D");
  auto real = realValues(*filter);
  if (!real) return Status(real.status()).prefix(op.describe());
  int64_t kh = filter->shape[1], kw = filter->shape[2];
  Value w = weight(filter->name, onnx::transposeArray(*real, {3, 0, 1, 2})); // OHWI -> IOHW
  Value bias = none();
  size_t bi = customBias ? 2 : 3;
  if (present(op, bi)) {
    auto bv = operand(op, bi);
    if (!bv) return bv.status();
    bias = *bv;
  }
  std::vector<int64_t> outShape; // NHWC
  if (customBias) {
    outShape = tensor(op.outputs.at(0)).shape;
  } else {
    auto s = ints(op, 0, "output_shape");
    if (!s) return s.status();
    outShape = *s;
  }
  if (outShape.size() != 4) return makeError(op.describe(), ": the output shape must have 4 dims");
  // The scatter covers (in - 1) * s + k; SAME crops total/2 at the start (TFLite), the
  // rest at the end; an output larger than the scatter is extended by output_padding.
  std::vector<int64_t> pads(4, 0), outPad(2, 0);
  int64_t in[2] = {xs[2], xs[3]}, k[2] = {kh, kw}, s[2] = {sh, sw}, target[2] = {outShape[1], outShape[2]};
  for (int d = 0; d < 2; ++d) {
    int64_t total = (in[d] - 1) * s[d] + k[d] - target[d];
    if (total < 0) {
      outPad[d] = -total;
      total = 0;
    }
    if (padding == Padding::Valid && total > 0) pads[d + 2] = total; // VALID crops only the end
    else {
      pads[d] = total / 2;
      pads[d + 2] = total - total / 2;
    }
  }
  return emit<top::ConvTransposeOp>(op, {*x, w, bias},
                                    {i64s("kernel_shape", {kh, kw}), i64s("strides", {sh, sw}), i64s("pads", pads),
                                     i64s("dilations", {1, 1}), i64s("output_padding", outPad), i64("group", 1)},
                                    op.options.activation);
}

template <typename OpT> Status Importer::pool(const Operator &op) {
  const Options &o = op.options;
  auto x = operand(op, 0);
  if (!x) return x.status();
  std::vector<int64_t> xs = shapeOf(*x);
  if (xs.size() != 4) return makeError(op.describe(), ": input ", shapeToString(xs), " must be 4-D");
  if (o.filterH < 1 || o.filterW < 1 || o.strideH < 1 || o.strideW < 1)
    return makeError(op.describe(), ": filter sizes and strides must be >= 1");
  auto [pt, pb] = windowPads(o.padding, xs[2], o.filterH, o.strideH, 1);
  auto [pl, pr] = windowPads(o.padding, xs[3], o.filterW, o.strideW, 1);
  // TFLite averages over the valid elements only: count_include_pad false.
  return emit<OpT>(op, {*x},
                   {i64s("kernel_shape", {o.filterH, o.filterW}), i64s("strides", {o.strideH, o.strideW}),
                    i64s("pads", {pt, pl, pb, pr}), i64s("dilations", {1, 1}), boolean("ceil_mode", false),
                    boolean("count_include_pad", false)},
                   o.activation);
}

// FULLY_CONNECTED: input viewed as [-1, K], weights [N, K], bias [N].
Status Importer::fullyConnected(const Operator &op) {
  if (op.options.weightsFormat != 0) return makeError(op.describe(), ": shuffled weights are not supported");
  auto x = nativeOperand(op, 0), w = operand(op, 1);
  if (!x) return x.status();
  if (!w) return w.status();
  std::vector<int64_t> xs = shapeOf(*x), ws = shapeOf(*w);
  if (ws.size() != 2 || ws[1] == 0) return makeError(op.describe(), ": weights ", shapeToString(ws), " must be [N, K]");
  int64_t numel = 1;
  for (int64_t d : xs) numel *= d;
  if (numel % ws[1]) return makeError(op.describe(), ": input ", shapeToString(xs), " is not a multiple of K = ", ws[1]);
  Value a = *x;
  std::string name = outName(op);
  if (xs.size() != 2 || xs[1] != ws[1]) {
    auto flat = build<top::ReshapeOp>(name + "_2d_in", {a}, {i64s("shape", {numel / ws[1], ws[1]})}, op.describe());
    if (!flat) return flat.status();
    a = *flat;
  }
  Value bias = none();
  if (present(op, 2)) {
    auto bv = operand(op, 2);
    if (!bv) return bv.status();
    bias = *bv;
  }
  std::vector<int64_t> outShape = {numel / ws[1], ws[0]};
  if (op.options.keepNumDims) {
    outShape = xs;
    outShape.back() = ws[0];
  }
  bool reshapeOut = outShape.size() != 2;
  std::string gemmName = reshapeOut ? name + "_2d" : name;
  auto g = build<top::GemmOp>(op.options.activation == Activation::None ? gemmName : gemmName + "_pre_act",
                              {a, *w, bias}, {boolean("transB", true)}, op.describe());
  if (!g) return g.status();
  auto out = activate(*g, op.options.activation, gemmName, op);
  if (!out) return out.status();
  if (!reshapeOut) return bindNative(op, 0, *out);
  auto r = build<top::ReshapeOp>(name, {*out}, {i64s("shape", outShape)}, op.describe());
  if (!r) return r.status();
  return bindNative(op, 0, *r);
}

// MEAN / SUM / REDUCE_MAX over constant axes; a 4-D input reduces in NCHW
// with kept dims, then drops them in the model's order.
template <typename OpT> Status Importer::reduce(const Operator &op) {
  auto x = operand(op, 0);
  if (!x) return x.status();
  std::vector<int64_t> xs = shapeOf(*x);
  auto axes = ints(op, 1, "axes");
  if (!axes) return axes.status();
  auto norm = onnx::normalizeAxes(*axes, xs.size());
  if (!norm) return Status(norm.status()).prefix(op.describe());
  bool is4d = xs.size() == 4;
  std::vector<int64_t> topAxes;
  for (int64_t a : *norm) topAxes.push_back(is4d ? kToNchwAxis[a] : a);
  std::sort(topAxes.begin(), topAxes.end());
  bool keep = op.options.keepDims;
  if (!is4d || keep) return emit<OpT>(op, {*x}, {i64s("axes", topAxes), boolean("keepdims", keep)});
  std::string name = outName(op);
  auto r = build<OpT>(name + "_keepdims", {*x}, {i64s("axes", topAxes), boolean("keepdims", true)}, op.describe());
  if (!r) return r.status();
  auto native = toNhwc(*r, name + "_keepdims");
  if (!native) return native.status();
  std::vector<int64_t> shape;
  std::vector<int64_t> ns = shapeOf(*native);
  for (size_t d = 0; d < ns.size(); ++d)
    if (!std::count(norm->begin(), norm->end(), int64_t(d))) shape.push_back(ns[d]);
  auto out = build<top::ReshapeOp>(name, {*native}, {i64s("shape", shape)}, op.describe());
  if (!out) return out.status();
  return bindNative(op, 0, *out);
}

// PAD / PADV2: paddings [rank, 2] (before, after per dim), PADV2's value.
Status Importer::pad(const Operator &op) {
  auto x = operand(op, 0);
  if (!x) return x.status();
  size_t rank = shapeOf(*x).size();
  auto p = ints(op, 1, "paddings");
  if (!p) return p.status();
  if (p->size() != 2 * rank) return makeError(op.describe(), ": paddings need ", rank, " pairs, got ", p->size(), " values");
  std::vector<int64_t> pads(2 * rank);
  for (size_t d = 0; d < rank; ++d) {
    size_t t = rank == 4 ? kToNchwAxis[d] : d;
    pads[t] = (*p)[2 * d];
    pads[t + rank] = (*p)[2 * d + 1];
  }
  double value = 0;
  if (op.builtinCode == PADV2 && present(op, 2)) {
    const Tensor *v = constant(op, 2);
    if (!v || v->numel() != 1) return makeError(op.describe(), ": the pad value must be a scalar constant");
    auto real = realValues(*v);
    if (!real) return Status(real.status()).prefix(op.describe());
    value = real->as<float>()[0];
  }
  return emit<top::PadOp>(op, {*x}, {i64s("pads", pads), str("mode", "constant"), f64("value", value)});
}

Status Importer::reshapeTo(const Operator &op, std::vector<int64_t> shape) {
  auto x = nativeOperand(op, 0);
  if (!x) return x.status();
  auto target = onnx::reshapeTarget(shapeOf(*x), shape, true);
  if (!target) return Status(target.status()).prefix(op.describe());
  auto r = build<top::ReshapeOp>(outName(op) + (target->size() == 4 ? "_nhwc" : ""), {*x}, {i64s("shape", *target)},
                                 op.describe());
  if (!r) return r.status();
  return bindNative(op, 0, *r);
}

// RESHAPE: the shape input (TFLite 2) or the new_shape option (TFLite 1).
Status Importer::reshape(const Operator &op) {
  if (present(op, 1)) {
    auto s = ints(op, 1, "shape");
    if (!s) return s.status();
    return reshapeTo(op, *s);
  }
  return reshapeTo(op, op.options.newShape);
}

Status Importer::concat(const Operator &op) {
  if (op.inputs.empty()) return makeError(op.describe(), ": needs inputs");
  std::vector<Value> ins;
  size_t rank = 0;
  for (size_t i = 0; i < op.inputs.size(); ++i) rank = std::max(rank, rankOf(op, i));
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    auto v = operand(op, i);
    if (!v) return v.status();
    if (shapeOf(*v).size() != rank) return makeError(op.describe(), ": inputs of different ranks");
    ins.push_back(*v);
  }
  auto axis = axisIn(op, op.options.axis, rank);
  if (!axis) return axis.status();
  return emit<top::ConcatOp>(op, ins, {i64("axis", rank == 4 ? kToNchwAxis[*axis] : *axis)}, op.options.activation);
}

// SPLIT: (axis, input), num_splits equal pieces.
Status Importer::split(const Operator &op) {
  auto axisValue = ints(op, 0, "axis");
  if (!axisValue) return axisValue.status();
  auto x = operand(op, 1);
  if (!x) return x.status();
  std::vector<int64_t> xs = shapeOf(*x);
  if (axisValue->size() != 1) return makeError(op.describe(), ": the axis must be a scalar");
  auto axis = axisIn(op, (*axisValue)[0], xs.size());
  if (!axis) return axis.status();
  int64_t n = op.options.numSplits, topAxis = xs.size() == 4 ? kToNchwAxis[*axis] : *axis;
  if (n < 1 || size_t(n) != op.outputs.size() || xs[topAxis] % n)
    return makeError(op.describe(), ": cannot split dim ", xs[topAxis], " into ", n, " pieces for ", op.outputs.size(),
                     " outputs");
  SmallVector<Type> types(n, UnrankedTensorType::get(b_.getF32Type()));
  SmallVector<Location> locs;
  for (size_t k = 0; k < op.outputs.size(); ++k) locs.push_back(loc(uniqueName(outName(op, k))));
  auto s = b_.create<top::SplitOp>(FusedLoc::get(&ctx_, locs), types, ValueRange{*x},
                                   ArrayRef<NamedAttribute>{i64("axis", topAxis),
                                                            i64s("split", std::vector<int64_t>(n, xs[topAxis] / n))});
  diags_.clear();
  if (failed(verify(s)) || failed(cast<top::ShapeInferInterface>(s.getOperation()).inferShapes()))
    return makeError(op.describe(), ": ", diags_.empty() ? "invalid split" : diags_.back());
  for (int64_t k = 0; k < n; ++k) bind(op.outputs[k], s->getResult(k));
  return Status::ok();
}

// SLICE (begin, size; size -1 = to the end) and STRIDED_SLICE (begin, end,
// strides with begin/end/shrink masks), sliced in the module's layout.
Status Importer::slice(const Operator &op, bool strided) {
  auto x = operand(op, 0);
  if (!x) return x.status();
  std::vector<int64_t> xs = shapeOf(*x);
  size_t rank = xs.size();
  std::vector<int64_t> native = rank == 4 ? permuted(xs, kNchwToNhwc) : xs;
  auto begin = ints(op, 1, "begin"), second = ints(op, 2, strided ? "end" : "size");
  if (!begin) return begin.status();
  if (!second) return second.status();
  std::vector<int64_t> steps(rank, 1), ends(rank);
  if (strided) {
    auto st = ints(op, 3, "strides");
    if (!st) return st.status();
    steps = *st;
    if (op.options.ellipsisMask || op.options.newAxisMask || op.options.sliceOffset)
      return makeError(op.describe(), ": ellipsis, new-axis masks and offset are not supported");
  }
  if (begin->size() != rank || second->size() != rank || steps.size() != rank)
    return makeError(op.describe(), ": begin/end/strides need ", rank, " values");
  std::vector<int64_t> starts = *begin;
  for (size_t d = 0; d < rank; ++d) {
    if (!strided) {
      ends[d] = (*second)[d] < 0 ? native[d] : starts[d] + (*second)[d];
      continue;
    }
    bool shrink = op.options.shrinkAxisMask >> d & 1;
    if (op.options.beginMask >> d & 1) starts[d] = steps[d] > 0 ? 0 : native[d] - 1;
    ends[d] = shrink ? (starts[d] < 0 ? starts[d] + native[d] : starts[d]) + 1 : (*second)[d];
    if (!shrink && (op.options.endMask >> d & 1)) ends[d] = steps[d] > 0 ? native[d] : -native[d] - 1;
    if (shrink) steps[d] = 1;
  }
  auto p = onnx::normalizeSlice(native, starts, ends, {}, steps);
  if (!p) return Status(p.status()).prefix(op.describe());
  std::vector<int64_t> shrunk; // the output's shape after the shrink mask
  for (size_t d = 0; d < rank; ++d)
    if (!(strided && (op.options.shrinkAxisMask >> d & 1)))
      shrunk.push_back(std::max<int64_t>(0, (p->ends[d] - p->starts[d] + p->steps[d] - (p->steps[d] > 0 ? 1 : -1)) / p->steps[d]));
  auto reorder = [&](std::vector<int64_t> v) { return rank == 4 ? permuted(v, kNhwcToNchw) : v; };
  std::string name = outName(op);
  bool shrinks = shrunk.size() != rank;
  auto s = build<top::SliceOp>(shrinks ? name + "_unshrunk" : name, {*x},
                               {i64s("starts", reorder(p->starts)), i64s("ends", reorder(p->ends)),
                                i64s("steps", reorder(p->steps))},
                               op.describe());
  if (!s) return s.status();
  if (!shrinks) {
    bind(op.outputs.at(0), *s);
    return Status::ok();
  }
  Value v = *s;
  if (rank == 4) {
    auto n = toNhwc(v, name + "_unshrunk");
    if (!n) return n.status();
    v = *n;
  }
  auto r = build<top::ReshapeOp>(name, {v}, {i64s("shape", shrunk)}, op.describe());
  if (!r) return r.status();
  return bindNative(op, 0, *r);
}

Status Importer::transpose(const Operator &op) {
  auto x = nativeOperand(op, 0);
  if (!x) return x.status();
  auto perm = ints(op, 1, "perm");
  if (!perm) return perm.status();
  std::vector<int64_t> order = *perm;
  std::vector<int64_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != int64_t(i) || sorted.size() != shapeOf(*x).size())
      return makeError(op.describe(), ": perm ", shapeToString(order), " is not a permutation of the input dims");
  auto r = permute(*x, order, outName(op) + (order.size() == 4 ? "_nhwc" : ""));
  if (!r) return r.status();
  return bindNative(op, 0, *r);
}

// RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR to a constant [new_h, new_w].
Status Importer::resize(const Operator &op, bool bilinear) {
  auto x = operand(op, 0);
  if (!x) return x.status();
  std::vector<int64_t> xs = shapeOf(*x);
  auto size = ints(op, 1, "size");
  if (!size) return size.status();
  if (xs.size() != 4 || size->size() != 2 || (*size)[0] < 1 || (*size)[1] < 1)
    return makeError(op.describe(), ": needs a 4-D input and a size of 2 positive values");
  const Options &o = op.options;
  // TFLite's coordinate rules in the Top (ONNX) vocabulary; TF's half-pixel
  // nearest, floor((y + 0.5) * scale), is round-half-up of the half-pixel coordinate.
  std::string coord = o.alignCorners ? "align_corners" : o.halfPixelCenters ? "half_pixel" : "asymmetric";
  std::string nearest = o.alignCorners || o.halfPixelCenters ? "round_prefer_ceil" : "floor";
  std::vector<int64_t> sizes = {xs[0], xs[1], (*size)[0], (*size)[1]};
  std::vector<double> scales = {1.0, 1.0, double(sizes[2]) / double(xs[2]), double(sizes[3]) / double(xs[3])};
  return emit<top::ResizeOp>(op, {*x},
                             {str("mode", bilinear ? "linear" : "nearest"), str("coordinate_transformation_mode", coord),
                              str("nearest_mode", nearest), attr("scales", b_.getDenseF64ArrayAttr(scales)),
                              i64s("sizes", sizes)});
}

// SOFTMAX over the last (model) axis, logits scaled by beta.
Status Importer::softmax(const Operator &op) {
  auto x = operand(op, 0);
  if (!x) return x.status();
  size_t rank = shapeOf(*x).size();
  if (rank == 0) return makeError(op.describe(), ": needs a non-scalar input");
  Value logits = *x;
  if (op.options.beta != 1.0f) {
    Value beta = weight(outName(op) + "_beta", NpyArray::from({1}, std::vector<float>{op.options.beta}));
    auto scaled = build<top::MulOp>(outName(op) + "_scaled", {logits, beta}, {}, op.describe());
    if (!scaled) return scaled.status();
    logits = *scaled;
  }
  return emit<top::SoftmaxOp>(op, {logits}, {i64("axis", rank == 4 ? 1 : int64_t(rank) - 1)});
}

Status Importer::prelu(const Operator &op) {
  size_t rank = rankOf(op, 0);
  auto x = operand(op, 0), slope = broadcastOperand(op, 1, rank);
  if (!x) return x.status();
  if (!slope) return slope.status();
  return emit<top::PReluOp>(op, {*x, *slope}, {});
}

// QUANTIZE / DEQUANTIZE: the real values pass through (a constant DEQUANTIZE,
// e.g. of float16 weights, becomes the constant itself).
Status Importer::identity(const Operator &op) {
  if (op.inputs.size() != 1 || op.outputs.size() != 1) return makeError(op.describe(), ": needs 1 input and 1 output");
  if (const Tensor *t = constant(op, 0)) {
    auto real = realValues(*t);
    if (!real) return Status(real.status()).prefix(op.describe());
    Tensor f = tensor(op.outputs[0]);
    f.type = int8_t(ElementType::Float32);
    f.typeName = "FLOAT32";
    f.quant = {};
    if (real->shape != f.shape)
      return makeError(op.describe(), ": output shape ", shapeToString(f.shape), " differs from the input's ",
                       shapeToString(real->shape));
    f.data = std::move(real->data);
    folded_[op.outputs[0]] = std::move(f);
    return Status::ok();
  }
  auto x = operand(op, 0);
  if (!x) return x.status();
  bind(op.outputs[0], *x);
  return Status::ok();
}

const std::map<int32_t, Importer::Handler> &Importer::handlers() {
  static const std::map<int32_t, Handler> table = [] {
    std::map<int32_t, Handler> t;
    t[CONV_2D] = [](Importer &im, const Operator &op) { return im.conv(op, false); };
    t[DEPTHWISE_CONV_2D] = [](Importer &im, const Operator &op) { return im.conv(op, true); };
    t[TRANSPOSE_CONV] = [](Importer &im, const Operator &op) { return im.transposeConv(op, false); };
    t[FULLY_CONNECTED] = [](Importer &im, const Operator &op) { return im.fullyConnected(op); };
    t[ADD] = binary<top::AddOp>();
    t[SUB] = binary<top::SubOp>();
    t[MUL] = binary<top::MulOp>();
    t[DIV] = binary<top::DivOp>();
    t[MAXIMUM] = binary<top::MaxOp>();
    t[MINIMUM] = binary<top::MinOp>();
    t[MAX_POOL_2D] = [](Importer &im, const Operator &op) { return im.pool<top::MaxPoolOp>(op); };
    t[AVERAGE_POOL_2D] = [](Importer &im, const Operator &op) { return im.pool<top::AvgPoolOp>(op); };
    t[MEAN] = [](Importer &im, const Operator &op) { return im.reduce<top::ReduceMeanOp>(op); };
    t[SUM] = [](Importer &im, const Operator &op) { return im.reduce<top::ReduceSumOp>(op); };
    t[REDUCE_MAX] = [](Importer &im, const Operator &op) { return im.reduce<top::ReduceMaxOp>(op); };
    t[PAD] = [](Importer &im, const Operator &op) { return im.pad(op); };
    t[PADV2] = t[PAD];
    t[RESHAPE] = [](Importer &im, const Operator &op) { return im.reshape(op); };
    t[SQUEEZE] = [](Importer &im, const Operator &op) -> Status {
      auto xs = im.nativeShape(op, 0);
      if (!xs) return xs.status();
      std::vector<int64_t> dims = op.options.squeezeDims;
      if (dims.empty())
        for (size_t d = 0; d < xs->size(); ++d)
          if ((*xs)[d] == 1) dims.push_back(d);
      auto shape = onnx::squeezeShape(*xs, dims);
      if (!shape) return Status(shape.status()).prefix(op.describe());
      return im.reshapeTo(op, *shape);
    };
    t[EXPAND_DIMS] = [](Importer &im, const Operator &op) -> Status {
      auto xs = im.nativeShape(op, 0);
      if (!xs) return xs.status();
      auto axis = im.ints(op, 1, "axis");
      if (!axis) return axis.status();
      if (axis->size() != 1) return makeError(op.describe(), ": the axis must be a scalar");
      int64_t a = (*axis)[0] < 0 ? (*axis)[0] + int64_t(xs->size()) + 1 : (*axis)[0];
      auto shape = onnx::unsqueezeShape(*xs, {a});
      if (!shape) return Status(shape.status()).prefix(op.describe());
      return im.reshapeTo(op, *shape);
    };
    t[CONCATENATION] = [](Importer &im, const Operator &op) { return im.concat(op); };
    t[SPLIT] = [](Importer &im, const Operator &op) { return im.split(op); };
    t[STRIDED_SLICE] = [](Importer &im, const Operator &op) { return im.slice(op, true); };
    t[SLICE] = [](Importer &im, const Operator &op) { return im.slice(op, false); };
    t[TRANSPOSE] = [](Importer &im, const Operator &op) { return im.transpose(op); };
    t[RESIZE_NEAREST_NEIGHBOR] = [](Importer &im, const Operator &op) { return im.resize(op, false); };
    t[RESIZE_BILINEAR] = [](Importer &im, const Operator &op) { return im.resize(op, true); };
    t[SOFTMAX] = [](Importer &im, const Operator &op) { return im.softmax(op); };
    t[LOGISTIC] = unary<top::SigmoidOp>();
    t[TANH] = unary<top::TanhOp>();
    t[RELU] = unary<top::ReluOp>();
    t[RELU6] = unary<top::ClipOp>([](Importer &im, const Operator &) {
      return std::vector<NamedAttribute>{im.f64("min", 0.0), im.f64("max", 6.0)};
    });
    t[LEAKY_RELU] = unary<top::LeakyReluOp>([](Importer &im, const Operator &op) {
      return std::vector<NamedAttribute>{im.f64("alpha", op.options.alpha)};
    });
    t[PRELU] = [](Importer &im, const Operator &op) { return im.prelu(op); };
    t[HARD_SWISH] = unary<top::HardSwishOp>();
    t[DEQUANTIZE] = [](Importer &im, const Operator &op) { return im.identity(op); };
    t[QUANTIZE] = t[DEQUANTIZE];
    t[CUSTOM] = [](Importer &im, const Operator &op) -> Status {
      return im.transposeConv(op, true); // run() admits only the custom ops handled here
    };
    return t;
  }();
  return table;
}

Status Importer::run(ModuleOp module, const ImportOptions &opts) {
  // Every unsupported operator at once, each with its index and code.
  std::vector<std::string> unsupported;
  for (const Operator &op : model_.operators) {
    bool known = op.builtinCode == CUSTOM ? op.customCode == kTransposeConvBias : handlers().count(op.builtinCode) > 0;
    if (!known)
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
    TPU_RETURN_IF_ERROR(handlers().at(op.builtinCode)(*this, op));
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
  func->setAttr("top.input_names", b_.getArrayAttr(inputNames));
  func->setAttr("top.output_names", b_.getArrayAttr(outputNames));
  return Status::ok();
}

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
  Importer im(context, model, out.weights);
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
