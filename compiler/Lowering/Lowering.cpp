#include "compiler/Lowering/Lowering.h"

#include "compiler/Backend/QuantRef.h"
#include "compiler/Kernels/Kernels.h"

#include "compiler/Dialect/Top/TopOps.h"
#include "compiler/Dialect/Tpu/TpuOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>

using namespace mlir;

namespace tpu::lowering {

Result<Quantize> parseQuantize(const std::string &name) {
  if (name == "F32") return Quantize::F32;
  if (name == "INT8") return Quantize::INT8;
  return makeError("--quantize '", name, "' is not one of F32, INT8");
}

Result<std::set<std::string>> loadQuantizeTable(const std::string &path) {
  std::ifstream in(path);
  if (!in) return makeError(path, ": cannot open quantize table");
  std::set<std::string> names;
  std::string line;
  for (int lineNo = 1; std::getline(in, line); ++lineNo) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string w; fields >> w;) f.push_back(w);
    if (f.empty()) continue;
    if (f.size() > 2 || (f.size() == 2 && f[1] != "F32"))
      return makeError(path, ":", lineNo, ": expected 'tensor_name [F32]'");
    names.insert(f[0]);
  }
  return names;
}

namespace {

// Largest right shift r in [0, 31] with round(value * 2^r) <= limit for every
// (value, limit) pair: the finest fixed-point grid the fields can hold.
struct Bound {
  double value;
  double limit;
};
std::optional<int> chooseShift(std::initializer_list<Bound> bounds) {
  for (int r = 31; r >= 0; --r) {
    bool fits = true;
    for (const Bound &b : bounds) fits = fits && std::round(std::fabs(b.value) * std::ldexp(1.0, r)) <= b.limit;
    if (fits) return r;
  }
  return std::nullopt;
}
int64_t fixedPoint(double v, int r) { return int64_t(std::round(v * std::ldexp(1.0, r))); }
int64_t clampTo(int64_t v, int64_t lo, int64_t hi) { return std::min(std::max(v, lo), hi); }

double maxAbs(const std::vector<float> &v) {
  double m = 0;
  for (float x : v) m = std::max(m, double(std::fabs(x)));
  return m;
}

std::vector<int64_t> shapeOf(Value v) {
  auto s = cast<RankedTensorType>(v.getType()).getShape();
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
  Value result;
  std::vector<Operation *> ops;
};

// Element-wise functions the chip evaluates through a 256-entry table (with
// parameters: top.hard_sigmoid, top.elu).
const std::map<std::string, kernels::UnaryKind> &tableOps() {
  using kernels::UnaryKind;
  static const std::map<std::string, UnaryKind> ops = {
      {"top.sigmoid", UnaryKind::Sigmoid}, {"top.tanh", UnaryKind::Tanh},   {"top.silu", UnaryKind::SiLU},
      {"top.gelu", UnaryKind::Gelu},       {"top.exp", UnaryKind::Exp},     {"top.hard_swish", UnaryKind::HardSwish},
      {"top.softplus", UnaryKind::Softplus}, {"top.abs", UnaryKind::Abs},   {"top.neg", UnaryKind::Neg},
      {"top.log", UnaryKind::Log},         {"top.sqrt", UnaryKind::Sqrt},   {"top.erf", UnaryKind::Erf},
      {"top.softsign", UnaryKind::Softsign}, {"top.reciprocal", UnaryKind::Reciprocal}};
  return ops;
}
bool isTableOp(Operation *op) {
  return tableOps().count(op->getName().getStringRef().str()) || isa<top::HardSigmoidOp, top::EluOp>(op);
}

class Lowerer {
public:
  Lowerer(ModuleOp src, const top::WeightStore &in, const LoweringOptions &opt)
      : src_(src), ctx_(src.getContext()), b_(ctx_), in_(in), opt_(opt) {}

  Result<LoweredModule> run();

private:
  struct Versions {
    Value f32, i8;
  };
  // The window attributes of a conv or pool (generated builders' order).
  struct Window {
    ArrayRef<int64_t> kernel, strides, pads, dilations;
    int64_t group = 1;
    bool doRelu = false;
  };

  Status nameValues(func::FuncOp f);
  Status checkCalibration(func::FuncOp f);
  Status lower(Operation *op);
  Status lowerConv(top::ConvOp op);
  template <class OpT>
  Value lowerWeighted(Value input, const std::string &name, const std::string &outName, ArrayRef<int64_t> outShape,
                      ArrayRef<int64_t> filterShape, const std::vector<float> &w, const std::vector<float> &bias,
                      const Window &window, const char *what, bool &int8);
  Status lowerFc(Operation *op, Value a, Value bw, Value c, double alpha, double beta, bool transB);
  Status lowerPool(Operation *op, bool isMax);
  Status lowerBinary(Operation *op);
  Status lowerConvTranspose(top::ConvTransposeOp op);
  Status lowerBatchNorm(top::BatchNormOp op);
  Status lowerConstantBinary(Operation *op, Value x, Value constant);
  Status lowerAffine(Operation *op, Value input, std::vector<float> scale, std::vector<float> bias, Value result);
  Status lowerHardSigmoidF32(Operation *op, double alpha, double beta, bool timesInput);
  Result<ChannelAffine> batchNormAffine(top::BatchNormOp op);
  AffineChain affineChain(Value v, int64_t channels);
  // Folds `chain` into a filter and bias: weight i belongs to output channel
  // (i / block) % oc; the chain's ops are fused away.
  void foldIntoFilter(const AffineChain &chain, std::vector<float> &w, std::vector<float> &bias, int64_t oc,
                      int64_t block);
  Status lowerLut(Operation *op, kernels::UnaryKind kind, float a = 0, float b = 0);
  Status noLowering(Operation *op, const std::string &why);

  // Values of Top tensors in the lowered module.
  Value f32(Value v);
  Value i8(Value v);
  // A tensor whose calibrated minimum is >= 0 (ReLU outputs) is uint8 with
  // scale threshold / 255, any other int8 with threshold / 127.
  bool unsignedOf(const std::string &name) const { return opt_.calibration->tensors.at(name).min >= 0; }
  float scaleOf(const std::string &name) const {
    return float(opt_.calibration->tensors.at(name).threshold / (unsignedOf(name) ? 255.0 : 127.0));
  }
  RankedTensorType qType(ArrayRef<int64_t> shape, const std::string &name) {
    return tpuir::int8Type(shape, scaleOf(name), ctx_, unsignedOf(name));
  }
  // The type of `x` (an int8 value) with another shape: same scale and sign.
  static RankedTensorType likeType(Value x, ArrayRef<int64_t> shape) {
    auto t = cast<RankedTensorType>(x.getType());
    return RankedTensorType::get(shape, t.getElementType(), t.getEncoding());
  }
  static bool isUnsigned(Value x) { return cast<RankedTensorType>(x.getType()).getElementType().isUnsignedInteger(); }
  static float scaleOfValue(Value x) { return *tpuir::scaleOf(x.getType()); }
  static int64_t lowest(Value x) { return isUnsigned(x) ? 0 : -128; }
  static int64_t highest(Value x) { return isUnsigned(x) ? 255 : 127; }
  bool wantInt8(const std::string &name) const {
    return opt_.mode == Quantize::INT8 && !opt_.keepF32.count(name);
  }
  // The op result a Top op's value is finally known by: a following
  // single-use relu is fused into conv, fc and add.
  top::ReluOp fusibleRelu(Value v) const {
    if (!v.hasOneUse()) return nullptr;
    return dyn_cast<top::ReluOp>(*v.getUsers().begin());
  }

