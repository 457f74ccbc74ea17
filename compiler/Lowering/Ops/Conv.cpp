// Conv family: top.conv and top.conv_transpose -> tpu.conv / tpu.conv_transpose,
// with the per-channel affine ops behind them (and a relu) folded in.

#include "compiler/Lowering/Lowerer.h"

#include "compiler/Backend/OpValidation.h"

using namespace mlir;

namespace tpu::lowering {

namespace {
// The filter and (if any) bias values of a conv or conv_transpose.
template <class OpT> Status filterAndBias(Lowerer &l, OpT op, std::vector<float> &w, std::vector<float> &bias) {
  auto wv = l.weightValues(op.getFilter(), "filter", op);
  if (!wv) return l.noLowering(op, wv.message());
  w = std::move(*wv);
  if (!isa<NoneType>(op.getBias().getType())) {
    auto bv = l.weightValues(op.getBias(), "bias", op);
    if (!bv) return l.noLowering(op, bv.message());
    bias = std::move(*bv);
  }
  return Status::ok();
}
} // namespace

std::optional<int> Lowerer::weightShift(const std::vector<float> &w, const std::vector<float> &bias, double wk,
                                        float so) {
  return chooseShift({{maxAbs(w) * wk, 127}, {maxAbs(bias) / so, 32767}});
}

std::vector<int8_t> Lowerer::nearestInt8(const std::vector<float> &w, double wk, int r) {
  std::vector<int8_t> wq(w.size());
  for (size_t i = 0; i < wq.size(); ++i) wq[i] = int8_t(clampTo(fixedPoint(w[i] * wk, r), -128, 127));
  return wq;
}

WeightPair Lowerer::addInt8Weights(const std::string &name, const char *role, ArrayRef<int64_t> shape,
                                   const std::vector<int8_t> &wq, const std::vector<float> &bias, float so, int r) {
  WeightPair p;
  p.weight = addWeight(name + "_" + role + "_i8", NpyArray::from(std::vector<int64_t>(shape.begin(), shape.end()), wq),
                       b_.getIntegerType(8));
  p.bias = none();
  if (!bias.empty()) {
    std::vector<int16_t> bq(bias.size());
    for (size_t i = 0; i < bq.size(); ++i) bq[i] = int16_t(clampTo(fixedPoint(bias[i] / so, r), -32768, 32767));
    p.bias = addWeight(name + "_bias_i16", NpyArray::from({int64_t(bq.size())}, bq), b_.getIntegerType(16));
  }
  return p;
}

WeightPair Lowerer::addF32Weights(const std::string &name, const char *role, ArrayRef<int64_t> shape,
                                  const std::vector<float> &w, const std::vector<float> &bias) {
  WeightPair p;
  p.weight = addWeight(name + "_" + role,
                       NpyArray::from(std::vector<int64_t>(shape.begin(), shape.end()), w.data(), w.size()),
                       b_.getF32Type());
  p.bias = bias.empty() ? none()
                        : addWeight(name + "_bias", NpyArray::from({int64_t(bias.size())}, bias.data(), bias.size()),
                                    b_.getF32Type());
  return p;
}

std::optional<int> Lowerer::int8Shift(Value input, const std::string &outName, const char *what,
                                      const std::vector<float> &w, const std::vector<float> &bias) {
  const float so = scaleOf(outName);
  auto r = weightShift(w, bias, double(scaleOfValue(i8(input))) / so, so);
  if (!r) out_.fallbacks.push_back(outName + ": " + what + " weights or bias do not fit int8/int16 with any right shift");
  return r;
}

// A weighted op (conv, conv_transpose, fc): in int8 when `int8` and its
// weights and bias fit int8/int16 with one right shift (scale_in * scale_w
// = scale_out * 2^-rshift), else in fp32 with `int8` cleared (reported as a
// fallback when int8 was asked for).
Value Lowerer::lowerWeighted(Value input, const std::string &name, const std::string &outName,
                             ArrayRef<int64_t> outShape, const char *role, ArrayRef<int64_t> weightShape,
                             const std::vector<float> &w, const std::vector<float> &bias, const char *what, bool &int8,
                             WeightedBuild build, RoundWeights round) {
  if (int8) {
    if (auto r = int8Shift(input, outName, what, w, bias)) {
      Value x = i8(input);
      const float so = scaleOf(outName);
      const double wk = double(scaleOfValue(x)) / so;
      std::vector<float> b = bias;
      std::vector<int8_t> wq = round ? round(b, wk, *r) : nearestInt8(w, wk, *r);
      WeightPair q = addInt8Weights(name, role, weightShape, wq, b, so, *r);
      return build(qType(outShape, outName), x, q, uint64_t(*r));
    }
    int8 = false;
  }
  WeightPair f = addF32Weights(name, role, weightShape, w, bias);
  Value x = f32(input);
  return build(f32Type(outShape), x, f, 0);
}

void Lowerer::foldIntoFilter(const AffineChain &chain, std::vector<float> &w, std::vector<float> &bias, int64_t oc,
                             llvm::function_ref<int64_t(size_t)> channelOf) {
  if (chain.ops.empty()) return;
  for (size_t i = 0; i < w.size(); ++i) w[i] = float(w[i] * chain.scale[size_t(channelOf(i))]);
  bias.resize(size_t(oc), 0.0f);
  for (size_t c = 0; c < size_t(oc); ++c) bias[c] = float(bias[c] * chain.scale[c] + chain.bias[c]);
  fused_.insert(chain.ops.begin(), chain.ops.end());
}

namespace {
// A filter of a 1-D window op as the 2-D one ([.., .., k] -> [.., .., k, 1]).
std::vector<int64_t> filter2d(std::vector<int64_t> shape) {
  if (shape.size() == 3) shape.push_back(1);
  return shape;
}

// The window and a tensor shape as the back end reads them.
backend::WindowParams backendWindow(const Window &w) {
  backend::WindowParams p;
  p.kh = w.kernel[0], p.kw = w.kernel[1], p.strideH = w.strides[0], p.strideW = w.strides[1];
  p.dilationH = w.dilations[0], p.dilationW = w.dilations[1];
  p.padTop = w.pads[0], p.padLeft = w.pads[1], p.padBottom = w.pads[2], p.padRight = w.pads[3];
  p.groups = w.group;
  return p;
}
std::array<int64_t, 4> nchw(std::vector<int64_t> shape) {
  backend::Tensor t;
  t.shape = std::move(shape);
  return t.nchw();
}
} // namespace

Status Lowerer::lowerConv(top::ConvOp op) {
  std::string name = names_[op.getOutput()];
  SpatialWindow sw(op.getKernelShape(), op.getStrides(), op.getPads(), op.getDilations());
  if (!sw.is2d()) return noLowering(op, "only 1-D and 2-D convolutions (NCL, NCHW) are supported");
  std::vector<float> w, bias;
  TPU_RETURN_IF_ERROR(filterAndBias(*this, op, w, bias));
  auto filterShape = filter2d(shapeOf(op.getFilter()));
  if (filterShape.size() != 4 || filterShape[0] < 1 || int64_t(w.size()) % filterShape[0])
    return noLowering(op, "the filter is not [oc, ic/group, kh, kw]");
  // fp32: per-channel affine ops behind it (batch norm, a learnable scale
  // and shift) fold into the filter and bias (as for conv_transpose). Not
  // in int8: the folded bias often binds the int16 bias limit and forces a
  // smaller shift (PP-OCR INT8 cosine 0.932 folded, 0.936 not).
  const int64_t oc = filterShape[0], perOc = int64_t(w.size()) / oc;
  const bool fold = !op.getDoRelu() && !wantInt8(name);
  AffineChain chain = fold ? affineChain(op.getOutput(), oc) : AffineChain{{}, {}, op.getOutput(), {}};
  foldIntoFilter(chain, w, bias, oc, [&](size_t i) { return int64_t(i) / perOc; });
  auto relu = op.getDoRelu() ? nullptr : fusibleRelu(chain.result);
  Value result = relu ? relu.getOutput() : chain.result;
  const std::string &outName = names_[result];
  bool doRelu = op.getDoRelu() || relu;
  auto outShape = shapeOf(result);
  Window window{sw.kernel, sw.strides, sw.pads, sw.dilations, int64_t(op.getGroup()), doRelu};
  bool int8 = wantInt8(name) && wantInt8(outName);
  Value out = lowerWeighted(
      op.getInput(), name, outName, outShape, "filter", filterShape, w, bias, "conv", int8,
      [&](Type t, Value x, const WeightPair &p, uint64_t r) {
        return makeWindowed<tpuir::ConvOp>(outName, t, x, p.weight, p.bias, window, r);
      },
      [&](std::vector<float> &b, double wk, int r) {
        return int8Filter(op.getInput(), outShape, filterShape, window, w, b, wk, r);
      });
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

Status Lowerer::lowerConvTranspose(top::ConvTransposeOp op) {
  std::string name = names_[op.getOutput()];
  SpatialWindow sw(op.getKernelShape(), op.getStrides(), op.getPads(), op.getDilations());
  if (!sw.is2d()) return noLowering(op, "only 1-D and 2-D transposed convolutions (NCL, NCHW) are supported");
  std::vector<float> w, bias;
  TPU_RETURN_IF_ERROR(filterAndBias(*this, op, w, bias));
  // Per-channel affine ops behind it (a bias add, batch norm) fold into the
  // filter and bias: one requantization instead of one per op.
  auto filterShape = filter2d(shapeOf(op.getFilter()));
  const int64_t groups = int64_t(op.getGroup());
  if (filterShape.size() != 4 || filterShape[1] < 1 || filterShape[2] * filterShape[3] < 1 || groups < 1 ||
      filterShape[0] % groups)
    return noLowering(op, "the filter is not [ic, oc/group, kh, kw]");
  // Filter [ic, oc/group, kh, kw]: input channel i feeds the output
  // channels of its group, (i / icg) * ocg + j.
  const int64_t ocg = filterShape[1], icg = filterShape[0] / groups, oc = ocg * groups;
  const int64_t taps = filterShape[2] * filterShape[3];
  AffineChain chain = affineChain(op.getOutput(), oc);
  foldIntoFilter(chain, w, bias, oc, [&](size_t i) {
    return int64_t(i) / (ocg * taps) / icg * ocg + int64_t(i) / taps % ocg;
  });
  auto relu = fusibleRelu(chain.result);
  Value result = relu ? relu.getOutput() : chain.result;
  const std::string &outName = names_[result];
  auto outShape = shapeOf(result);
  Window window{sw.kernel, sw.strides, sw.pads, sw.dilations, groups, bool(relu)};
  if (Status fits = backend::checkTransposedWindow(backendWindow(window), nchw(shapeOf(op.getInput())), nchw(outShape));
      !fits)
    return noLowering(op, fits.message());
  bool int8 = wantInt8(name) && wantInt8(outName);
  Value out = lowerWeighted(op.getInput(), name, outName, outShape, "filter", filterShape, w, bias, "transposed conv",
                            int8, [&](Type t, Value x, const WeightPair &p, uint64_t r) {
                              return makeWindowed<tpuir::ConvTransposeOp>(outName, t, x, p.weight, p.bias, window, r);
                            });
  if (relu) fused_.insert(relu);
  (int8 ? vals_[result].i8 : vals_[result].f32) = out;
  return Status::ok();
}

void addConvLowerings(LoweringTable &t) {
  t.add<top::ConvOp>([](Lowerer &l, top::ConvOp op) { return l.lowerConv(op); });
  t.add<top::ConvTransposeOp>([](Lowerer &l, top::ConvTransposeOp op) { return l.lowerConvTranspose(op); });
}

} // namespace tpu::lowering
