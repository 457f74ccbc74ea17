#include "compiler/Import/OnnxImporter.h"
#include "compiler/Dialect/Top/TopOps.h"
#include "compiler/Dialect/Top/WeightStore.h"
#include "compiler/Import/ConstFold.h"
#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <functional>
#include <limits>
#include <set>

using namespace mlir;

namespace tpu::onnx {

namespace {

class Importer;
using Handler = std::function<Status(Importer &, const Node &)>;
const std::map<std::string, Handler> &handlers();

Type elementTypeOf(MLIRContext *ctx, const std::string &dtype) {
  if (dtype == "int64") return IntegerType::get(ctx, 64);
  if (dtype == "bool") return IntegerType::get(ctx, 1);
  return Float32Type::get(ctx);
}


class Importer {
public:
  Importer(MLIRContext &ctx, const Model &model, NpzMap &weights)
      : ctx_(ctx), b_(&ctx), model_(model), weights_(weights) {}

  MLIRContext &ctx() { return ctx_; }
  OpBuilder &b() { return b_; }
  int64_t opset() const { return model_.opset; }
  std::vector<std::string> &diagnostics() { return diags_; }

  Status run(ModuleOp module, const ImportOptions &opts);

  // --- values ---
  bool present(const Node &n, size_t i) const { return i < n.inputs.size() && !n.inputs[i].empty(); }
  const NpyArray *constOf(const std::string &name) const {
    auto it = consts_.find(name);
    return it == consts_.end() ? nullptr : &it->second;
  }
  const NpyArray *constInput(const Node &n, size_t i) const { return present(n, i) ? constOf(n.inputs[i]) : nullptr; }
  bool allConst(const Node &n) const {
    for (size_t i = 0; i < n.inputs.size(); ++i)
      if (present(n, i) && !constInput(n, i)) return false;
    return true;
  }
  // The value of input i, creating its top.weight if it is a constant.
  Result<Value> operand(const Node &n, size_t i) {
    if (!present(n, i)) return makeError(n.describe(), ": missing input ", i);
    return value(n.inputs[i]);
  }
  Result<Value> value(const std::string &name);
  Value none() { return b_.create<top::NoneOp>(b_.getUnknownLoc(), NoneType::get(&ctx_)).getOutput(); }
  Result<Value> operandOrNone(const Node &n, size_t i) { return present(n, i) ? operand(n, i) : Result<Value>(none()); }

  Result<std::vector<int64_t>> shapeOf(const Node &n, size_t i) {
    if (!present(n, i)) return makeError(n.describe(), ": missing input ", i);
    if (const NpyArray *c = constOf(n.inputs[i])) return c->shape;
    auto v = value(n.inputs[i]);
    if (!v) return v.status();
    auto t = dyn_cast<RankedTensorType>(v->getType());
    if (!t) return makeError(n.describe(), ": input '", n.inputs[i], "' has no known shape");
    return std::vector<int64_t>(t.getShape().begin(), t.getShape().end());
  }
  // A constant input as integers (shape, axes, pads...).
  Result<std::vector<int64_t>> constInts(const Node &n, size_t i, const std::string &what) {
    const NpyArray *c = constInput(n, i);
    if (!c) return makeError(n.describe(), ": input ", what, " must be a constant (got '",
                             present(n, i) ? n.inputs[i] : std::string(), "' computed at run time)");
    return toInt64(*c);
  }
  Result<std::vector<double>> constFloats(const Node &n, size_t i, const std::string &what) {
    const NpyArray *c = constInput(n, i);
    if (!c) return makeError(n.describe(), ": input ", what, " must be a constant");
    return toDouble(*c);
  }