  Location locFor(const std::string &name) { return NameLoc::get(b_.getStringAttr(name)); }
  RankedTensorType f32Type(ArrayRef<int64_t> shape) { return RankedTensorType::get(shape, b_.getF32Type()); }
  // An op by its generated builder (TpuOps.td argument order), named `name`.
  template <class OpT, class... Args> Value make(const std::string &name, Type type, Args &&...args) {
    return b_.create<OpT>(locFor(name), type, std::forward<Args>(args)...).getOutput();
  }
  // A conv-like op: operands, then the window attributes, then rshift.
  template <class OpT>
  Value makeWindowed(const std::string &name, Type type, Value x, Value filter, Value bias, const Window &w,
                     uint64_t rshift) {
    return make<OpT>(name, type, x, filter, bias, w.kernel, w.strides, w.pads, w.dilations, uint64_t(w.group),
                     w.doRelu, rshift);
  }
  static llvm::APFloat f64(double v) { return llvm::APFloat(v); }

  Result<std::vector<float>> weightValues(Value v, const std::string &role, Operation *user);
  Value addWeight(const std::string &base, NpyArray array, Type elem);
  Value none() { return b_.create<top::NoneOp>(b_.getUnknownLoc(), b_.getNoneType()).getOutput(); }

  ModuleOp src_;
  MLIRContext *ctx_;
  OpBuilder b_;
  const top::WeightStore &in_;
  const LoweringOptions &opt_;
  LoweredModule out_;
  llvm::DenseMap<Value, std::string> names_;
  llvm::DenseMap<Value, Versions> vals_;
  std::set<Operation *> fused_;
  // int8 scalar affines folded into the table op that is their only user:
  // the table reads `input` and applies x * scale + shift first.
  struct TableInput {
    Value input;
    backend::TableAffine affine;
  };
  std::map<Operation *, TableInput> tableInputs_;
};

Status Lowerer::nameValues(func::FuncOp f) {
  std::map<std::string, int> counters;
  std::set<std::string> taken;
  auto inputNames = f->getAttrOfType<ArrayAttr>("top.input_names");
  for (Operation &op : f.getBody().front()) {
    if (op.getNumResults() != 1) continue;
    std::string name;
    if (auto nl = dyn_cast<NameLoc>(op.getLoc())) name = nl.getName().str();
    if (auto in = dyn_cast<top::InputOp>(op); in && inputNames) {
      auto arg = cast<BlockArgument>(in.getInput());
      if (arg.getArgNumber() < inputNames.size())
        if (auto s = dyn_cast<StringAttr>(inputNames[arg.getArgNumber()])) name = s.str();
    }
    if (name.empty()) {
      std::string base = op.getName().stripDialect().str();
      name = base + "_" + std::to_string(counters[base]++);
    }
    for (int i = 1; taken.count(name); ++i) name += "_" + std::to_string(i);
    taken.insert(name);
    names_[op.getResult(0)] = name;
  }
  // Returned values take the model's output names (as the Top interpreter
  // names them, and so the calibration table).
  auto outputNames = f->getAttrOfType<ArrayAttr>("top.output_names");
  Operation *ret = f.getBody().front().getTerminator();
  if (outputNames && ret && outputNames.size() == ret->getNumOperands())
    for (unsigned i = 0; i < ret->getNumOperands(); ++i)
      if (auto s = dyn_cast<StringAttr>(outputNames[i]); s && ret->getOperand(i).getDefiningOp())
        names_[ret->getOperand(i)] = s.str();
  return Status::ok();
}

Status Lowerer::checkCalibration(func::FuncOp f) {
  if (opt_.mode != Quantize::INT8) return Status::ok();
  if (!opt_.calibration) return makeError("INT8 needs a calibration table (--calibration-table)");
  std::vector<std::string> missing;
  for (Operation &op : f.getBody().front()) {
    if (op.getNumResults() != 1 || isa<top::WeightOp, top::NoneOp>(op)) continue;
    const std::string &name = names_[op.getResult(0)];
    if (!opt_.calibration->tensors.count(name)) missing.push_back(name);
  }
  if (missing.empty()) return Status::ok();
  std::string list;
  for (size_t i = 0; i < missing.size() && i < 8; ++i) list += (i ? ", " : "") + missing[i];
  if (missing.size() > 8) list += ", ...";
  return makeError("the calibration table lacks ", missing.size(), " tensor(s) of the model: ", list);
}

Value Lowerer::f32(Value v) {
  Versions &ver = vals_[v];
  if (!ver.f32) ver.f32 = make<tpuir::CastOp>(names_[v] + "_f32", f32Type(shapeOf(v)), ver.i8);
  return ver.f32;
}

Value Lowerer::i8(Value v) {
  Versions &ver = vals_[v];
  if (!ver.i8) {
    const std::string &name = names_[v];
    ver.i8 = make<tpuir::CastOp>(name + "_i8", qType(shapeOf(v), name), ver.f32);
  }
  return ver.i8;
}

Result<std::vector<float>> Lowerer::weightValues(Value v, const std::string &role, Operation *user) {
  auto w = v.getDefiningOp<top::WeightOp>();
  if (!w) return makeError(role, " is not a weight");
  auto arr = in_.get(w);
  if (!arr) return makeError(arr.message());
  return (*arr)->toFloat();
}

Value Lowerer::addWeight(const std::string &base, NpyArray array, Type elem) {
  std::vector<int64_t> shape = array.shape;
  std::string name = out_.weights.add(base, std::move(array));
  return b_.create<top::WeightOp>(locFor(name), RankedTensorType::get(shape, elem), b_.getStringAttr(name))
      .getOutput();
}

Status Lowerer::noLowering(Operation *op, const std::string &why) {
  std::string loc;
  llvm::raw_string_ostream os(loc);
  op->getLoc().print(os);
  std::string name = op->getNumResults() ? names_[op->getResult(0)] : "";
  return makeError("no lowering for ", op->getName().getStringRef().str(), " '", name, "' at ", os.str(),
                   ": ", why);
}

// A weighted window op (conv, conv_transpose): in int8 when `int8` and its
// weights and bias fit int8/int16 with one right shift (scale_in * scale_w
// = scale_out * 2^-rshift), else in fp32 with `int8` cleared (reported as a
// fallback when int8 was asked for).
template <class OpT>
Value Lowerer::lowerWeighted(Value input, const std::string &name, const std::string &outName,
                             ArrayRef<int64_t> outShape, ArrayRef<int64_t> filterShape, const std::vector<float> &w,
                             const std::vector<float> &bias, const Window &window, const char *what, bool &int8) {
  std::vector<int64_t> fshape(filterShape.begin(), filterShape.end());
  if (int8) {
    Value x = i8(input);
    const float si = scaleOfValue(x), so = scaleOf(outName);
    const double wk = double(si) / so;
    auto r = chooseShift({{maxAbs(w) * wk, 127}, {maxAbs(bias) / so, 32767}});
    if (!r) {
      out_.fallbacks.push_back(outName + ": " + what + " weights or bias do not fit int8/int16 with any right shift");
      int8 = false;
    } else {
      std::vector<int8_t> wq(w.size());
      for (size_t i = 0; i < wq.size(); ++i) wq[i] = int8_t(clampTo(fixedPoint(w[i] * wk, *r), -128, 127));
      Value filter = addWeight(name + "_filter_i8", NpyArray::from(fshape, wq), b_.getIntegerType(8));
      Value b = none();
      if (!bias.empty()) {
        std::vector<int16_t> bq(bias.size());
        for (size_t i = 0; i < bq.size(); ++i) bq[i] = int16_t(clampTo(fixedPoint(bias[i] / so, *r), -32768, 32767));
        b = addWeight(name + "_bias_i16", NpyArray::from({int64_t(bq.size())}, bq), b_.getIntegerType(16));
      }
      return makeWindowed<OpT>(outName, qType(outShape, outName), x, filter, b, window, uint64_t(*r));
    }
  }
  Value filter = addWeight(name + "_filter", NpyArray::from(fshape, w.data(), w.size()), b_.getF32Type());
  Value b = bias.empty() ? none()
                         : addWeight(name + "_bias", NpyArray::from({int64_t(bias.size())}, bias.data(), bias.size()),
                                     b_.getF32Type());
  Value x = f32(input);
  return makeWindowed<OpT>(outName, f32Type(outShape), x, filter, b, window, 0);
}

void Lowerer::foldIntoFilter(const AffineChain &chain, std::vector<float> &w, std::vector<float> &bias, int64_t oc,
                             int64_t block) {
  if (chain.ops.empty()) return;
  for (size_t i = 0; i < w.size(); ++i) w[i] = float(w[i] * chain.scale[size_t(int64_t(i) / block % oc)]);
  bias.resize(size_t(oc), 0.0f);
  for (size_t c = 0; c < size_t(oc); ++c) bias[c] = float(bias[c] * chain.scale[c] + chain.bias[c]);
  fused_.insert(chain.ops.begin(), chain.ops.end());
}

Status Lowerer::lowerConv(top::ConvOp op) {
  std::string name = names_[op.getOutput()];
  auto k = op.getKernelShape();
  if (k.size() != 2) return noLowering(op, "only 2-D convolutions (NCHW) are supported");
  auto wv = weightValues(op.getFilter(), "filter", op);
  if (!wv) return noLowering(op, wv.message());
  std::vector<float> bias;
  if (!isa<NoneType>(op.getBias().getType())) {
    auto bv = weightValues(op.getBias(), "bias", op);
    if (!bv) return noLowering(op, bv.message());
    bias = *bv;
  }
  auto filterShape = shapeOf(op.getFilter());
  if (filterShape.size() != 4 || filterShape[0] < 1 || int64_t(wv->size()) % filterShape[0])
    return noLowering(op, "the filter is not [oc, ic/group, kh, kw]");
  // fp32: per-channel affine ops behind it (batch norm, a learnable scale
  // and shift) fold into the filter and bias (as for conv_transpose). Not
  // in int8: the folded bias often binds the int16 bias limit and forces a
  // smaller shift (PP-OCR INT8 cosine 0.932 folded, 0.936 not).
  const int64_t oc = filterShape[0], perOc = int64_t(wv->size()) / oc;
  const bool fold = !op.getDoRelu() && !wantInt8(name);
  AffineChain chain = fold ? affineChain(op.getOutput(), oc) : AffineChain{{}, {}, op.getOutput(), {}};
  foldIntoFilter(chain, *wv, bias, oc, perOc);
  auto relu = op.getDoRelu() ? nullptr : fusibleRelu(chain.result);
  Value result = relu ? relu.getOutput() : chain.result;
  const std::string &outName = names_[result];
  bool doRelu = op.getDoRelu() || relu;
  auto outShape = shapeOf(result);
  Window window{k, op.getStrides(), op.getPads(), op.getDilations(), int64_t(op.getGroup()), doRelu};
  bool int8 = wantInt8(name) && wantInt8(outName);
  Value out = lowerWeighted<tpuir::ConvOp>(op.getInput(), name, outName, outShape, filterShape, *wv, bias, window,
                                           "conv", int8);
  // relu_limit (ReLU6): a clip behind the conv, in the conv's precision.
  double limit = op.getReluLimit().convertToDouble();
  if (op.getDoRelu() && limit >= 0) {
    std::string convName = outName + "_conv";
    out.getDefiningOp()->setLoc(locFor(convName));
    if (int8) {
      float so = scaleOfValue(out);
      out = make<tpuir::ClipOp>(outName, out.getType(), out, f64(0),
                                f64(double(clampTo(std::lround(limit / so), lowest(out), highest(out)))));
    } else {
      out = make<tpuir::ClipOp>(outName, out.getType(), out, f64(0), f64(limit));
    }
  }
  if (relu) fused_.insert(relu);
  (int8 ? vals_[result].i8 : vals_[result].f32) = out;
  return Status::ok();
}

Status Lowerer::lowerFc(Operation *op, Value a, Value bw, Value c, double alpha, double beta, bool transB) {
  Value result = op->getResult(0);
  std::string name = names_[result];
  auto relu = fusibleRelu(result);
  if (relu) result = relu.getOutput();
  const std::string &outName = names_[result];
  auto as = shapeOf(a), bs = shapeOf(bw);
  if (as.size() != 2 || bs.size() != 2) return noLowering(op, "fc needs a 2-D activation and a 2-D weight");
  auto wv = weightValues(bw, "the right operand", op);
  if (!wv) return noLowering(op, wv.message());
  const int64_t kdim = as[1], n = transB ? bs[0] : bs[1];
  // Weight as [n, k], alpha folded in.
  std::vector<float> w(size_t(n * kdim));
  for (int64_t j = 0; j < n; ++j)
    for (int64_t q = 0; q < kdim; ++q)
      w[size_t(j * kdim + q)] = float(alpha) * (*wv)[size_t(transB ? j * kdim + q : q * n + j)];
  std::vector<float> bias;
  if (c && !isa<NoneType>(c.getType())) {
    auto cv = weightValues(c, "the bias (C)", op);
    if (!cv) return noLowering(op, cv.message());
    if (int64_t(cv->size()) != n) return noLowering(op, "the bias (C) must have one value per output column");
    for (float x : *cv) bias.push_back(float(beta) * x);
  }
  auto outShape = shapeOf(result);
  const bool doRelu = bool(relu);
  Value out;
  bool int8 = wantInt8(name) && wantInt8(outName);
  if (int8) {
    Value x = i8(a);
    const float si = scaleOfValue(x), so = scaleOf(outName);
    const double wk = double(si) / so;
    auto r = chooseShift({{maxAbs(w) * wk, 127}, {maxAbs(bias) / so, 32767}});
    if (!r) {
      out_.fallbacks.push_back(outName + ": fc weights or bias do not fit int8/int16 with any right shift");
      int8 = false;
    } else {
      std::vector<int8_t> wq(w.size());
      for (size_t i = 0; i < w.size(); ++i) wq[i] = int8_t(clampTo(fixedPoint(w[i] * wk, *r), -128, 127));
      Value wt = addWeight(name + "_weight_i8", NpyArray::from({n, kdim}, wq), b_.getIntegerType(8));
      Value b = none();
      if (!bias.empty()) {
        std::vector<int16_t> bq(bias.size());
        for (size_t i = 0; i < bq.size(); ++i) bq[i] = int16_t(clampTo(fixedPoint(bias[i] / so, *r), -32768, 32767));
        b = addWeight(name + "_bias_i16", NpyArray::from({n}, bq), b_.getIntegerType(16));
      }
      out = make<tpuir::FcOp>(outName, qType(outShape, outName), x, wt, b, doRelu, uint64_t(*r));
    }
  }
  if (!int8) {
    Value wt = addWeight(name + "_weight", NpyArray::from({n, kdim}, w.data(), w.size()), b_.getF32Type());
    Value b = bias.empty() ? none()
                           : addWeight(name + "_bias", NpyArray::from({n}, bias.data(), bias.size()), b_.getF32Type());
    Value x = f32(a);
    out = make<tpuir::FcOp>(outName, f32Type(outShape), x, wt, b, doRelu);
  }
  if (relu) fused_.insert(relu);
  (int8 ? vals_[result].i8 : vals_[result].f32) = out;
  return Status::ok();
}

Status Lowerer::lowerPool(Operation *op, bool isMax) {
  Value input = op->getOperand(0), result = op->getResult(0);
  const std::string &name = names_[result];
  auto outShape = shapeOf(result);
  bool global = isa<top::GlobalAvgPoolOp>(op);
  Window w;
  bool countIncludePad = false;
  if (auto p = dyn_cast<top::MaxPoolOp>(op))
    w = {p.getKernelShape(), p.getStrides(), p.getPads(), p.getDilations()}, countIncludePad = p.getCountIncludePad();
  else if (auto p = dyn_cast<top::AvgPoolOp>(op))
    w = {p.getKernelShape(), p.getStrides(), p.getPads(), p.getDilations()}, countIncludePad = p.getCountIncludePad();
  int64_t window = 1;
  if (!global) {
    if (w.kernel.size() != 2) return noLowering(op, "only 2-D pooling (NCHW) is supported");
    if (llvm::any_of(w.dilations, [](int64_t d) { return d != 1; })) return noLowering(op, "dilated pooling");
    bool padded = llvm::any_of(w.pads, [](int64_t p) { return p != 0; });
    if (!isMax && padded && !countIncludePad)
      return noLowering(op, "average pooling with padding must count the padding (count_include_pad)");
    window = w.kernel[0] * w.kernel[1];
  } else {
    auto s = shapeOf(input);
    if (s.size() != 4) return noLowering(op, "global pooling needs NCHW");
    window = s[2] * s[3];
  }
  // The pool op of this kind with the given requantization.
  auto build = [&](Type t, Value x, uint64_t rshift, ArrayRef<int64_t> multipliers) {
    if (global) return make<tpuir::GlobalAvgPoolOp>(name, t, x, false, rshift, multipliers);
    if (isMax) return make<tpuir::MaxPoolOp>(name, t, x, w.kernel, w.strides, w.pads, w.dilations);
    return make<tpuir::AvgPoolOp>(name, t, x, w.kernel, w.strides, w.pads, w.dilations, uint64_t(1), false, rshift,
                                  multipliers);
  };
  Value out;
  bool int8 = wantInt8(name);
  if (int8 && isMax) {
    Value x = i8(input);
    out = build(likeType(x, outShape), x, 0, {});
  } else if (int8) {
    Value x = i8(input);
    const float si = scaleOfValue(x), so = scaleOf(name);
    const double m = double(si) / so / double(window);
    auto r = chooseShift({{m, 255}});
    if (!r || fixedPoint(m, *r) < 1) {
      out_.fallbacks.push_back(name + ": average multiplier does not fit [1, 255] with any right shift");
      int8 = false;
    } else {
      out = build(qType(outShape, name), x, uint64_t(*r), {fixedPoint(m, *r)});
    }
  }
  if (!int8) out = build(f32Type(outShape), f32(input), 0, {});
  (int8 ? vals_[result].i8 : vals_[result].f32) = out;
  return Status::ok();
}

Status Lowerer::lowerBinary(Operation *op) {
  Value lhs = op->getOperand(0), rhs = op->getOperand(1), result = op->getResult(0);
  std::string name = names_[result];
  const bool lhsConst = bool(lhs.getDefiningOp<top::WeightOp>()), rhsConst = bool(rhs.getDefiningOp<top::WeightOp>());
  if (lhsConst && rhsConst) return noLowering(op, "two constant operands (constant folding leaves none)");
  if (lhsConst || rhsConst) {
    if (isa<top::MaxOp>(op)) return noLowering(op, "a constant operand (the chip's max takes two activations)");
    return lowerConstantBinary(op, lhsConst ? rhs : lhs, lhsConst ? lhs : rhs);
  }
  // An (N, C, 1, 1) operand is broadcast over H and W; the chip reads it as
  // the second input (add, mul and max commute).
  auto isChannelBroadcast = [&](Value v) {
    auto s = shapeOf(v), o = shapeOf(result);
    return s.size() == 4 && o.size() == 4 && s[0] == o[0] && s[1] == o[1] && s[2] == 1 && s[3] == 1;
  };
  if (shapeOf(lhs) != shapeOf(result) && shapeOf(rhs) == shapeOf(result) && isChannelBroadcast(lhs))
    std::swap(lhs, rhs);
  if (shapeOf(lhs) != shapeOf(result) || (shapeOf(rhs) != shapeOf(result) && !isChannelBroadcast(rhs)))
    return noLowering(op, "broadcasting other than an (N, C, 1, 1) operand over H and W");
  bool isMul = isa<top::MulOp>(op);
  auto relu = isa<top::AddOp>(op) ? fusibleRelu(result) : nullptr;
  if (relu) result = relu.getOutput();
  const std::string &outName = names_[result];
  auto outShape = shapeOf(result);
  const bool doRelu = bool(relu);
  auto build = [&](Type t, Value a, Value b, uint64_t rshift = 0, ArrayRef<int64_t> m = {}) {
    if (isa<top::AddOp>(op)) return make<tpuir::AddOp>(outName, t, a, b, doRelu, rshift, m);
    if (isMul) return make<tpuir::MulOp>(outName, t, a, b, doRelu, rshift, m);
    return make<tpuir::MaxOp>(outName, t, a, b, doRelu, rshift, m);
  };
  Value out;
  bool int8 = wantInt8(name) && wantInt8(outName);
  if (int8) {
    Value a = i8(lhs), b = i8(rhs);
    const double sa = scaleOfValue(a), sb = scaleOfValue(b), so = scaleOf(outName);
    std::vector<double> factors = isMul ? std::vector<double>{sa * sb / so} : std::vector<double>{sa / so, sb / so};
    auto r = isMul ? chooseShift({{factors[0], 16383}}) : chooseShift({{factors[0], 16383}, {factors[1], 16383}});
    if (!r) {
      out_.fallbacks.push_back(outName + ": element-wise multipliers do not fit int16 with any right shift");
      int8 = false;
    } else {
      std::vector<int64_t> m;
      for (double f : factors) m.push_back(fixedPoint(f, *r));
      out = build(qType(outShape, outName), a, b, uint64_t(*r), m);
    }
  }
  if (!int8) out = build(f32Type(outShape), f32(lhs), f32(rhs));
  if (relu) fused_.insert(relu);
  (int8 ? vals_[result].i8 : vals_[result].f32) = out;
  return Status::ok();
}

// A constant operand of one value (scalar) or one value per channel
// (shape [C, 1, 1] or [1, C, 1, 1] against NCHW): the values, else empty.
std::vector<float> channelConstant(const std::vector<float> &values, std::vector<int64_t> shape,
                                          const std::vector<int64_t> &out) {
  if (values.size() == 1) return values;
  if (out.size() < 2 || shape.size() > out.size()) return {};
  shape.insert(shape.begin(), out.size() - shape.size(), 1);
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1 && d != 1) return {};
  return int64_t(values.size()) == out[1] ? values : std::vector<float>{};
}

