// The Top -> Tpu lowering's state and its per-family lowerings (private to
// compiler/Lowering). Lowering.cpp holds the walk, the value versions (fp32 /
// int8, casts made on demand) and the dispatch; each op family's lowering is
// in Ops/<Family>.cpp and registers itself in a LoweringTable there
// (add<Family>Lowerings, called from Lowering.cpp).
#pragma once

#include "compiler/Lowering/Lowering.h"
#include "compiler/Lowering/QuantUtil.h"

#include "compiler/Backend/Ops/Reduce.h"
#include "compiler/Backend/QuantRef.h"
#include "compiler/Dialect/Top/TopOps.h"
#include "compiler/Dialect/Tpu/TpuOps.h"
#include "kernels/Kernels.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace tpu::lowering {

inline std::vector<int64_t> shapeOf(mlir::Value v) {
  auto s = mlir::cast<mlir::RankedTensorType>(v.getType()).getShape();
  return {s.begin(), s.end()};
}

// A batch norm as x * scale[c] + bias[c]: scale = gamma / sqrt(var + eps),
// bias = beta - mean * scale.
struct ChannelAffine {
  std::vector<float> scale, bias;
};

// The single-use chain of per-channel affine ops behind `v` (mul or add by
// a scalar or per-channel constant, batch_norm) as one x * scale[c] +
// bias[c] over `channels`; `result` is the chain's last value (v when empty).
struct AffineChain {
  std::vector<double> scale, bias;
  mlir::Value result;
  std::vector<mlir::Operation *> ops;
};

// The window attributes of a conv or pool (generated builders' order).
struct Window {
  llvm::ArrayRef<int64_t> kernel, strides, pads, dilations;
  int64_t group = 1;
  bool doRelu = false;
};

// A window's attributes (Top order: pads [begins..., ends...]) as the back
// end's 2-D window: a 1-D window over (N, C, L) is the window of
// (N, C, L, 1), since the back end reads a 3-D tensor as NCHW with W = 1.
// Windows of other ranks are kept as they are (and refused by the caller).
struct SpatialWindow {
  llvm::SmallVector<int64_t, 4> kernel, strides, pads, dilations;
  SpatialWindow(llvm::ArrayRef<int64_t> k, llvm::ArrayRef<int64_t> s, llvm::ArrayRef<int64_t> p,
                llvm::ArrayRef<int64_t> d)
      : kernel(k), strides(s), pads(p), dilations(d) {
    if (kernel.size() != 1) return;
    kernel.push_back(1), strides.push_back(1), dilations.push_back(1);
    pads = {p[0], 0, p[1], 0};
  }
  bool is2d() const { return kernel.size() == 2; }
};

// The weight and bias (none when there is no bias) of a weighted op in the
// lowered module.
struct WeightPair {
  mlir::Value weight, bias;
};

// The `pieces` of a tpu.move (kMovePieceValues per box), built from boxes
// of any rank over the C-order tensors (Ops/DataMovement.cpp).
struct MovePieces {
  // Box `size` from input `input`: element i goes from src + i . srcStride
  // to dst + i . dstStride. Dims of size 1 drop, dims that step as one
  // merge, dims past four are walked (one piece per index).
  void add(int input, std::vector<int64_t> size, int64_t src, std::vector<int64_t> srcStride, int64_t dst,
           std::vector<int64_t> dstStride);
  std::vector<int64_t> values;
};

class Lowerer;

// The chip's binary element-wise ops (tpu.add ... tpu.prelu).
enum class BinaryFn { Add, Sub, Mul, Max, Min, Div, Pow, PRelu, Greater, Less, Equal };

// The lowering of each Top op type.
class LoweringTable {
public:
  using Fn = std::function<Status(Lowerer &, mlir::Operation *)>;
  void add(mlir::TypeID id, Fn f) { fns_[id] = std::move(f); }
  template <class OpT, class F> void add(F f) {
    fns_[mlir::TypeID::get<OpT>()] = [f](Lowerer &l, mlir::Operation *op) { return f(l, mlir::cast<OpT>(op)); };
  }
  const Fn *find(mlir::Operation *op) const {
    auto it = fns_.find(op->getName().getTypeID());
    return it == fns_.end() ? nullptr : &it->second;
  }

private:
  llvm::DenseMap<mlir::TypeID, Fn> fns_;
};