  void bindConst(const std::string &name, NpyArray a) {
    if (!name.empty()) consts_[name] = std::move(a);
  }
  Status bindConst(const Node &n, Result<NpyArray> a) {
    if (!a) return Status(a.status()).prefix(n.describe());
    bindConst(n.outputs[0], a.take());
    return Status::ok();
  }
  void bind(const std::string &name, Value v) {
    if (!name.empty()) values_[name] = v;
  }
  void alias(const std::string &to, const std::string &from) {
    if (const NpyArray *c = constOf(from)) consts_[to] = *c;
    else values_[to] = values_[from];
  }
  // Creates op OpT for node n, infers its result types and binds its outputs.
  template <typename OpT>
  Result<OpT> build(const Node &n, ArrayRef<Value> operands, ArrayRef<NamedAttribute> attrs, unsigned numResults = 1,
                    std::string outputName = "") {
    Type unranked = UnrankedTensorType::get(b_.getF32Type());
    SmallVector<Type> types(numResults, unranked);
    Location loc = locFor(n, outputName);
    auto op = b_.create<OpT>(loc, types, operands, attrs);
    diags_.clear();
    // Attributes first (the verifier), then shapes: the shape rules rely on valid attributes.
    if (failed(verify(op)) || failed(cast<top::ShapeInferInterface>(op.getOperation()).inferShapes()))
      return makeError(n.describe(), ": ", diags_.empty() ? "invalid operation" : diags_.back());
    if (outputName.empty())
      for (unsigned i = 0; i < numResults && i < n.outputs.size(); ++i)
        if (!n.outputs[i].empty()) values_[n.outputs[i]] = op->getResult(i);
    return op;
  }
  Location locFor(const Node &n, const std::string &outputName) {
    if (!outputName.empty()) return NameLoc::get(b_.getStringAttr(outputName));
    SmallVector<Location> locs;
    for (const auto &o : n.outputs)
      if (!o.empty()) locs.push_back(NameLoc::get(b_.getStringAttr(o)));
    if (locs.size() == 1) return locs[0];
    return FusedLoc::get(&ctx_, locs);
  }
  NamedAttribute attr(StringRef name, mlir::Attribute a) { return b_.getNamedAttr(name, a); }
  NamedAttribute ints(StringRef name, ArrayRef<int64_t> v) { return attr(name, b_.getDenseI64ArrayAttr(v)); }
  NamedAttribute f64(StringRef name, double v) { return attr(name, b_.getF64FloatAttr(v)); }
  NamedAttribute i64(StringRef name, int64_t v) { return attr(name, b_.getI64IntegerAttr(v)); }
  NamedAttribute boolean(StringRef name, bool v) { return attr(name, b_.getBoolAttr(v)); }
  NamedAttribute str(StringRef name, StringRef v) { return attr(name, b_.getStringAttr(v)); }

private:
  MLIRContext &ctx_;
  OpBuilder b_;
  const Model &model_;
  NpzMap &weights_;
  std::map<std::string, Value> values_;
  std::map<std::string, NpyArray> consts_;
  std::vector<std::string> diags_;
};

Result<Value> Importer::value(const std::string &name) {
  auto it = values_.find(name);
  if (it != values_.end()) return it->second;
  auto c = consts_.find(name);
  if (c == consts_.end()) return makeError("tensor '", name, "' is used before it is produced");
  const NpyArray &a = c->second;
  auto type = RankedTensorType::get(a.shape, elementTypeOf(&ctx_, a.dtype));
  // Weights go at the top of the function, in first-use order.
  OpBuilder::InsertionGuard guard(b_);
  Block *block = b_.getInsertionBlock();
  b_.setInsertionPoint(block, block->begin());
  while (b_.getInsertionPoint() != block->end() && isa<top::InputOp, top::WeightOp>(&*b_.getInsertionPoint()))
    b_.setInsertionPoint(block, std::next(b_.getInsertionPoint()));
  auto w = b_.create<top::WeightOp>(NameLoc::get(b_.getStringAttr(name)), type, b_.getStringAttr(name));
  weights_[name] = a;
  values_[name] = w.getOutput();
  return w.getOutput();
}

// --- normalisation helpers shared by the handlers ---

// Constants the importer materialises itself (ConstantOfShape, Expand of a
// constant, masks) are bounded so that a bad shape cannot exhaust memory.
constexpr int64_t kMaxFoldedElements = int64_t(1) << 28;
Status checkFoldedSize(const Node &n, const std::vector<int64_t> &shape) {
  int64_t total = 1;
  for (int64_t d : shape) {
    if (d < 0) return makeError(n.describe(), ": negative dimension in ", shapeToString(shape));
    if (d && total > kMaxFoldedElements / d)
      return makeError(n.describe(), ": constant of shape ", shapeToString(shape), " is too large to fold");
    total *= d;
  }
  return Status::ok();
}

// Explicit pads for auto_pad SAME_UPPER / SAME_LOWER / VALID, else the pads attribute.
Result<std::vector<int64_t>> windowPads(const Node &n, const std::vector<int64_t> &in, const std::vector<int64_t> &k,
                                        const std::vector<int64_t> &s, const std::vector<int64_t> &d) {
  size_t sp = k.size();
  std::string autoPad = n.getString("auto_pad", "NOTSET");
  std::vector<int64_t> pads(2 * sp, 0);
  if (autoPad == "NOTSET") {
    if (auto p = n.getInts("pads")) {
      if (p->size() != 2 * sp) return makeError(n.describe(), ": pads needs ", 2 * sp, " values");
      pads = *p;
    }
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (size_t i = 0; i < sp; ++i) {
      int64_t out = (in[i + 2] + s[i] - 1) / s[i];
      int64_t total = std::max<int64_t>(0, (out - 1) * s[i] + (k[i] - 1) * d[i] + 1 - in[i + 2]);
      int64_t small = total / 2, big = total - small;
      pads[i] = autoPad == "SAME_UPPER" ? small : big;
      pads[i + sp] = autoPad == "SAME_UPPER" ? big : small;
    }
  } else if (autoPad != "VALID") {
    return makeError(n.describe(), ": unknown auto_pad '", autoPad, "'");
  }
  return pads;
}

std::vector<int64_t> intsOr(const Node &n, const std::string &key, size_t count, int64_t dflt) {
  auto v = n.getInts(key);
  return v ? *v : std::vector<int64_t>(count, dflt);
}

Status convLike(Importer &im, const Node &n, bool transpose) {
  auto xs = im.shapeOf(n, 0), ws = im.shapeOf(n, 1);
  if (!xs) return xs.status();
  if (!ws) return ws.status();
  if (ws->size() < 3 || xs->size() != ws->size())
    return makeError(n.describe(), ": input ", shapeToString(*xs), " and weight ", shapeToString(*ws),
                     " must both be rank 3 or 4");
  size_t sp = ws->size() - 2;
  auto k = n.getInts("kernel_shape").value_or(std::vector<int64_t>(ws->begin() + 2, ws->end()));
  auto s = intsOr(n, "strides", sp, 1), d = intsOr(n, "dilations", sp, 1);
  if (k.size() != sp || s.size() != sp || d.size() != sp)
    return makeError(n.describe(), ": kernel_shape/strides/dilations need ", sp, " values");
  for (size_t i = 0; i < sp; ++i)
    if (s[i] < 1 || d[i] < 1) return makeError(n.describe(), ": strides and dilations must be >= 1");
  auto x = im.operand(n, 0), w = im.operand(n, 1), bias = im.operandOrNone(n, 2);
  if (!x) return x.status();
  if (!w) return w.status();
  if (!bias) return bias.status();
  int64_t group = n.getInt("group", 1);
  if (!transpose) {
    auto pads = windowPads(n, *xs, k, s, d);
    if (!pads) return pads.status();
    auto op = im.build<top::ConvOp>(n, {*x, *w, *bias},
                                    {im.ints("kernel_shape", k), im.ints("strides", s), im.ints("pads", *pads),
                                     im.ints("dilations", d), im.i64("group", group)});
    return op ? Status::ok() : op.status();
  }
  auto outPad = intsOr(n, "output_padding", sp, 0);
  std::vector<int64_t> pads(2 * sp, 0);
  auto outShape = n.getInts("output_shape");
  std::string autoPad = n.getString("auto_pad", "NOTSET");
  if (outShape || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    std::vector<int64_t> target(sp);
    for (size_t i = 0; i < sp; ++i)
      target[i] = outShape ? (*outShape)[outShape->size() - sp + i] : (*xs)[i + 2] * s[i];
    for (size_t i = 0; i < sp; ++i) {
      int64_t total = s[i] * ((*xs)[i + 2] - 1) + outPad[i] + (k[i] - 1) * d[i] + 1 - target[i];
      if (total < 0) { // the output is larger than the conv transpose covers: extend via output_padding
        outPad[i] -= total;
        total = 0;
      }
      bool lower = autoPad == "SAME_LOWER";
      pads[i] = lower ? total - total / 2 : total / 2;
      pads[i + sp] = total - pads[i];
    }
  } else if (auto p = n.getInts("pads")) {
    if (p->size() != 2 * sp) return makeError(n.describe(), ": pads needs ", 2 * sp, " values");
    pads = *p;
  }
  auto op = im.build<top::ConvTransposeOp>(
      n, {*x, *w, *bias},
      {im.ints("kernel_shape", k), im.ints("strides", s), im.ints("pads", pads), im.ints("dilations", d),
       im.ints("output_padding", outPad), im.i64("group", group)});
  return op ? Status::ok() : op.status();
}

template <typename OpT> Status pool(Importer &im, const Node &n) {
  if (n.outputs.size() > 1 && !n.outputs[1].empty())
    return makeError(n.describe(), ": the Indices output is not supported");
  auto xs = im.shapeOf(n, 0);
  if (!xs) return xs.status();
  auto k = n.getInts("kernel_shape");
  if (!k || xs->size() != k->size() + 2)
    return makeError(n.describe(), ": kernel_shape must give one size per spatial dim of ", shapeToString(*xs));
  size_t sp = k->size();
  auto s = intsOr(n, "strides", sp, 1), d = intsOr(n, "dilations", sp, 1);
  if (s.size() != sp || d.size() != sp) return makeError(n.describe(), ": strides/dilations need ", sp, " values");
  auto pads = windowPads(n, *xs, *k, s, d);
  if (!pads) return pads.status();
  auto x = im.operand(n, 0);
  if (!x) return x.status();
  auto op = im.build<OpT>(n, {*x},
                          {im.ints("kernel_shape", *k), im.ints("strides", s), im.ints("pads", *pads),
                           im.ints("dilations", d), im.boolean("ceil_mode", n.getInt("ceil_mode", 0) != 0),
                           im.boolean("count_include_pad", n.getInt("count_include_pad", 0) != 0)});
  return op ? Status::ok() : op.status();
}

// Single-input op with the given attributes; folded if the input is constant
// and `foldName` names a ConstFold unary.
template <typename OpT> Status unary(Importer &im, const Node &n, ArrayRef<NamedAttribute> attrs = {},
                                     const std::string &foldName = "") {
  if (!foldName.empty() && im.constInput(n, 0)) return im.bindConst(n, unaryArray(foldName, *im.constInput(n, 0)));
  auto x = im.operand(n, 0);
  if (!x) return x.status();
  auto op = im.build<OpT>(n, {*x}, attrs);
  return op ? Status::ok() : op.status();
}

template <typename OpT> Handler unaryHandler(const std::string &foldName = "") {
  return [foldName](Importer &im, const Node &n) { return unary<OpT>(im, n, {}, foldName); };
}

// Binary op chained over all inputs (Sum/Max/Min take any number); folded if all constant.
template <typename OpT> Handler binaryHandler(const std::string &foldName) {
  return [foldName](Importer &im, const Node &n) -> Status {
    if (n.inputs.empty()) return makeError(n.describe(), ": needs inputs");
    if (im.allConst(n) && !foldName.empty()) {
      NpyArray acc = *im.constInput(n, 0);
      for (size_t i = 1; i < n.inputs.size(); ++i) {
        auto r = binaryArray(foldName, acc, *im.constInput(n, i));
        if (!r) return Status(r.status()).prefix(n.describe());
        acc = r.take();
      }
      im.bindConst(n.outputs[0], std::move(acc));
      return Status::ok();
    }
    auto acc = im.operand(n, 0);
    if (!acc) return acc.status();
    if (n.inputs.size() == 1) {
      im.alias(n.outputs[0], n.inputs[0]);
      return Status::ok();
    }
    for (size_t i = 1; i < n.inputs.size(); ++i) {
      auto rhs = im.operand(n, i);
      if (!rhs) return rhs.status();
      bool last = i + 1 == n.inputs.size();
      auto op = im.build<OpT>(n, {*acc, *rhs}, {}, 1, last ? "" : n.outputs[0] + "_partial" + std::to_string(i));
      if (!op) return op.status();
      acc = op->getOutput();
    }
    return Status::ok();
  };
}

// Axes of a Reduce op: attribute before `inputFromOpset`, input 1 from then on.
Result<std::optional<std::vector<int64_t>>> reduceAxes(Importer &im, const Node &n, int64_t inputFromOpset) {
  if (im.opset() >= inputFromOpset) {
    if (!im.present(n, 1)) return std::optional<std::vector<int64_t>>();
    auto a = im.constInts(n, 1, "axes");
    if (!a) return a.status();
    return std::optional<std::vector<int64_t>>(a.take());
  }
  return n.getInts("axes");
}

template <typename OpT> Handler reduceHandler(int64_t axesInputFromOpset) {
  return [axesInputFromOpset](Importer &im, const Node &n) -> Status {
    auto xs = im.shapeOf(n, 0);
    if (!xs) return xs.status();
    auto axes = reduceAxes(im, n, axesInputFromOpset);
    if (!axes) return axes.status();
    std::vector<int64_t> list;
    if (*axes && !(*axes)->empty()) {
      auto norm = normalizeAxes(**axes, xs->size());
      if (!norm) return Status(norm.status()).prefix(n.describe());
      list = *norm;
    } else if (n.getInt("noop_with_empty_axes", 0)) {
      im.alias(n.outputs[0], n.inputs[0]);
      return Status::ok();
    } else {
      for (size_t i = 0; i < xs->size(); ++i) list.push_back(i);
    }
    return unary<OpT>(im, n, {im.ints("axes", list), im.boolean("keepdims", n.getInt("keepdims", 1) != 0)});
  };
}

template <typename OpT> Handler argReduceHandler() {
  return [](Importer &im, const Node &n) -> Status {
    auto xs = im.shapeOf(n, 0);
    if (!xs) return xs.status();
    auto axis = normalizeAxis(n.getInt("axis", 0), xs->size());
    if (!axis) return Status(axis.status()).prefix(n.describe());
    return unary<OpT>(im, n,
                      {im.i64("axis", *axis), im.boolean("keepdims", n.getInt("keepdims", 1) != 0),
                       im.boolean("select_last_index", n.getInt("select_last_index", 0) != 0)});
  };
}

// Softmax/LogSoftmax: before opset 13 the input is viewed as 2-D at `axis`.
template <typename OpT> Handler softmaxHandler() {
  return [](Importer &im, const Node &n) -> Status {
    auto xs = im.shapeOf(n, 0);
    if (!xs) return xs.status();
    int64_t rank = xs->size();
    auto axis = normalizeAxis(n.getInt("axis", im.opset() >= 13 ? -1 : 1), rank);
    if (!axis) return Status(axis.status()).prefix(n.describe());
    bool lastAxis = *axis == rank - 1;
    if (im.opset() >= 13 || lastAxis) return unary<OpT>(im, n, {im.i64("axis", *axis)});
    auto x = im.operand(n, 0);
    if (!x) return x.status();
    auto flat = im.build<top::ReshapeOp>(n, {*x}, {im.ints("shape", flattenShape(*xs, *axis))}, 1,
                                         n.outputs[0] + "_2d");
    if (!flat) return flat.status();
    auto sm = im.build<OpT>(n, {flat->getOutput()}, {im.i64("axis", 1)}, 1, n.outputs[0] + "_2d_out");
    if (!sm) return sm.status();
    auto back = im.build<top::ReshapeOp>(n, {sm->getOutput()}, {im.ints("shape", *xs)});
    return back ? Status::ok() : back.status();
  };
}

Status reshapeTo(Importer &im, const Node &n, Result<std::vector<int64_t>> shape) {
  if (!shape) return Status(shape.status()).prefix(n.describe());
  if (const NpyArray *c = im.constInput(n, 0)) {
    im.bindConst(n.outputs[0], reshapeArray(*c, shape.take()));
    return Status::ok();
  }
  return unary<top::ReshapeOp>(im, n, {im.ints("shape", *shape)});
}

Status resize(Importer &im, const Node &n, bool upsample) {
  auto xs = im.shapeOf(n, 0);
  if (!xs) return xs.status();
  size_t rank = xs->size();
  std::string mode = n.getString("mode", "nearest");
  if (mode == "bilinear") mode = "linear";
  if (mode != "nearest" && mode != "linear")
    return makeError(n.describe(), ": Resize mode '", mode, "' is not supported (nearest, linear)");
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  std::string coord = "half_pixel", nearest = "round_prefer_floor";
  if (upsample || im.opset() < 11) { // Upsample and Resize-10: scales only, asymmetric
    coord = "asymmetric";
    nearest = "floor";
    if (upsample && im.opset() < 9) {
      auto s = n.getFloats("scales");
      if (!s) return makeError(n.describe(), ": needs the scales attribute");
      scales = *s;
    } else {
      auto s = im.constFloats(n, 1, "scales");
      if (!s) return s.status();
      scales = *s;
    }
  } else {
    coord = n.getString("coordinate_transformation_mode", "half_pixel");
    nearest = n.getString("nearest_mode", "round_prefer_floor");
    if (n.getInt("antialias", 0)) return makeError(n.describe(), ": antialias is not supported");
    if (im.present(n, 2) && im.constInput(n, 2) && im.constInput(n, 2)->numel() > 0) {
      scales = toDouble(*im.constInput(n, 2));
    } else if (im.present(n, 3)) {
      auto sz = im.constInts(n, 3, "sizes");
      if (!sz) return sz.status();
      sizes = *sz;
    } else if (im.present(n, 2) && !im.constInput(n, 2)) {
      return makeError(n.describe(), ": input scales must be a constant");
    }
    if (!sizes.empty() && n.getInts("axes")) return makeError(n.describe(), ": the axes attribute is not supported");
    if (sizes.empty() && scales.empty()) return makeError(n.describe(), ": needs scales or sizes");
    if (!sizes.empty()) {
      if (sizes.size() != rank) return makeError(n.describe(), ": sizes needs ", rank, " values");
      for (size_t i = 0; i < rank; ++i) scales.push_back(double(sizes[i]) / double((*xs)[i]));
    }
  }
  if (scales.size() != rank) return makeError(n.describe(), ": scales needs ", rank, " values");
  if (coord == "tf_crop_and_resize" || coord == "tf_half_pixel_for_nn")
    return makeError(n.describe(), ": coordinate_transformation_mode '", coord, "' is not supported");
  return unary<top::ResizeOp>(im, n,
                              {im.str("mode", mode), im.str("coordinate_transformation_mode", coord),
                               im.str("nearest_mode", nearest), im.attr("scales", im.b().getDenseF64ArrayAttr(scales)),
                               im.ints("sizes", sizes)});
}

Status clip(Importer &im, const Node &n) {
  double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
  if (im.opset() < 11) {
    lo = n.getFloat("min", lo);
    hi = n.getFloat("max", hi);
  } else {
    if (im.present(n, 1)) {
      auto v = im.constFloats(n, 1, "min");
      if (!v) return v.status();
      lo = v->at(0);
    }
    if (im.present(n, 2)) {
      auto v = im.constFloats(n, 2, "max");
      if (!v) return v.status();
      hi = v->at(0);
    }
  }
  return unary<top::ClipOp>(im, n, {im.f64("min", lo), im.f64("max", hi)});
}

Status slice(Importer &im, const Node &n) {
  auto xs = im.shapeOf(n, 0);
  if (!xs) return xs.status();
  std::vector<int64_t> starts, ends, axes, steps;
  if (im.opset() < 10) {
    starts = n.getInts("starts").value_or(std::vector<int64_t>{});
    ends = n.getInts("ends").value_or(std::vector<int64_t>{});
    axes = n.getInts("axes").value_or(std::vector<int64_t>{});
  } else {
    auto s = im.constInts(n, 1, "starts"), e = im.constInts(n, 2, "ends");
    if (!s) return s.status();
    if (!e) return e.status();
    starts = *s;
    ends = *e;
    if (im.present(n, 3)) {
      auto a = im.constInts(n, 3, "axes");
      if (!a) return a.status();
      axes = *a;
    }
    if (im.present(n, 4)) {
      auto st = im.constInts(n, 4, "steps");
      if (!st) return st.status();
      steps = *st;
    }
  }
  auto p = normalizeSlice(*xs, starts, ends, axes, steps);
  if (!p) return Status(p.status()).prefix(n.describe());
  if (const NpyArray *c = im.constInput(n, 0)) {
    im.bindConst(n.outputs[0], sliceArray(*c, *p));
    return Status::ok();
  }
  return unary<top::SliceOp>(im, n, {im.ints("starts", p->starts), im.ints("ends", p->ends), im.ints("steps", p->steps)});
}

Status pad(Importer &im, const Node &n) {
  std::vector<int64_t> pads;
  double value = 0;
  if (im.opset() < 11) {
    pads = n.getInts("pads").value_or(std::vector<int64_t>{});
    value = n.getFloat("value", 0);
  } else {
    auto p = im.constInts(n, 1, "pads");
    if (!p) return p.status();
    pads = *p;
    if (im.present(n, 2)) {
      auto v = im.constFloats(n, 2, "constant_value");
      if (!v) return v.status();
      if (!v->empty()) value = (*v)[0];
    }
    if (im.present(n, 3)) return makeError(n.describe(), ": the axes input is not supported");
  }
  for (int64_t p : pads)
    if (p < 0) return makeError(n.describe(), ": negative pads are not supported");
  return unary<top::PadOp>(im, n, {im.ints("pads", pads), im.str("mode", n.getString("mode", "constant")),
                                   im.f64("value", value)});
}

Status split(Importer &im, const Node &n) {
  auto xs = im.shapeOf(n, 0);
  if (!xs) return xs.status();
  auto axis = normalizeAxis(n.getInt("axis", 0), xs->size());
  if (!axis) return Status(axis.status()).prefix(n.describe());
  std::vector<int64_t> sizes;
  if (im.opset() >= 13 && im.present(n, 1)) {
    auto s = im.constInts(n, 1, "split");
    if (!s) return s.status();
    sizes = *s;
  } else if (auto s = n.getInts("split")) {
    sizes = *s;
  } else {
    int64_t parts = n.outputs.size(), d = (*xs)[*axis];
    if (d % parts) return makeError(n.describe(), ": dim ", d, " does not split evenly into ", parts);
    sizes.assign(parts, d / parts);
  }
  if (sizes.size() != n.outputs.size())
    return makeError(n.describe(), ": ", sizes.size(), " split sizes for ", n.outputs.size(), " outputs");
  auto x = im.operand(n, 0);
  if (!x) return x.status();
  auto op = im.build<top::SplitOp>(n, {*x}, {im.i64("axis", *axis), im.ints("split", sizes)}, sizes.size());
  return op ? Status::ok() : op.status();
}

Status gather(Importer &im, const Node &n) {
  if (im.allConst(n)) return im.bindConst(n, gatherArray(*im.constInput(n, 0), *im.constInput(n, 1), n.getInt("axis", 0)));
  auto xs = im.shapeOf(n, 0);
  if (!xs) return xs.status();
  auto axis = normalizeAxis(n.getInt("axis", 0), xs->size());
  if (!axis) return Status(axis.status()).prefix(n.describe());
  auto x = im.operand(n, 0), idx = im.operand(n, 1);
  if (!x) return x.status();
  if (!idx) return idx.status();
  auto op = im.build<top::GatherOp>(n, {*x, *idx}, {im.i64("axis", *axis)});
  return op ? Status::ok() : op.status();
}

Status concat(Importer &im, const Node &n) {
  if (im.allConst(n)) {
    std::vector<const NpyArray *> parts;
    for (size_t i = 0; i < n.inputs.size(); ++i)
      if (im.present(n, i)) parts.push_back(im.constInput(n, i));
    return im.bindConst(n, concatArrays(parts, n.getInt("axis", 0)));
  }
  std::vector<Value> ins;
  std::vector<int64_t> rankOf;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (!im.present(n, i)) continue;
    auto s = im.shapeOf(n, i);
    if (!s) return s.status();
    if (std::find(s->begin(), s->end(), 0) != s->end()) continue; // empty parts add nothing
    auto v = im.operand(n, i);
    if (!v) return v.status();
    ins.push_back(*v);
    rankOf.push_back(s->size());
  }
  if (ins.empty()) return makeError(n.describe(), ": all inputs are empty");
  auto axis = normalizeAxis(n.getInt("axis", 0), rankOf[0]);
  if (!axis) return Status(axis.status()).prefix(n.describe());
  auto op = im.build<top::ConcatOp>(n, ins, {im.i64("axis", *axis)});
  return op ? Status::ok() : op.status();
}

Status gemm(Importer &im, const Node &n) {
  auto a = im.operand(n, 0), bb = im.operand(n, 1), c = im.operandOrNone(n, 2);
  if (!a) return a.status();
  if (!bb) return bb.status();
  if (!c) return c.status();
  auto op = im.build<top::GemmOp>(n, {*a, *bb, *c},
                                  {im.f64("alpha", n.getFloat("alpha", 1)), im.f64("beta", n.getFloat("beta", 1)),
                                   im.boolean("transA", n.getInt("transA", 0) != 0),
                                   im.boolean("transB", n.getInt("transB", 0) != 0)});
  return op ? Status::ok() : op.status();
}

template <typename OpT> Handler multiInputHandler(size_t required, size_t optionalTotal,
                                                  std::function<std::vector<NamedAttribute>(Importer &, const Node &)>
                                                      attrs = nullptr) {
  return [=](Importer &im, const Node &n) -> Status {
    std::vector<Value> ins;
    for (size_t i = 0; i < optionalTotal; ++i) {
      auto v = i < required ? im.operand(n, i) : im.operandOrNone(n, i);
      if (!v) return v.status();
      ins.push_back(*v);
    }
    auto op = im.build<OpT>(n, ins, attrs ? attrs(im, n) : std::vector<NamedAttribute>{});
    return op ? Status::ok() : op.status();
  };
}

Status onlyFirstOutput(const Node &n) {
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (!n.outputs[i].empty()) return makeError(n.describe(), ": output ", i, " (training-mode statistics) is not supported");
  return Status::ok();
}

Status constantNode(Importer &im, const Node &n) {
  if (const Attribute *a = n.attr("value"); a && a->tensor) {
    im.bindConst(n.outputs[0], *a->tensor);
  } else if (auto f = n.attr("value_float")) {
    im.bindConst(n.outputs[0], NpyArray::from<float>({}, {float(f->f)}));
  } else if (auto fs = n.attr("value_floats")) {
    std::vector<float> v(fs->floats.begin(), fs->floats.end());
    im.bindConst(n.outputs[0], NpyArray::from<float>({int64_t(v.size())}, v));
  } else if (auto i = n.attr("value_int")) {
    im.bindConst(n.outputs[0], NpyArray::from<int64_t>({}, {i->i}));
  } else if (auto is = n.attr("value_ints")) {
    im.bindConst(n.outputs[0], NpyArray::from<int64_t>({int64_t(is->ints.size())}, is->ints));
  } else {
    return makeError(n.describe(), ": only tensor, float(s) and int(s) values are supported");
  }
  return Status::ok();
}

Status castNode(Importer &im, const Node &n) {
  std::string dtype = topDtypeOf(int(n.getInt("to", 0)));
  if (dtype.empty()) return makeError(n.describe(), ": cast to ONNX type ", n.getInt("to", 0), " is not supported");
  if (const NpyArray *c = im.constInput(n, 0)) {
    im.bindConst(n.outputs[0], castArray(*c, dtype));
    return Status::ok();
  }
  auto x = im.operand(n, 0);
  if (!x) return x.status();
  Type to = elementTypeOf(&im.ctx(), dtype);
  if (cast<TensorType>(x->getType()).getElementType() == to) {
    im.alias(n.outputs[0], n.inputs[0]);
    return Status::ok();
  }
  return unary<top::CastOp>(im, n, {im.attr("to", TypeAttr::get(to))});
}

// Builds the Top ops that spell out one ONNX node. Intermediate results are
// named "<output>_<step>"; the step with an empty tag is the node's output.
// The first failure is kept and later steps are skipped.
class Composer {
public:
  Composer(Importer &im, const Node &n) : im_(im), n_(n), out_(n.outputs[0]) {}