Status Lowerer::lowerConstantBinary(Operation *op, Value x, Value constant) {
  Value result = op->getResult(0);
  if (shapeOf(x) != shapeOf(result)) return noLowering(op, "a constant operand broadcasting the activation");
  auto cv = weightValues(constant, "the constant operand", op);
  if (!cv) return noLowering(op, cv.message());
  std::vector<float> c = channelConstant(*cv, shapeOf(constant), shapeOf(result));
  if (c.empty()) return noLowering(op, "a constant operand that is neither a scalar nor one value per channel");
  const bool isMul = isa<top::MulOp>(op);
  std::vector<float> scale = isMul ? c : std::vector<float>{1.0f}, bias = isMul ? std::vector<float>{0.0f} : c;
  return lowerAffine(op, x, scale, bias, result);
}

Result<ChannelAffine> Lowerer::batchNormAffine(top::BatchNormOp op) {
  auto shape = shapeOf(op.getInput());
  if (shape.size() < 2) return makeError("a batch norm without a channel axis");
  std::vector<std::vector<float>> v;
  for (auto [operand, role] : {std::pair{op.getScale(), "scale"}, std::pair{op.getBias(), "bias"},
                               std::pair{op.getMean(), "mean"}, std::pair{op.getVariance(), "variance"}}) {
    auto w = weightValues(operand, role, op);
    if (!w) return makeError(w.message());
    if (int64_t(w->size()) != shape[1]) return makeError("the ", role, " needs one value per channel");
    v.push_back(std::move(*w));
  }
  const double eps = op.getEpsilon().convertToDouble();
  ChannelAffine a{std::vector<float>(v[0].size()), std::vector<float>(v[0].size())};
  for (size_t c = 0; c < a.scale.size(); ++c) {
    const double k = double(v[0][c]) / std::sqrt(double(v[3][c]) + eps);
    a.scale[c] = float(k), a.bias[c] = float(double(v[1][c]) - double(v[2][c]) * k);
  }
  return a;
}