// One add<Family>Lowerings per file of Ops/.
void addConvLowerings(LoweringTable &t);       // Ops/Conv.cpp: conv, conv_transpose
void addGemmLowerings(LoweringTable &t);       // Ops/Gemm.cpp: gemm, matmul (fc or two activations)
void addPoolLowerings(LoweringTable &t);       // Ops/Pool.cpp: max_pool, avg_pool, global_avg_pool
void addElementwiseLowerings(LoweringTable &t); // Ops/Elementwise.cpp: add, sub, mul, div, max, min, pow, prelu,
                                                // greater, less, equal, where
void addDataMovementLowerings(LoweringTable &t); // Ops/DataMovement.cpp: permute, pad, tile, expand, depth_to_space, gather, split
void addNormalizeLowerings(LoweringTable &t);  // Ops/Normalize.cpp: batch_norm, layer_norm
void addActivationLowerings(LoweringTable &t); // Ops/Activation.cpp: relu, clip, leaky_relu, table functions
void addShapeLowerings(LoweringTable &t);      // Ops/Shape.cpp: reshape, resize, concat
void addReduceLowerings(LoweringTable &t);     // Ops/Reduce.cpp: reduce_*, global_max_pool, softmax, log_softmax

// FlatViews.cpp: an fp32 pointwise op (backend::pointwiseKind) whose tensor
// has a dim past a command field runs on a [1, c, h, w] view of it.
void flattenOversizedPointwise(mlir::func::FuncOp fn);

// MoveChains.cpp: a tpu.move that only other tpu.moves read (through views)
// is absorbed into them (a 3-D conv's depth pad, taps and concat become one
// move).
void fuseMoveChains(mlir::func::FuncOp fn);

// Element-wise functions the chip evaluates through a 256-entry table
// (Ops/Activation.cpp); an int8 scalar affine before one folds into it.
bool isTableOp(mlir::Operation *op);

class Lowerer {
public:
  Lowerer(mlir::ModuleOp src, const top::WeightStore &in, const LoweringOptions &opt)
      : src_(src), ctx_(src.getContext()), b_(ctx_), in_(in), opt_(opt) {}

  Result<LoweredModule> run();