  Value input(size_t i) {
    if (!st_) return {};
    auto v = im_.operand(n_, i);
    if (!v) st_ = v.status();
    return v ? *v : Value();
  }
  Value scalar(const std::string &tag, float value) {
    std::string name = out_ + "_" + tag;
    im_.bindConst(name, NpyArray::from<float>({}, {value}));
    auto v = im_.value(name);
    return v ? *v : Value();
  }
  template <typename OpT>
  Value op(const std::string &tag, ArrayRef<Value> ins, ArrayRef<NamedAttribute> attrs = {}) {
    if (!st_ || llvm::any_of(ins, [](Value v) { return !v; })) return {};
    std::string name = tag.empty() ? out_ : out_ + "_" + tag;
    auto r = im_.build<OpT>(n_, ins, attrs, 1, name);
    if (!r) {
      st_ = r.status();
      return {};
    }
    if (tag.empty()) im_.bind(out_, r->getOutput());
    return r->getOutput();
  }
  Status status() const { return st_; }

private:
  Importer &im_;
  const Node &n_;
  std::string out_;
  Status st_;
};

// Reduce ops that are a pre-op, a sum and a post-op (ReduceL1, ReduceLogSumExp...).
Handler composedReduceHandler(std::function<Value(Composer &, Value)> pre, std::function<Value(Composer &, Value)> post) {
  return [pre, post](Importer &im, const Node &n) -> Status {
    auto xs = im.shapeOf(n, 0);
    if (!xs) return xs.status();
    auto axes = reduceAxes(im, n, 18);
    if (!axes) return axes.status();
    std::vector<int64_t> list;
    if (*axes && !(*axes)->empty()) {
      auto norm = normalizeAxes(**axes, xs->size());
      if (!norm) return Status(norm.status()).prefix(n.describe());
      list = *norm;
    } else if (!n.getInt("noop_with_empty_axes", 0)) {
      for (size_t i = 0; i < xs->size(); ++i) list.push_back(i);
    }
    Composer c(im, n);
    Value x = pre(c, c.input(0));
    Value sum = list.empty() ? x
                             : c.op<top::ReduceSumOp>(post ? "sum" : "", {x},
                                                      {im.ints("axes", list),
                                                       im.boolean("keepdims", n.getInt("keepdims", 1) != 0)});
    if (post) post(c, sum);
    else if (list.empty()) c.op<top::ReshapeOp>("", {x}, {im.ints("shape", *xs)});
    return c.status();
  };
}

// Instance normalisation: per (n, c) over the spatial dims, then scale[c], bias[c].
Status instanceNorm(Importer &im, const Node &n) {
  auto xs = im.shapeOf(n, 0);
  if (!xs) return xs.status();
  if (xs->size() < 3) return makeError(n.describe(), ": needs an input of rank >= 3");
  std::vector<int64_t> axes, param{(*xs)[1]};
  for (size_t i = 2; i < xs->size(); ++i) {
    axes.push_back(i);
    param.push_back(1);
  }
  Composer c(im, n);
  std::vector<NamedAttribute> reduce{im.ints("axes", axes), im.boolean("keepdims", true)};
  Value x = c.input(0);
  Value mean = c.op<top::ReduceMeanOp>("mean", {x}, reduce);
  Value d = c.op<top::SubOp>("centered", {x, mean});
  Value var = c.op<top::ReduceMeanOp>("variance", {c.op<top::MulOp>("square", {d, d})}, reduce);
  Value sd = c.op<top::SqrtOp>("stddev", {c.op<top::AddOp>("variance_eps", {var, c.scalar("epsilon", float(n.getFloat("epsilon", 1e-5)))})});
  Value norm = c.op<top::DivOp>("normalized", {d, sd});
  Value scale = c.op<top::ReshapeOp>("scale", {c.input(1)}, {im.ints("shape", param)});
  Value bias = c.op<top::ReshapeOp>("bias", {c.input(2)}, {im.ints("shape", param)});
  c.op<top::AddOp>("", {c.op<top::MulOp>("scaled", {norm, scale}), bias});
  return c.status();
}

// NCHW SpaceToDepth: reshape [N,C,H/b,b,W/b,b] -> permute -> [N, C*b*b, H/b, W/b].
Status spaceToDepth(Importer &im, const Node &n) {
  auto xs = im.shapeOf(n, 0);
  if (!xs) return xs.status();
  int64_t b = n.getInt("blocksize", 0);
  if (xs->size() != 4 || b < 1 || (*xs)[2] % b || (*xs)[3] % b)
    return makeError(n.describe(), ": needs NCHW input with H and W divisible by blocksize ", b);
  int64_t N = (*xs)[0], C = (*xs)[1], H = (*xs)[2], W = (*xs)[3];
  Composer c(im, n);
  Value blocks = c.op<top::ReshapeOp>("blocks", {c.input(0)}, {im.ints("shape", {N, C, H / b, b, W / b, b})});
  Value moved = c.op<top::PermuteOp>("moved", {blocks}, {im.ints("order", {0, 3, 5, 1, 2, 4})});
  c.op<top::ReshapeOp>("", {moved}, {im.ints("shape", {N, C * b * b, H / b, W / b})});
  return c.status();
}

// LayerNormalization whose Mean / InvStdDev outputs are used: spelled out in
// primitive ops so that those tensors exist (top.layer_norm has one result).
Status layerNormWithStatistics(Importer &im, const Node &n, int64_t axis, int64_t rank) {
  std::vector<int64_t> axes;
  for (int64_t i = axis; i < rank; ++i) axes.push_back(i);
  const std::string &out = n.outputs[0];
  auto name = [&](size_t i, const std::string &suffix) {
    return i < n.outputs.size() && !n.outputs[i].empty() ? n.outputs[i] : out + suffix;
  };
  auto x = im.operand(n, 0);
  if (!x) return x.status();
  std::vector<NamedAttribute> reduce{im.ints("axes", axes), im.boolean("keepdims", true)};
  auto step = [&](auto op, const std::string &result) -> Result<Value> {
    if (!op) return op.status();
    im.bind(result, op->getOutput());
    return op->getOutput();
  };
  auto mean = step(im.build<top::ReduceMeanOp>(n, {*x}, reduce, 1, name(1, "_mean")), name(1, "_mean"));
  if (!mean) return mean.status();
  auto centered = step(im.build<top::SubOp>(n, {*x, *mean}, {}, 1, out + "_centered"), "");
  if (!centered) return centered.status();
  auto square = step(im.build<top::MulOp>(n, {*centered, *centered}, {}, 1, out + "_square"), "");
  if (!square) return square.status();
  auto var = step(im.build<top::ReduceMeanOp>(n, {*square}, reduce, 1, out + "_variance"), "");
  if (!var) return var.status();
  std::string epsName = out + "_epsilon";
  im.bindConst(epsName, NpyArray::from<float>({}, {float(n.getFloat("epsilon", 1e-5))}));
  auto eps = im.value(epsName);
  if (!eps) return eps.status();
  auto varEps = step(im.build<top::AddOp>(n, {*var, *eps}, {}, 1, out + "_variance_eps"), "");
  if (!varEps) return varEps.status();
  auto stddev = step(im.build<top::SqrtOp>(n, {*varEps}, {}, 1, out + "_stddev"), "");
  if (!stddev) return stddev.status();
  auto inv = step(im.build<top::ReciprocalOp>(n, {*stddev}, {}, 1, name(2, "_inv_stddev")), name(2, "_inv_stddev"));
  if (!inv) return inv.status();
  bool hasBias = im.present(n, 2);
  auto normalized = step(im.build<top::MulOp>(n, {*centered, *inv}, {}, 1, out + "_normalized"), "");
  if (!normalized) return normalized.status();
  auto scale = im.operand(n, 1);
  if (!scale) return scale.status();
  auto scaled = step(im.build<top::MulOp>(n, {*normalized, *scale}, {}, 1, hasBias ? out + "_scaled" : out),
                     hasBias ? "" : out);
  if (!scaled || !hasBias) return scaled ? Status::ok() : scaled.status();
  auto bias = im.operand(n, 2);
  if (!bias) return bias.status();
  auto y = step(im.build<top::AddOp>(n, {*scaled, *bias}, {}, 1, out), out);
  return y ? Status::ok() : y.status();
}

// Inputs an ONNX op cannot do without (checked before its handler runs).
size_t requiredInputs(const std::string &op, int64_t opset) {
  static const std::map<std::string, size_t> table = {
      {"Constant", 0}, {"BatchNormalization", 5}, {"Range", 3}, {"Where", 3}, {"Conv", 2},
      {"ConvTranspose", 2}, {"Gemm", 2}, {"MatMul", 2}, {"PRelu", 2}, {"Gather", 2}, {"Expand", 2},
      {"Tile", 2}, {"Equal", 2}, {"Less", 2}, {"Greater", 2}, {"Add", 2}, {"Sub", 2}, {"Mul", 2},
      {"Div", 2}, {"Pow", 2}, {"LayerNormalization", 2}, {"LessOrEqual", 2}, {"GreaterOrEqual", 2}, {"And", 2}, {"Or", 2}, {"Xor", 2}, {"InstanceNormalization", 3}};
  if (op == "Reshape") return opset >= 5 ? 2 : 1;
  if (op == "Slice") return opset >= 10 ? 3 : 1;
  if (op == "Pad") return opset >= 11 ? 2 : 1;
  auto it = table.find(op);
  return it == table.end() ? 1 : it->second;
}

const std::map<std::string, Handler> &handlers() {
  static const std::map<std::string, Handler> table = [] {
    std::map<std::string, Handler> t;
    t["Conv"] = [](Importer &im, const Node &n) { return convLike(im, n, false); };
    t["ConvTranspose"] = [](Importer &im, const Node &n) { return convLike(im, n, true); };
    t["BatchNormalization"] = [](Importer &im, const Node &n) -> Status {
      TPU_RETURN_IF_ERROR(onlyFirstOutput(n));
      if (n.getInt("training_mode", 0)) return makeError(n.describe(), ": training_mode is not supported");
      return multiInputHandler<top::BatchNormOp>(5, 5, [](Importer &im, const Node &n) {
        return std::vector<NamedAttribute>{im.f64("epsilon", n.getFloat("epsilon", 1e-5))};
      })(im, n);
    };
    t["LayerNormalization"] = [](Importer &im, const Node &n) -> Status {
      auto xs = im.shapeOf(n, 0);
      if (!xs) return xs.status();
      auto axis = normalizeAxis(n.getInt("axis", -1), xs->size());
      if (!axis) return Status(axis.status()).prefix(n.describe());
      int64_t ax = *axis;
      if ((n.outputs.size() > 1 && !n.outputs[1].empty()) || (n.outputs.size() > 2 && !n.outputs[2].empty()))
        return layerNormWithStatistics(im, n, ax, xs->size());
      return multiInputHandler<top::LayerNormOp>(1, 3, [ax](Importer &im, const Node &n) {
        return std::vector<NamedAttribute>{im.i64("axis", ax), im.f64("epsilon", n.getFloat("epsilon", 1e-5))};
      })(im, n);
    };
    t["MatMul"] = multiInputHandler<top::MatMulOp>(2, 2);
    t["Gemm"] = gemm;
    t["Relu"] = unaryHandler<top::ReluOp>("Relu");
    t["Sigmoid"] = unaryHandler<top::SigmoidOp>("Sigmoid");
    t["Tanh"] = unaryHandler<top::TanhOp>("Tanh");
    t["Exp"] = unaryHandler<top::ExpOp>("Exp");
    t["Log"] = unaryHandler<top::LogOp>("Log");
    t["Sqrt"] = unaryHandler<top::SqrtOp>("Sqrt");
    t["Neg"] = unaryHandler<top::NegOp>("Neg");
    t["Abs"] = unaryHandler<top::AbsOp>("Abs");
    t["Reciprocal"] = unaryHandler<top::ReciprocalOp>("Reciprocal");
    t["Floor"] = unaryHandler<top::FloorOp>("Floor");
    t["Ceil"] = unaryHandler<top::CeilOp>("Ceil");
    t["Erf"] = unaryHandler<top::ErfOp>();
    t["Round"] = unaryHandler<top::RoundOp>();
    t["Sign"] = unaryHandler<top::SignOp>();
    t["Softplus"] = unaryHandler<top::SoftplusOp>();
    t["Softsign"] = unaryHandler<top::SoftsignOp>();
    t["Sin"] = unaryHandler<top::SinOp>();
    t["Cos"] = unaryHandler<top::CosOp>();
    t["HardSwish"] = unaryHandler<top::HardSwishOp>();
    t["LeakyRelu"] = [](Importer &im, const Node &n) {
      return unary<top::LeakyReluOp>(im, n, {im.f64("alpha", n.getFloat("alpha", 0.01))});
    };
    t["Elu"] = [](Importer &im, const Node &n) {
      return unary<top::EluOp>(im, n, {im.f64("alpha", n.getFloat("alpha", 1.0))});
    };
    t["HardSigmoid"] = [](Importer &im, const Node &n) {
      return unary<top::HardSigmoidOp>(im, n,
                                       {im.f64("alpha", n.getFloat("alpha", 0.2)), im.f64("beta", n.getFloat("beta", 0.5))});
    };
    t["Clip"] = clip;
    t["Softmax"] = softmaxHandler<top::SoftmaxOp>();
    t["LogSoftmax"] = softmaxHandler<top::LogSoftmaxOp>();
    t["Cast"] = castNode;
    t["Add"] = binaryHandler<top::AddOp>("Add");
    t["Sum"] = binaryHandler<top::AddOp>("Add");
    t["Sub"] = binaryHandler<top::SubOp>("Sub");
    t["Mul"] = binaryHandler<top::MulOp>("Mul");
    t["Div"] = binaryHandler<top::DivOp>("Div");
    t["Max"] = binaryHandler<top::MaxOp>("Max");
    t["Min"] = binaryHandler<top::MinOp>("Min");
    t["Pow"] = binaryHandler<top::PowOp>("Pow");
    t["PRelu"] = binaryHandler<top::PReluOp>("");
    t["Equal"] = binaryHandler<top::EqualOp>("Equal");
    t["Less"] = binaryHandler<top::LessOp>("Less");
    t["Greater"] = binaryHandler<top::GreaterOp>("Greater");
    t["Mean"] = [](Importer &im, const Node &n) -> Status {
      Node sum = n, scale = n;
      sum.outputs = {n.outputs[0] + "_sum"};
      TPU_RETURN_IF_ERROR(binaryHandler<top::AddOp>("Add")(im, sum));
      std::string factor = n.outputs[0] + "_scale";
      im.bindConst(factor, NpyArray::from<float>({}, {1.0f / float(n.inputs.size())}));
      scale.inputs = {sum.outputs[0], factor};
      return binaryHandler<top::MulOp>("Mul")(im, scale);
    };
    t["Where"] = [](Importer &im, const Node &n) -> Status {
      if (im.allConst(n))
        return im.bindConst(n, whereArray(*im.constInput(n, 0), *im.constInput(n, 1), *im.constInput(n, 2)));
      return multiInputHandler<top::WhereOp>(3, 3)(im, n);
    };
    t["MaxPool"] = pool<top::MaxPoolOp>;
    t["AveragePool"] = pool<top::AvgPoolOp>;
    t["GlobalAveragePool"] = unaryHandler<top::GlobalAvgPoolOp>();
    t["GlobalMaxPool"] = unaryHandler<top::GlobalMaxPoolOp>();
    t["ReduceMean"] = reduceHandler<top::ReduceMeanOp>(18);
    t["ReduceSum"] = reduceHandler<top::ReduceSumOp>(13);
    t["ReduceMax"] = reduceHandler<top::ReduceMaxOp>(18);
    t["ReduceMin"] = reduceHandler<top::ReduceMinOp>(18);
    t["ReduceProd"] = reduceHandler<top::ReduceProdOp>(18);
    t["ReduceL2"] = reduceHandler<top::ReduceL2Op>(18);
    t["ReduceSumSquare"] = composedReduceHandler([](Composer &c, Value x) { return c.op<top::MulOp>("square", {x, x}); },
                                                  nullptr);
    t["ReduceL1"] = composedReduceHandler([](Composer &c, Value x) { return c.op<top::AbsOp>("abs", {x}); }, nullptr);
    t["ReduceLogSum"] = composedReduceHandler([](Composer &, Value x) { return x; },
                                               [](Composer &c, Value s) { return c.op<top::LogOp>("", {s}); });
    t["ReduceLogSumExp"] = composedReduceHandler([](Composer &c, Value x) { return c.op<top::ExpOp>("exp", {x}); },
                                                  [](Composer &c, Value s) { return c.op<top::LogOp>("", {s}); });
    t["Selu"] = [](Importer &im, const Node &n) -> Status {
      Composer c(im, n);
      Value elu = c.op<top::EluOp>("elu", {c.input(0)}, {im.f64("alpha", n.getFloat("alpha", 1.67326319217681884765625))});
      c.op<top::MulOp>("", {elu, c.scalar("gamma", float(n.getFloat("gamma", 1.05070102214813232421875)))});
      return c.status();
    };
    t["Celu"] = [](Importer &im, const Node &n) -> Status {
      float alpha = float(n.getFloat("alpha", 1.0));
      if (alpha == 0) return makeError(n.describe(), ": alpha must not be 0");
      Composer c(im, n);
      Value scaled = c.op<top::DivOp>("scaled", {c.input(0), c.scalar("alpha", alpha)});
      Value elu = c.op<top::EluOp>("elu", {scaled}, {im.f64("alpha", 1.0)});
      c.op<top::MulOp>("", {elu, c.scalar("alpha_out", alpha)});
      return c.status();
    };
    t["ThresholdedRelu"] = [](Importer &im, const Node &n) -> Status {
      Composer c(im, n);
      Value x = c.input(0);
      Value above = c.op<top::GreaterOp>("above", {x, c.scalar("alpha", float(n.getFloat("alpha", 1.0)))});
      c.op<top::WhereOp>("", {above, x, c.scalar("zero", 0.0f)});
      return c.status();
    };
    t["Tan"] = [](Importer &im, const Node &n) -> Status {
      Composer c(im, n);
      Value x = c.input(0);
      c.op<top::DivOp>("", {c.op<top::SinOp>("sin", {x}), c.op<top::CosOp>("cos", {x})});
      return c.status();
    };
    t["Sinh"] = [](Importer &im, const Node &n) -> Status { // (e^x - e^-x) / 2
      Composer c(im, n);
      Value x = c.input(0);
      Value ep = c.op<top::ExpOp>("exp", {x}), en = c.op<top::ExpOp>("exp_neg", {c.op<top::NegOp>("neg", {x})});
      c.op<top::MulOp>("", {c.op<top::SubOp>("diff", {ep, en}), c.scalar("half", 0.5f)});
      return c.status();
    };
    t["Cosh"] = [](Importer &im, const Node &n) -> Status { // (e^x + e^-x) / 2
      Composer c(im, n);
      Value x = c.input(0);
      Value ep = c.op<top::ExpOp>("exp", {x}), en = c.op<top::ExpOp>("exp_neg", {c.op<top::NegOp>("neg", {x})});
      c.op<top::MulOp>("", {c.op<top::AddOp>("sum", {ep, en}), c.scalar("half", 0.5f)});
      return c.status();
    };
    auto archyp = [](float sign) { // asinh: log(x + sqrt(x^2 + 1)), acosh: log(x + sqrt(x^2 - 1))
      return [sign](Importer &im, const Node &n) -> Status {
        Composer c(im, n);
        Value x = c.input(0);
        Value r = c.op<top::SqrtOp>("root", {c.op<top::AddOp>("shifted", {c.op<top::MulOp>("square", {x, x}),
                                                                           c.scalar("one", sign)})});
        c.op<top::LogOp>("", {c.op<top::AddOp>("arg", {x, r})});
        return c.status();
      };
    };
    t["Asinh"] = archyp(1.0f);
    t["Acosh"] = archyp(-1.0f);
    t["Atanh"] = [](Importer &im, const Node &n) -> Status { // log((1 + x) / (1 - x)) / 2
      Composer c(im, n);
      Value x = c.input(0), one = c.scalar("one", 1.0f);
      Value q = c.op<top::DivOp>("ratio", {c.op<top::AddOp>("num", {one, x}), c.op<top::SubOp>("den", {one, x})});
      c.op<top::MulOp>("", {c.op<top::LogOp>("log", {q}), c.scalar("half", 0.5f)});
      return c.status();
    };
    t["Shrink"] = [](Importer &im, const Node &n) -> Status {
      float lambd = float(n.getFloat("lambd", 0.5)), bias = float(n.getFloat("bias", 0.0));
      Composer c(im, n);
      Value x = c.input(0);
      Value low = c.op<top::LessOp>("below", {x, c.scalar("neg_lambd", -lambd)});
      Value high = c.op<top::GreaterOp>("above", {x, c.scalar("lambd", lambd)});
      Value up = c.op<top::AddOp>("raised", {x, c.scalar("bias", bias)});
      Value down = c.op<top::SubOp>("lowered", {x, c.scalar("bias_sub", bias)});
      Value inner = c.op<top::WhereOp>("upper", {high, down, c.scalar("zero", 0.0f)});
      c.op<top::WhereOp>("", {low, up, inner});
      return c.status();
    };
    t["LpNormalization"] = [](Importer &im, const Node &n) -> Status {
      auto xs = im.shapeOf(n, 0);
      if (!xs) return xs.status();
      auto axis = normalizeAxis(n.getInt("axis", -1), xs->size());
      if (!axis) return Status(axis.status()).prefix(n.describe());
      int64_t p = n.getInt("p", 2);
      if (p != 1 && p != 2) return makeError(n.describe(), ": p must be 1 or 2");
      Composer c(im, n);
      Value x = c.input(0);
      std::vector<NamedAttribute> reduce{im.ints("axes", {*axis}), im.boolean("keepdims", true)};
      Value norm = p == 2 ? c.op<top::ReduceL2Op>("norm", {x}, reduce)
                          : c.op<top::ReduceSumOp>("norm", {c.op<top::AbsOp>("abs", {x})}, reduce);
      c.op<top::DivOp>("", {x, norm});
      return c.status();
    };
    t["Trilu"] = [](Importer &im, const Node &n) -> Status { // x where the band mask holds, else 0
      auto xs = im.shapeOf(n, 0);
      if (!xs) return xs.status();
      if (xs->size() < 2) return makeError(n.describe(), ": needs rank >= 2");
      int64_t k = 0;
      if (im.present(n, 1)) {
        auto kv = im.constInts(n, 1, "k");
        if (!kv) return kv.status();
        if (kv->size() != 1) return makeError(n.describe(), ": k must be a scalar");
        k = (*kv)[0];
      }
      bool upper = n.getInt("upper", 1) != 0;
      int64_t rows = (*xs)[xs->size() - 2], cols = (*xs)[xs->size() - 1];
      TPU_RETURN_IF_ERROR(checkFoldedSize(n, {rows, cols}));
      NpyArray mask;
      mask.dtype = "bool";
      mask.shape = {rows, cols};
      mask.data.resize(rows * cols);
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) mask.data[i * cols + j] = upper ? j - i >= k : j - i <= k;
      std::string maskName = n.outputs[0] + "_mask";
      im.bindConst(maskName, mask);
      if (const NpyArray *x = im.constInput(n, 0)) {
        NpyArray zero = castArray(NpyArray::from<float>({}, {0.0f}), x->dtype);
        return im.bindConst(n, whereArray(mask, *x, zero));
      }
      Composer c(im, n);
      Value x = c.input(0);
      auto maskValue = im.value(maskName);
      if (!maskValue) return maskValue.status();
      bool isInt = cast<TensorType>(x.getType()).getElementType().isInteger(64);
      std::string zeroName = n.outputs[0] + "_zero";
      im.bindConst(zeroName, isInt ? NpyArray::from<int64_t>({}, {0}) : NpyArray::from<float>({}, {0.0f}));
      auto zero = im.value(zeroName);
      if (!zero) return zero.status();
      c.op<top::WhereOp>("", {*maskValue, x, *zero});
      return c.status();
    };
    t["EyeLike"] = [](Importer &im, const Node &n) -> Status {
      auto xs = im.shapeOf(n, 0);
      if (!xs) return xs.status();
      if (xs->size() != 2) return makeError(n.describe(), ": needs a 2-D input");
      std::string dtype = n.attr("dtype") ? topDtypeOf(int(n.getInt("dtype", 1))) : std::string();
      if (dtype.empty()) {
        auto v = im.operand(n, 0);
        if (!v) return v.status();
        dtype = top::dtypeOfElement(cast<TensorType>(v->getType()).getElementType());
      }
      int64_t rows = (*xs)[0], cols = (*xs)[1], k = n.getInt("k", 0);
      TPU_RETURN_IF_ERROR(checkFoldedSize(n, {rows, cols}));
      std::vector<float> eye(rows * cols, 0.0f);
      for (int64_t i = 0; i < rows; ++i)
        if (i + k >= 0 && i + k < cols) eye[i * cols + i + k] = 1.0f;
      im.bindConst(n.outputs[0], castArray(NpyArray::from<float>({rows, cols}, eye), dtype));
      return Status::ok();
    };
    // Not(c) = (c == false); a <= b = not(a > b); a >= b = not(a < b).
    auto negated = [](std::function<Value(Composer &, Value, Value)> base) {
      return [base](Importer &im, const Node &n) -> Status {
        Composer c(im, n);
        Value cond = base(c, c.input(0), n.inputs.size() > 1 ? c.input(1) : Value());
        std::string falseName = n.outputs[0] + "_false";
        NpyArray f;
        f.dtype = "bool";
        f.data = {0};
        im.bindConst(falseName, f);
        auto fv = im.value(falseName);
        if (!fv) return fv.status();
        c.op<top::EqualOp>("", {cond, *fv});
        return c.status();
      };
    };
    t["Not"] = negated([](Composer &, Value x, Value) { return x; });
    t["LessOrEqual"] = negated([](Composer &c, Value a, Value b) { return c.op<top::GreaterOp>("greater", {a, b}); });
    t["GreaterOrEqual"] = negated([](Composer &c, Value a, Value b) { return c.op<top::LessOp>("less", {a, b}); });
    // Boolean logic from where/equal: a and b = where(a, b, false); a or b =
    // where(a, true, b); a xor b = ((a == b) == false).
    auto logic = [](int kind) {
      return [kind](Importer &im, const Node &n) -> Status {
        Composer c(im, n);
        Value a = c.input(0), b = c.input(1);
        auto boolConst = [&](const std::string &tag, bool v) -> Value {
          NpyArray k;
          k.dtype = "bool";
          k.data = {uint8_t(v)};
          im.bindConst(n.outputs[0] + "_" + tag, k);
          auto r = im.value(n.outputs[0] + "_" + tag);
          return r ? *r : Value();
        };
        if (kind == 0) c.op<top::WhereOp>("", {a, b, boolConst("false", false)});
        else if (kind == 1) c.op<top::WhereOp>("", {a, boolConst("true", true), b});
        else c.op<top::EqualOp>("", {c.op<top::EqualOp>("same", {a, b}), boolConst("false", false)});
        return c.status();
      };
    };
    t["And"] = logic(0);
    t["Or"] = logic(1);
    t["Xor"] = logic(2);
    t["MeanVarianceNormalization"] = [](Importer &im, const Node &n) -> Status { // (x - E x) / (std + 1e-9)
      auto xs = im.shapeOf(n, 0);
      if (!xs) return xs.status();
      auto axes = normalizeAxes(n.getInts("axes").value_or(std::vector<int64_t>{0, 2, 3}), xs->size());
      if (!axes) return Status(axes.status()).prefix(n.describe());
      Composer c(im, n);
      std::vector<NamedAttribute> reduce{im.ints("axes", *axes), im.boolean("keepdims", true)};
      Value x = c.input(0);
      Value d = c.op<top::SubOp>("centered", {x, c.op<top::ReduceMeanOp>("mean", {x}, reduce)});
      Value sd = c.op<top::SqrtOp>("stddev", {c.op<top::ReduceMeanOp>("variance", {c.op<top::MulOp>("square", {d, d})}, reduce)});
      c.op<top::DivOp>("", {d, c.op<top::AddOp>("stddev_eps", {sd, c.scalar("epsilon", 1e-9f)})});
      return c.status();
    };
    t["InstanceNormalization"] = instanceNorm;
    t["SpaceToDepth"] = spaceToDepth;
    t["ArgMax"] = argReduceHandler<top::ArgMaxOp>();
    t["ArgMin"] = argReduceHandler<top::ArgMinOp>();
    t["Reshape"] = [](Importer &im, const Node &n) -> Status {
      auto xs = im.shapeOf(n, 0);
      if (!xs) return xs.status();
      std::vector<int64_t> shape;
      if (im.opset() < 5) {
        shape = n.getInts("shape").value_or(std::vector<int64_t>{});
      } else {
        auto s = im.constInts(n, 1, "shape");
        if (!s) return s.status();
        shape = *s;
      }
      return reshapeTo(im, n, reshapeTarget(*xs, shape, n.getInt("allowzero", 0) != 0));
    };
    t["Flatten"] = [](Importer &im, const Node &n) -> Status {
      auto xs = im.shapeOf(n, 0);
      if (!xs) return xs.status();
      int64_t axis = n.getInt("axis", 1), rank = xs->size();
      if (axis < -rank || axis > rank) return makeError(n.describe(), ": axis ", axis, " out of range");
      return reshapeTo(im, n, flattenShape(*xs, axis < 0 ? axis + rank : axis));
    };
    auto squeezeLike = [](bool squeeze) {
      return [squeeze](Importer &im, const Node &n) -> Status {
        auto xs = im.shapeOf(n, 0);
        if (!xs) return xs.status();
        std::vector<int64_t> axes;
        if (im.opset() >= 13) {
          if (im.present(n, 1)) {
            auto a = im.constInts(n, 1, "axes");
            if (!a) return a.status();
            axes = *a;
          }
        } else {
          axes = n.getInts("axes").value_or(std::vector<int64_t>{});
        }
        return reshapeTo(im, n, squeeze ? squeezeShape(*xs, axes) : unsqueezeShape(*xs, axes));
      };
    };
    t["Squeeze"] = squeezeLike(true);
    t["Unsqueeze"] = squeezeLike(false);
    t["Transpose"] = [](Importer &im, const Node &n) -> Status {
      auto xs = im.shapeOf(n, 0);
      if (!xs) return xs.status();
      std::vector<int64_t> perm;
      for (int64_t i = xs->size() - 1; i >= 0; --i) perm.push_back(i);
      perm = n.getInts("perm").value_or(perm);
      if (perm.size() != xs->size()) return makeError(n.describe(), ": perm needs ", xs->size(), " entries");
      if (const NpyArray *c = im.constInput(n, 0)) {
        auto norm = normalizeAxes(perm, xs->size());
        if (!norm || norm->size() != perm.size()) return makeError(n.describe(), ": perm is not a permutation");
        im.bindConst(n.outputs[0], transposeArray(*c, perm));
        return Status::ok();
      }
      return unary<top::PermuteOp>(im, n, {im.ints("order", perm)});
    };
    t["Concat"] = concat;
    t["Split"] = split;
    t["Slice"] = slice;
    t["Pad"] = pad;
    t["Resize"] = [](Importer &im, const Node &n) { return resize(im, n, false); };
    t["Upsample"] = [](Importer &im, const Node &n) { return resize(im, n, true); };
    t["Gather"] = gather;
    t["Expand"] = [](Importer &im, const Node &n) -> Status {
      auto shape = im.constInts(n, 1, "shape");
      if (!shape) return shape.status();
      if (const NpyArray *c = im.constInput(n, 0)) {
        TPU_RETURN_IF_ERROR(checkFoldedSize(n, *shape));
        return im.bindConst(n, expandArray(*c, *shape));
      }
      return unary<top::ExpandOp>(im, n, {im.ints("shape", *shape)});
    };
    t["Tile"] = [](Importer &im, const Node &n) -> Status {
      auto r = im.constInts(n, 1, "repeats");
      if (!r) return r.status();
      return unary<top::TileOp>(im, n, {im.ints("repeats", *r)});
    };
    t["DepthToSpace"] = [](Importer &im, const Node &n) {
      return unary<top::DepthToSpaceOp>(im, n, {im.i64("blocksize", n.getInt("blocksize", 1)),
                                                im.str("mode", n.getString("mode", "DCR"))});
    };
    t["Identity"] = [](Importer &im, const Node &n) -> Status {
      im.alias(n.outputs[0], n.inputs.at(0));
      return Status::ok();
    };
    t["Dropout"] = [](Importer &im, const Node &n) -> Status {
      TPU_RETURN_IF_ERROR(onlyFirstOutput(n));
      im.alias(n.outputs[0], n.inputs.at(0));
      return Status::ok();
    };
    t["Constant"] = constantNode;
    t["ConstantOfShape"] = [](Importer &im, const Node &n) -> Status {
      auto shape = im.constInts(n, 0, "shape");
      if (!shape) return shape.status();
      const Attribute *v = n.attr("value");
      NpyArray fillv = v && v->tensor ? *v->tensor : NpyArray::from<float>({1}, {0.0f});
      if (fillv.numel() != 1) return makeError(n.describe(), ": value must have one element");
      TPU_RETURN_IF_ERROR(checkFoldedSize(n, *shape));
      return im.bindConst(n, expandArray(reshapeArray(fillv, {}), *shape));
    };
    t["Shape"] = [](Importer &im, const Node &n) -> Status {
      auto xs = im.shapeOf(n, 0);
      if (!xs) return xs.status();
      int64_t rank = xs->size();
      int64_t start = n.getInt("start", 0), end = n.getInt("end", rank);
      start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
      end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
      std::vector<int64_t> dims(xs->begin() + start, xs->begin() + std::max(start, end));
      im.bindConst(n.outputs[0], NpyArray::from<int64_t>({int64_t(dims.size())}, dims));
      return Status::ok();
    };
    t["Size"] = [](Importer &im, const Node &n) -> Status {
      auto xs = im.shapeOf(n, 0);
      if (!xs) return xs.status();
      int64_t total = 1;
      for (int64_t d : *xs) total *= d;
      im.bindConst(n.outputs[0], NpyArray::from<int64_t>({}, {total}));
      return Status::ok();
    };
    t["Range"] = [](Importer &im, const Node &n) -> Status {
      if (!im.allConst(n)) return makeError(n.describe(), ": start, limit and delta must be constants");
      auto s = toDouble(*im.constInput(n, 0)), l = toDouble(*im.constInput(n, 1)), d = toDouble(*im.constInput(n, 2));
      if (s.empty() || l.empty() || d.empty() || d[0] == 0) return makeError(n.describe(), ": bad range");
      int64_t count = std::max<int64_t>(0, int64_t(std::ceil((l[0] - s[0]) / d[0])));
      if (count > (1 << 26)) return makeError(n.describe(), ": range of ", count, " elements is too large");
      NpyArray r;
      if (im.constInput(n, 0)->is<int64_t>()) {
        std::vector<int64_t> v(count);
        for (int64_t i = 0; i < count; ++i) v[i] = int64_t(s[0]) + i * int64_t(d[0]);
        r = NpyArray::from<int64_t>({count}, v);
      } else {
        std::vector<float> v(count);
        for (int64_t i = 0; i < count; ++i) v[i] = float(s[0] + i * d[0]);
        r = NpyArray::from<float>({count}, v);
      }
      im.bindConst(n.outputs[0], std::move(r));
      return Status::ok();
    };
    return t;
  }();
  return table;
}