Status Lowerer::lowerBatchNorm(top::BatchNormOp op) {
  auto a = batchNormAffine(op);
  if (!a) return noLowering(op, a.message());
  return lowerAffine(op, op.getInput(), std::move(a->scale), std::move(a->bias), op.getOutput());
}

AffineChain Lowerer::affineChain(Value v, int64_t channels) {
  AffineChain chain{std::vector<double>(size_t(channels), 1.0), std::vector<double>(size_t(channels), 0.0), v, {}};
  while (chain.result.hasOneUse()) {
    Operation *user = *chain.result.getUsers().begin();
    if (user->getNumResults() != 1 || shapeOf(user->getResult(0)) != shapeOf(chain.result)) break;
    std::vector<float> k, b;
    if (auto bn = dyn_cast<top::BatchNormOp>(user)) {
      auto a = batchNormAffine(bn);
      if (!a || bn.getInput() != chain.result) break;
      k = std::move(a->scale), b = std::move(a->bias);
    } else if (isa<top::MulOp, top::AddOp>(user)) {
      Value other = user->getOperand(0) == chain.result ? user->getOperand(1) : user->getOperand(0);
      if (!other.getDefiningOp<top::WeightOp>()) break;
      auto cv = weightValues(other, "the constant operand", user);
      if (!cv) break;
      std::vector<float> c = channelConstant(*cv, shapeOf(other), shapeOf(chain.result));
      if (c.empty()) break;
      if (c.size() == 1) c.assign(size_t(channels), c[0]);
      if (isa<top::MulOp>(user)) k = std::move(c), b.assign(size_t(channels), 0.0f);
      else k.assign(size_t(channels), 1.0f), b = std::move(c);
    } else {
      break;
    }
    for (size_t i = 0; i < size_t(channels); ++i)
      chain.scale[i] *= k[i], chain.bias[i] = chain.bias[i] * k[i] + b[i];
    chain.ops.push_back(user);
    chain.result = user->getResult(0);
  }
  return chain;
}