  // Ops/Conv.cpp
  Status lowerConv(top::ConvOp op);
  Status lowerConvTranspose(top::ConvTransposeOp op);
  // A weighted op (conv, conv_transpose, fc) named `outName` from `input`
  // and weights w (shape `weightShape`, stored as <name>_<role>...) and
  // bias: int8 when `int8` and they fit one right shift, else fp32 (`int8`
  // cleared, a fallback reported). `build` makes the op of the given type
  // from the input in that precision, the weights and the shift; `round`
  // rounds the int8 weights (it may move an error into the bias), nearest
  // by default.
  using WeightedBuild =
      llvm::function_ref<mlir::Value(mlir::Type type, mlir::Value x, const WeightPair &weights, uint64_t rshift)>;
  using RoundWeights = llvm::function_ref<std::vector<int8_t>(std::vector<float> &bias, double wk, int r)>;
  mlir::Value lowerWeighted(mlir::Value input, const std::string &name, const std::string &outName,
                            llvm::ArrayRef<int64_t> outShape, const char *role, llvm::ArrayRef<int64_t> weightShape,
                            const std::vector<float> &w, const std::vector<float> &bias, const char *what, bool &int8,
                            WeightedBuild build, RoundWeights round = nullptr);
  // Folds `chain` into a filter and bias of `oc` output channels: weight i
  // belongs to output channel channelOf(i); the chain's ops are fused away.
  void foldIntoFilter(const AffineChain &chain, std::vector<float> &w, std::vector<float> &bias, int64_t oc,
                      llvm::function_ref<int64_t(size_t)> channelOf);
  // Weighted ops (conv, conv_transpose, fc; Ops/Conv.cpp): the largest shift
  // at which w * wk fits int8 and bias / so int16; the weights quantized
  // under it (<name>_<role>_i8, <name>_bias_i16) or kept fp32
  // (<name>_<role>, <name>_bias).
  static std::optional<int> weightShift(const std::vector<float> &w, const std::vector<float> &bias, double wk,
                                        float so);
  // round(w * unit) saturated to int8; `unit` (the fixed-point value of one
  // real weight) is one for all of w or one per output channel (rows of w).
  static std::vector<int8_t> nearestInt8(const std::vector<float> &w, const std::vector<double> &unit);
  WeightPair addInt8Weights(const std::string &name, const char *role, llvm::ArrayRef<int64_t> shape,
                            const std::vector<int8_t> &wq, const std::vector<float> &bias, float so, int r);
  // A conv's int8 filter (Lowering.cpp): round(w * unit) saturated, unit
  // the fixed-point value of one real weight (one for the filter, or one per
  // output channel), or with bias correction / weight rounding on, rounded
  // from the samples of its input (WeightRounding.h), the mean output error
  // taken out of `bias` (which then has one value per output channel).
  std::vector<int8_t> int8Filter(mlir::Value input, llvm::ArrayRef<int64_t> outShape,
                                 llvm::ArrayRef<int64_t> filterShape, const Window &window,
                                 const std::vector<float> &w, std::vector<float> &bias,
                                 const std::vector<double> &unit);
  // An int16 accumulator handed from a conv to the 1x1 conv or the
  // hard_swish that reads it (Int8Levers::int16Pointwise, int16Hardswish):
  // channel c's real value is acc * step[c] + bias[c].
  struct Int16Handoff {
    mlir::Value acc;
    std::vector<double> step, bias;
    AffineIntegers toInt8; // the per-channel affine to the value's int8 type, for any other reader
  };
  // Int8Levers::perChannelWeights (Ops/Conv.cpp): an int8 conv with one
  // weight step per output channel writing its int16 accumulator, then a
  // per-channel tpu.affine to `outName`'s int8 type (bias and relu there);
  // with `handoff`, no affine: the accumulator and its channels' steps and
  // biases go there (the conv's consumer reads it), the steps balanced
  // against the consumer's weight columns `consumerColumns` (the largest
  // |weight| reading each channel). An input with a hand-off is read as its
  // int16 accumulator, its steps and biases folded into the weights and
  // bias. Null, with nothing built, when the affine's integers do not fit
  // (the caller then lowers the conv with one step).
  mlir::Value lowerConvPerChannel(mlir::Value input, const std::string &name, const std::string &outName,
                                  llvm::ArrayRef<int64_t> outShape, llvm::ArrayRef<int64_t> filterShape,
                                  std::vector<float> w, std::vector<float> bias, const Window &window,
                                  Int16Handoff *handoff = nullptr, const std::vector<double> *consumerColumns = nullptr);
  // The 1x1 conv (stride any, no padding, group 1, int8) that is the only
  // consumer of `v`, or null.
  top::ConvOp pointwiseConsumer(mlir::Value v);
  // Whether the only consumer of `v` is an int8 hard_swish
  // (Int8Levers::int16Hardswish).
  bool hardSwishConsumer(mlir::Value v);
  // The int8 hard_swish `outName` (type `outType`, `after` applied to the
  // function's value) from an accumulator handed to it: the table reads
  // clip(x + 3, 0, 6) in uint8 (step 6/255), an affine gives relu(x - 3) at
  // the output's scale, and they are added. Null, with nothing built, when
  // an affine's integers do not fit or `after` has a factor <= 0.
  mlir::Value hardSwishFromAccumulator(const Int16Handoff &h, const std::string &outName,
                                       mlir::RankedTensorType outType, const backend::TableAffine &after);
  // The int8 tpu.affine `outName` (of type outType) computing `a` on x: per
  // channel (weights <outName>_scale_i16, _bias_i32) or with scalar
  // multipliers; alpha and beta record the real factor and offset
  // (Ops/Elementwise.cpp).
  mlir::Value int8Affine(const std::string &outName, mlir::RankedTensorType outType, mlir::Value x,
                         const AffineIntegers &a, bool perChannel, const llvm::APFloat &alpha,
                         const llvm::APFloat &beta, bool doRelu);
  WeightPair addF32Weights(const std::string &name, const char *role, llvm::ArrayRef<int64_t> shape,
                           const std::vector<float> &w, const std::vector<float> &bias);
  // A weighted op in int8: `input` read as int8 x, the weights w * wk * 2^rshift
  // (wk = scale_x / scale_out) in int8 and bias / scale_out in int16.
  struct Int8Weighting {
    mlir::Value x;
    float outScale;
    double wk;
    int rshift;
  };
  // The int8 form at the right shift where both fit; none, with a fallback
  // reported ("<outName>: <what> weights or bias do not fit ..."), when none does.
  std::optional<Int8Weighting> int8Weighting(mlir::Value input, const std::string &outName, const char *what,
                                             const std::vector<float> &w, const std::vector<float> &bias);
  // Ops/Gemm.cpp
  Status lowerFc(mlir::Operation *op, mlir::Value a, mlir::Value bw, mlir::Value c, double alpha, double beta,
                 bool transA, bool transB);
  Status lowerBatchedFc(mlir::Operation *op, mlir::Value a, const std::vector<float> &wv, bool doRelu);
  // A constant right operand: lowerFc; two activations: tpu.matmul (fp32).
  Status lowerMatMul(top::MatMulOp op);
  // top.gemm whose right operand is an activation: moves for the
  // transposes, tpu.matmul, tpu.mul by alpha and tpu.add of beta * C (fp32).
  Status lowerGemmOfActivations(top::GemmOp op);
  // Ops/Pool.cpp
  Status lowerPool(mlir::Operation *op, bool isMax);
  // Ops/Elementwise.cpp
  Status lowerBinary(mlir::Operation *op);
  Status lowerConstantBinary(mlir::Operation *op, mlir::Value x, mlir::Value constant);
  // The Tpu op `fn` of op's result from lhs and rhs (Top values, or fp32
  // weights of the module being built): int8 where the chip has the op and
  // the operands have the result's rank, else fp32.
  Status lowerElementwise(mlir::Operation *op, BinaryFn fn, mlir::Value lhs, mlir::Value rhs);
  // A constant operand as an fp32 weight of `result`'s rank (NumPy alignment).
  Result<mlir::Value> broadcastWeight(mlir::Operation *op, mlir::Value constant, const std::string &role);
  // where(cond, x, y): fp32 (an island in INT8); the comparisons give 1.0 / 0.0.
  Status lowerWhere(top::WhereOp op);
  Status lowerAffine(mlir::Operation *op, mlir::Value input, std::vector<float> scale, std::vector<float> bias,
                     mlir::Value result);
  AffineChain affineChain(mlir::Value v, int64_t channels);
  // Ops/Normalize.cpp
  Status lowerBatchNorm(top::BatchNormOp op);
  // A batch norm with a per-channel operand computed at run time:
  // (x - mean) * scale * rsqrt(var + eps) + bias as fp32 element-wise ops.
  Status lowerBatchNormOfActivations(top::BatchNormOp op);
  Result<ChannelAffine> batchNormAffine(top::BatchNormOp op);
  Status lowerLayerNorm(top::LayerNormOp op);
  // Ops/Activation.cpp
  Status lowerLut(mlir::Operation *op, kernels::UnaryKind kind, float a = 0, float b = 0);
  // A tpu.lut `name` of type `type` mapping the bytes of `x` through
  // `table` (256 entries of type's element type), a weight `tableName`.
  mlir::Value lookupTable(const std::string &name, mlir::RankedTensorType type, mlir::Value x,
                          const backend::Bytes &table, const std::string &tableName);
  Status lowerHardSigmoidF32(mlir::Operation *op, double alpha, double beta, bool timesInput);
  Status lowerClip(top::ClipOp op);
  Status lowerClipRange(mlir::Operation *op, double lo, double hi); // of op's operand 0
  Status lowerLeakyRelu(top::LeakyReluOp op);
  Status lowerLeakySlope(mlir::Operation *op, double alpha);        // of op's operand 0
  // Ops/Shape.cpp
  Status lowerReshape(top::ReshapeOp op);
  Status lowerResize(top::ResizeOp op);
  Status lowerConcat(top::ConcatOp op);
  Status lowerSlice(top::SliceOp op);
  // Ops/DataMovement.cpp
  Status lowerPermute(top::PermuteOp op);
  Status lowerPad(top::PadOp op);
  Status lowerTile(top::TileOp op);
  Status lowerExpand(top::ExpandOp op);
  Status lowerDepthToSpace(top::DepthToSpaceOp op);
  Status lowerGather(top::GatherOp op);
  Status lowerSplit(top::SplitOp op);
  Status lowerConcatMove(top::ConcatOp op);
  Status lowerSliceMove(top::SliceOp op);
  Status lowerReshapeMove(top::ReshapeOp op);
  // A tpu.move `result` = pieces of `inputs` (Top values), after a fill
  // with `fill` (int8: quantized to the result's scale).
  Status lowerMove(mlir::Operation *op, mlir::Value result, mlir::ValueRange inputs, const MovePieces &pieces,
                   std::optional<double> fill = std::nullopt);
  // `inputs` in int8 at the calibrated scale of `name` (tpu.requant where
  // an input's differs).
  Result<std::vector<mlir::Value>> int8AtScaleOf(mlir::Operation *op, mlir::ValueRange inputs,
                                                 const std::string &name);
  // A graph input returned as a graph output: a copy named `name`.
  mlir::Value copyOfInput(mlir::Value input, const std::string &name);
  // A constant returned as a graph output (a Shape folded at import): a
  // copy of its values in fp32 named `name`.
  Result<mlir::Value> copyOfConstant(mlir::Value constant, const std::string &name);
  // Ops/Reduce.cpp
  Status lowerReduce(mlir::Operation *op, backend::ReduceMode mode, llvm::ArrayRef<int64_t> axes);
  template <class TpuOpT> Status lowerSoftmax(mlir::Operation *op, int64_t axis);