Status Importer::run(ModuleOp module, const ImportOptions &opts) {
  // Every unsupported op at once, before any work.
  std::map<std::string, std::vector<std::string>> unsupported;
  for (const Node &n : model_.nodes)
    if ((!n.domain.empty() && n.domain != "ai.onnx") || !handlers().count(n.opType))
      unsupported[(n.domain.empty() ? "" : n.domain + ".") + n.opType].push_back(n.name);
  if (!unsupported.empty()) {
    std::string msg = "unsupported ONNX ops (opset " + std::to_string(model_.opset) + "): ";
    bool first = true;
    for (const auto &[type, names] : unsupported) {
      msg += (first ? "" : "; ") + type + " (node" + (names.size() > 1 ? "s " : " ");
      for (size_t i = 0; i < names.size() && i < 5; ++i) msg += (i ? ", '" : "'") + names[i] + "'";
      if (names.size() > 5) msg += " and " + std::to_string(names.size() - 5) + " more";
      msg += ")";
      first = false;
    }
    return Status::error(msg);
  }

  if (model_.opset == 0) return makeError("the ONNX model declares no opset for the default domain");
  consts_ = model_.initializers;
  std::vector<const ValueInfo *> inputs;
  for (const auto &[name, array] : opts.constantInputs) {
    auto it = std::find_if(model_.inputs.begin(), model_.inputs.end(), [&](const ValueInfo &v) { return v.name == name; });
    if (it == model_.inputs.end()) return makeError("constant input '", name, "' is not an input of the model");
    consts_[name] = array;
  }
  for (const ValueInfo &in : model_.inputs)
    if (!opts.constantInputs.count(in.name)) inputs.push_back(&in);
  if (!opts.inputShapes.empty() && opts.inputShapes.size() != inputs.size())
    return makeError("--input-shapes gives ", opts.inputShapes.size(), " shapes but the model has ",
                     inputs.size(), " inputs");
  SmallVector<Type> argTypes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ValueInfo &in = *inputs[i];
    if (in.dtype.empty()) return makeError("input '", in.name, "' has an unsupported element type ", in.onnxType);
    std::vector<int64_t> dims = in.dims;
    if (!opts.inputShapes.empty()) {
      const auto &given = opts.inputShapes[i];
      if (in.hasShape && given.size() != dims.size())
        return makeError("--input-shapes gives rank ", given.size(), " for input '", in.name, "' of rank ", dims.size());
      for (size_t d = 0; d < given.size(); ++d)
        if (given[d] < 0) return makeError("--input-shapes: dim ", d, " of input '", in.name, "' must be >= 0");
      dims = given;
    } else {
      if (!in.hasShape) return makeError("input '", in.name, "' has no shape in the model; give --input-shapes");
      for (size_t d = 0; d < dims.size(); ++d)
        if (dims[d] < 0)
          return makeError("input '", in.name, "' has a dynamic dimension ", d,
                           in.dimParams[d].empty() ? "" : " ('" + in.dimParams[d] + "')", "; give --input-shapes");
    }
    argTypes.push_back(RankedTensorType::get(dims, elementTypeOf(&ctx_, in.dtype)));
  }

  b_.setInsertionPointToEnd(module.getBody());
  auto func = b_.create<func::FuncOp>(b_.getUnknownLoc(), "main", b_.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  b_.setInsertionPointToEnd(entry);
  SmallVector<mlir::Attribute> inputNames, outputNames;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string &name = inputs[i]->name;
    auto in = b_.create<top::InputOp>(NameLoc::get(b_.getStringAttr(name)), argTypes[i], entry->getArgument(i));
    values_[name] = in.getOutput();
    inputNames.push_back(b_.getStringAttr(name));
  }

  for (const Node &n : model_.nodes) {
    if (n.outputs.empty() || n.outputs[0].empty()) return makeError(n.describe(), ": has no output");
    size_t required = requiredInputs(n.opType, model_.opset);
    for (size_t i = 0; i < required; ++i)
      if (i >= n.inputs.size() || n.inputs[i].empty())
        return makeError(n.describe(), ": needs ", required, " inputs, input ", i, " is missing");
    for (const auto &in : n.inputs)
      if (!in.empty() && !values_.count(in) && !consts_.count(in))
        return makeError(n.describe(), ": input '", in, "' is not produced by any earlier node (graph not in topological order?)");
    TPU_RETURN_IF_ERROR(handlers().at(n.opType)(*this, n));
  }

  std::vector<std::string> outs = opts.outputNames;
  if (outs.empty())
    for (const auto &o : model_.outputs) outs.push_back(o.name);
  SmallVector<Value> results;
  SmallVector<Type> resultTypes;
  for (const auto &name : outs) {
    if (!values_.count(name) && !consts_.count(name)) return makeError("output '", name, "' is not a tensor of the model");
    auto v = value(name);
    if (!v) return v.status();
    results.push_back(*v);
    resultTypes.push_back(v->getType());
    outputNames.push_back(b_.getStringAttr(name));
  }
  b_.create<func::ReturnOp>(b_.getUnknownLoc(), results);
  func.setFunctionType(b_.getFunctionType(argTypes, resultTypes));
  func->setAttr("top.input_names", b_.getArrayAttr(inputNames));
  func->setAttr("top.output_names", b_.getArrayAttr(outputNames));
  return Status::ok();
}

