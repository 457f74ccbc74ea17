// What the ONNX op handlers (compiler/Import/Ops/<Family>.cpp) share: the
// importer's node-level API, the handler table they register into, and the
// helpers for the common handler shapes (unary, chained binary, composed).
//
// Adding an ONNX op: write its handler in the file of its family and add it
// in that file's register function; a new family adds its register function
// to the list in OnnxNodeImporter.cpp.
#pragma once

#include "compiler/Import/ConstFold.h"
#include "compiler/Import/OnnxModel.h"
#include "compiler/Import/TopBuilder.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace tpu::onnx {

struct ImportOptions;

// TopBuilder plus the ONNX view of it: node inputs by position, constant
// operands (shapes, axes, pads...), ops located at the node's output names.
class OnnxImporter : public import::TopBuilder {
public:
  OnnxImporter(mlir::MLIRContext &ctx, const Model &model, NpzMap &weights) : TopBuilder(ctx, weights), model_(model) {}

  int64_t opset() const { return model_.opset; }

  Status run(mlir::ModuleOp module, const ImportOptions &opts);
  // Imports nodes in order into the current function (the graph's, or a
  // subgraph's, which reads the enclosing values by name).
  Status importNodes(const std::vector<Node> &nodes);
  Status importSubgraph(const Graph &g);

  // --- node inputs ---
  bool present(const Node &n, size_t i) const { return i < n.inputs.size() && !n.inputs[i].empty(); }
  const NpyArray *constInput(const Node &n, size_t i) const { return present(n, i) ? constOf(n.inputs[i]) : nullptr; }
  bool allConst(const Node &n) const {
    for (size_t i = 0; i < n.inputs.size(); ++i)
      if (present(n, i) && !constInput(n, i)) return false;
    return true;
  }
  // The value of input i, creating its top.weight if it is a constant.
  Result<mlir::Value> operand(const Node &n, size_t i) {
    if (!present(n, i)) return makeError(n.describe(), ": missing input ", i);
    return value(n.inputs[i]);
  }
  Result<mlir::Value> operandOrNone(const Node &n, size_t i) {
    return present(n, i) ? operand(n, i) : Result<mlir::Value>(none());
  }
  Result<std::vector<int64_t>> shapeOf(const Node &n, size_t i);
  // Whether input i's shape comes from the data (a NonMaxSuppression or
  // NonZero result, or a host op's reading one): its type holds only the
  // most it can be.
  Result<bool> shapeFromData(const Node &n, size_t i);
  // A constant input as integers (shape, axes, pads...) or floats (scales, bounds).
  Result<std::vector<int64_t>> constInts(const Node &n, size_t i, const std::string &what);
  Result<std::vector<double>> constFloats(const Node &n, size_t i, const std::string &what);
  // A constant input of one value (k, an axis, a threshold): another count is
  // "<node>: <what> must hold one value, it holds N".
  Result<int64_t> constInt(const Node &n, size_t i, const std::string &what);
  Result<double> constFloat(const Node &n, size_t i, const std::string &what);

  using TopBuilder::bindConst;
  // The node's (first) output is the folded constant `a`.
  Status bindConst(const Node &n, Result<NpyArray> a) {
    if (!a) return Status(a.status()).prefix(n.describe());
    bindConst(n.outputs[0], a.take());
    return Status::ok();
  }

  // Creates op OpT for node n, infers its result types and binds its outputs
  // (or, given `outputName`, names an intermediate step after it).
  template <typename OpT>
  Result<OpT> build(const Node &n, mlir::ArrayRef<mlir::Value> operands, mlir::ArrayRef<mlir::NamedAttribute> attrs,
                    unsigned numResults = 1, std::string outputName = "") {
    auto op = create<OpT>(locFor(n, outputName), operands, attrs, numResults);
    if (!op) return Status(op.status()).prefix(n.describe());
    if (outputName.empty())
      for (unsigned i = 0; i < numResults && i < n.outputs.size(); ++i)
        if (!n.outputs[i].empty()) values_[n.outputs[i]] = op->getOperation()->getResult(i);
    return op;
  }
  mlir::Location locFor(const Node &n, const std::string &outputName);

private:
  const Model &model_;
};

using OpHandler = std::function<Status(OnnxImporter &, const Node &)>;

// Inputs an ONNX op cannot do without, checked before its handler runs:
// `count` from opset `sinceOpset` on, one before.
struct RequiredInputs {
  size_t count = 1;
  int64_t sinceOpset = 0;
  size_t at(int64_t opset) const { return opset >= sinceOpset ? count : 1; }
};

