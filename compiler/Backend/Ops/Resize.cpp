// Resize: H and W by the tables resizeH / resizeW (kernels::resizeTaps: any
// scale, nearest or bilinear, every coordinate mode), separable: W first,
// then H. Output index x of an axis is in[i0] where w = 0, else
// in[i0] * (1 - w) + (in[i1] * w) (fp32, two roundings: an ar mul, then an
// ar mac onto it). int8 takes nearest tables only (copies, same scale).
#include "compiler/Backend/Ops/Resize.h"
#include "compiler/Backend/Emit.h"
#include "compiler/Backend/OpRegistry.h"
#include "compiler/Backend/OpValidation.h"
#include "compiler/Backend/ReferenceEval.h"

#include "isa/TiuCommand.h"

#include <cstring>

namespace tpu::backend {

namespace {

using namespace emit;

// The blend the commands compute (ar mul, then ar mac with the old value).
float blend(float a, float b, float w) {
  if (w == 0.0f) return a;
  float t = b * w;
  return a * (1.0f - w) + t;
}

Status checkAxis(const kernels::ResizeTaps &t, int64_t in, int64_t out, const char *axis, bool int8) {
  if (int64_t(t.i0.size()) != out || int64_t(t.i1.size()) != out || int64_t(t.w.size()) != out)
    return makeError("the ", axis, " table needs one entry per output ", axis, " (", out, ")");
  for (int64_t x = 0; x < out; ++x) {
    const int64_t a = t.i0[size_t(x)], b = t.i1[size_t(x)];
    const float w = t.w[size_t(x)];
    if (a < 0 || b < a || b >= in || !(w >= 0.0f && w < 1.0f))
      return makeError("output ", axis, " ", x, " reads ", a, " and ", b, " (weight ", w, ") of ", in);
    if (x > 0 && (a < t.i0[size_t(x - 1)] || b < t.i1[size_t(x - 1)]))
      return makeError("the ", axis, " sources must not decrease (output ", axis, " ", x, ")");
    if (int8 && w != 0.0f) return makeError("int8 resizes are nearest only (output ", axis, " ", x, " blends)");
  }
  return Status::ok();
}

Status validateResize(const OpCheck &c) {
  const Tensor &x = c.in(0);
  const auto xs = x.nchw();
  TPU_RETURN_IF_ERROR(c.sameType(x));
  if (x.dtype != c.y.dtype || (c.int8 && x.scale != c.y.scale)) return makeError("a resize keeps the input's dtype and scale");
  if (xs[0] != c.ys[0] || xs[1] != c.ys[1]) return makeError("a resize keeps N and C");
  const ResizeParams &p = c.op.params<ResizeParams>();
  TPU_RETURN_IF_ERROR(checkAxis(p.h, xs[2], c.ys[2], "row", c.int8));
  return checkAxis(p.w, xs[3], c.ys[3], "column", c.int8);
}

// One axis of an (outer, len, inner) array resized by t.
template <class T>
std::vector<T> resizeAxis(const std::vector<T> &in, int64_t outer, int64_t len, int64_t inner, const kernels::ResizeTaps &t) {
  const int64_t outLen = int64_t(t.i0.size());
  std::vector<T> out(size_t(outer * outLen * inner));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t x = 0; x < outLen; ++x)
      for (int64_t i = 0; i < inner; ++i) {
        const T a = in[size_t((o * len + t.i0[size_t(x)]) * inner + i)];
        const T b = in[size_t((o * len + t.i1[size_t(x)]) * inner + i)];
        if constexpr (std::is_same_v<T, float>) out[size_t((o * outLen + x) * inner + i)] = blend(a, b, t.w[size_t(x)]);
        else out[size_t((o * outLen + x) * inner + i)] = a; // int8: nearest
      }
  return out;
}

template <class T> std::vector<T> resizeHW(std::vector<T> v, const std::array<int64_t, 4> &xs, const Op &op) {
  const ResizeParams &p = op.params<ResizeParams>();
  v = resizeAxis(v, xs[0] * xs[1] * xs[2], xs[3], 1, p.w);
  return resizeAxis(v, xs[0] * xs[1], xs[2], int64_t(p.w.i0.size()), p.h);
}

void evaluateResize(const RefArgs &r, Bytes &out) {
  if (r.isInt) {
    auto v = r.ints(0);
    auto y = resizeHW(std::vector<int32_t>(v.begin(), v.end()), r.xs, r.op);
    out = fromInts(std::vector<int64_t>(y.begin(), y.end()), r.y.dtype);
    return;
  }
  const float *x = floats(*r.in[0]);
  out = fromFloats(resizeHW(std::vector<float>(x, x + r.x.numel()), r.xs, r.op));
}

// ---- The emitter: through local memory -------------------------------------
// Output indices first, first + step, ... (count of them) with one weight
// whose sources advance by srcStep per index: one command (a copy) or two
// (a mul and a mac) write them all, the destination with stride step, the
// sources with stride srcStep (0: one source line repeated).
struct Progression {
  int64_t first, step, count, srcStep;
};

// Does output index y continue x's progression with source step d? A copy
// reads i0 only, a blend i0 and i1.
bool follows(const kernels::ResizeTaps &t, int64_t x, int64_t y, int64_t d) {
  const size_t a = size_t(x), b = size_t(y);
  return t.w[b] == t.w[a] && t.i0[b] - t.i0[a] == d && (t.w[a] == 0.0f || t.i1[b] - t.i1[a] == d);
}

// An axis' output indices as progressions: from the first index not yet
// covered, the longest one over steps 1..kMaxStep (the shortest step on a
// tie). A factor-s upsample is one progression per phase (step s) plus its
// clamped edges (runs of step 1, source step 0), instead of one per index.
std::vector<Progression> progressions(const kernels::ResizeTaps &t) {
  constexpr int64_t kMaxStep = 16;
  const int64_t n = int64_t(t.i0.size());
  std::vector<bool> covered(size_t(n), false);
  std::vector<Progression> ps;
  for (int64_t a = 0; a < n; ++a) {
    if (covered[size_t(a)]) continue;
    Progression best{a, 1, 1, 0};
    for (int64_t k = 1; k <= kMaxStep && a + k < n; ++k) {
      const int64_t d = t.i0[size_t(a + k)] - t.i0[size_t(a)];
      int64_t count = 1;
      for (int64_t x = a; x + k < n && !covered[size_t(x + k)] && follows(t, x, x + k, d); x += k) ++count;
      if (count > best.count) best = {a, k, count, d};
    }
    for (int64_t i = 0; i < best.count; ++i) covered[size_t(a + i * best.step)] = true;
    ps.push_back(best);
  }
  return ps;
}

// Slices cut along output rows; each loads the input rows its output rows
// read. The W pass writes each progression of output columns into a
// temporary of the loaded rows; the H pass each progression of output rows
// (the part inside the slice). An axis left as it is skips its pass.
class ResizeOp : public SlicedOp {
public:
  ResizeOp(Emitter &e, const Op &op) : SlicedOp(e, op) {
    x_ = e.ddr(op.inputs[0]), y_ = e.ddr(op.output);
    keepW_ = identity(p_.w, x_.s[3]), keepH_ = identity(p_.h, x_.s[2]);
    // The W pass runs unless H alone moves (a resize to the same size copies along W).
    if (!keepW_ || keepH_) psW_ = progressions(p_.w);
    if (!keepH_) psH_ = progressions(p_.h);
  }
  std::array<int64_t, 3> extents() const override { return {y_.s[0], y_.s[1], y_.s[2]}; }
  std::vector<uint64_t> setBytes(int64_t ns, int64_t cs, int64_t hs) const override {
    int64_t rows = 1; // the most any slice of hs output rows reads
    for (int64_t h0 = 0; h0 < y_.s[2]; ++h0) rows = std::max(rows, rowsFor(h0, std::min(hs, y_.s[2] - h0)).second);
    std::vector<uint64_t> v{LocalTensor::activationBytes(x_, {u32(ns), u32(cs), u32(rows), u32(x_.s[3])}, lanes()),
                            LocalTensor::activationBytes(y_, {u32(ns), u32(cs), u32(hs), u32(y_.s[3])}, lanes())};
    if (!keepW_ && !keepH_)
      v.push_back(LocalTensor::activationBytes(y_, {u32(ns), u32(cs), u32(rows), u32(y_.s[3])}, lanes()));
    return v;
  }
  uint16_t load(const Tile &t, unsigned set, uint16_t wait) override {
    auto [r0, rows] = rowsFor(t.h0, t.hs);
    return e_.move(true, x_, t.n0, t.ns, t.c0, t.cs, r0, rows, inBuf(t, set), wait);
  }
  uint16_t compute(const Tile &t, unsigned set, uint16_t wait) override {
    const LocalTensor in = inBuf(t, set), out = outBuf(t, set);
    const int64_t r0 = rowsFor(t.h0, t.hs).first;
    if (keepH_) return pass(in, out, p_.w, psW_, 0, y_.s[3], 0, /*alongW=*/true, wait);
    if (keepW_) return pass(in, out, p_.h, psH_, t.h0, t.h0 + t.hs, r0, false, wait);
    const LocalTensor tmp = tmpBuf(t, set);
    pass(in, tmp, p_.w, psW_, 0, y_.s[3], 0, true, wait); // TIU commands run in order
    return pass(tmp, out, p_.h, psH_, t.h0, t.h0 + t.hs, r0, false, wait);
  }
  uint16_t store(const Tile &t, unsigned set, uint16_t wait) override {
    return e_.move(false, y_, t.n0, t.ns, t.c0, t.cs, t.h0, t.hs, outBuf(t, set), wait);
  }

private:
  const ResizeParams &p_ = op_.params<ResizeParams>();
  static bool identity(const kernels::ResizeTaps &t, int64_t in) {
    for (size_t x = 0; x < t.i0.size(); ++x)
      if (t.i0[x] != int64_t(x) || t.w[x] != 0.0f) return false;
    return int64_t(t.i0.size()) == in;
  }
  // The first input row and the row count output rows [h0, h0 + hs) read.
  std::pair<int64_t, int64_t> rowsFor(int64_t h0, int64_t hs) const {
    if (keepH_) return {h0, hs};
    const int64_t a = p_.h.i0[size_t(h0)], b = p_.h.i1[size_t(h0 + hs - 1)];
    return {a, b - a + 1};
  }
  LocalTensor inBuf(const Tile &t, unsigned set) const {
    return LocalTensor::activation(bufOffset(set, 0), x_,
                                   {u32(t.ns), u32(t.cs), u32(rowsFor(t.h0, t.hs).second), u32(x_.s[3])}, lanes());
  }
  LocalTensor outBuf(const Tile &t, unsigned set) const {
    return LocalTensor::activation(bufOffset(set, 1), y_, {u32(t.ns), u32(t.cs), u32(t.hs), u32(y_.s[3])}, lanes());
  }
  LocalTensor tmpBuf(const Tile &t, unsigned set) const {
    return LocalTensor::activation(bufOffset(set, 2), y_,
                                   {u32(t.ns), u32(t.cs), u32(rowsFor(t.h0, t.hs).second), u32(y_.s[3])}, lanes());
  }
  // `src` moved along W (or H) into `dst` by taps t, progressions ps, for
  // output indices [lo, hi); src index i sits at i - srcBase of the buffer,
  // dst index x at x - lo.
  uint16_t pass(const LocalTensor &src, const LocalTensor &dst, const kernels::ResizeTaps &t,
                const std::vector<Progression> &ps, int64_t lo, int64_t hi, int64_t srcBase, bool alongW,
                uint16_t wait) {
    const int64_t e = int64_t(dtypeBytes(y_.dtype));
    const uint32_t srcStep = alongW ? src.stride.w : src.stride.h, dstStep = alongW ? dst.stride.w : dst.stride.h;
    uint16_t id = wait;
    for (const Progression &p : ps) {
      // The progression's indices inside [lo, hi): a, a + step, ...
      const int64_t skip = p.first < lo ? ceilDiv(lo - p.first, p.step) : 0, a = p.first + skip * p.step;
      if (a >= hi || skip >= p.count) continue;
      const int64_t count = std::min(p.count - skip, ceilDiv(hi - a, p.step));
      LocalTensor d = dst;
      d.offset += u32(int64_t(dstStep) * (a - lo) * e);
      (alongW ? d.shape.w : d.shape.h) = u32(count);
      (alongW ? d.stride.w : d.stride.h) = u32(int64_t(dstStep) * p.step);
      // The source lines of the progression (stride 0: one line repeated).
      auto source = [&](int64_t i) {
        LocalTensor s = src;
        s.offset += u32(int64_t(srcStep) * (i - srcBase) * e);
        s.shape = d.shape;
        (alongW ? s.stride.w : s.stride.h) = u32(int64_t(srcStep) * p.srcStep);
        return s;
      };
      const float w = t.w[size_t(a)];
      isa::Arith c;
      c.res0 = d.operand(hw_);
      if (w == 0.0f) {
        c.eu = isa::EuOp::Copy, c.opdCount = 1, c.opd0 = source(t.i0[size_t(a)]).operand(hw_);
        id = e_.b->tiu(c, wait);
      } else {
        c.eu = isa::EuOp::Mul, c.opdCount = 2;
        c.opd0 = source(t.i1[size_t(a)]).operand(hw_), c.opd1 = constantF(w), c.opd1.shape = d.shape;
        e_.b->tiu(c, wait);
        c.eu = isa::EuOp::Mac;
        c.opd0 = source(t.i0[size_t(a)]).operand(hw_), c.opd1 = constantF(1.0f - w), c.opd1.shape = d.shape;
        id = e_.b->tiu(c, wait);
      }
    }
    return id;
  }

  DTensor x_, y_;
  bool keepW_ = false, keepH_ = false;
  std::vector<Progression> psW_, psH_;
};

} // namespace

namespace ops {
const OpImpl Resize{OpKind::Resize, validateResize, evaluateResize, slicedAs<ResizeOp>, nullptr, nullptr};
} // namespace ops

} // namespace tpu::backend