  // An op whose int8 form keeps its input's scale (relu, reshape, clip,
  // upsample...); `attrs` follow the input in the op's generated builder.
  template <class OpT, class... Attrs> Status lowerSameScale(mlir::Operation *op, Attrs... attrs) {
    mlir::Value input = op->getOperand(0), result = op->getResult(0);
    const std::string name = names_[result];
    auto outShape = shapeOf(result);
    if (wantInt8(name)) {
      mlir::Value x = i8(input);
      vals_[result].i8 = make<OpT>(name, likeType(x, outShape), x, attrs...);
    } else {
      vals_[result].f32 = make<OpT>(name, f32Type(outShape), f32(input), attrs...);
    }
    return Status::ok();
  }

  Status noLowering(mlir::Operation *op, const std::string &why);
  bool highRankPointwise(mlir::Operation *op) const;
  // An op the chip cannot run (`refusal`, from noLowering) as tpu.cpu ops,
  // one per result the model reads, when it has a host implementation and
  // CPU sub-nets are allowed; else the refusal.
  Status lowerOnHostOr(mlir::Operation *op, Status refusal);
  // A Top value as a host op's operand: its int32 version (a host op's
  // integer result), else its fp32 version (a constant's: an fp32 weight).
  mlir::Value hostOperand(mlir::Value v);

