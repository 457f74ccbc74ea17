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

std::vector<int8_t> Lowerer::nearestInt8(const std::vector<float> &w, const std::vector<double> &unit) {
  const size_t perRow = w.size() / unit.size();
  std::vector<int8_t> wq(w.size());
  for (size_t i = 0; i < wq.size(); ++i)
    wq[i] = int8_t(clampTo(int64_t(std::round(double(w[i]) * unit[i / perRow])), -128, 127));
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

// A weighted window op (conv, conv_transpose): in int8 when `int8` and its
// weights and bias fit int8/int16 with one right shift (scale_in * scale_w
// = scale_out * 2^-rshift), else in fp32 with `int8` cleared (reported as a
// fallback when int8 was asked for).
template <class OpT>
Value Lowerer::lowerWeighted(Value input, const std::string &name, const std::string &outName,
                             ArrayRef<int64_t> outShape, ArrayRef<int64_t> filterShape, const std::vector<float> &w,
                             const std::vector<float> &bias, const Window &window, const char *what, bool &int8) {
  if (int8) {
    if constexpr (std::is_same_v<OpT, tpuir::ConvOp>)
      if (opt_.levers.perChannelWeights)
        if (Value out = lowerConvPerChannel(input, name, outName, outShape, filterShape, w, bias, window)) return out;
    Value x = i8(input);
    const float si = scaleOfValue(x), so = scaleOf(outName);
    const double wk = double(si) / so;
    auto r = weightShift(w, bias, wk, so);
    if (!r) {
      out_.fallbacks.push_back(outName + ": " + what + " weights or bias do not fit int8/int16 with any right shift");
      int8 = false;
    } else {
      std::vector<float> b = bias;
      const std::vector<double> unit{std::ldexp(wk, *r)};
      std::vector<int8_t> wq = std::is_same_v<OpT, tpuir::ConvOp>
                                   ? int8Filter(input, outShape, filterShape, window, w, b, unit)
                                   : nearestInt8(w, unit);
      WeightPair q = addInt8Weights(name, "filter", filterShape, wq, b, so, *r);
      return makeWindowed<OpT>(outName, qType(outShape, outName), x, q.weight, q.bias, window, uint64_t(*r));
    }
  }
  WeightPair f = addF32Weights(name, "filter", filterShape, w, bias);
  Value x = f32(input);
  return makeWindowed<OpT>(outName, f32Type(outShape), x, f.weight, f.bias, window, 0);
}

// Per-channel weights: output channel c's weights get the step ws_c (real
// weight per int8 unit), the conv accumulates exactly, shifts right by r and
// writes int16; one int16 unit of channel c is os_c = ws_c * s_x * 2^r. r is
// the largest shift at which the largest channel's os stays within an
// eighth of the int8 output step (the int16 rounding then adds under 2 % of
// the int8 rounding's variance); ws_c is max|w_c| / 127 (the channel's full
// int8 range) unless the int16 range (what the channel's accumulator can
// reach before the affine adds its bias) needs a larger step. The
// affine multiplies channel c by os_c / s_y (int16 multiplier) and adds
// bias_c / s_y (int32), then shifts: the int8 output.
Value Lowerer::lowerConvPerChannel(Value input, const std::string &name, const std::string &outName,
                                   ArrayRef<int64_t> outShape, ArrayRef<int64_t> filterShape,
                                   const std::vector<float> &w, const std::vector<float> &bias, const Window &window) {
  Value x = i8(input);
  const double si = scaleOfValue(x), so = scaleOf(outName);
  const calib::TensorRange &range = opt_.calibration->tensors.at(outName);
  const double bound = std::max({range.threshold, std::fabs(range.min), std::fabs(range.max)});
  const size_t oc = size_t(filterShape[0]), perOc = w.size() / oc;
  std::vector<double> wmax(oc, 0.0), wsum(oc, 0.0);
  for (size_t i = 0; i < w.size(); ++i)
    wmax[i / perOc] = std::max(wmax[i / perOc], double(std::fabs(w[i]))), wsum[i / perOc] += std::fabs(w[i]);
  const double largest = *std::max_element(wmax.begin(), wmax.end());
  if (!(largest > 0)) return Value();
  int r = 0;
  while (r < 31 && largest / 127 * si * std::ldexp(1.0, r + 1) <= so / 8) ++r;
  // What channel c's accumulator (before the bias) can reach: at most the
  // output's bound plus the bias, and at most sum |w_c| times the largest
  // input code's value (the exact bound for a channel of small weights).
  const double xmax = double(std::max(-lowest(x), highest(x))) * si;
  std::vector<double> unit(oc), step(oc);
  for (size_t c = 0; c < oc; ++c) {
    const double b = bias.empty() ? 0.0 : std::fabs(double(bias[c]));
    const double reach = std::min(bound + b, wsum[c] * xmax);
    const double ws = std::max(wmax[c] / 127, reach / (32767 * si * std::ldexp(1.0, r)));
    unit[c] = 1 / ws, step[c] = ws * si * std::ldexp(1.0, r);
  }
  std::vector<float> b = bias;
  std::vector<int8_t> wq = int8Filter(input, outShape, filterShape, window, w, b, unit);
  b.resize(oc, 0.0f);
  auto a = affineIntegers(1 / so, step, {b.begin(), b.end()}, so);
  if (!a) return Value();
  Window noRelu = window;
  noRelu.doRelu = false;
  Value filter = addWeight(name + "_filter_i8",
                           NpyArray::from(std::vector<int64_t>(filterShape.begin(), filterShape.end()), wq),
                           b_.getIntegerType(8));
  Value acc = makeWindowed<tpuir::ConvOp>(name + "_acc", RankedTensorType::get(outShape, b_.getIntegerType(16)), x,
                                          filter, none(), noRelu, uint64_t(r));
  return int8Affine(outName, acc, *a, true, f64(1.0), f64(0.0), outShape, window.doRelu);
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
  if (llvm::any_of(op.getPads(), [](int64_t p) { return p > backend::kMaxPad; }))
    return noLowering(op, "a pad above " + std::to_string(backend::kMaxPad) + " (the conv command's pad fields)");
  std::vector<float> w, bias;
  TPU_RETURN_IF_ERROR(filterAndBias(*this, op, w, bias));
  auto filterShape = shapeOf(op.getFilter());
  if (filterShape.size() != 4 || filterShape[0] < 1 || int64_t(w.size()) % filterShape[0])
    return noLowering(op, "the filter is not [oc, ic/group, kh, kw]");
  // fp32: per-channel affine ops behind it (batch norm, a learnable scale
  // and shift) fold into the filter and bias (as for conv_transpose). Not
  // in int8: the folded bias often binds the int16 bias limit and forces a
  // smaller shift (PP-OCR INT8 cosine 0.932 folded, 0.936 not).
  const int64_t oc = filterShape[0], perOc = int64_t(w.size()) / oc;
  const bool fold = !op.getDoRelu() && !wantInt8(name);
  AffineChain chain = fold ? affineChain(op.getOutput(), oc) : AffineChain{{}, {}, op.getOutput(), {}};
  foldIntoFilter(chain, w, bias, oc, perOc);
  auto relu = op.getDoRelu() ? nullptr : fusibleRelu(chain.result);
  Value result = relu ? relu.getOutput() : chain.result;
  const std::string &outName = names_[result];
  bool doRelu = op.getDoRelu() || relu;
  auto outShape = shapeOf(result);
  Window window{k, op.getStrides(), op.getPads(), op.getDilations(), int64_t(op.getGroup()), doRelu};
  bool int8 = wantInt8(name) && wantInt8(outName);
  Value out = lowerWeighted<tpuir::ConvOp>(op.getInput(), name, outName, outShape, filterShape, w, bias, window,
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

Status Lowerer::lowerConvTranspose(top::ConvTransposeOp op) {
  std::string name = names_[op.getOutput()];
  auto k = op.getKernelShape();
  if (k.size() != 2) return noLowering(op, "only 2-D transposed convolutions (NCHW) are supported");
  if (op.getGroup() != 1) return noLowering(op, "a grouped transposed convolution (the back end runs group 1)");
  std::vector<float> w, bias;
  TPU_RETURN_IF_ERROR(filterAndBias(*this, op, w, bias));
  // Per-channel affine ops behind it (a bias add, batch norm) fold into the
  // filter and bias: one requantization instead of one per op.
  auto filterShape = shapeOf(op.getFilter());
  if (filterShape.size() != 4 || filterShape[1] < 1 || filterShape[2] * filterShape[3] < 1)
    return noLowering(op, "the filter is not [ic, oc, kh, kw]");
  // Output padding (rows beyond the last full window) must fit in the end
  // pad: the back end computes it as a convolution with end pad k-1-pad.
  auto inShape = shapeOf(op.getInput()), full = shapeOf(op.getOutput());
  auto pads = op.getPads(), strides = op.getStrides(), dil = op.getDilations();
  for (size_t d = 0; d < 2; ++d) {
    const int64_t covered = (inShape[2 + d] - 1) * strides[d] + (k[d] - 1) * dil[d] + 1 - pads[d] - pads[d + 2];
    if (full[2 + d] - covered > pads[d + 2]) return noLowering(op, "output padding larger than the end pad");
  }
  const int64_t oc = filterShape[1], taps = filterShape[2] * filterShape[3];
  AffineChain chain = affineChain(op.getOutput(), oc);
  foldIntoFilter(chain, w, bias, oc, taps);
  auto relu = fusibleRelu(chain.result);
  Value result = relu ? relu.getOutput() : chain.result;
  const std::string &outName = names_[result];
  auto outShape = shapeOf(result);
  Window window{k, op.getStrides(), op.getPads(), op.getDilations(), 1, bool(relu)};
  bool int8 = wantInt8(name) && wantInt8(outName);
  Value out = lowerWeighted<tpuir::ConvTransposeOp>(op.getInput(), name, outName, outShape, filterShape, w, bias,
                                                    window, "transposed conv", int8);
  if (relu) fused_.insert(relu);
  (int8 ? vals_[result].i8 : vals_[result].f32) = out;
  return Status::ok();
}

void addConvLowerings(LoweringTable &t) {
  t.add<top::ConvOp>([](Lowerer &l, top::ConvOp op) { return l.lowerConv(op); });
  t.add<top::ConvTransposeOp>([](Lowerer &l, top::ConvTransposeOp op) { return l.lowerConvTranspose(op); });
}

} // namespace tpu::lowering
