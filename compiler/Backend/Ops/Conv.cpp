// Conv and ConvTranspose: checks, reference and emitter. One emitter runs
// both: a transposed conv is the chip's stride-1 conv over the input with
// zeros inserted, the kernel rotated (docs/codegen.md).
#include "compiler/Backend/Emit.h"
#include "compiler/Backend/OpRegistry.h"
#include "compiler/Backend/OpValidation.h"
#include "compiler/Backend/Ops/Window.h"
#include "compiler/Backend/ReferenceEval.h"
#include "kernels/Kernels.h"
#include "support/Parallel.h"

#include <algorithm>
#include <cstdlib>
#include <limits>

namespace tpu::backend {

namespace {

using namespace emit;

Status validateConv(const OpCheck &c) {
  const Tensor &x = c.in(0), &w = c.in(1);
  TPU_RETURN_IF_ERROR(c.sameType(x));
  // Any pads, dilation and stride: what the command fields cannot hold runs
  // as groups of kernel taps (axisParts). An int8 conv may write its int16
  // accumulator (per-channel weights, requantized by an Affine) and read
  // another conv's (the conv command multiplies int8 or int16 inputs).
  TPU_RETURN_IF_ERROR(checkWindow(c, x, /*fieldLimits=*/false));
  auto xs = x.nchw();
  const WindowParams &p = c.op.params<WindowParams>();
  const int64_t groups = p.groups;
  if (groups < 1 || xs[1] % groups || c.ys[1] % groups)
    return makeError("groups ", groups, " must divide input channels ", xs[1], " and output channels ", c.ys[1]);
  std::vector<int64_t> want{c.ys[1], xs[1] / groups, p.kh, p.kw};
  if (w.shape != want) return makeError("weight '", w.name, "' shape does not match [oc, ic/groups, kh, kw]");
  TPU_RETURN_IF_ERROR(c.weightType(w, "conv"));
  return c.optionalBias(2);
}

Status validateConvTranspose(const OpCheck &c) {
  const Tensor &x = c.in(0), &w = c.in(1);
  TPU_RETURN_IF_ERROR(c.sameType(x));
  const WindowParams &p = c.op.params<WindowParams>();
  auto xs = x.nchw();
  if (p.groups < 1 || xs[1] % p.groups || c.ys[1] % p.groups)
    return makeError("groups ", p.groups, " must divide input channels ", xs[1], " and output channels ", c.ys[1]);
  TPU_RETURN_IF_ERROR(checkTransposedWindow(p, xs, c.ys));
  if (c.ys[0] != xs[0]) return makeError("output batch differs from input batch");
  if (w.shape != std::vector<int64_t>{xs[1], c.ys[1] / p.groups, p.kh, p.kw})
    return makeError("weight '", w.name, "' shape does not match [ic, oc/groups, kh, kw]");
  TPU_RETURN_IF_ERROR(c.weightType(w, "transposed conv"));
  return c.optionalBias(2);
}

} // namespace

Status checkTransposedWindow(const WindowParams &p, const std::array<int64_t, 4> &xs,
                             const std::array<int64_t, 4> &ys) {
  if (p.kh < 1 || p.kw < 1 || p.strideH < 1 || p.strideW < 1 || p.dilationH < 1 || p.dilationW < 1)
    return makeError("kernel, stride and dilation must be >= 1");
  if (p.strideH > kMaxZeroInsert + 1 || p.strideW > kMaxZeroInsert + 1)
    return makeError("stride ", p.strideH, "x", p.strideW, " exceeds ", kMaxZeroInsert + 1,
                     " (zeros inserted between input rows: a 4-bit field)");
  if (p.dilationH > kMaxZeroInsert + 1 || p.dilationW > kMaxZeroInsert + 1)
    return makeError("dilation ", p.dilationH, "x", p.dilationW, " exceeds ", kMaxZeroInsert + 1,
                     " (zeros inserted between kernel taps: a 4-bit field)");
  TransposedPads tp = transposedPads(p, xs, ys);
  if (std::min({tp.top, tp.bottom, tp.left, tp.right}) < 0 || std::max({tp.top, tp.bottom, tp.left, tp.right}) > kMaxPad)
    return makeError("pads and output size give equivalent conv pads ", tp.top, "/", tp.bottom, "/", tp.left, "/",
                     tp.right, " outside [0, ", kMaxPad, "]");
  return Status::ok();
}

namespace {

// The input's channels are a command field.
Status inputChannelsEncodable(const Graph &g, const Op &op) {
  if (g.tensors[size_t(op.inputs[0])].nchw()[1] > maxChannels())
    return makeError("input channels exceed ", maxChannels());
  return Status::ok();
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

int64_t floorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// Output positions per work item of the integer conv: its im2col tile and
// its sums stay in cache.
constexpr int64_t kIntConvTile = 256;

// The sums of one group over output positions [s0, s0 + len): out[o][s] =
// bias[o] + sum_j w[o][j] * col[j][s - s0], col row j at col + j * ld.
template <typename Acc>
void intConvTile(const int32_t *col, int64_t ld, int64_t k, const int32_t *w, const int32_t *bias, int64_t ocg,
                 int64_t len, int64_t *out, int64_t spatial) {
  Acc acc[kIntConvTile];
  for (int64_t o = 0; o < ocg; ++o) {
    std::fill(acc, acc + len, Acc(bias ? bias[o] : 0));
    const int32_t *wo = w + o * k;
    for (int64_t j = 0; j < k; ++j) {
      const Acc wv = wo[j];
      if (wv == 0) continue;
      const int32_t *c = col + j * ld;
      for (int64_t i = 0; i < len; ++i) acc[i] += wv * c[i];
    }
    std::copy(acc, acc + len, out + o * spatial);
  }
}

// A conv over (N, C, H, W) int inputs (groups, dilation, pads as zeros):
// exact sums (+ bias), int32 when no sum can exceed it, else int64. Work
// items are (batch, group, tile of output positions), each with its own
// im2col tile, so results do not depend on the thread count.
void intConv(const std::vector<int32_t> &x, const std::array<int64_t, 4> &xs, const std::vector<int32_t> &w,
             const std::vector<int32_t> &bias, const WindowParams &p, const std::array<int64_t, 4> &ys,
             std::vector<int64_t> &acc) {
  const int64_t icg = xs[1] / p.groups, ocg = ys[1] / p.groups, taps = p.kh * p.kw, k = icg * taps;
  const int64_t spatial = ys[2] * ys[3], inPlane = xs[2] * xs[3];
  const int64_t tiles = (spatial + kIntConvTile - 1) / kIntConvTile;
  const bool pointwise = taps == 1 && p.strideH == 1 && p.strideW == 1 && p.padTop == 0 && p.padLeft == 0 &&
                         ys[2] == xs[2] && ys[3] == xs[3];
  int64_t xMax = 0, wSumMax = 0, biasMax = 0;
  for (int32_t v : x) xMax = std::max<int64_t>(xMax, std::abs(int64_t(v)));
  for (int64_t o = 0; o < ys[1]; ++o) {
    int64_t sum = 0;
    for (int64_t j = 0; j < k; ++j) sum += std::abs(int64_t(w[size_t(o * k + j)]));
    wSumMax = std::max(wSumMax, sum);
  }
  for (int32_t b : bias) biasMax = std::max<int64_t>(biasMax, std::abs(int64_t(b)));
  const bool fits32 = xMax * wSumMax + biasMax <= std::numeric_limits<int32_t>::max();
  acc.assign(size_t(ys[0] * ys[1] * spatial), 0);
  parallelFor(ys[0] * p.groups * tiles, 1, [&](int64_t i0, int64_t i1) {
    std::vector<int32_t> col(pointwise ? 0 : size_t(k * kIntConvTile));
    for (int64_t item = i0; item < i1; ++item) {
      const int64_t t = item % tiles, g = (item / tiles) % p.groups, n = item / (tiles * p.groups);
      const int64_t s0 = t * kIntConvTile, len = std::min(kIntConvTile, spatial - s0);
      const int32_t *src = &x[size_t((n * xs[1] + g * icg) * inPlane)];
      const int32_t *tile = src + s0;
      int64_t ld = inPlane;
      if (!pointwise) {
        for (int64_t j = 0; j < k; ++j) {
          const int64_t ci = j / taps, ky = (j / p.kw) % p.kh, kx = j % p.kw;
          const int32_t *plane = src + ci * inPlane;
          int32_t *dst = &col[size_t(j * kIntConvTile)];
          // Row by row of the tile: the columns [begin, end) read inside the input.
          const int64_t shift = kx * p.dilationW - p.padLeft;
          const int64_t begin = std::min(ys[3], shift >= 0 ? 0 : (-shift + p.strideW - 1) / p.strideW);
          const int64_t end = std::max(begin, std::min(ys[3], floorDiv(xs[3] - 1 - shift, p.strideW) + 1));
          for (int64_t s = s0; s < s0 + len;) {
            const int64_t oy = s / ys[3], ox0 = s % ys[3], ox1 = std::min(ys[3], ox0 + s0 + len - s);
            const int64_t iy = oy * p.strideH - p.padTop + ky * p.dilationH;
            int32_t *d = dst + (s - s0) - ox0;
            if (iy < 0 || iy >= xs[2]) {
              std::fill(d + ox0, d + ox1, 0);
            } else {
              const int32_t *row = plane + iy * xs[3] + shift;
              const int64_t a = std::min(ox1, std::max(ox0, begin)), b = std::max(a, std::min(ox1, end));
              std::fill(d + ox0, d + a, 0);
              for (int64_t ox = a; ox < b; ++ox) d[ox] = row[ox * p.strideW];
              std::fill(d + b, d + ox1, 0);
            }
            s += ox1 - ox0;
          }
        }
        tile = col.data(), ld = kIntConvTile;
      }
      const int32_t *wg = &w[size_t(g * ocg * k)];
      const int32_t *bg = bias.empty() ? nullptr : &bias[size_t(g * ocg)];
      int64_t *out = &acc[size_t((n * ys[1] + g * ocg) * spatial + s0)];
      if (fits32)
        intConvTile<int32_t>(tile, ld, k, wg, bg, ocg, len, out, spatial);
      else
        intConvTile<int64_t>(tile, ld, k, wg, bg, ocg, len, out, spatial);
    }
  });
}

void evaluateConv(const RefArgs &r, Bytes &out) {
  WindowParams p = effectiveWindow(r.op, r.x, r.y);
  if (r.isInt) {
    std::vector<int64_t> ri;
    intConv(r.ints(0), r.xs, r.ints(1), intBias(r), p, r.ys, ri);
    parallelFor(int64_t(ri.size()), 4096, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) ri[size_t(i)] = requantizeOp(ri[size_t(i)], r.op, r.op.relu, r.y.dtype);
    });
    out = fromInts(ri, r.y.dtype);
    return;
  }
  std::vector<float> rf(r.count);
  kernels::conv2d(floats(*r.in[0]), floats(*r.in[1]), optionalBias(r), rf.data(), convParams(r, p));
  reluFloats(r.op, rf);
  out = fromFloats(rf);
}

void evaluateConvTranspose(const RefArgs &r, Bytes &out) {
  const WindowParams &p = r.op.params<WindowParams>();
  const TransposedPads tp = transposedPads(r.op, r.x, r.y);
  const auto &xs = r.xs, &ys = r.ys;
  if (r.isInt) {
    auto xi = r.ints(0), wi = r.ints(1), bi = intBias(r);
    std::vector<int64_t> ri(r.count, 0);
    // out[y] += in[i] * w[k] for y = i*s - (keH - top) + k*d, within a group.
    const int64_t offH = (p.kh - 1) * p.dilationH - tp.top, offW = (p.kw - 1) * p.dilationW - tp.left;
    const int64_t icg = xs[1] / p.groups, ocg = ys[1] / p.groups;
    parallelFor(ys[0] * ys[1], 1, [&](int64_t p0, int64_t p1) {
      for (int64_t no = p0; no < p1; ++no) {
        const int64_t n = no / ys[1], o = no % ys[1];
        int64_t *plane = &ri[size_t((n * ys[1] + o) * ys[2] * ys[3])];
        const int64_t g = o / ocg;
        for (int64_t i = g * icg; i < (g + 1) * icg; ++i)
          for (int64_t ky = 0; ky < p.kh; ++ky)
            for (int64_t kx = 0; kx < p.kw; ++kx) {
              const int64_t k = wi[size_t(((i * ocg + o - g * ocg) * p.kh + ky) * p.kw + kx)];
              if (k == 0) continue;
              // Input columns [ixBegin, ixEnd) land inside the output row.
              const int64_t shift = kx * p.dilationW - offW;
              const int64_t ixBegin = std::min(xs[3], shift >= 0 ? 0 : (-shift + p.strideW - 1) / p.strideW);
              const int64_t ixEnd = std::max(ixBegin, std::min(xs[3], floorDiv(ys[3] - 1 - shift, p.strideW) + 1));
              for (int64_t iy = 0; iy < xs[2]; ++iy) {
                int64_t oy = iy * p.strideH - offH + ky * p.dilationH;
                if (oy < 0 || oy >= ys[2]) continue;
                const int32_t *row = &xi[size_t(((n * xs[1] + i) * xs[2] + iy) * xs[3])];
                int64_t *orow = plane + oy * ys[3] + shift;
                for (int64_t ix = ixBegin; ix < ixEnd; ++ix) orow[ix * p.strideW] += k * row[ix];
              }
            }
        for (int64_t j = 0; j < ys[2] * ys[3]; ++j)
          plane[j] = requantizeOp(plane[j] + (bi.empty() ? 0 : bi[size_t(o)]), r.op, r.op.relu, r.y.dtype);
      }
    });
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

// One axis of a conv window as the command fields hold it: kernel taps
// [k0, k0 + taps) computing outputs [o0, o0 + count) from the input indices
// i0 + j * step (j < inCount; step > 1 when the stride exceeds its field)
// with these pad, dilation and stride fields.
struct AxisPart {
  int64_t k0, taps, o0, count, i0, inCount, padA, padB, dilation, stride, step;
  bool whole = false; // the whole axis, as the window gives it
  bool coversAll(int64_t out) const { return o0 == 0 && count == out; }
};

// The whole axis when its pads, dilation and stride fit their 4-bit fields
// (one part); else each kernel tap alone over the outputs whose window puts
// it inside the input, which need no padding (a tap that never reads the
// input adds nothing and is dropped: DeepLabV3's dilation-36 taps on a 33x33
// map). An input of `in` indices (padA before it, padB after), `out` outputs.
std::vector<AxisPart> axisParts(int64_t in, int64_t out, int64_t k, int64_t d, int64_t s, int64_t padA,
                                int64_t padB) {
  if (padA <= kMaxPad && padB <= kMaxPad && d <= kMaxZeroInsert + 1 && s <= kMaxStride)
    return {{0, k, 0, out, 0, in, padA, padB, d, s, 1, true}};
  std::vector<AxisPart> parts;
  for (int64_t t = 0; t < k; ++t) {
    // Output o reads input o * s - padA + t * d.
    const int64_t lo = std::max<int64_t>(0, -floorDiv(t * d - padA, s));
    const int64_t hi = std::min(out - 1, floorDiv(in - 1 + padA - t * d, s));
    if (lo > hi) continue;
    const int64_t count = hi - lo + 1, i0 = lo * s - padA + t * d;
    if (s <= kMaxStride)
      parts.push_back({t, 1, lo, count, i0, (count - 1) * s + 1, 0, 0, 1, s, 1});
    else
      parts.push_back({t, 1, lo, count, i0, count, 0, 0, 1, 1, s});
  }
  return parts;
}

// Rows [h0, h0 + hs) and columns [w0, w0 + ws) of a local tensor, every
// stepH-th row and stepW-th column.
LocalTensor subWindow(const LocalTensor &t, int64_t h0, int64_t hs, int64_t w0, int64_t ws, int64_t stepH = 1,
                      int64_t stepW = 1) {
  LocalTensor v = t;
  v.offset += u32((h0 * t.stride.h + w0 * t.stride.w) * dtypeBytes(t.dtype));
  v.shape.h = u32(hs), v.shape.w = u32(ws);
  v.stride.h = u32(t.stride.h * stepH), v.stride.w = u32(t.stride.w * stepW);
  return v;
}
class ConvOp : public SlicedOp, public LocalOp {
public:
  ConvOp(Emitter &e, const Op &op) : SlicedOp(e, op) {
    x_ = e.ddr(op.inputs[0]), y_ = e.ddr(op.output);
    const Tensor &xt = e.g.tensors[op.inputs[0]], &yt = e.g.tensors[op.output];
    transposed_ = op.kind == OpKind::ConvTranspose;
    if (transposed_) {
      // A stride-1 conv over the zero-inserted input with the kernel rotated.
      p_ = op.params<WindowParams>();
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
    needsTaps_ = !transposed_ && (std::max({p_.padTop, p_.padBottom, p_.padLeft, p_.padRight}) > kMaxPad ||
                                  std::max(p_.dilationH, p_.dilationW) > kMaxZeroInsert + 1 ||
                                  std::max(p_.strideH, p_.strideW) > kMaxStride);
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
    std::vector<uint64_t> v{
        LocalTensor::activationBytes(x_, {u32(ns), u32(inChannels(cs)), u32(rows), u32(x_.s[3])}, lanes()),
        LocalTensor::activationBytes(y_, {u32(ns), u32(cs), u32(hs), u32(y_.s[3])}, lanes())};
    for (DType t : tempTypes()) v.push_back(LocalTensor::bytes(t, tempShape(ns, cs, hs), lanes()));
    return v;
  }
  Shape4 tempShape(int64_t ns, int64_t cs, int64_t hs) const { return {u32(ns), u32(cs), u32(hs), u32(y_.s[3])}; }
  // A window the command fields cannot hold runs as groups of taps
  // (axisParts) summed into an accumulator: an integer output (int8, or an int16 accumulator) sums in int32 (then the
  // write-back), and a depthwise part (pord has no res_add) into a second
  // buffer that an add folds in.
  std::vector<DType> tempTypes() const override {
    std::vector<DType> v;
    if (!needsTaps_) return v;
    // An integer output, int8 or a per-channel conv's int16 accumulator,
    // sums its parts in int32.
    const bool integer = y_.dtype != DType::F32;
    if (integer) v.push_back(DType::I32);
    if (depthwise_) v.push_back(integer ? DType::I32 : DType::F32);
    return v;
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
    if (transposed_ && (p_.groups == 1 || ocg_ > 1)) {
      // DDR [ic, oc/groups, kh, kw] -> local (ic/groups, oc, kh, kw), one
      // command per group: runs of kh*kw. (A grouped op keeps all channels
      // in one slice; with one group the slice is channels [c0, c0 + cs).)
      for (int64_t g = 0; g < p_.groups; ++g) {
        const int64_t o0 = p_.groups == 1 ? t.c0 : g * ocg_, count = p_.groups == 1 ? t.cs : ocg_;
        id = e_.loadWeight(waddr_ + uint64_t((g * icg_ * ocg_ + o0 - g * ocg_) * taps) * e, wt_,
                           {u32(icg_), u32(count), u32(p_.kh), u32(p_.kw)},
                           {u32(ocg_ * taps), u32(taps), u32(p_.kw), 1},
                           weightBuf(t.cs).channels(u32(o0 - t.c0), u32(count), lanes()), wait);
      }
    } else {
      // (A transposed conv of one output channel per group has the same
      // layout: [ic, 1, kh, kw] is [oc, ic/groups, kh, kw].)
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
    return LocalTensor::activation(bufOffset(set, 0), x_,
                         {u32(t.ns), u32(inChannels(t.cs)), u32(std::max<int64_t>(1, rowsFor(t).rows)), u32(x_.s[3])}, lanes());
  }
  LocalTensor outBuf(const Tile &t, unsigned set) const {
    return LocalTensor::activation(bufOffset(set, 1), y_, {u32(t.ns), u32(t.cs), u32(t.hs), u32(y_.s[3])}, lanes());
  }
  uint16_t load(const Tile &t, unsigned set, uint16_t wait) override {
    Rows r = rowsFor(t);
    if (r.rows < 1) return 0; // no input row to load (biasOnly); nothing to wait for
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
  // A filter or bias computed at run time is read from DDR like a weight;
  // a layer group would take it for an activation to slice.
  LocalOp *local() override {
    for (size_t i = 1; i < op_.inputs.size(); ++i)
      if (!e_.g.tensors[size_t(op_.inputs[i])].isWeight()) return nullptr;
    return transposed_ ? nullptr : this;
  }
  std::pair<int64_t, int64_t> inputRows(int64_t lo, int64_t hi) const override {
    return {lo * p_.strideH - p_.padTop, hi * p_.strideH - p_.padTop + (p_.kh - 1) * p_.dilationH};
  }
  uint16_t compute(const Tile &t, unsigned set, uint16_t wait) override {
    Rows r = rowsFor(t);
    if (r.rows < 1) return biasOnly(outBuf(t, set), t.cs, op_.rshift, op_.relu, wait);
    std::vector<LocalTensor> temps;
    auto types = tempTypes();
    for (size_t j = 0; j < types.size(); ++j)
      temps.push_back(LocalTensor::compact(bufOffset(set, 2 + j), types[j], tempShape(t.ns, t.cs, t.hs), lanes()));
    return computeOn({inBuf(t, set)}, outBuf(t, set), temps, r.padT, r.padB, wait);
  }
  uint16_t computeOn(const std::vector<LocalTensor> &ins, const LocalTensor &out, const std::vector<LocalTensor> &temps,
                     int64_t padT, int64_t padB, uint16_t wait) override {
    const LocalTensor &in = ins[0];
    const Tile t{0, out.shape.n, 0, out.shape.c, 0, out.shape.h};
    Rows r{0, in.shape.h, padT, padB};
    if (needsTaps_) {
      auto rows = axisParts(in.shape.h, out.shape.h, p_.kh, p_.dilationH, p_.strideH, padT, padB);
      auto cols = axisParts(in.shape.w, out.shape.w, p_.kw, p_.dilationW, p_.strideW, p_.padLeft, p_.padRight);
      if (rows.size() != 1 || cols.size() != 1 || !rows[0].whole || !cols[0].whole)
        return computeTaps(in, out, temps, rows, cols, wait);
    }
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
  // Outputs whose window holds no input (a transposed conv's output padding
  // past the last window, a kernel shorter than the stride, every tap of a
  // conv outside the input): the write-back of a zero sum, 0 * 0 + bias
  // (md_linear mac), also the start of an accumulator (rshift 0, no relu).
  uint16_t biasOnly(const LocalTensor &out, int64_t cs, uint32_t rshift, bool relu, uint16_t wait) {
    const bool f = out.dtype == DType::F32;
    isa::MdLinear c;
    c.res0 = out.operand(hw_), c.opdCount = 3;
    c.opd0 = f ? constantF(0.0f) : constant(DType::I8, 0);
    c.opd1 = f ? constantF(0.0f) : constant(DType::I8, 0);
    c.opd2 = baddr_ ? biasBuf(cs).operand(hw_) : f ? constantF(0.0f) : constant(DType::I16, 0);
    c.opd0.shape = c.opd1.shape = c.opd2.shape = out.shape;
    c.rshift = rshift, c.relu = relu;
    return e_.b->tiu(c, wait);
  }
  // An element-wise command res = eu(a, b) over res's shape.
  uint16_t arith(isa::EuOp eu, const LocalTensor &res, const LocalOperand &a, const LocalOperand &b, uint32_t rshift,
                 bool relu, uint8_t count, uint16_t wait) {
    isa::Arith c;
    c.eu = eu, c.res0 = res.operand(hw_), c.opd0 = a, c.opd1 = b, c.opdCount = count;
    c.opd0.shape = c.opd1.shape = res.shape;
    c.rshift = rshift, c.relu = relu;
    return e_.b->tiu(c, wait);
  }
  // The window as groups of taps (axisParts rows x cols), each a conv (or
  // pord) over the input indices it reads, without padding where a tap runs
  // alone, into the output indices it writes. A part that writes every
  // output goes first, with the bias (else the bias starts the sum); the
  // others add to it (conv res_add; a pord into the partial buffer, then an
  // add). One part writing everything is the op itself (dropped taps only).
  // int8 sums in int32 (exact, as the reference) and ends with the
  // write-back, a copy with the op's shift and relu; fp32 sums in the
  // output and ends with the relu.
  uint16_t computeTaps(const LocalTensor &in, const LocalTensor &out, const std::vector<LocalTensor> &temps,
                       const std::vector<AxisPart> &rows, const std::vector<AxisPart> &cols, uint16_t wait) {
    const int64_t cs = out.shape.c, oh = out.shape.h, ow = out.shape.w;
    std::vector<std::pair<AxisPart, AxisPart>> parts;
    for (const AxisPart &rp : rows)
      for (const AxisPart &cp : cols) parts.push_back({rp, cp});
    auto coversAll = [&](const std::pair<AxisPart, AxisPart> &p) { return p.first.coversAll(oh) && p.second.coversAll(ow); };
    std::stable_partition(parts.begin(), parts.end(), coversAll);
    if (parts.empty()) return biasOnly(out, cs, op_.rshift, op_.relu, wait);
    const bool f = out.dtype == DType::F32, direct = parts.size() == 1 && coversAll(parts[0]);
    const LocalTensor &acc = direct || f ? out : temps[0];
    uint16_t id = 0;
    bool first = true;
    if (!coversAll(parts[0])) id = biasOnly(acc, cs, 0, false, wait), first = false;
    const LocalTensor w = weightBuf(cs);
    for (const auto &[rp, cp] : parts) {
      auto window = [&](auto &c) {
        c.padTop = u32(rp.padA), c.padBottom = u32(rp.padB), c.padLeft = u32(cp.padA), c.padRight = u32(cp.padB);
        c.strideH = u32(rp.stride), c.strideW = u32(cp.stride);
        c.kernelInsH = u32(rp.dilation - 1), c.kernelInsW = u32(cp.dilation - 1);
        c.rshift = direct ? op_.rshift : 0, c.relu = direct && op_.relu;
      };
      auto inView = [&](const LocalTensor &b) { return subWindow(b, rp.i0, rp.inCount, cp.i0, cp.inCount, rp.step, cp.step); };
      auto outView = [&](const LocalTensor &b) { return subWindow(b, rp.o0, rp.count, cp.o0, cp.count); };
      const LocalTensor taps = subWindow(w, rp.k0, rp.taps, cp.k0, cp.taps);
      if (depthwise_) {
        isa::Pord c;
        c.eu = isa::EuOp::Mac;
        const LocalTensor dst = outView(first ? acc : temps.back());
        c.input = inView(in).operand(hw_), c.kernel = taps.operand(hw_), c.output = dst.operand(hw_);
        c.kernel.shape = {1, u32(cs), u32(rp.taps), u32(cp.taps)};
        if (baddr_ && first) c.hasBias = true, c.bias = biasBuf(cs).operand(hw_);
        window(c);
        id = e_.b->tiu(c, wait);
        if (!first) id = arith(isa::EuOp::Add, outView(acc), outView(acc).operand(hw_), dst.operand(hw_), 0, false, 2, wait);
      } else {
        for (int64_t gi = 0; gi < p_.groups; ++gi) {
          isa::Conv c;
          c.eu = isa::EuOp::Mac;
          const int64_t o0 = gi * ocg_, ocs = p_.groups == 1 ? cs : ocg_;
          c.input = inView(in.channels(u32(gi * icg_), u32(icg_), lanes())).operand(hw_);
          c.weight = taps.channels(u32(o0), u32(ocs), lanes()).operand(hw_);
          c.output = outView(acc.channels(u32(o0), u32(ocs), lanes())).operand(hw_);
          if (baddr_ && first) c.hasBias = true, c.bias = biasBuf(cs).channels(u32(o0), u32(ocs), lanes()).operand(hw_);
          c.resAdd = !first;
          window(c);
          id = e_.b->tiu(c, wait);
        }
      }
      first = false;
    }
    if (direct) return id;
    if (!f) return arith(isa::EuOp::Copy, out, acc.operand(hw_), LocalOperand{}, op_.rshift, op_.relu, 1, wait);
    return op_.relu ? arith(isa::EuOp::Max, out, out.operand(hw_), constantF(0.0f), 0, false, 2, wait) : id;
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
  bool needsTaps_ = false; // pads, dilation or stride beyond the fields (computeTaps)
  int64_t insH_ = 1, insW_ = 1; // transposed: the stride, as zero insertion
};

} // namespace

namespace ops {
const OpImpl Conv{OpKind::Conv, validateConv, evaluateConv, slicedAs<ConvOp>, nullptr, inputChannelsEncodable,
                  /*int16Activations=*/true};
const OpImpl ConvTranspose{OpKind::ConvTranspose, validateConvTranspose, evaluateConvTranspose, slicedAs<ConvOp>,
                           nullptr, inputChannelsEncodable};
} // namespace ops

} // namespace tpu::backend