// x * scale + bias, scalars (one value each) or per channel; a following
// single-use relu is fused. int8: m = scale * s_x / s_y and b = bias / s_y
// in fixed point with the largest shift that fits int16 / int32.
Status Lowerer::lowerAffine(Operation *op, Value input, std::vector<float> scale, std::vector<float> bias,
                            Value result) {
  const std::string name = names_[op->getResult(0)];
  // The per-channel affine ops behind it (PP-OCR: a learnable scale and
  // shift after a batch norm or a constant mul) compose into this one.
  if (auto s = shapeOf(result); s.size() >= 2) {
    AffineChain chain = affineChain(result, s[1]);
    if (!chain.ops.empty()) {
      const size_t c = size_t(s[1]);
      if (scale.size() == 1) scale.assign(c, scale[0]);
      if (bias.size() == 1) bias.assign(c, bias[0]);
      for (size_t i = 0; i < c; ++i)
        scale[i] = float(scale[i] * chain.scale[i]), bias[i] = float(bias[i] * chain.scale[i] + chain.bias[i]);
      fused_.insert(chain.ops.begin(), chain.ops.end());
      result = chain.result;
    }
  }
  auto uniform = [](const std::vector<float> &v) { return std::all_of(v.begin(), v.end(), [&](float x) { return x == v[0]; }); };
  if (uniform(scale) && uniform(bias)) scale.resize(1), bias.resize(1);
  // int8: a scalar affine whose only user is a table op folds into the table.
  if (scale.size() == 1 && bias.size() == 1 && result.hasOneUse() && wantInt8(name) && wantInt8(names_[result])) {
    Operation *user = *result.getUsers().begin();
    if (isTableOp(user) && wantInt8(names_[user->getResult(0)])) {
      tableInputs_[user] = {input, {scale[0], bias[0]}};
      return Status::ok();
    }
  }
  auto relu = fusibleRelu(result);
  if (relu) result = relu.getOutput();
  const std::string &outName = names_[result];
  auto outShape = shapeOf(result);
  const bool perChannel = scale.size() > 1 || bias.size() > 1;
  if (perChannel) { // both as C values
    const size_t c = size_t(outShape[1]);
    if (scale.size() == 1) scale.assign(c, scale[0]);
    if (bias.size() == 1) bias.assign(c, bias[0]);
  }
  const bool doRelu = bool(relu);
  const llvm::APFloat alpha = f64(perChannel ? 1.0 : scale[0]), beta = f64(perChannel ? 0.0 : bias[0]);
  const std::vector<int64_t> wShape{int64_t(scale.size())};
  Value out;
  bool int8 = wantInt8(name) && wantInt8(outName);
  if (int8) {
    Value x = i8(input);
    const double k = double(scaleOfValue(x)) / scaleOf(outName), so = scaleOf(outName);
    auto r = chooseShift({{maxAbs(scale) * k, 32767}, {maxAbs(bias) / so, 2147483647.0}});
    if (!r) {
      out_.fallbacks.push_back(outName + ": affine scale or offset does not fit int16/int32 with any right shift");
      int8 = false;
    } else {
      std::vector<int16_t> mq(scale.size());
      std::vector<int32_t> bq(bias.size());
      for (size_t i = 0; i < mq.size(); ++i)
        mq[i] = int16_t(clampTo(fixedPoint(double(scale[i]) * k, *r), -32768, 32767)),
        bq[i] = int32_t(clampTo(fixedPoint(double(bias[i]) / so, *r), INT32_MIN, INT32_MAX));
      Value sw = none(), bw = none();
      std::vector<int64_t> multipliers;
      if (perChannel) {
        sw = addWeight(outName + "_scale_i16", NpyArray::from(wShape, mq), b_.getIntegerType(16));
        bw = addWeight(outName + "_bias_i32", NpyArray::from(wShape, bq), b_.getIntegerType(32));
      } else {
        multipliers = {mq[0], bq[0]};
      }
      out = make<tpuir::AffineOp>(outName, qType(outShape, outName), x, sw, bw, alpha, beta, doRelu, uint64_t(*r),
                                  multipliers);
    }
  }
  if (!int8) {
    Value sw = none(), bw = none();
    if (perChannel) {
      sw = addWeight(outName + "_scale", NpyArray::from(wShape, scale), b_.getF32Type());
      bw = addWeight(outName + "_bias", NpyArray::from(wShape, bias), b_.getF32Type());
    }
    Value x = f32(input);
    out = make<tpuir::AffineOp>(outName, f32Type(outShape), x, sw, bw, alpha, beta, doRelu);
  }
  if (relu) fused_.insert(relu);
  (int8 ? vals_[result].i8 : vals_[result].f32) = out;
  return Status::ok();
}

