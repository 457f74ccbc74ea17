// Conv and ConvTranspose: checks, reference and emitter. One emitter runs
// both: a transposed conv is the chip's stride-1 conv over the input with
// zeros inserted, the kernel rotated (docs/codegen.md).
#include "compiler/Backend/Emit.h"
#include "compiler/Backend/OpRegistry.h"
#include "compiler/Backend/OpValidation.h"
#include "compiler/Backend/ReferenceEval.h"
#include "compiler/Kernels/Kernels.h"

#include <algorithm>

namespace tpu::backend {

namespace {

using namespace emit;

Status validateConv(const OpCheck &c) {
  const Tensor &x = c.in(0), &w = c.in(1);
  TPU_RETURN_IF_ERROR(c.sameType(x));
  // An int8 conv may write its int16 accumulator (per-channel weights,
  // requantized by an Affine) and read another conv's (the conv command
  // multiplies int8 or int16 inputs; sums are exact).
  TPU_RETURN_IF_ERROR(checkWindow(c, x));
  auto xs = x.nchw();
  int64_t groups = c.op.window.groups;
  if (groups < 1 || xs[1] % groups || c.ys[1] % groups)
    return makeError("groups ", groups, " must divide input channels ", xs[1], " and output channels ", c.ys[1]);
  if (!w.isWeight()) return makeError("weight '", w.name, "' has no data");
  std::vector<int64_t> want{c.ys[1], xs[1] / groups, c.op.window.kh, c.op.window.kw};
  if (w.shape != want) return makeError("weight '", w.name, "' shape does not match [oc, ic/groups, kh, kw]");
  TPU_RETURN_IF_ERROR(c.weightType(w, "conv"));
  return c.optionalBias(2);
}

Status validateConvTranspose(const OpCheck &c) {
  const Tensor &x = c.in(0), &w = c.in(1);
  TPU_RETURN_IF_ERROR(c.sameType(x));
  const WindowParams &p = c.op.window;
  auto xs = x.nchw();
  if (p.groups != 1) return makeError("only groups = 1 is supported");
  if (p.kh < 1 || p.kw < 1 || p.strideH < 1 || p.strideW < 1 || p.dilationH < 1 || p.dilationW < 1)
    return makeError("kernel, stride and dilation must be >= 1");
  if (p.strideH > 16 || p.strideW > 16) return makeError("stride exceeds 16");
  TransposedPads tp = transposedPads(c.op, x, c.y);
  if (std::min({tp.top, tp.bottom, tp.left, tp.right}) < 0 || std::max({tp.top, tp.bottom, tp.left, tp.right}) > kMaxPad)
    return makeError("pads and output size give equivalent conv pads ", tp.top, "/", tp.bottom, "/", tp.left, "/",
                     tp.right, " outside [0, ", kMaxPad, "]");
  if (c.ys[0] != xs[0]) return makeError("output batch differs from input batch");
  // Every output row's window then holds at least one input row (slicing needs it).
  const int64_t keH = (p.kh - 1) * p.dilationH, keW = (p.kw - 1) * p.dilationW;
  if (keH + 1 < p.strideH || keW + 1 < p.strideW) return makeError("kernel extent smaller than the stride");
  if (tp.bottom > keH || tp.right > keW) return makeError("output padding larger than the end pad");
  if (!w.isWeight() || w.shape != std::vector<int64_t>{xs[1], c.ys[1], p.kh, p.kw})
    return makeError("weight '", w.name, "' shape does not match [ic, oc, kh, kw]");
  TPU_RETURN_IF_ERROR(c.weightType(w, "transposed conv"));
  return c.optionalBias(2);
}

// The input's channels are a command field.
Status inputChannelsEncodable(const Graph &g, const Op &op) {
  if (g.tensors[size_t(op.inputs[0])].nchw()[1] > maxChannels())
    return makeError("input channels exceed ", maxChannels());
  return Status::ok();
}

Status encodableConv(const Graph &g, const Op &op) {
  TPU_RETURN_IF_ERROR(checkEndPadding(g, op));
  return inputChannelsEncodable(g, op);
}

// The fp32 kernels' parameters for window p (pads as given).
kernels::ConvParams convParams(const RefArgs &r, const WindowParams &p) {
  kernels::ConvParams c;
  c.n = r.xs[0], c.ic = r.xs[1], c.ih = r.xs[2], c.iw = r.xs[3];
  c.oc = r.ys[1], c.oh = r.ys[2], c.ow = r.ys[3], c.kh = p.kh, c.kw = p.kw;
  c.strideH = p.strideH, c.strideW = p.strideW, c.dilationH = p.dilationH, c.dilationW = p.dilationW;
  c.padTop = p.padTop, c.padBottom = p.padBottom, c.padLeft = p.padLeft, c.padRight = p.padRight;
  c.groups = p.groups;
  return c;
}

const float *optionalBias(const RefArgs &r) { return r.in.size() == 3 ? floats(*r.in[2]) : nullptr; }
std::vector<int32_t> intBias(const RefArgs &r) { return r.in.size() == 3 ? toInts(*r.in[2], DType::I16) : std::vector<int32_t>{}; }

void reluFloats(const Op &op, std::vector<float> &v) {
  if (op.relu)
    for (auto &x : v) x = sim::relu(x);
}

// A conv over (N, C, H, W) int inputs (groups, dilation), exact int64 sums (+ bias).
void intConv(const std::vector<int32_t> &x, const std::array<int64_t, 4> &xs, const std::vector<int32_t> &w,
             const std::vector<int32_t> &bias, const WindowParams &p, const std::array<int64_t, 4> &ys,
             std::vector<int64_t> &acc) {
  const int64_t icg = xs[1] / p.groups, ocg = ys[1] / p.groups;
  acc.assign(size_t(ys[0] * ys[1] * ys[2] * ys[3]), 0);
  for (int64_t n = 0; n < ys[0]; ++n)
    for (int64_t oc = 0; oc < ys[1]; ++oc) {
      const int64_t g = oc / ocg;
      int64_t *out = &acc[size_t(((n * ys[1] + oc) * ys[2]) * ys[3])];
      for (int64_t i = 0; i < icg; ++i) {
        const int32_t *plane = &x[size_t(((n * xs[1] + g * icg + i) * xs[2]) * xs[3])];
        for (int64_t ky = 0; ky < p.kh; ++ky)
          for (int64_t kx = 0; kx < p.kw; ++kx) {
            const int32_t k = w[size_t(((oc * icg + i) * p.kh + ky) * p.kw + kx)];
            if (k == 0) continue;
            for (int64_t oy = 0; oy < ys[2]; ++oy) {
              int64_t iy = oy * p.strideH - p.padTop + ky * p.dilationH;
              if (iy < 0 || iy >= xs[2]) continue;
              const int32_t *row = plane + iy * xs[3];
              int64_t *orow = out + oy * ys[3];
              for (int64_t ox = 0; ox < ys[3]; ++ox) {
                int64_t ix = ox * p.strideW - p.padLeft + kx * p.dilationW;
                if (ix >= 0 && ix < xs[3]) orow[ox] += int64_t(k) * row[ix];
              }
            }
          }
      }
      if (!bias.empty())
        for (int64_t j = 0; j < ys[2] * ys[3]; ++j) out[j] += bias[size_t(oc)];
    }
}

void evaluateConv(const RefArgs &r, Bytes &out) {
  WindowParams p = effectiveWindow(r.op, r.x, r.y);
  if (r.isInt) {
    std::vector<int64_t> ri;
    intConv(r.ints(0), r.xs, r.ints(1), intBias(r), p, r.ys, ri);
    for (auto &v : ri) v = requantizeOp(v, r.op, r.op.relu, r.y.dtype);
    out = fromInts(ri, r.y.dtype);
    return;
  }
  std::vector<float> rf(r.count);
  kernels::conv2d(floats(*r.in[0]), floats(*r.in[1]), optionalBias(r), rf.data(), convParams(r, p));
  reluFloats(r.op, rf);
  out = fromFloats(rf);
}

void evaluateConvTranspose(const RefArgs &r, Bytes &out) {
  const WindowParams &p = r.op.window;
  const TransposedPads tp = transposedPads(r.op, r.x, r.y);
  const auto &xs = r.xs, &ys = r.ys;
  if (r.isInt) {
    auto xi = r.ints(0), wi = r.ints(1), bi = intBias(r);
    std::vector<int64_t> ri(r.count, 0);
    // out[y] += in[i] * w[k] for y = i*s - (keH - top) + k*d.
    const int64_t offH = (p.kh - 1) * p.dilationH - tp.top, offW = (p.kw - 1) * p.dilationW - tp.left;
    for (int64_t n = 0; n < ys[0]; ++n)
      for (int64_t o = 0; o < ys[1]; ++o) {
        int64_t *plane = &ri[size_t((n * ys[1] + o) * ys[2] * ys[3])];
        for (int64_t i = 0; i < xs[1]; ++i)
          for (int64_t ky = 0; ky < p.kh; ++ky)
            for (int64_t kx = 0; kx < p.kw; ++kx) {
              const int64_t k = wi[size_t(((i * ys[1] + o) * p.kh + ky) * p.kw + kx)];
              for (int64_t iy = 0; iy < xs[2]; ++iy) {
                int64_t oy = iy * p.strideH - offH + ky * p.dilationH;
                if (oy < 0 || oy >= ys[2]) continue;
                for (int64_t ix = 0; ix < xs[3]; ++ix) {
                  int64_t ox = ix * p.strideW - offW + kx * p.dilationW;
                  if (ox >= 0 && ox < ys[3])
                    plane[oy * ys[3] + ox] += k * xi[size_t(((n * xs[1] + i) * xs[2] + iy) * xs[3] + ix)];
                }
              }
            }
        for (int64_t j = 0; j < ys[2] * ys[3]; ++j)
          plane[j] = requantizeOp(plane[j] + (bi.empty() ? 0 : bi[size_t(o)]), r.op, r.op.relu, r.y.dtype);
      }
    out = fromInts(ri, r.y.dtype);
    return;
  }
  kernels::ConvParams c = convParams(r, p);
  c.padBottom = (p.kh - 1) * p.dilationH - tp.bottom, c.padRight = (p.kw - 1) * p.dilationW - tp.right;
  std::vector<float> rf(r.count);
  kernels::convTranspose2d(floats(*r.in[0]), floats(*r.in[1]), optionalBias(r), rf.data(), c);
  reluFloats(r.op, rf);
  out = fromFloats(rf);
}

// ---- The emitter (groups, depthwise, dilation; transposed) ------------------
class ConvOp : public SlicedOp, public LocalOp {
public:
  ConvOp(Emitter &e, const Op &op) : SlicedOp(e, op) {
    x_ = e.ddr(op.inputs[0]), y_ = e.ddr(op.output);
    const Tensor &xt = e.g.tensors[op.inputs[0]], &yt = e.g.tensors[op.output];
    transposed_ = op.kind == OpKind::ConvTranspose;
    if (transposed_) {
      // A stride-1 conv over the zero-inserted input with the kernel rotated.
      p_ = op.window;
      TransposedPads tp = transposedPads(op, xt, yt);
      insH_ = p_.strideH, insW_ = p_.strideW;
      p_.strideH = p_.strideW = 1;
      p_.padTop = tp.top, p_.padBottom = tp.bottom, p_.padLeft = tp.left, p_.padRight = tp.right;
    } else {
      p_ = effectiveWindow(op, xt, yt);
    }
    wt_ = e.g.tensors[op.inputs[1]].dtype;
    waddr_ = e.am.addr[op.inputs[1]];
    if (op.inputs.size() == 3) baddr_ = e.am.addr[op.inputs[2]], bt_ = e.g.tensors[op.inputs[2]].dtype;
    icg_ = x_.s[1] / p_.groups, ocg_ = y_.s[1] / p_.groups;
    depthwise_ = icg_ == 1 && ocg_ == 1 && p_.groups > 1;
  }
  std::array<int64_t, 3> extents() const override { return {y_.s[0], y_.s[1], y_.s[2]}; }
  // Grouped (not depthwise) convs keep all channels: a group must not straddle slices.
  bool cutsC() const override { return p_.groups == 1 || depthwise_; }
  // Rows of the (zero-inserted when transposed) input window of hs output rows.
  int64_t windowRows(int64_t hs) const { return (hs - 1) * p_.strideH + (p_.kh - 1) * p_.dilationH + 1; }
  // Input rows a slice of hs output rows loads (at most).
  int64_t inRows(int64_t hs) const { return transposed_ ? ceilDiv(windowRows(hs), insH_) + 1 : windowRows(hs); }
  int64_t inChannels(int64_t cs) const { return depthwise_ ? cs : x_.s[1]; }
  std::vector<uint64_t> setBytes(int64_t ns, int64_t cs, int64_t hs) const override {
    int64_t rows = std::min(inRows(hs), x_.s[2]);
    return {LocalTensor::activationBytes(x_.dtype, {u32(ns), u32(inChannels(cs)), u32(rows), u32(x_.s[3])}, lanes()),
            LocalTensor::activationBytes(y_.dtype, {u32(ns), u32(cs), u32(hs), u32(y_.s[3])}, lanes())};
  }
  std::vector<uint64_t> fixedBytes(int64_t cs) const override {
    std::vector<uint64_t> v{LocalTensor::bytes(wt_, weightShape(cs), lanes())};
    if (baddr_) v.push_back(LocalTensor::perChannelBytes(bt_, cs, lanes()));
    return v;
  }
  Shape4 weightShape(int64_t cs) const {
    return {u32(depthwise_ ? 1 : icg_), u32(cs), u32(p_.kh), u32(p_.kw)};
  }
  // Each output channel's (ic, kh, kw) taps contiguous in its lane, so the
  // load writes one run per channel: strides n kh*kw, c ic*kh*kw.
  LocalTensor weightBuf(int64_t cs) const {
    LocalTensor b;
    Shape4 s = weightShape(cs);
    b.offset = fixed_[0], b.dtype = wt_, b.shape = s;
    b.stride = {s.h * s.w, s.n * s.h * s.w, s.w, 1};
    return b;
  }
  LocalTensor biasBuf(int64_t cs) const { return LocalTensor::perChannel(fixed_[1], bt_, {1, u32(cs), 1, 1}); }
  uint16_t loadFixed(const Tile &t, uint16_t wait) override {
    const int64_t taps = p_.kh * p_.kw, wIc = depthwise_ ? 1 : icg_;
    const uint64_t e = dtypeBytes(wt_);
    uint16_t id = 0;
    if (transposed_) {
      // DDR [ic, oc, kh, kw] -> local (ic, oc, kh, kw): runs of kh*kw.
      id = e_.loadWeight(waddr_ + uint64_t(t.c0 * taps) * e, wt_, {u32(wIc), u32(t.cs), u32(p_.kh), u32(p_.kw)},
                         {u32(y_.s[1] * taps), u32(taps), u32(p_.kw), 1}, weightBuf(t.cs), wait);
    } else {
      // DDR [oc, ic/groups, kh, kw] is the local layout's order: the same
      // bytes seen as (1, oc, ic/groups, kh*kw) on both sides, one run.
      LocalTensor view = weightBuf(t.cs);
      view.shape = {1, u32(t.cs), u32(wIc), u32(taps)}, view.stride = {0, u32(wIc * taps), u32(taps), 1};
      id = e_.loadWeight(waddr_ + uint64_t(t.c0 * wIc * taps) * e, wt_, {1, u32(t.cs), u32(wIc), u32(taps)},
                         {0, u32(wIc * taps), u32(taps), 1}, view, wait);
    }
    if (baddr_)
      id = e_.loadPerChannel(baddr_, bt_, t.c0, t.cs, fixed_[1], wait);
    return id;
  }
  struct Rows { int64_t r0, rows, padT, padB; };
  Rows rowsFor(const Tile &t) const {
    int64_t iy0 = t.h0 * p_.strideH - p_.padTop;
    int64_t iy1 = iy0 + windowRows(t.hs) - 1;
    if (transposed_) {
      // Window rows [iy0, iy1] of the zero-inserted input: the data rows
      // inside it, the rest (inserted zeros and edges) as padding.
      int64_t r0 = iy0 <= 0 ? 0 : ceilDiv(iy0, insH_), r1 = std::min(x_.s[2] - 1, iy1 / insH_);
      return {r0, r1 - r0 + 1, r0 * insH_ - iy0, iy1 - r1 * insH_};
    }
    int64_t r0 = std::max<int64_t>(0, iy0), r1 = std::min(x_.s[2] - 1, iy1);
    return {r0, r1 - r0 + 1, r0 - iy0, iy1 - r1};
  }
  LocalTensor inBuf(const Tile &t, unsigned set) const {
    return LocalTensor::activation(bufOffset(set, 0), x_.dtype,
                         {u32(t.ns), u32(inChannels(t.cs)), u32(rowsFor(t).rows), u32(x_.s[3])}, lanes());
  }
  LocalTensor outBuf(const Tile &t, unsigned set) const {
    return LocalTensor::activation(bufOffset(set, 1), y_.dtype, {u32(t.ns), u32(t.cs), u32(t.hs), u32(y_.s[3])}, lanes());
  }
  uint16_t load(const Tile &t, unsigned set, uint16_t wait) override {
    Rows r = rowsFor(t);
    return e_.move(true, x_, t.n0, t.ns, depthwise_ ? t.c0 : 0, inChannels(t.cs), r.r0, r.rows, inBuf(t, set), wait);
  }
  template <class Cmd> void window(Cmd &c, const Rows &r) const {
    c.padTop = u32(r.padT), c.padBottom = u32(r.padB);
    c.padLeft = u32(p_.padLeft), c.padRight = u32(p_.padRight);
    c.strideH = u32(p_.strideH), c.strideW = u32(p_.strideW);
    c.kernelInsH = u32(p_.dilationH - 1), c.kernelInsW = u32(p_.dilationW - 1);
    c.rshift = op_.rshift, c.relu = op_.relu;
    if (transposed_) {
      c.inputInsH = u32(insH_ - 1), c.inputInsW = u32(insW_ - 1);
      c.kernelRotate = true;
    }
  }
  LocalOp *local() override { return transposed_ ? nullptr : this; }
  std::pair<int64_t, int64_t> inputRows(int64_t lo, int64_t hi) const override {
    return {lo * p_.strideH - p_.padTop, hi * p_.strideH - p_.padTop + (p_.kh - 1) * p_.dilationH};
  }
  uint16_t compute(const Tile &t, unsigned set, uint16_t wait) override {
    Rows r = rowsFor(t);
    return computeOn({inBuf(t, set)}, outBuf(t, set), {}, r.padT, r.padB, wait);
  }
  uint16_t computeOn(const std::vector<LocalTensor> &ins, const LocalTensor &out, const std::vector<LocalTensor> &,
                     int64_t padT, int64_t padB, uint16_t wait) override {
    const LocalTensor &in = ins[0];
    const Tile t{0, out.shape.n, 0, out.shape.c, 0, out.shape.h};
    Rows r{0, in.shape.h, padT, padB};
    LocalTensor w = weightBuf(t.cs);
    uint16_t id = 0;
    if (depthwise_) {
      isa::Pord c;
      c.eu = isa::EuOp::Mac;
      c.input = in.operand(hw_), c.kernel = w.operand(hw_), c.output = out.operand(hw_);
      c.kernel.shape = {1, u32(t.cs), u32(p_.kh), u32(p_.kw)};
      if (baddr_) c.hasBias = true, c.bias = biasBuf(t.cs).operand(hw_);
      window(c, r);
      return e_.b->tiu(c, wait);
    }
    for (int64_t gi = 0; gi < p_.groups; ++gi) {
      isa::Conv c;
      c.eu = isa::EuOp::Mac;
      int64_t o0 = gi * ocg_, ocs = p_.groups == 1 ? t.cs : ocg_;
      c.input = in.channels(u32(gi * icg_), u32(icg_), lanes()).operand(hw_);
      c.weight = w.channels(u32(o0), u32(ocs), lanes()).operand(hw_);
      c.output = out.channels(u32(o0), u32(ocs), lanes()).operand(hw_);
      if (baddr_) c.hasBias = true, c.bias = biasBuf(t.cs).channels(u32(o0), u32(ocs), lanes()).operand(hw_);
      window(c, r);
      id = e_.b->tiu(c, wait);
    }
    return id;
  }
  uint16_t store(const Tile &t, unsigned set, uint16_t wait) override {
    return e_.move(false, y_, t.n0, t.ns, t.c0, t.cs, t.h0, t.hs, outBuf(t, set), wait);
  }

private:
  DTensor x_, y_;
  WindowParams p_;
  DType wt_ = DType::F32, bt_ = DType::F32;
  uint64_t waddr_ = 0, baddr_ = 0;
  int64_t icg_ = 1, ocg_ = 1;
  bool depthwise_ = false;
  bool transposed_ = false;
  int64_t insH_ = 1, insW_ = 1; // transposed: the stride, as zero insertion
};

} // namespace

namespace ops {
const OpImpl Conv{OpKind::Conv, validateConv, evaluateConv, slicedAs<ConvOp>, nullptr, encodableConv,
                  /*int16Activations=*/true};
const OpImpl ConvTranspose{OpKind::ConvTranspose, validateConvTranspose, evaluateConvTranspose, slicedAs<ConvOp>,
                           nullptr, inputChannelsEncodable};
} // namespace ops

} // namespace tpu::backend
