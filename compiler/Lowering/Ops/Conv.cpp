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

std::optional<Lowerer::Int8Weighting> Lowerer::int8Weighting(Value input, const std::string &outName, const char *what,
                                                              const std::vector<float> &w, const std::vector<float> &bias) {
  Value x = i8(input);
  const float so = scaleOf(outName);
  const double wk = double(scaleOfValue(x)) / so;
  auto r = weightShift(w, bias, wk, so);
  if (!r) {
    out_.fallbacks.push_back(outName + ": " + what + " weights or bias do not fit int8/int16 with any right shift");
    return std::nullopt;
  }
  return Int8Weighting{x, so, wk, *r};
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
    if (auto q8 = int8Weighting(input, outName, what, w, bias)) {
      std::vector<float> b = bias;
      std::vector<int8_t> wq = round ? round(b, q8->wk, q8->rshift) : nearestInt8(w, {std::ldexp(q8->wk, q8->rshift)});
      WeightPair q = addInt8Weights(name, role, weightShape, wq, b, q8->outScale, q8->rshift);
      return build(qType(outShape, outName), q8->x, q, uint64_t(q8->rshift));
    }
    int8 = false;
  }
  WeightPair f = addF32Weights(name, role, weightShape, w, bias);
  Value x = f32(input);
  return build(f32Type(outShape), x, f, 0);
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
                                   ArrayRef<int64_t> outShape, ArrayRef<int64_t> filterShape, std::vector<float> w,
                                   std::vector<float> bias, const Window &window, Int16Handoff *handoff,
                                   const std::vector<double> *consumerColumns) {
  const size_t oc = size_t(filterShape[0]), perOc = w.size() / oc;
  // The input: int8 at its scale, or a producer's int16 accumulator (1x1
  // filters: input channel c is weight c of each row), its channels' steps
  // folded into the weights and their biases into the bias.
  Value x;
  double si = 0, xmax = 0;
  auto in = handoffs_.find(input);
  if (in != handoffs_.end()) {
    const Int16Handoff &h = in->second;
    bias.resize(oc, 0.0f);
    for (size_t o = 0; o < oc; ++o) {
      double b = bias[o];
      for (size_t c = 0; c < perOc; ++c) b += double(w[o * perOc + c]) * h.bias[c];
      bias[o] = float(b);
      for (size_t c = 0; c < perOc; ++c) w[o * perOc + c] = float(double(w[o * perOc + c]) * h.step[c]);
    }
    x = h.acc, si = 1, xmax = 32767;
  } else {
    x = i8(input);
    si = scaleOfValue(x), xmax = double(std::max(-lowest(x), highest(x))) * si;
  }
  const double so = scaleOf(outName);
  const calib::TensorRange &range = opt_.calibration->tensors.at(outName);
  const double bound = std::max({range.threshold, std::fabs(range.min), std::fabs(range.max)});
  std::vector<double> wmax(oc, 0.0), wsum(oc, 0.0);
  for (size_t i = 0; i < w.size(); ++i)
    wmax[i / perOc] = std::max(wmax[i / perOc], double(std::fabs(w[i]))), wsum[i / perOc] += std::fabs(w[i]);
  const double largest = *std::max_element(wmax.begin(), wmax.end());
  if (!(largest > 0)) return Value();
  int r = 0;
  while (r < 31 && largest / 127 * si * std::ldexp(1.0, r + 1) <= so / 8) ++r;
  // What channel c's accumulator (before the bias) can reach: at most the
  // output's bound plus the bias, and at most sum |w_c| times the largest
  // input value (the exact bound for a channel of small weights).
  // Handed to a consumer, channel c's step also scales the consumer's
  // weight column c: the steps go as sqrt(max|w_c| / column_c) (as
  // cross-layer equalization balances two filters), so that this channel's
  // weights and the consumer's column use the int8 range alike; the
  // channel whose product max|w_c| column_c is the largest gets its full
  // int8 range.
  std::vector<double> balanced(oc, 0.0);
  if (consumerColumns) {
    double a = 0;
    for (size_t c = 0; c < oc; ++c)
      if (wmax[c] > 0 && (*consumerColumns)[c] > 0) a = std::max(a, std::sqrt(wmax[c] * (*consumerColumns)[c]) / 127);
    for (size_t c = 0; c < oc; ++c)
      if (wmax[c] > 0 && (*consumerColumns)[c] > 0) balanced[c] = a * std::sqrt(wmax[c] / (*consumerColumns)[c]);
  }
  std::vector<double> unit(oc), step(oc);
  for (size_t c = 0; c < oc; ++c) {
    const double b = bias.empty() ? 0.0 : std::fabs(double(bias[c]));
    const double reach = std::min(bound + b, wsum[c] * xmax);
    const double ws = std::max({wmax[c] / 127, balanced[c], reach / (32767 * si * std::ldexp(1.0, r))});
    unit[c] = 1 / ws, step[c] = ws * si * std::ldexp(1.0, r);
  }
  // Rounding from samples reads the input's real values: not for an accumulator.
  std::vector<int8_t> wq = in != handoffs_.end() ? nearestInt8(w, unit)
                                                 : int8Filter(input, outShape, filterShape, window, w, bias, unit);
  bias.resize(oc, 0.0f);
  const std::vector<double> offset(bias.begin(), bias.end());
  auto a = affineIntegers(1 / so, step, offset, so);
  if (!a) return Value();
  Window noRelu = window;
  noRelu.doRelu = false;
  Value filter = addWeight(name + "_filter_i8",
                           NpyArray::from(std::vector<int64_t>(filterShape.begin(), filterShape.end()), wq),
                           b_.getIntegerType(8));
  Value acc = makeWindowed<tpuir::ConvOp>(name + "_acc", RankedTensorType::get(outShape, b_.getIntegerType(16)), x,
                                          filter, none(), noRelu, uint64_t(r));
  if (handoff) {
    *handoff = {acc, step, offset, {}};
    return acc;
  }
  return int8Affine(outName, qType(outShape, outName), acc, *a, true, f64(1.0), f64(0.0), window.doRelu);
}

