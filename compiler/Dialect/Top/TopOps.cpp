// Top dialect registration, verifiers and shape rules.
#include "compiler/Dialect/Top/TopOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

#include <algorithm>
#include <cmath>

using namespace mlir;

#include "compiler/Dialect/Top/TopDialect.cpp.inc"
#include "compiler/Dialect/Top/TopInterfaces.cpp.inc"

void top::TopDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "compiler/Dialect/Top/TopOps.cpp.inc"
      >();
}

namespace {

// The ranked type of operand `i`, or an error on the op.
FailureOr<RankedTensorType> rankedOperand(Operation *op, unsigned i) {
  auto t = dyn_cast<RankedTensorType>(op->getOperand(i).getType());
  if (!t) return op->emitOpError() << "operand " << i << " has no known shape", failure();
  return t;
}

void setResult(Operation *op, unsigned i, ArrayRef<int64_t> shape, Type elem) {
  op->getResult(i).setType(RankedTensorType::get(shape, elem));
}

Type f32(Operation *op) { return Float32Type::get(op->getContext()); }

std::string shapeStr(ArrayRef<int64_t> s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
  return r + "]";
}

int64_t product(ArrayRef<int64_t> s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// Output size of a sliding window along one dim (conv and pool share it).
int64_t windowOut(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe, bool ceilMode) {
  int64_t span = in + pb + pe - ((k - 1) * d + 1);
  if (span < 0) return 0;
  int64_t out = (ceilMode ? (span + s - 1) / s : span / s) + 1;
  if (ceilMode && (out - 1) * s >= in + pb) --out;
  return out;
}

LogicalResult checkWindowAttrs(Operation *op, size_t spatial, ArrayRef<int64_t> k, ArrayRef<int64_t> s,
                               ArrayRef<int64_t> pads, ArrayRef<int64_t> d) {
  if (spatial < 1 || spatial > 2) return op->emitOpError() << "supports 1 or 2 spatial dims, got " << spatial;
  if (k.size() != spatial || s.size() != spatial || d.size() != spatial || pads.size() != 2 * spatial)
    return op->emitOpError() << "kernel_shape/strides/dilations need " << spatial << " values and pads "
                             << 2 * spatial;
  for (size_t i = 0; i < spatial; ++i) {
    if (k[i] < 1 || s[i] < 1 || d[i] < 1)
      return op->emitOpError() << "kernel, stride and dilation must be >= 1";
    if (pads[i] < 0 || pads[i + spatial] < 0) return op->emitOpError() << "pads must be >= 0";
  }
  return success();
}

} // namespace

std::optional<llvm::SmallVector<int64_t>> top::broadcastShapes(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  llvm::SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

LogicalResult top::inferSameAsInput(Operation *op) {
  auto in = rankedOperand(op, 0);
  if (failed(in)) return failure();
  op->getResult(0).setType(*in);
  return success();
}

LogicalResult top::inferBroadcast(Operation *op, bool boolResult) {
  auto a = rankedOperand(op, 0), b = rankedOperand(op, 1);
  if (failed(a) || failed(b)) return failure();
  auto out = broadcastShapes(a->getShape(), b->getShape());
  if (!out)
    return op->emitOpError() << "cannot broadcast " << shapeStr(a->getShape()) << " with "
                             << shapeStr(b->getShape());
  setResult(op, 0, *out, boolResult ? Type(IntegerType::get(op->getContext(), 1)) : a->getElementType());
  return success();
}

LogicalResult top::verifyWindowAttrs(Operation *op) {
  auto k = op->getAttrOfType<DenseI64ArrayAttr>("kernel_shape").asArrayRef();
  return checkWindowAttrs(op, k.size(), k, op->getAttrOfType<DenseI64ArrayAttr>("strides").asArrayRef(),
                          op->getAttrOfType<DenseI64ArrayAttr>("pads").asArrayRef(),
                          op->getAttrOfType<DenseI64ArrayAttr>("dilations").asArrayRef());
}

LogicalResult top::inferPool(Operation *op) {
  auto in = rankedOperand(op, 0);
  if (failed(in)) return failure();
  auto k = op->getAttrOfType<DenseI64ArrayAttr>("kernel_shape").asArrayRef();
  auto s = op->getAttrOfType<DenseI64ArrayAttr>("strides").asArrayRef();
  auto p = op->getAttrOfType<DenseI64ArrayAttr>("pads").asArrayRef();
  auto d = op->getAttrOfType<DenseI64ArrayAttr>("dilations").asArrayRef();
  bool ceilMode = op->getAttrOfType<BoolAttr>("ceil_mode").getValue();
  size_t n = k.size();
  if (in->getRank() != int64_t(n) + 2)
    return op->emitOpError() << "input rank " << in->getRank() << " does not match " << n << " spatial dims";
  llvm::SmallVector<int64_t> out(in->getShape());
  for (size_t i = 0; i < n; ++i) {
    out[i + 2] = windowOut(out[i + 2], k[i], s[i], d[i], p[i], p[i + n], ceilMode);
    if (out[i + 2] < 1) return op->emitOpError() << "window larger than padded input";
  }
  setResult(op, 0, out, in->getElementType());
  return success();
}

LogicalResult top::inferGlobalPool(Operation *op) {
  auto in = rankedOperand(op, 0);
  if (failed(in)) return failure();
  if (in->getRank() < 3) return op->emitOpError() << "needs rank >= 3 (N, C, spatial...)";
  llvm::SmallVector<int64_t> out(in->getShape());
  for (size_t i = 2; i < out.size(); ++i) out[i] = 1;
  setResult(op, 0, out, in->getElementType());
  return success();
}

LogicalResult top::inferReduce(Operation *op, ArrayRef<int64_t> axes, bool keepdims) {
  auto in = rankedOperand(op, 0);
  if (failed(in)) return failure();
  int64_t rank = in->getRank();
  llvm::SmallVector<int64_t> out;
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] < 0 || axes[i] >= rank || (i && axes[i] <= axes[i - 1]))
      return op->emitOpError() << "axes must be sorted, unique and in [0, " << rank << ")";
  for (int64_t i = 0; i < rank; ++i) {
    bool reduced = llvm::is_contained(axes, i);
    if (!reduced) out.push_back(in->getDimSize(i));
    else if (keepdims) out.push_back(1);
  }
  setResult(op, 0, out, in->getElementType());
  return success();
}