std::string diagnosticText(Diagnostic &d) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (auto name = dyn_cast<NameLoc>(d.getLocation())) os << "'" << name.getName().strref() << "': ";
  os << d.str();
  return s;
}

} // namespace

Result<ImportedModule> importModel(MLIRContext &context, const Model &model, const ImportOptions &options) {
  context.loadDialect<top::TopDialect, func::FuncDialect>();
  ImportedModule out;
  Importer im(context, model, out.weights);
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    im.diagnostics().push_back(diagnosticText(d));
    return success();
  });
  out.module = ModuleOp::create(UnknownLoc::get(&context));
  ModuleOp module = *out.module;
  module->setAttr(top::kWeightFileAttr, StringAttr::get(&context, options.weightFile));
  if (options.annotateModule) options.annotateModule(module);
  TPU_RETURN_IF_ERROR(im.run(module, options));
  if (options.canonicalize) {
    top::WeightStore store(std::move(out.weights));
    RewritePatternSet patterns(&context);
    top::populateFusePatterns(patterns, store);
    (void)applyPatternsAndFoldGreedily(module, std::move(patterns));
    out.weights = std::move(store.arrays());
    PassManager pm(&context);
    pm.addPass(createCanonicalizerPass());
    if (failed(pm.run(module)))
      return makeError("canonicalization failed: ", im.diagnostics().empty() ? "" : im.diagnostics().back());
  }
  im.diagnostics().clear();
  if (failed(verify(module)))
    return makeError("the imported module does not verify: ", im.diagnostics().empty() ? "" : im.diagnostics().back());
  // Keep only the weights still referenced after folding and canonicalization.
  std::set<std::string> used;
  module.walk([&](top::WeightOp w) { used.insert(w.getName().str()); });
  for (auto it = out.weights.begin(); it != out.weights.end();)
    it = used.count(it->first) ? std::next(it) : out.weights.erase(it);
  return out;
}