bool Lowerer::hardSwishConsumer(Value v) {
  if (!v.hasOneUse()) return false;
  auto hs = dyn_cast<top::HardSwishOp>(*v.getUsers().begin());
  return hs && wantInt8(names_[hs.getOutput()]);
}

top::ConvOp Lowerer::pointwiseConsumer(Value v) {
  if (!v.hasOneUse()) return nullptr;
  auto pw = dyn_cast<top::ConvOp>(*v.getUsers().begin());
  if (!pw || pw.getInput() != v || pw.getGroup() != 1 || pw.getKernelShape() != ArrayRef<int64_t>{1, 1} ||
      llvm::any_of(pw.getPads(), [](int64_t p) { return p != 0; }))
    return nullptr;
  return wantInt8(names_[pw.getOutput()]) ? pw : nullptr;
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
bool computedAtRunTime(Value v) { return !isa<NoneType>(v.getType()) && !v.getDefiningOp<top::WeightOp>(); }
} // namespace

// A conv or transposed conv whose filter or bias is computed at run time:
// the conv command reads its filter from DDR whatever wrote it, so it is an
// fp32 tpu op on fp32 operands (an island in INT8), a 1-D filter reshaped to
// 2-D; it joins no layer group (ConvOp::local).
template <class TpuOpT, class TopOpT>
static Status lowerWindowOfActivations(Lowerer &l, TopOpT op, const SpatialWindow &sw, bool doRelu) {
  const std::string name = l.names_[op.getOutput()];
  auto filterShape = filter2d(shapeOf(op.getFilter()));
  Value filter = l.f32(op.getFilter());
  if (filterShape != shapeOf(op.getFilter()))
    filter = l.make<tpuir::ReshapeOp>(name + "_filter2d", l.f32Type(filterShape), filter);
  Value bias = isa<NoneType>(op.getBias().getType()) ? l.none() : l.f32(op.getBias());
  Window window{sw.kernel, sw.strides, sw.pads, sw.dilations, int64_t(op.getGroup()), doRelu};
  if (l.wantInt8(name))
    l.out_.fallbacks.push_back(name +
                               ": a convolution whose filter is computed at run time runs in fp32 on the BM1684");
  l.vals_[op.getOutput()].f32 = l.template makeWindowed<TpuOpT>(name, l.f32Type(shapeOf(op.getOutput())),
                                                                l.f32(op.getInput()), filter, bias, window, 0);
  return Status::ok();
}