LogicalResult top::inferArgReduce(Operation *op, int64_t axis, bool keepdims) {
  auto in = rankedOperand(op, 0);
  if (failed(in)) return failure();
  if (axis < 0 || axis >= in->getRank()) return op->emitOpError() << "axis out of range";
  llvm::SmallVector<int64_t> out;
  for (int64_t i = 0; i < in->getRank(); ++i) {
    if (i != axis) out.push_back(in->getDimSize(i));
    else if (keepdims) out.push_back(1);
  }
  setResult(op, 0, out, IntegerType::get(op->getContext(), 64));
  return success();
}

namespace top {

LogicalResult InputOp::inferShapes() { return inferSameAsInput(getOperation()); }

LogicalResult WeightOp::inferShapes() { return success(); } // the type is the stored array's

LogicalResult NoneOp::inferShapes() { return success(); }

LogicalResult ConvOp::verify() {
  auto k = getKernelShape();
  return checkWindowAttrs(getOperation(), k.size(), k, getStrides(), getPads(), getDilations());
}

LogicalResult ConvOp::inferShapes() {
  Operation *op = getOperation();
  auto in = rankedOperand(op, 0), w = rankedOperand(op, 1);
  if (failed(in) || failed(w)) return failure();
  size_t n = getKernelShape().size();
  int64_t g = getGroup();
  if (in->getRank() != int64_t(n) + 2 || w->getRank() != int64_t(n) + 2)
    return emitOpError() << "input " << shapeStr(in->getShape()) << " and filter " << shapeStr(w->getShape())
                         << " must have rank " << n + 2;
  int64_t ic = in->getDimSize(1), oc = w->getDimSize(0);
  if (g < 1 || ic % g || oc % g || w->getDimSize(1) * g != ic)
    return emitOpError() << "filter " << shapeStr(w->getShape()) << " does not fit " << ic
                         << " input channels in " << g << " groups";
  for (size_t i = 0; i < n; ++i)
    if (w->getDimSize(i + 2) != getKernelShape()[i]) return emitOpError() << "kernel_shape differs from filter";
  if (auto b = dyn_cast<RankedTensorType>(getBias().getType()))
    if (b.getNumElements() != oc) return emitOpError() << "bias needs " << oc << " elements";
  llvm::SmallVector<int64_t> out{in->getDimSize(0), oc};
  for (size_t i = 0; i < n; ++i) {
    int64_t o = windowOut(in->getDimSize(i + 2), getKernelShape()[i], getStrides()[i], getDilations()[i],
                          getPads()[i], getPads()[i + n], false);
    if (o < 1) return emitOpError() << "kernel larger than padded input";
    out.push_back(o);
  }
  setResult(op, 0, out, f32(op));
  return success();
}

LogicalResult ConvTransposeOp::verify() {
  auto k = getKernelShape();
  if (failed(checkWindowAttrs(getOperation(), k.size(), k, getStrides(), getPads(), getDilations())))
    return failure();
  if (getOutputPadding().size() != k.size()) return emitOpError() << "output_padding needs " << k.size() << " values";
  return success();
}

LogicalResult ConvTransposeOp::inferShapes() {
  Operation *op = getOperation();
  auto in = rankedOperand(op, 0), w = rankedOperand(op, 1);
  if (failed(in) || failed(w)) return failure();
  size_t n = getKernelShape().size();
  int64_t g = getGroup();
  if (in->getRank() != int64_t(n) + 2 || w->getRank() != int64_t(n) + 2)
    return emitOpError() << "input and filter must have rank " << n + 2;
  if (g < 1 || w->getDimSize(0) != in->getDimSize(1) || in->getDimSize(1) % g)
    return emitOpError() << "filter " << shapeStr(w->getShape()) << " does not fit input "
                         << shapeStr(in->getShape()) << " with group " << g;
  llvm::SmallVector<int64_t> out{in->getDimSize(0), w->getDimSize(1) * g};
  for (size_t i = 0; i < n; ++i) {
    int64_t o = (in->getDimSize(i + 2) - 1) * getStrides()[i] - getPads()[i] - getPads()[i + n] +
                getDilations()[i] * (getKernelShape()[i] - 1) + 1 + getOutputPadding()[i];
    if (o < 1) return emitOpError() << "output size " << o << " along spatial dim " << i;
    out.push_back(o);
  }
  setResult(op, 0, out, f32(op));
  return success();
}

LogicalResult BatchNormOp::inferShapes() {
  auto in = rankedOperand(getOperation(), 0);
  if (failed(in)) return failure();
  if (in->getRank() < 2) return emitOpError() << "needs rank >= 2";
  for (unsigned i = 1; i < 5; ++i) {
    auto p = rankedOperand(getOperation(), i);
    if (failed(p)) return failure();
    if (p->getNumElements() != in->getDimSize(1))
      return emitOpError() << "parameter " << i << " needs " << in->getDimSize(1) << " elements";
  }
  return inferSameAsInput(getOperation());
}

LogicalResult LayerNormOp::inferShapes() {
  auto in = rankedOperand(getOperation(), 0);
  if (failed(in)) return failure();
  if (getAxis() < 0 || getAxis() >= in->getRank()) return emitOpError() << "axis out of range";
  return inferSameAsInput(getOperation());
}

LogicalResult MatMulOp::inferShapes() {
  Operation *op = getOperation();
  auto a = rankedOperand(op, 0), b = rankedOperand(op, 1);
  if (failed(a) || failed(b)) return failure();
  llvm::SmallVector<int64_t> as(a->getShape()), bs(b->getShape());
  if (as.empty() || bs.empty()) return emitOpError() << "operands must not be scalars";
  bool aVec = as.size() == 1, bVec = bs.size() == 1;
  if (aVec) as.insert(as.begin(), 1);
  if (bVec) bs.push_back(1);
  if (as.back() != bs[bs.size() - 2])
    return emitOpError() << "inner dims differ: " << shapeStr(a->getShape()) << " x " << shapeStr(b->getShape());
  auto batch = broadcastShapes(ArrayRef<int64_t>(as).drop_back(2), ArrayRef<int64_t>(bs).drop_back(2));
  if (!batch) return emitOpError() << "batch dims do not broadcast";
  llvm::SmallVector<int64_t> out(*batch);
  if (!aVec) out.push_back(as[as.size() - 2]);
  if (!bVec) out.push_back(bs.back());
  setResult(op, 0, out, a->getElementType());
  return success();
}

LogicalResult GemmOp::inferShapes() {
  Operation *op = getOperation();
  auto a = rankedOperand(op, 0), b = rankedOperand(op, 1);
  if (failed(a) || failed(b)) return failure();
  if (a->getRank() != 2 || b->getRank() != 2) return emitOpError() << "operands must be 2-D";
  int64_t m = a->getDimSize(getTransA() ? 1 : 0), ka = a->getDimSize(getTransA() ? 0 : 1);
  int64_t kb = b->getDimSize(getTransB() ? 1 : 0), n = b->getDimSize(getTransB() ? 0 : 1);
  if (ka != kb) return emitOpError() << "inner dims differ: " << ka << " vs " << kb;
  if (auto c = dyn_cast<RankedTensorType>(getC().getType())) {
    auto bc = broadcastShapes(c.getShape(), {m, n});
    if (!bc || (*bc)[0] != m || (*bc)[1] != n)
      return emitOpError() << "C " << shapeStr(c.getShape()) << " does not broadcast to [" << m << "," << n << "]";
  }
  setResult(op, 0, {m, n}, f32(op));
  return success();
}

LogicalResult CastOp::inferShapes() {
  auto in = rankedOperand(getOperation(), 0);
  if (failed(in)) return failure();
  setResult(getOperation(), 0, in->getShape(), getTo());
  return success();
}

LogicalResult WhereOp::inferShapes() {
  Operation *op = getOperation();
  auto c = rankedOperand(op, 0), x = rankedOperand(op, 1), y = rankedOperand(op, 2);
  if (failed(c) || failed(x) || failed(y)) return failure();
  auto xy = broadcastShapes(x->getShape(), y->getShape());
  auto all = xy ? broadcastShapes(c->getShape(), *xy) : std::nullopt;
  if (!all) return emitOpError() << "operands do not broadcast";
  setResult(op, 0, *all, x->getElementType());
  return success();
}

LogicalResult ReshapeOp::inferShapes() {
  auto in = rankedOperand(getOperation(), 0);
  if (failed(in)) return failure();
  for (int64_t d : getShape())
    if (d < 0) return emitOpError() << "shape " << shapeStr(getShape()) << " must be fully resolved";
  if (product(getShape()) != in->getNumElements())
    return emitOpError() << "cannot reshape " << shapeStr(in->getShape()) << " to " << shapeStr(getShape());
  setResult(getOperation(), 0, getShape(), in->getElementType());
  return success();
}

LogicalResult PermuteOp::inferShapes() {
  auto in = rankedOperand(getOperation(), 0);
  if (failed(in)) return failure();
  auto order = getOrder();
  if (int64_t(order.size()) != in->getRank()) return emitOpError() << "order needs " << in->getRank() << " entries";
  llvm::SmallVector<int64_t> out;
  llvm::SmallVector<bool> seen(order.size(), false);
  for (int64_t o : order) {
    if (o < 0 || o >= in->getRank() || seen[o]) return emitOpError() << "order is not a permutation";
    seen[o] = true;
    out.push_back(in->getDimSize(o));
  }
  setResult(getOperation(), 0, out, in->getElementType());
  return success();
}

LogicalResult ConcatOp::inferShapes() {
  Operation *op = getOperation();
  if (op->getNumOperands() == 0) return emitOpError() << "needs at least one input";
  auto first = rankedOperand(op, 0);
  if (failed(first)) return failure();
  int64_t axis = getAxis();
  if (axis < 0 || axis >= first->getRank()) return emitOpError() << "axis out of range";
  llvm::SmallVector<int64_t> out(first->getShape());
  out[axis] = 0;
  for (unsigned i = 0; i < op->getNumOperands(); ++i) {
    auto t = rankedOperand(op, i);
    if (failed(t)) return failure();
    if (t->getRank() != first->getRank()) return emitOpError() << "inputs differ in rank";
    for (int64_t d = 0; d < t->getRank(); ++d)
      if (d != axis && t->getDimSize(d) != first->getDimSize(d))
        return emitOpError() << "input " << i << " " << shapeStr(t->getShape()) << " differs off the concat axis";
    out[axis] += t->getDimSize(axis);
  }
  setResult(op, 0, out, first->getElementType());
  return success();
}

LogicalResult SplitOp::inferShapes() {
  auto in = rankedOperand(getOperation(), 0);
  if (failed(in)) return failure();
  int64_t axis = getAxis();
  if (axis < 0 || axis >= in->getRank()) return emitOpError() << "axis out of range";
  if (getSplit().size() != getNumResults()) return emitOpError() << "split needs one size per result";
  int64_t total = 0;
  for (int64_t s : getSplit()) total += s < 0 ? -1 << 30 : s;
  if (total != in->getDimSize(axis))
    return emitOpError() << "split sizes " << shapeStr(getSplit()) << " do not sum to " << in->getDimSize(axis);
  for (unsigned i = 0; i < getNumResults(); ++i) {
    llvm::SmallVector<int64_t> out(in->getShape());
    out[axis] = getSplit()[i];
    setResult(getOperation(), i, out, in->getElementType());
  }
  return success();
}

LogicalResult SliceOp::inferShapes() {
  auto in = rankedOperand(getOperation(), 0);
  if (failed(in)) return failure();
  size_t rank = in->getRank();
  if (getStarts().size() != rank || getEnds().size() != rank || getSteps().size() != rank)
    return emitOpError() << "starts/ends/steps need " << rank << " values";
  llvm::SmallVector<int64_t> out;
  for (size_t i = 0; i < rank; ++i) {
    int64_t s = getStarts()[i], e = getEnds()[i], st = getSteps()[i], d = in->getDimSize(i);
    bool ok = st > 0 ? (0 <= s && s <= d && 0 <= e && e <= d) : st < 0 && (-1 <= s && s < d && -1 <= e && e < d);
    if (!ok) return emitOpError() << "dim " << i << ": start " << s << " end " << e << " step " << st
                                  << " not clamped to size " << d;
    int64_t n = st > 0 ? (e - s + st - 1) / st : (s - e + (-st) - 1) / (-st);
    out.push_back(std::max<int64_t>(0, n));
  }
  setResult(getOperation(), 0, out, in->getElementType());
  return success();
}

LogicalResult PadOp::verify() {
  auto m = getMode();
  if (m != "constant" && m != "reflect" && m != "edge") return emitOpError() << "unknown mode '" << m << "'";
  return success();
}

LogicalResult PadOp::inferShapes() {
  auto in = rankedOperand(getOperation(), 0);
  if (failed(in)) return failure();
  size_t rank = in->getRank();
  if (getPads().size() != 2 * rank) return emitOpError() << "pads needs " << 2 * rank << " values";
  llvm::SmallVector<int64_t> out;
  for (size_t i = 0; i < rank; ++i) {
    int64_t o = in->getDimSize(i) + getPads()[i] + getPads()[i + rank];
    if (o < 0) return emitOpError() << "negative output size along dim " << i;
    if (getMode() == "reflect" && (getPads()[i] >= in->getDimSize(i) || getPads()[i + rank] >= in->getDimSize(i)))
      return emitOpError() << "reflect pad must be smaller than the dim";
    out.push_back(o);
  }
  setResult(getOperation(), 0, out, in->getElementType());
  return success();
}

LogicalResult ResizeOp::verify() {
  auto m = getMode();
  if (m != "nearest" && m != "linear") return emitOpError() << "unsupported mode '" << m << "'";
  auto c = getCoordinateTransformationMode();
  if (c != "half_pixel" && c != "asymmetric" && c != "align_corners" && c != "pytorch_half_pixel")
    return emitOpError() << "unsupported coordinate_transformation_mode '" << c << "'";
  auto n = getNearestMode();
  if (n != "round_prefer_floor" && n != "round_prefer_ceil" && n != "floor" && n != "ceil")
    return emitOpError() << "unsupported nearest_mode '" << n << "'";
  for (double s : getScales())
    if (!(s > 0)) return emitOpError() << "scales must be > 0";
  return success();
}

LogicalResult ResizeOp::inferShapes() {
  auto in = rankedOperand(getOperation(), 0);
  if (failed(in)) return failure();
  size_t rank = in->getRank();
  if (getScales().size() != rank || (!getSizes().empty() && getSizes().size() != rank))
    return emitOpError() << "scales/sizes need " << rank << " values";
  llvm::SmallVector<int64_t> out;
  for (size_t i = 0; i < rank; ++i) {
    int64_t o = getSizes().empty() ? int64_t(std::floor(in->getDimSize(i) * getScales()[i])) : getSizes()[i];
    if (o < 1) return emitOpError() << "output size " << o << " along dim " << i;
    out.push_back(o);
  }
  setResult(getOperation(), 0, out, in->getElementType());
  return success();
}

LogicalResult GatherOp::inferShapes() {
  auto in = rankedOperand(getOperation(), 0), idx = rankedOperand(getOperation(), 1);
  if (failed(in) || failed(idx)) return failure();
  int64_t axis = getAxis();
  if (axis < 0 || axis >= in->getRank()) return emitOpError() << "axis out of range";
  if (!idx->getElementType().isInteger(64)) return emitOpError() << "indices must be i64";
  llvm::SmallVector<int64_t> out(in->getShape().take_front(axis));
  out.append(idx->getShape().begin(), idx->getShape().end());
  out.append(in->getShape().begin() + axis + 1, in->getShape().end());
  setResult(getOperation(), 0, out, in->getElementType());
  return success();
}

LogicalResult ExpandOp::inferShapes() {
  auto in = rankedOperand(getOperation(), 0);
  if (failed(in)) return failure();
  auto out = broadcastShapes(in->getShape(), getShape());
  if (!out) return emitOpError() << "cannot expand " << shapeStr(in->getShape()) << " to " << shapeStr(getShape());
  setResult(getOperation(), 0, *out, in->getElementType());
  return success();
}

LogicalResult TileOp::inferShapes() {
  auto in = rankedOperand(getOperation(), 0);
  if (failed(in)) return failure();
  if (int64_t(getRepeats().size()) != in->getRank()) return emitOpError() << "repeats needs one value per dim";
  llvm::SmallVector<int64_t> out;
  for (int64_t i = 0; i < in->getRank(); ++i) {
    if (getRepeats()[i] < 0) return emitOpError() << "repeats must be >= 0";
    out.push_back(in->getDimSize(i) * getRepeats()[i]);
  }
  setResult(getOperation(), 0, out, in->getElementType());
  return success();
}

LogicalResult DepthToSpaceOp::inferShapes() {
  auto in = rankedOperand(getOperation(), 0);
  if (failed(in)) return failure();
  int64_t b = getBlocksize();
  if (in->getRank() != 4 || b < 1 || in->getDimSize(1) % (b * b))
    return emitOpError() << "needs NCHW input with C divisible by blocksize^2";
  if (getMode() != "DCR" && getMode() != "CRD") return emitOpError() << "mode must be DCR or CRD";
  setResult(getOperation(), 0,
            {in->getDimSize(0), in->getDimSize(1) / (b * b), in->getDimSize(2) * b, in->getDimSize(3) * b},
            in->getElementType());
  return success();
}

} // namespace top

#define GET_OP_CLASSES
#include "compiler/Dialect/Top/TopOps.cpp.inc"