class OpTable {
public:
  struct Entry {
    OpHandler handler;
    RequiredInputs required;
  };
  void add(const std::string &opType, OpHandler handler, RequiredInputs required = {}) {
    entries_[opType] = {std::move(handler), required};
  }
  const Entry *find(const std::string &opType) const {
    auto it = entries_.find(opType);
    return it == entries_.end() ? nullptr : &it->second;
  }

private:
  std::map<std::string, Entry> entries_;
};

// Every handler, by ONNX op type (default domain).
const OpTable &onnxOpTable();

// One per file under compiler/Import/Ops/.
void registerActivationOps(OpTable &t);
void registerConstantOps(OpTable &t);
void registerControlFlowOps(OpTable &t);
void registerConvOps(OpTable &t);
void registerDataMovementOps(OpTable &t);
void registerDetectionOps(OpTable &t);
void registerElementwiseOps(OpTable &t);
void registerLogicOps(OpTable &t);
void registerMathOps(OpTable &t);
void registerMatMulOps(OpTable &t);
void registerNormalizationOps(OpTable &t);
void registerPoolOps(OpTable &t);
void registerReduceOps(OpTable &t);
void registerResizeOps(OpTable &t);
void registerShapeOps(OpTable &t);

// --- helpers shared by the handlers ---

// Constants the importer materialises itself (ConstantOfShape, Expand of a
// constant, masks) are bounded so that a bad shape cannot exhaust memory.
Status checkFoldedSize(const Node &n, const std::vector<int64_t> &shape);

// An error if any output but the first (training-mode statistics) is used.
Status onlyFirstOutput(const Node &n);

// The ints attribute `key`, or `count` copies of `dflt`.
std::vector<int64_t> intsOr(const Node &n, const std::string &key, size_t count, int64_t dflt);

// Explicit pads for auto_pad SAME_UPPER / SAME_LOWER / VALID, else the pads attribute.
Result<std::vector<int64_t>> windowPads(const Node &n, const std::vector<int64_t> &in, const std::vector<int64_t> &k,
                                        const std::vector<int64_t> &s, const std::vector<int64_t> &d);

// Single-input op with the given attributes; folded if the input is constant
// and `foldName` names a ConstFold unary.
template <typename OpT>
Status unary(OnnxImporter &im, const Node &n, mlir::ArrayRef<mlir::NamedAttribute> attrs = {},
             const std::string &foldName = "") {
  if (!foldName.empty() && im.constInput(n, 0)) return im.bindConst(n, unaryArray(foldName, *im.constInput(n, 0)));
  auto x = im.operand(n, 0);
  if (!x) return x.status();
  auto op = im.build<OpT>(n, {*x}, attrs);
  return op ? Status::ok() : op.status();
}

template <typename OpT> OpHandler unaryHandler(const std::string &foldName = "") {
  return [foldName](OnnxImporter &im, const Node &n) { return unary<OpT>(im, n, {}, foldName); };
}

