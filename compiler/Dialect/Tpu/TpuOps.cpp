#include "compiler/Dialect/Tpu/TpuOps.h"

#include "compiler/Backend/QuantRef.h"
#include "compiler/Dialect/Top/TopOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/DenseMap.h"

#include <algorithm>

#include "compiler/Dialect/Tpu/TpuDialect.cpp.inc"
#include "compiler/Dialect/Tpu/TpuInterfaces.cpp.inc"

void tpuir::TpuDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "compiler/Dialect/Tpu/TpuOps.cpp.inc"
      >();
}

using namespace mlir;
using tpu::backend::DType;

namespace tpuir {

RankedTensorType int8Type(ArrayRef<int64_t> shape, float scale, MLIRContext *ctx, bool isUnsigned) {
  Builder b(ctx);
  Type elem = isUnsigned ? Type(b.getIntegerType(8, /*isSigned=*/false)) : b.getIntegerType(8);
  return RankedTensorType::get(shape, elem, b.getF32FloatAttr(scale));
}

std::optional<float> scaleOf(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  if (!t || !t.getElementType().isInteger(8)) return std::nullopt;
  auto s = dyn_cast_or_null<FloatAttr>(t.getEncoding());
  if (!s) return std::nullopt;
  return float(s.getValueAsDouble());
}

namespace {

tpu::Result<DType> dtypeOf(Type elem) {
  if (elem.isF32()) return DType::F32;
  if (elem.isSignlessInteger(8) || elem.isSignedInteger(8)) return DType::I8;
  if (elem.isUnsignedInteger(8)) return DType::U8;
  if (elem.isInteger(16)) return DType::I16;
  if (elem.isInteger(32)) return DType::I32;
  std::string s;
  llvm::raw_string_ostream os(s);
  elem.print(os);
  return tpu::makeError("element type ", os.str(), " has no back-end dtype");
}

std::string nameOf(Operation *op) {
  if (auto nl = dyn_cast<NameLoc>(op->getLoc())) return nl.getName().str();
  return "";
}

// Per op: the back-end attributes beyond the shared ones (none by default).
template <class OpT>
constexpr bool isWindowOp = llvm::is_one_of<OpT, ConvOp, ConvTransposeOp, MaxPoolOp, AvgPoolOp>::value;

template <class OpT> std::enable_if_t<!isWindowOp<OpT>, tpu::Status> exportExtra(OpT, tpu::backend::Op &) {
  return tpu::Status::ok();
}

template <class OpT> std::enable_if_t<isWindowOp<OpT>, tpu::Status> exportExtra(OpT op, tpu::backend::Op &o) {
  auto k = op.getKernelShape(), s = op.getStrides(), p = op.getPads(), d = op.getDilations();
  if (k.size() != 2) return tpu::makeError("kernel_shape needs 2 values");
  if (s.size() != 2 || p.size() != 4 || d.size() != 2)
    return tpu::makeError("strides, dilations need 2 values and pads 4 (top, left, bottom, right)");
  tpu::backend::WindowParams &w = o.window;
  w.kh = k[0], w.kw = k[1];
  w.strideH = s[0], w.strideW = s[1];
  w.dilationH = d[0], w.dilationW = d[1];
  w.padTop = p[0], w.padLeft = p[1], w.padBottom = p[2], w.padRight = p[3];
  w.groups = int64_t(op.getGroup());
  w.isMax = std::is_same_v<OpT, MaxPoolOp>;
  if constexpr (std::is_same_v<OpT, AvgPoolOp>) w.countPad = op.getCountIncludePad();
  return tpu::Status::ok();
}

tpu::Status exportExtra(LeakyReluOp op, tpu::backend::Op &o) {
  o.alpha = float(op.getAlpha().convertToDouble());
  return tpu::Status::ok();
}

tpu::Status exportExtra(ClipOp op, tpu::backend::Op &o) {
  o.clipMin = float(op.getMin().convertToDouble()), o.clipMax = float(op.getMax().convertToDouble());
  return tpu::Status::ok();
}

tpu::Status exportExtra(AffineOp op, tpu::backend::Op &o) {
  o.alpha = float(op.getAlpha().convertToDouble()), o.beta = float(op.getBeta().convertToDouble());
  return tpu::Status::ok();
}

tpu::Status exportExtra(UpsampleOp op, tpu::backend::Op &o) {
  o.scaleH = int64_t(op.getScaleH()), o.scaleW = int64_t(op.getScaleW());
  return tpu::Status::ok();
}

tpu::Status exportExtra(UnaryOp op, tpu::backend::Op &o) {
  auto fn = tpu::backend::unaryFromName(op.getFunction().str());
  if (!fn) return tpu::makeError("unknown function '", op.getFunction().str(), "'");
  o.unary = *fn;
  o.alpha = float(op.getAlpha().convertToDouble()), o.beta = float(op.getBeta().convertToDouble());
  return tpu::Status::ok();
}

tpu::Status exportExtra(FcOp op, tpu::backend::Op &o) {
  o.transposedInput = op.getTransposedInput();
  return tpu::Status::ok();
}

// The H and W tables from the ONNX attributes (one truth: kernels::resizeTaps).
tpu::Status exportExtra(ResizeOp op, tpu::backend::Op &o) {
  auto in = cast<RankedTensorType>(op.getInput().getType()).getShape();
  auto out = cast<RankedTensorType>(op.getOutput().getType()).getShape();
  auto scales = op.getScales();
  if (in.size() != 4 || out.size() != 4 || scales.size() != 2)
    return tpu::makeError("needs NCHW input and output and scales for H and W");
  const auto p = tpu::kernels::resizeParams(op.getMode(), op.getCoordinateTransformationMode(), op.getNearestMode());
  o.resizeH = tpu::kernels::resizeTaps(in[2], out[2], scales[0], p);
  o.resizeW = tpu::kernels::resizeTaps(in[3], out[3], scales[1], p);
  return tpu::Status::ok();
}

// starts/steps have one value per input dim (up to 4), NCHW from the left.
tpu::Status exportExtra(SliceOp op, tpu::backend::Op &o) {
  auto starts = op.getStarts(), steps = op.getSteps();
  const size_t rank = size_t(cast<RankedTensorType>(op.getInput().getType()).getRank());
  if (rank > 4 || starts.size() != rank || steps.size() != rank)
    return tpu::makeError("starts and steps need one value per input dim (rank <= 4)");
  for (size_t d = 0; d < rank; ++d) o.sliceStart[d] = starts[d], o.sliceStep[d] = steps[d];
  return tpu::Status::ok();
}

tpu::Status exportExtra(MoveOp op, tpu::backend::Op &o) {
  auto p = op.getPieces();
  if (p.size() % kMovePieceValues) return tpu::makeError("pieces needs 15 values per box");
  for (size_t i = 0; i < p.size(); i += kMovePieceValues) {
    tpu::backend::MovePiece m;
    m.input = int(p[i]);
    for (int k = 0; k < 4; ++k)
      m.size[k] = p[i + 1 + k], m.srcStride[k] = p[i + 6 + k], m.dstStride[k] = p[i + 11 + k];
    m.src = p[i + 5], m.dst = p[i + 10];
    o.pieces.push_back(m);
  }
  if (auto fill = op.getFill()) o.fills = true, o.fillValue = float(fill->convertToDouble());
  return tpu::Status::ok();
}

// Axes of the input (rank <= 4) are its NCHW dims from the left.
template <class OpT> tpu::Status exportAxes(OpT op, tpu::backend::Op &o) {
  const int64_t rank = cast<RankedTensorType>(op.getInput().getType()).getRank();
  for (int64_t a : op.getAxes()) {
    if (a < 0 || a >= rank || rank > 4) return tpu::makeError("axis ", a, " is not a dim of the rank-", rank, " input (rank <= 4)");
    o.reduceAxes[size_t(a)] = true;
  }
  return tpu::Status::ok();
}

// The mode by name.
tpu::Status exportExtra(ReduceOp op, tpu::backend::Op &o) {
  using tpu::backend::ReduceMode;
  static const std::pair<const char *, ReduceMode> kModes[] = {{"sum", ReduceMode::Sum}, {"mean", ReduceMode::Mean},
                                                               {"max", ReduceMode::Max}, {"min", ReduceMode::Min},
                                                               {"prod", ReduceMode::Prod}, {"l2", ReduceMode::L2}};
  auto mode = llvm::find_if(kModes, [&](const auto &m) { return op.getMode() == m.first; });
  if (mode == std::end(kModes)) return tpu::makeError("mode '", op.getMode().str(), "' is not sum, mean, max, min, prod or l2");
  o.reduceMode = mode->second;
  return exportAxes(op, o);
}

tpu::Status exportExtra(SoftmaxOp op, tpu::backend::Op &o) { return exportAxes(op, o); }
tpu::Status exportExtra(LogSoftmaxOp op, tpu::backend::Op &o) { return exportAxes(op, o); }

tpu::Status exportExtra(LayerNormOp op, tpu::backend::Op &o) {
  if (isa<NoneType>(op.getScale().getType()) && !isa<NoneType>(op.getBias().getType()))
    return tpu::makeError("a bias without a scale (give a scale of ones)");
  o.epsilon = float(op.getEpsilon().convertToDouble());
  return exportAxes(op, o);
}

} // namespace

tpu::Result<tpu::backend::Tensor> backendTensor(Value v, std::string name, bool isWeight) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type) return tpu::makeError("value is not a ranked tensor");
  tpu::backend::Tensor t;
  t.name = std::move(name);
  t.shape.assign(type.getShape().begin(), type.getShape().end());
  auto dt = dtypeOf(type.getElementType());
  if (!dt) return dt.status();
  t.dtype = *dt;
  if (auto s = scaleOf(type)) t.scale = *s;
  else if (tpu::backend::isInt8Like(t.dtype) && !isWeight)
    return tpu::makeError("int8 activation without a scale (tensor<...xi8, SCALE : f32>)");
  return t;
}