  // Values of Top tensors in the lowered module: the fp32 or int8 version,
  // the other one made by a tpu.cast (<name>_f32 / <name>_i8) on first use;
  // a constant's fp32 version is an fp32 weight of its values.
  mlir::Value f32(mlir::Value v);
  mlir::Value i8(mlir::Value v);
  bool unsignedOf(const std::string &name) const {
    return isUnsignedRange(ranges_.at(name), opt_.levers.unsignedActivations);
  }
  float scaleOf(const std::string &name) const { return int8Scale(ranges_.at(name), opt_.levers.unsignedActivations); }
  mlir::RankedTensorType qType(llvm::ArrayRef<int64_t> shape, const std::string &name) {
    return quantizedType(shape, ranges_.at(name), ctx_, opt_.levers.unsignedActivations);
  }
  // The type of `x` (an int8 value) with another shape: same scale and sign.
  static mlir::RankedTensorType likeType(mlir::Value x, llvm::ArrayRef<int64_t> shape) {
    auto t = mlir::cast<mlir::RankedTensorType>(x.getType());
    return mlir::RankedTensorType::get(shape, t.getElementType(), t.getEncoding());
  }
  static bool isUnsigned(mlir::Value x) {
    return mlir::cast<mlir::RankedTensorType>(x.getType()).getElementType().isUnsignedInteger();
  }
  static float scaleOfValue(mlir::Value x) { return *tpuir::scaleOf(x.getType()); }
  static int64_t lowest(mlir::Value x) { return isUnsigned(x) ? 0 : -128; }
  static int64_t highest(mlir::Value x) { return isUnsigned(x) ? 255 : 127; }
  bool wantInt8(const std::string &name) const {
    return opt_.mode == Quantize::INT8 && !opt_.keepF32.count(name) && !fp32Only_.count(name);
  }
  // The op result a Top op's value is finally known by: a following
  // single-use relu is fused into conv, fc and add (do_relu).
  static mlir::Operation *fusibleRelu(mlir::Value v) { return top::fusibleActivation(v); }