Status Lowerer::lowerConvTranspose(top::ConvTransposeOp op) {
  std::string name = names_[op.getOutput()];
  auto k = op.getKernelShape();
  if (k.size() != 2) return noLowering(op, "only 2-D transposed convolutions (NCHW) are supported");
  if (op.getGroup() != 1) return noLowering(op, "a grouped transposed convolution (the back end runs group 1)");
  auto wv = weightValues(op.getFilter(), "filter", op);
  if (!wv) return noLowering(op, wv.message());
  std::vector<float> bias;
  if (!isa<NoneType>(op.getBias().getType())) {
    auto bv = weightValues(op.getBias(), "bias", op);
    if (!bv) return noLowering(op, bv.message());
    bias = *bv;
  }
  // Per-channel affine ops behind it (a bias add, batch norm) fold into the
  // filter and bias: one requantization instead of one per op.
  auto filterShape = shapeOf(op.getFilter());
  if (filterShape.size() != 4 || filterShape[1] < 1 || filterShape[2] * filterShape[3] < 1)
    return noLowering(op, "the filter is not [ic, oc, kh, kw]");
  const int64_t oc = filterShape[1], taps = filterShape[2] * filterShape[3];
  AffineChain chain = affineChain(op.getOutput(), oc);
  foldIntoFilter(chain, *wv, bias, oc, taps);
  auto relu = fusibleRelu(chain.result);
  Value result = relu ? relu.getOutput() : chain.result;
  const std::string &outName = names_[result];
  auto outShape = shapeOf(result);
  Window window{k, op.getStrides(), op.getPads(), op.getDilations(), 1, bool(relu)};
  bool int8 = wantInt8(name) && wantInt8(outName);
  Value out = lowerWeighted<tpuir::ConvTransposeOp>(op.getInput(), name, outName, outShape, filterShape, *wv, bias,
                                                    window, "transposed conv", int8);
  if (relu) fused_.insert(relu);
  (int8 ? vals_[result].i8 : vals_[result].f32) = out;
  return Status::ok();
}