// The op exported alone into a back-end graph (its activation operands are
// the graph's inputs, its weights zero-filled) and checked by the back end.
LogicalResult verifyTpuOp(Operation *op) {
  tpu::backend::Graph g;
  tpu::backend::Op o;
  if (auto st = cast<BackendOpInterface>(op).exportAttributes(o); !st) return op->emitOpError() << st.message();
  llvm::DenseMap<Value, int> ids;
  for (auto [i, v] : llvm::enumerate(op->getOperands())) {
    if (isa<NoneType>(v.getType())) continue;
    if (auto it = ids.find(v); it != ids.end()) {
      o.inputs.push_back(it->second);
      continue;
    }
    auto w = v.getDefiningOp<top::WeightOp>();
    std::string name = w ? w.getName().str() : v.getDefiningOp() ? nameOf(v.getDefiningOp()) : "";
    auto t = backendTensor(v, name.empty() ? "operand " + std::to_string(i) : name, bool(w));
    if (!t) return op->emitOpError() << "operand " << i << ": " << t.message();
    if (w) t->data.assign(t->bytes(), 0);
    int id = g.addTensor(std::move(*t));
    if (!w) g.inputs.push_back(id);
    ids[v] = id;
    o.inputs.push_back(id);
  }
  std::string name = nameOf(op);
  auto y = backendTensor(op->getResult(0), name.empty() ? "result" : name, false);
  if (!y) return op->emitOpError() << "result: " << y.message();
  o.output = g.addTensor(std::move(*y));
  o.name = g.tensors[size_t(o.output)].name;
  g.outputs.push_back(o.output);
  g.ops.push_back(std::move(o));
  if (auto st = g.validate(); !st) return op->emitOpError() << st.message();
  return success();
}

// BackendOpInterface::exportAttributes of every op (TpuOps.td Tpu_Op): the
// attributes every Tpu op carries (fused relu, rshift, multipliers), then
// its own.
template <class OpT> tpu::Status exportAttributesOf(OpT op, tpu::backend::Op &o) {
  o.kind = OpT::getBackendKind();
  o.relu = op.getDoRelu();
  const int64_t rshift = int64_t(op.getRshift());
  if (rshift < 0 || rshift > 31) return tpu::makeError("rshift ", rshift, " is outside [0, 31]");
  o.rshift = uint32_t(rshift);
  for (int64_t m : op.getMultipliers()) {
    if (m < INT32_MIN || m > INT32_MAX) return tpu::makeError("multiplier ", m, " does not fit int32");
    o.multipliers.push_back(int32_t(m));
  }
  return exportExtra(op, o);
}

} // namespace tpuir

#define GET_OP_CLASSES
#include "compiler/Dialect/Tpu/TpuOps.cpp.inc"