  mlir::Location locFor(const std::string &name) { return mlir::NameLoc::get(b_.getStringAttr(name)); }
  mlir::RankedTensorType f32Type(llvm::ArrayRef<int64_t> shape) {
    return mlir::RankedTensorType::get(shape, b_.getF32Type());
  }
  mlir::RankedTensorType i32Type(llvm::ArrayRef<int64_t> shape) {
    return mlir::RankedTensorType::get(shape, b_.getI32Type());
  }
  // An op by its generated builder (TpuOps.td argument order), named `name`.
  template <class OpT, class... Args> mlir::Value make(const std::string &name, mlir::Type type, Args &&...args) {
    return b_.create<OpT>(locFor(name), type, std::forward<Args>(args)...).getOutput();
  }
  // A conv-like op: operands, then the window attributes, then rshift.
  template <class OpT>
  mlir::Value makeWindowed(const std::string &name, mlir::Type type, mlir::Value x, mlir::Value filter,
                           mlir::Value bias, const Window &w, uint64_t rshift) {
    return make<OpT>(name, type, x, filter, bias, w.kernel, w.strides, w.pads, w.dilations, uint64_t(w.group),
                     w.doRelu, rshift);
  }
  static llvm::APFloat f64(double v) { return llvm::APFloat(v); }

  Result<std::vector<float>> weightValues(mlir::Value v, const std::string &role, mlir::Operation *user);
  mlir::Value addWeight(const std::string &base, NpyArray array, mlir::Type elem);
  mlir::Value none() { return b_.create<top::NoneOp>(b_.getUnknownLoc(), b_.getNoneType()).getOutput(); }

  struct Versions {
    mlir::Value f32, i8;
    mlir::Value i32; // an integer tensor computed by a host op
  };
  // int8 scalar affines folded into the table op that is their only user:
  // the table reads `input` and applies x * scale + shift first.
  struct TableInput {
    mlir::Value input;
    backend::TableAffine affine;
  };

  mlir::ModuleOp src_;
  mlir::MLIRContext *ctx_;
  mlir::OpBuilder b_;
  const top::WeightStore &in_;
  const LoweringOptions &opt_;
  LoweredModule out_;
  llvm::DenseMap<mlir::Value, std::string> names_;
  std::set<std::string> fp32Only_; // never int8 (INT8: checkCalibration)
  llvm::DenseMap<mlir::Value, Versions> vals_;
  std::set<mlir::Operation *> fused_;
  llvm::DenseMap<mlir::Value, Int16Handoff> handoffs_; // by the Top value the accumulator stands for
  std::map<mlir::Operation *, TableInput> tableInputs_;
  // The calibration ranges the lowering quantizes with: the table's, with
  // concat classes sharing one (shareConcatScales).
  std::map<std::string, calib::TensorRange> ranges_;
  // Why the last noLowering refused (empty: the last failure was another error).
  std::string refusal_;
  // int8AtScaleOf's requants, one per int8 value and target type.
  std::map<std::pair<const void *, const void *>, mlir::Value> requants_;

private:
  Status nameValues(mlir::func::FuncOp f);
  // The results of an op of several results, named as the Top interpreter
  // names them: by its fused location's names, else "<name>_<i>".
  void nameResults(mlir::Operation &op, std::set<std::string> &taken);
  // Every tensor kept in F32 is one the model has (a misspelt name would
  // silently quantize the tensor it meant).
  Status checkKeepF32() const;
  Status checkCalibration(mlir::func::FuncOp f);
  // INT8: a concat and its inputs that feed only concats (DenseNet's growing
  // concats, Inception's branches) share one scale, so the producers write
  // at the concat's scale and no requant runs (docs/quantization.md).
  void shareConcatScales(mlir::func::FuncOp f);
  Status lower(mlir::Operation *op);
};

} // namespace tpu::lowering