// Binary op chained over all inputs (Sum/Max/Min take any number); folded if all constant.
template <typename OpT> OpHandler binaryHandler(const std::string &foldName) {
  return [foldName](OnnxImporter &im, const Node &n) -> Status {
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

// An op whose first `required` of `total` inputs must be present, the rest
// optional (none), with attributes from `attrs`.
template <typename OpT>
OpHandler multiInputHandler(size_t required, size_t total,
                            std::function<std::vector<mlir::NamedAttribute>(OnnxImporter &, const Node &)> attrs =
                                nullptr) {
  return [=](OnnxImporter &im, const Node &n) -> Status {
    std::vector<mlir::Value> ins;
    for (size_t i = 0; i < total; ++i) {
      auto v = i < required ? im.operand(n, i) : im.operandOrNone(n, i);
      if (!v) return v.status();
      ins.push_back(*v);
    }
    auto op = im.build<OpT>(n, ins, attrs ? attrs(im, n) : std::vector<mlir::NamedAttribute>{});
    return op ? Status::ok() : op.status();
  };
}

// Builds the Top ops that spell out one ONNX node. Intermediate results are
// named "<output>_<step>"; the step with an empty tag is the node's output.
// The first failure is kept and later steps are skipped.
class Composer {
public:
  Composer(OnnxImporter &im, const Node &n) : im_(im), n_(n), out_(n.outputs[0]) {}

  mlir::Value input(size_t i) {
    if (!st_) return {};
    auto v = im_.operand(n_, i);
    if (!v) st_ = v.status();
    return v ? *v : mlir::Value();
  }
  // A constant of this node, named <output>_<tag>.
  mlir::Value constant(const std::string &tag, NpyArray a) {
    std::string name = out_ + "_" + tag;
    im_.bindConst(name, std::move(a));
    auto v = im_.value(name);
    return v ? *v : mlir::Value();
  }
  mlir::Value scalar(const std::string &tag, float value) { return constant(tag, NpyArray::from<float>({}, {value})); }
  // Input i as `shape`: a constant reshaped at import (a weight the chip
  // lowering reads as it is), else a top.reshape.
  mlir::Value reshaped(size_t i, const std::string &tag, const std::vector<int64_t> &shape) {
    if (!st_) return {};
    const NpyArray *a = im_.constInput(n_, i);
    if (!a) return op<top::ReshapeOp>(tag, {input(i)}, {im_.ints("shape", shape)});
    return constant(tag, reshapeArray(*a, shape));
  }
  // Input i as float32: a constant cast at import, else a top.cast.
  mlir::Value asF32(size_t i, const std::string &tag) {
    if (!st_) return {};
    const NpyArray *a = im_.constInput(n_, i);
    if (!a) return op<top::CastOp>(tag, {input(i)}, {im_.attr("to", mlir::TypeAttr::get(im_.b().getF32Type()))});
    return constant(tag, castArray(*a, "float32"));
  }
  template <typename OpT>
  mlir::Value op(const std::string &tag, mlir::ArrayRef<mlir::Value> ins,
                 mlir::ArrayRef<mlir::NamedAttribute> attrs = {}) {
    if (!st_ || llvm::any_of(ins, [](mlir::Value v) { return !v; })) return {};
    std::string name = tag.empty() ? out_ : out_ + "_" + tag;
    auto r = im_.build<OpT>(n_, ins, attrs, 1, name);
    if (!r) {
      st_ = r.status();
      return {};
    }
    if (tag.empty()) im_.bind(out_, r->getOutput());
    return r->getOutput();
  }
  // 3-D windows as 2-D ones (Ops/Conv.cpp, Ops/Pool.cpp), on [N, C, D, H, W]
  // tensors. `x` of static shape `s` padded in depth and height by `pads`
  // (ONNX order: 3 begins, 3 ends) with `value`, its height then rounded up
  // to a multiple of `rowStride`, so that stacked as rows every plane starts
  // a window; `s` becomes the padded shape.
  mlir::Value depthHeightPadded(mlir::Value x, std::vector<int64_t> &s, const std::vector<int64_t> &pads,
                                int64_t rowStride, double value) {
    const int64_t d = s[2] + pads[0] + pads[3], h = (s[3] + pads[1] + pads[4] + rowStride - 1) / rowStride * rowStride;
    if (d != s[2] || h != s[3])
      x = op<top::PadOp>("depth_pad", {x},
                         {im_.ints("pads", {0, 0, pads[0], pads[1], 0, 0, 0, pads[3], h - s[3] - pads[1], 0}),
                          im_.f64("value", value)});
    s[2] = d, s[3] = h;
    return x;
  }
  // Depths first, first + step, ... (`count` of them) of `x` (static shape
  // `s`) as [N, C, count, H, W].
  mlir::Value depthTaps(const std::string &tag, mlir::Value x, const std::vector<int64_t> &s, int64_t first,
                        int64_t step, int64_t count) {
    return op<top::SliceOp>(tag, {x},
                            {im_.ints("starts", {0, 0, first, 0, 0}),
                             im_.ints("ends", {s[0], s[1], first + (count - 1) * step + 1, s[3], s[4]}),
                             im_.ints("steps", {1, 1, step, 1, 1})});
  }
  // Rows [N, C, planes * perPlane, W] of a 2-D window over stacked depth
  // planes as [N, C, planes, rows, W]: the first `rows` of each plane (the
  // rest straddle two planes). `tag` "" names it as the node's output.
  mlir::Value planeRows(const std::string &tag, mlir::Value flat, int64_t n, int64_t c, int64_t planes,
                        int64_t perPlane, int64_t rows, int64_t w) {
    const bool cut = rows != perPlane;
    mlir::Value v =
        op<top::ReshapeOp>(cut ? tag + "_planes" : tag, {flat}, {im_.ints("shape", {n, c, planes, perPlane, w})});
    if (!cut) return v;
    return op<top::SliceOp>(tag, {v},
                            {im_.ints("starts", {0, 0, 0, 0, 0}), im_.ints("ends", {n, c, planes, rows, w}),
                             im_.ints("steps", {1, 1, 1, 1, 1})});
  }
  Status status() const { return st_; }

private:
  OnnxImporter &im_;
  const Node &n_;
  std::string out_;
  Status st_;
};

} // namespace tpu::onnx