std::string weightFileNameFor(const std::string &mlirPath) {
  std::string name = mlirPath.substr(mlirPath.find_last_of('/') + 1);
  if (name.size() > 5 && name.compare(name.size() - 5, 5, ".mlir") == 0) name.resize(name.size() - 5);
  for (char &c : name)
    if (c == '.') c = '_';
  return name + "_weights.npz";
}

Result<std::vector<std::vector<int64_t>>> parseShapeList(const std::string &text) {
  std::vector<std::vector<int64_t>> shapes;
  size_t i = 0;
  auto fail = [&](const std::string &why) {
    return makeError("--input-shapes '", text, "': ", why, " at offset ", i, " (expected e.g. [[1,3,224,224]])");
  };
  auto skip = [&] {
    while (i < text.size() && text[i] == ' ') ++i;
  };
  skip();
  if (i >= text.size() || text[i] != '[') return fail("expected '['");
  ++i;
  while (true) {
    skip();
    if (i >= text.size() || text[i] != '[') return fail("expected '['");
    ++i;
    std::vector<int64_t> shape;
    skip();
    while (i < text.size() && text[i] != ']') {
      skip();
      size_t start = i;
      while (i < text.size() && isdigit(static_cast<unsigned char>(text[i]))) ++i;
      if (start == i || i - start > 12) return fail("expected a dimension");
      shape.push_back(std::stoll(text.substr(start, i - start)));
      skip();
      if (i < text.size() && text[i] == ',') ++i;
      else if (i >= text.size() || text[i] != ']') return fail("expected ',' or ']'");
    }
    if (i >= text.size()) return fail("unterminated shape");
    ++i;
    shapes.push_back(shape);
    skip();
    if (i < text.size() && text[i] == ',') {
      ++i;
      continue;
    }
    if (i < text.size() && text[i] == ']') {
      ++i;
      break;
    }
    return fail("expected ',' or ']'");
  }
  skip();
  if (i != text.size()) return fail("trailing characters");
  return shapes;
}