// fp32 hard_sigmoid = clip(x * alpha + beta, 0, 1) (affine, clip); hard_swish
// = x * hard_sigmoid(x) with alpha 1/6, beta 1/2 (affine, clip, mul).
Status Lowerer::lowerHardSigmoidF32(Operation *op, double alpha, double beta, bool timesInput) {
  Value input = op->getOperand(0), result = op->getResult(0);
  const std::string &name = names_[result];
  auto t = f32Type(shapeOf(result));
  Value x = f32(input);
  Value noScale = none(), noBias = none();
  Value a = make<tpuir::AffineOp>(name + "_affine", t, x, noScale, noBias, f64(alpha), f64(beta));
  Value c = make<tpuir::ClipOp>(timesInput ? name + "_clip" : name, t, a, f64(0.0), f64(1.0));
  vals_[result].f32 = timesInput ? make<tpuir::MulOp>(name, t, x, c) : c;
  return Status::ok();
}

Status Lowerer::lowerLut(Operation *op, kernels::UnaryKind kind, float a, float b) {
  Value input = op->getOperand(0), result = op->getResult(0);
  const std::string &name = names_[result];
  if (!wantInt8(name)) {
    // The chip computes sigmoid in fp32 (backend Sigmoid); the others only
    // as int8 tables.
    if (kind == kernels::UnaryKind::Sigmoid) {
      vals_[result].f32 = make<tpuir::SigmoidOp>(name, f32Type(shapeOf(result)), f32(input));
      return Status::ok();
    }
    if (kind == kernels::UnaryKind::HardSigmoid) return lowerHardSigmoidF32(op, a, b, false);
    if (kind == kernels::UnaryKind::HardSwish) return lowerHardSigmoidF32(op, 1.0 / 6.0, 0.5, true);
    return noLowering(op, "the BM1684 evaluates it only as an int8 lookup table (quantize it INT8)");
  }
  // The table maps the input's byte to the output's code; its entries come
  // from compiler/Kernels' fp32 function (backend::activationTable). Scalar
  // affines around it (PP-OCR: conv, x * s + b, hard_swish, x * s + b) fold
  // into the table: one rounding instead of three.
  backend::TableAffine before, after;
  auto pre = tableInputs_.find(op);
  if (pre != tableInputs_.end()) input = pre->second.input, before = pre->second.affine;
  if (auto s = shapeOf(result); s.size() >= 2) {
    AffineChain chain = affineChain(result, s[1]);
    auto uniform = [](const std::vector<double> &v) {
      return std::all_of(v.begin(), v.end(), [&](double x) { return x == v[0]; });
    };
    if (!chain.ops.empty() && uniform(chain.scale) && uniform(chain.bias) && wantInt8(names_[chain.result])) {
      after = {float(chain.scale[0]), float(chain.bias[0])};
      fused_.insert(chain.ops.begin(), chain.ops.end());
      result = chain.result;
    }
  }
  const std::string &outName = names_[result];
  Value x = i8(input);
  RankedTensorType outType = qType(shapeOf(result), outName);
  const backend::DType in = isUnsigned(x) ? backend::DType::U8 : backend::DType::I8;
  const backend::DType out = unsignedOf(outName) ? backend::DType::U8 : backend::DType::I8;
  backend::Bytes table =
      backend::activationTable(kind, a, b, in, scaleOfValue(x), out, scaleOf(outName), before, after);
  NpyArray array = NpyArray::fromBytes(backend::dtypeName(out), {256}, table.data(), table.size());
  Value t = addWeight(outName + "_table", std::move(array), outType.getElementType());
  vals_[result].i8 = make<tpuir::LutOp>(outName, outType, x, t);
  return Status::ok();
}