Status Lowerer::lowerConv(top::ConvOp op) {
  std::string name = names_[op.getOutput()];
  SpatialWindow sw(op.getKernelShape(), op.getStrides(), op.getPads(), op.getDilations());
  if (!sw.is2d()) return noLowering(op, "only 1-D and 2-D convolutions (NCL, NCHW) are supported");
  if (computedAtRunTime(op.getFilter()) || computedAtRunTime(op.getBias())) {
    if (op.getDoRelu() && op.getReluLimit().convertToDouble() >= 0)
      return noLowering(op, "a relu limit on a convolution whose filter is computed at run time");
    return lowerWindowOfActivations<tpuir::ConvOp>(*this, op, sw, op.getDoRelu());
  }
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
  // int8 hand-off: the conv and the per-channel affine ops behind it, read
  // only by a 1x1 conv or a hard_swish, give it their int16 accumulator (no
  // relu between).
  if ((opt_.levers.int16Pointwise || opt_.levers.int16Hardswish) && wantInt8(name) && !op.getDoRelu()) {
    AffineChain chain = affineChain(op.getOutput(), oc);
    top::ConvOp pw = opt_.levers.int16Pointwise ? pointwiseConsumer(chain.result) : nullptr;
    const bool hardSwish = opt_.levers.int16Hardswish && hardSwishConsumer(chain.result);
    bool int8Chain = llvm::all_of(chain.ops, [&](Operation *o) { return wantInt8(names_[o->getResult(0)]); });
    Int16Handoff h;
    Window window{sw.kernel, sw.strides, sw.pads, sw.dilations, int64_t(op.getGroup()), false};
    // The consumer's weight columns as they read this conv's channels (the
    // chain's factors included).
    std::vector<double> columns(size_t(oc), 0.0);
    if (pw)
      if (auto pwW = weightValues(pw.getFilter(), "filter", pw); pwW && int64_t(pwW->size()) % oc == 0)
        for (size_t i = 0; i < pwW->size(); ++i)
          columns[i % size_t(oc)] = std::max(columns[i % size_t(oc)], std::fabs((*pwW)[i] * chain.scale[i % size_t(oc)]));
    if ((pw || hardSwish) && int8Chain &&
        lowerConvPerChannel(op.getInput(), name, name, shapeOf(op.getOutput()), filterShape, w, bias, window, &h,
                            pw ? &columns : nullptr)) {
      for (size_t c = 0; c < size_t(oc); ++c)
        h.step[c] *= chain.scale[c], h.bias[c] = h.bias[c] * chain.scale[c] + chain.bias[c];
      const double so = scaleOf(names_[chain.result]);
      if (auto a = affineIntegers(1 / so, h.step, h.bias, so)) {
        h.toInt8 = *a;
        fused_.insert(chain.ops.begin(), chain.ops.end());
        handoffs_[chain.result] = std::move(h);
        return Status::ok();
      }
      // The value keeps its int8 lowering below: the int16 conv and its
      // filter go (op and array), so the filter's name stays free.
      Operation *acc = h.acc.getDefiningOp();
      auto filter = acc->getOperand(1).getDefiningOp<top::WeightOp>();
      acc->erase();
      out_.weights.arrays().erase(filter.getName().str());
      filter->erase();
    }
  }
  const bool fold = !op.getDoRelu() && !wantInt8(name);
  AffineChain chain = fold ? affineChain(op.getOutput(), oc) : AffineChain{{}, {}, op.getOutput(), {}};
  foldIntoFilter(chain, w, bias, oc, [&](size_t i) { return int64_t(i) / perOc; });
  auto relu = op.getDoRelu() ? nullptr : fusibleRelu(chain.result);
  Value result = relu ? relu->getResult(0) : chain.result;
  const std::string &outName = names_[result];
  bool doRelu = op.getDoRelu() || relu;
  auto outShape = shapeOf(result);
  Window window{sw.kernel, sw.strides, sw.pads, sw.dilations, int64_t(op.getGroup()), doRelu};
  bool int8 = wantInt8(name) && wantInt8(outName);
  Value out;
  if (int8 && (opt_.levers.perChannelWeights || handoffs_.count(op.getInput())))
    out = lowerConvPerChannel(op.getInput(), name, outName, outShape, filterShape, w, bias, window);
  if (!out)
    out = lowerWeighted(
        op.getInput(), name, outName, outShape, "filter", filterShape, w, bias, "conv", int8,
        [&](Type t, Value x, const WeightPair &p, uint64_t r) {
          return makeWindowed<tpuir::ConvOp>(outName, t, x, p.weight, p.bias, window, r);
        },
        [&](std::vector<float> &b, double wk, int r) {
          return int8Filter(op.getInput(), outShape, filterShape, window, w, b, {std::ldexp(wk, r)});
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
  if (computedAtRunTime(op.getFilter()) || computedAtRunTime(op.getBias())) {
    Window window{sw.kernel, sw.strides, sw.pads, sw.dilations, int64_t(op.getGroup()), false};
    if (Status fits = backend::checkTransposedWindow(backendWindow(window), nchw(shapeOf(op.getInput())),
                                                     nchw(shapeOf(op.getOutput())));
        !fits)
      return noLowering(op, fits.message());
    return lowerWindowOfActivations<tpuir::ConvTransposeOp>(*this, op, sw, false);
  }
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
  Window window{sw.kernel, sw.strides, sw.pads, sw.dilations, groups, false};
  if (Status fits = backend::checkTransposedWindow(backendWindow(window), nchw(shapeOf(op.getInput())),
                                                   nchw(shapeOf(op.getOutput())));
      !fits)
    return noLowering(op, fits.message());
  AffineChain chain = affineChain(op.getOutput(), oc);
  foldIntoFilter(chain, w, bias, oc, [&](size_t i) {
    return int64_t(i) / (ocg * taps) / icg * ocg + int64_t(i) / taps % ocg;
  });
  auto relu = fusibleRelu(chain.result);
  Value result = relu ? relu->getResult(0) : chain.result;
  const std::string &outName = names_[result];
  auto outShape = shapeOf(result);
  window.doRelu = bool(relu);
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