Status importOnnxFile(const std::string &onnxPath, const std::string &mlirPath, ImportOptions options) {
  auto model = loadModel(onnxPath);
  if (!model) return model.status();
  std::string weightName = weightFileNameFor(mlirPath);
  options.weightFile = weightName;
  MLIRContext context;
  auto imported = importModel(context, *model, options);
  if (!imported) return Status(imported.status()).prefix(onnxPath);
  std::string dir = mlirPath.find('/') == std::string::npos ? "" : mlirPath.substr(0, mlirPath.find_last_of('/') + 1);
  TPU_RETURN_IF_ERROR(writeNpz(dir + weightName, imported->weights));
  std::error_code ec;
  llvm::raw_fd_ostream os(mlirPath, ec);
  if (ec) return makeError(mlirPath, ": cannot write: ", ec.message());
  // Op locations (the ONNX names) are printed; the module's own location is
  // left out so that a parser gives it the .mlir file's location, against
  // which the relative weight file name resolves.
  OpPrintingFlags flags;
  flags.enableDebugInfo(true, /*prettyForm=*/false);
  ModuleOp module = *imported->module;
  os << "module attributes " << module->getAttrDictionary() << " {\n";
  for (Operation &op : *module.getBody()) {
    op.print(os, flags);
    os << "\n";
  }
  os << "}\n";
  os.close();
  if (os.has_error()) return makeError(mlirPath, ": write error");
  return Status::ok();
}

} // namespace tpu::onnx