Status Lowerer::lower(Operation *op) {
  if (fused_.count(op)) return Status::ok();
  if (isa<top::WeightOp, top::NoneOp>(op)) return Status::ok();
  if (auto c = dyn_cast<top::ConvOp>(op)) return lowerConv(c);
  if (auto g = dyn_cast<top::GemmOp>(op)) {
    if (g.getTransA()) return noLowering(op, "transposed A");
    return lowerFc(op, g.getA(), g.getB(), g.getC(), g.getAlpha().convertToDouble(), g.getBeta().convertToDouble(),
                   g.getTransB());
  }
  if (auto m = dyn_cast<top::MatMulOp>(op)) return lowerFc(op, m.getA(), m.getB(), nullptr, 1.0, 1.0, false);
  if (isa<top::MaxPoolOp>(op)) return lowerPool(op, true);
  if (isa<top::AvgPoolOp, top::GlobalAvgPoolOp>(op)) return lowerPool(op, false);
  if (isa<top::AddOp, top::MulOp, top::MaxOp>(op)) return lowerBinary(op);
  if (auto t = dyn_cast<top::ConvTransposeOp>(op)) return lowerConvTranspose(t);
  if (auto bn = dyn_cast<top::BatchNormOp>(op)) return lowerBatchNorm(bn);

  // Element-wise functions the chip evaluates through a 256-entry table.
  using kernels::UnaryKind;
  if (auto it = tableOps().find(op->getName().getStringRef().str()); it != tableOps().end())
    return lowerLut(op, it->second);
  if (auto h = dyn_cast<top::HardSigmoidOp>(op))
    return lowerLut(op, UnaryKind::HardSigmoid, float(h.getAlpha().convertToDouble()),
                    float(h.getBeta().convertToDouble()));
  if (auto e = dyn_cast<top::EluOp>(op)) return lowerLut(op, UnaryKind::Elu, float(e.getAlpha().convertToDouble()));

  Value result = op->getNumResults() == 1 ? op->getResult(0) : Value();
  const std::string name = result ? names_[result] : "";
  auto outShape = result ? shapeOf(result) : std::vector<int64_t>{};
  // Ops whose int8 form keeps the input's scale; `attrs` follow the input
  // in the op's builder.
  auto sameScale = [&](auto tag, auto... attrs) -> Status {
    using OpT = decltype(tag);
    Value input = op->getOperand(0);
    if (wantInt8(name)) {
      Value x = i8(input);
      vals_[result].i8 = make<OpT>(name, likeType(x, outShape), x, attrs...);
    } else {
      vals_[result].f32 = make<OpT>(name, f32Type(outShape), f32(input), attrs...);
    }
    return Status::ok();
  };
  if (isa<top::ReluOp>(op)) return sameScale(tpuir::ReluOp());
  if (isa<top::ReshapeOp>(op)) {
    if (outShape.empty() || shapeOf(op->getOperand(0)).empty() || outShape[0] != shapeOf(op->getOperand(0))[0])
      return noLowering(op, "a reshape that changes the batch dimension");
    return sameScale(tpuir::ReshapeOp());
  }
  if (auto c = dyn_cast<top::ClipOp>(op)) {
    double lo = c.getMin().convertToDouble(), hi = c.getMax().convertToDouble();
    if (wantInt8(name)) {
      Value x = i8(c.getInput());
      float s = scaleOfValue(x);
      lo = double(clampTo(std::lround(std::max(lo, -1e9) / s), lowest(x), highest(x)));
      hi = double(clampTo(std::lround(std::min(hi, 1e9) / s), lowest(x), highest(x)));
    }
    return sameScale(tpuir::ClipOp(), f64(lo), f64(hi));
  }
  if (auto l = dyn_cast<top::LeakyReluOp>(op)) {
    double alpha = l.getAlpha().convertToDouble();
    if (alpha < 0 || alpha > 1) return noLowering(op, "a slope outside [0, 1]");
    if (!wantInt8(name)) return sameScale(tpuir::LeakyReluOp(), f64(alpha));
    auto r = chooseShift({{alpha, 127}}); // alpha <= 1 always fits with r = 0
    std::vector<int64_t> multiplier{fixedPoint(alpha, *r)};
    return sameScale(tpuir::LeakyReluOp(), f64(alpha), false, uint64_t(*r), ArrayRef<int64_t>(multiplier));
  }
  if (auto r = dyn_cast<top::ResizeOp>(op)) {
    auto scales = r.getScales();
    auto in = shapeOf(r.getInput());
    bool nearestFloor = r.getMode() == "nearest" &&
                        ((r.getCoordinateTransformationMode() == "asymmetric" && r.getNearestMode() == "floor") ||
                         r.getCoordinateTransformationMode() == "half_pixel" ||
                         r.getCoordinateTransformationMode() == "pytorch_half_pixel");
    if (!nearestFloor || in.size() != 4 || outShape[0] != in[0] || outShape[1] != in[1] ||
        outShape[2] % in[2] || outShape[3] % in[3] || (scales.size() == 4 && (scales[0] != 1 || scales[1] != 1)))
      return noLowering(op, "only nearest resizes of H and W by integer factors");
    if (r.getCoordinateTransformationMode() != "asymmetric" && r.getNearestMode() != "round_prefer_floor" &&
        r.getNearestMode() != "round_prefer_ceil")
      return noLowering(op, "only nearest resizes of H and W by integer factors");
    return sameScale(tpuir::UpsampleOp(), uint64_t(outShape[2] / in[2]), uint64_t(outShape[3] / in[3]));
  }
  if (auto c = dyn_cast<top::ConcatOp>(op)) {
    if (c.getAxis() != 1) return noLowering(op, "concatenation along an axis other than channels (1)");
    std::vector<Value> ins;
    if (wantInt8(name)) {
      const float so = scaleOf(name);
      for (Value v : c.getInputs()) {
        if (v.getDefiningOp<top::WeightOp>()) return noLowering(op, "a constant operand");
        Value x = i8(v);
        float si = scaleOfValue(x);
        if (si != so || isUnsigned(x) != unsignedOf(name)) {
          auto r = chooseShift({{double(si) / so, 16383}});
          if (!r) return noLowering(op, "an input scale that no int16 multiplier maps to the output's");
          x = make<tpuir::RequantOp>(names_[v] + "_requant", qType(shapeOf(v), name), x, false, uint64_t(*r),
                                     ArrayRef<int64_t>{fixedPoint(double(si) / so, *r)});
        }
        ins.push_back(x);
      }
      vals_[result].i8 = make<tpuir::ConcatOp>(name, qType(outShape, name), ValueRange(ins));
    } else {
      for (Value v : c.getInputs()) {
        if (v.getDefiningOp<top::WeightOp>()) return noLowering(op, "a constant operand");
        ins.push_back(f32(v));
      }
      vals_[result].f32 = make<tpuir::ConcatOp>(name, f32Type(outShape), ValueRange(ins));
    }
    return Status::ok();
  }
  return noLowering(op, "the BM1684 back end has no implementation of this op");
}

Result<LoweredModule> Lowerer::run() {
  func::FuncOp src;
  src_.walk([&](func::FuncOp f) {
    if (!src || f.getName() == "main") src = f;
  });
  if (!src || src.getBody().empty()) return makeError("the module has no function to lower");
  TPU_RETURN_IF_ERROR(nameValues(src));
  TPU_RETURN_IF_ERROR(checkCalibration(src));

  out_.module = ModuleOp::create(src_.getLoc());
  for (NamedAttribute a : src_->getAttrs())
    if (a.getName() != SymbolTable::getSymbolAttrName()) (*out_.module)->setAttr(a.getName(), a.getValue());
  b_.setInsertionPointToEnd(out_.module->getBody());
  auto fn = b_.create<func::FuncOp>(src.getLoc(), "main", src.getFunctionType());
  for (const char *attr : {"top.input_names", "top.output_names"})
    if (auto a = src->getAttr(attr)) fn->setAttr(attr, a);
  Block *entry = fn.addEntryBlock();
  b_.setInsertionPointToEnd(entry);
  for (Operation &op : src.getBody().front()) {
    if (auto in = dyn_cast<top::InputOp>(op)) {
      auto arg = cast<BlockArgument>(in.getInput());
      vals_[in.getOutput()].f32 = b_.create<top::InputOp>(in.getLoc(), in.getType(), entry->getArgument(arg.getArgNumber()))
                                      .getOutput();
      continue;
    }
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      std::vector<Value> results;
      // Outputs are fp32 and keep the model's output names.
      for (Value v : ret.getOperands()) {
        Versions &ver = vals_[v];
        if (!ver.f32) {
          ver.i8.getDefiningOp()->setLoc(locFor(names_[v] + "_i8"));
          ver.f32 = make<tpuir::CastOp>(names_[v], f32Type(shapeOf(v)), ver.i8);
        }
        results.push_back(ver.f32);
      }
      b_.create<func::ReturnOp>(ret.getLoc(), results);
      continue;
    }
    TPU_RETURN_IF_ERROR(lower(&op));
  }
  return std::move(out_);
}

} // namespace

Result<LoweredModule> lowerToTpu(ModuleOp topModule, const top::WeightStore &weights, const LoweringOptions &options) {
  topModule.getContext()->getOrLoadDialect<tpuir::TpuDialect>();
  Lowerer lowerer(topModule, weights, options);
  return lowerer.run();
}

} // namespace tpu::lowering
