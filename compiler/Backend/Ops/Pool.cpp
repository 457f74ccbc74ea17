// Pool (max, average) and GlobalAvgPool: checks, reference and emitter (a
// global average is the pool emitter with one window over H x W).
#include "compiler/Backend/Emit.h"
#include "compiler/Backend/OpRegistry.h"
#include "compiler/Backend/OpValidation.h"
#include "compiler/Backend/Ops/Window.h"
#include "compiler/Backend/ReferenceEval.h"

#include <algorithm>
#include <limits>

namespace tpu::backend {

namespace {

using namespace emit;

// An int8 average's multipliers go into a uint8 constant.
Status averageMultipliers(const OpCheck &c, size_t n) {
  if (!c.int8) return Status::ok();
  if (n == 1) TPU_RETURN_IF_ERROR(c.needMultipliers(1));
  if (c.op.multipliers.size() != 1 && c.op.multipliers.size() != n)
    return makeError("int8 needs 1 multiplier(s) (or one per covered tap count, ", n, "), has ",
                     c.op.multipliers.size());
  for (int32_t m : c.op.multipliers)
    if (m < 0 || m > 255) return makeError("average multiplier ", m, " is outside [0, 255]");
  return Status::ok();
}

// The int8 multiplier of a window covering `taps` taps: one for all
// windows, or one per count (entry taps - 1).
int32_t averageMultiplier(const Op &op, int64_t taps) {
  return op.multipliers.size() == 1 ? op.multipliers[0] : op.multipliers[size_t(taps - 1)];
}

Status validatePool(const OpCheck &c) {
  TPU_RETURN_IF_ERROR(c.sameType(c.in(0)));
  TPU_RETURN_IF_ERROR(checkWindow(c, c.in(0)));
  if (c.in(0).nchw()[1] != c.ys[1]) return makeError("pooling changes the channel count");
  const WindowParams &p = c.op.params<WindowParams>();
  if (p.isMax) return Status::ok();
  AverageTaps taps = averageTapsOf(c.op, c.in(0), c.y);
  for (int64_t t : taps.rows)
    if (t == 0) return makeError("an average window covers no input row");
  for (int64_t t : taps.cols)
    if (t == 0) return makeError("an average window covers no input column");
  TPU_RETURN_IF_ERROR(averageMultipliers(c, size_t(p.kh * p.kw)));
  if (c.int8 && c.op.multipliers.size() == 1 && !taps.uniform())
    return makeError("windows covering different tap counts need one multiplier per count");
  return Status::ok();
}

Status validateGlobalAvgPool(const OpCheck &c) {
  TPU_RETURN_IF_ERROR(c.sameType(c.in(0)));
  auto xs = c.in(0).nchw();
  const auto &ys = c.ys;
  if (ys[0] != xs[0] || ys[1] != xs[1] || ys[2] != 1 || ys[3] != 1)
    return makeError("output must be (N, C, 1, 1) of the input");
  return averageMultipliers(c, 1);
}

// A window reduction over (N, C, H, W): `combine(acc, v, inside, oy, ox)`
// per tap; padding reads 0 (sum) or never wins (max).
template <class T, class Combine>
void windowPool(const T *x, const std::array<int64_t, 4> &xs, const WindowParams &p,
                const std::array<int64_t, 4> &ys, T init, Combine combine, std::vector<T> &out) {
  out.assign(size_t(ys[0] * ys[1] * ys[2] * ys[3]), init);
  for (int64_t nc = 0; nc < ys[0] * ys[1]; ++nc) {
    const T *plane = x + nc * xs[2] * xs[3];
    T *o = &out[size_t(nc * ys[2] * ys[3])];
    for (int64_t oy = 0; oy < ys[2]; ++oy)
      for (int64_t ox = 0; ox < ys[3]; ++ox) {
        T a = init;
        for (int64_t ky = 0; ky < p.kh; ++ky)
          for (int64_t kx = 0; kx < p.kw; ++kx) {
            int64_t iy = oy * p.strideH - p.padTop + ky * p.dilationH;
            int64_t ix = ox * p.strideW - p.padLeft + kx * p.dilationW;
            bool inside = iy >= 0 && iy < xs[2] && ix >= 0 && ix < xs[3];
            a = combine(a, inside ? plane[iy * xs[3] + ix] : T(0), inside, oy, ox);
          }
        o[oy * ys[3] + ox] = a;
      }
  }
}

WindowParams globalWindow(const Tensor &x) {
  WindowParams p;
  p.kh = x.nchw()[2], p.kw = x.nchw()[3];
  return p;
}

// Max or average over window p; an average window covering t taps divides by t.
void evaluateWindow(const RefArgs &r, const WindowParams &p, const AverageTaps &taps, bool isMax, Bytes &out) {
  const auto &xs = r.xs, &ys = r.ys;
  if (r.isInt) {
    auto xi = r.ints(0);
    std::vector<int32_t> acc;
    if (isMax)
      windowPool<int32_t>(xi.data(), xs, p, ys, std::numeric_limits<int32_t>::lowest(),
                          [](int32_t a, int32_t v, bool in, int64_t, int64_t) { return in ? std::max(a, v) : a; }, acc);
    else
      windowPool<int32_t>(xi.data(), xs, p, ys, 0, [](int32_t a, int32_t v, bool, int64_t, int64_t) { return a + v; }, acc);
    std::vector<int64_t> ri(r.count);
    const int64_t plane = ys[2] * ys[3];
    for (size_t i = 0; i < r.count; ++i) {
      const int64_t yx = int64_t(i) % plane;
      ri[i] = isMax ? saturateTo(acc[i], r.y.dtype)
                    : requantizeOp(int64_t(acc[i]) * averageMultiplier(r.op, taps.at(yx / ys[3], yx % ys[3])), r.op,
                                   false, r.y.dtype);
    }
    out = fromInts(ri, r.y.dtype);
    return;
  }
  // The chip multiplies every tap by the constant 1/taps and sums (no FMA).
  std::vector<float> rf;
  if (isMax)
    windowPool<float>(floats(*r.in[0]), xs, p, ys, std::numeric_limits<float>::lowest(),
                      [](float a, float v, bool in, int64_t, int64_t) { return in ? std::max(a, v) : a; }, rf);
  else
    windowPool<float>(floats(*r.in[0]), xs, p, ys, 0.0f,
                      [&](float a, float v, bool, int64_t oy, int64_t ox) {
                        float t = (1.0f / float(taps.at(oy, ox))) * v;
                        return a + t;
                      }, rf);
  out = fromFloats(rf);
}

void evaluatePool(const RefArgs &r, Bytes &out) {
  const bool isMax = r.op.params<WindowParams>().isMax;
  evaluateWindow(r, effectiveWindow(r.op, r.x, r.y), averageTapsOf(r.op, r.x, r.y), isMax, out);
}

void evaluateGlobalAvgPool(const RefArgs &r, Bytes &out) {
  const WindowParams p = globalWindow(r.x);
  evaluateWindow(r, p, AverageTaps{{p.kh}, {p.kw}}, false, out);
}

// ---- The emitter (max, average, global average) ----------------------------
// An average whose windows cover different tap counts (count_include_pad = 0
// with padding, ceil mode's partial windows) runs one command per block of
// output rows and columns that divide by the same count.
class PoolOp : public SlicedOp, public LocalOp {
public:
  PoolOp(Emitter &e, const Op &op) : SlicedOp(e, op) {
    x_ = e.ddr(op.inputs[0]), y_ = e.ddr(op.output);
    const Tensor &x = e.g.tensors[op.inputs[0]], &y = e.g.tensors[op.output];
    if (op.kind == OpKind::Pool) {
      p_ = effectiveWindow(op, x, y);
      taps_ = averageTapsOf(op, x, y);
    } else {
      p_ = globalWindow(x);
      taps_ = {{p_.kh}, {p_.kw}};
    }
    isMax_ = op.kind == OpKind::Pool && op.params<WindowParams>().isMax;
    uniform_ = isMax_ || taps_.uniform();
  }
  std::array<int64_t, 3> extents() const override { return {y_.s[0], y_.s[1], y_.s[2]}; }
  int64_t kernelRows() const { return (p_.kh - 1) * p_.dilationH + 1; }
  int64_t inRows(int64_t hs) const { return (hs - 1) * p_.strideH + kernelRows(); }
  std::vector<uint64_t> setBytes(int64_t ns, int64_t cs, int64_t hs) const override {
    int64_t rows = std::min(inRows(hs), x_.s[2]);
    return {LocalTensor::activationBytes(x_, {u32(ns), u32(cs), u32(rows), u32(x_.s[3])}, lanes()),
            LocalTensor::activationBytes(y_, {u32(ns), u32(cs), u32(hs), u32(y_.s[3])}, lanes())};
  }
  struct Rows { int64_t r0, rows, padT, padB; };
  Rows rowsFor(const Tile &t) const {
    int64_t iy0 = t.h0 * p_.strideH - p_.padTop, iy1 = iy0 + inRows(t.hs) - 1;
    int64_t r0 = std::max<int64_t>(0, iy0), r1 = std::min(x_.s[2] - 1, iy1);
    return {r0, r1 - r0 + 1, r0 - iy0, iy1 - r1};
  }
  LocalTensor inBuf(const Tile &t, unsigned set) const {
    return LocalTensor::activation(bufOffset(set, 0), x_, {u32(t.ns), u32(t.cs), u32(rowsFor(t).rows), u32(x_.s[3])}, lanes());
  }
  LocalTensor outBuf(const Tile &t, unsigned set) const {
    return LocalTensor::activation(bufOffset(set, 1), y_, {u32(t.ns), u32(t.cs), u32(t.hs), u32(y_.s[3])}, lanes());
  }
  uint16_t load(const Tile &t, unsigned set, uint16_t wait) override {
    Rows r = rowsFor(t);
    return e_.move(true, x_, t.n0, t.ns, t.c0, t.cs, r.r0, r.rows, inBuf(t, set), wait);
  }
  // In a layer group a slice's rows are not known: only uniform divisors.
  LocalOp *local() override { return op_.kind == OpKind::Pool && uniform_ ? this : nullptr; }
  std::pair<int64_t, int64_t> inputRows(int64_t lo, int64_t hi) const override {
    return {lo * p_.strideH - p_.padTop, hi * p_.strideH - p_.padTop + kernelRows() - 1};
  }
  uint16_t compute(const Tile &t, unsigned set, uint16_t wait) override {
    Rows r = rowsFor(t);
    const LocalTensor in = inBuf(t, set), out = outBuf(t, set);
    if (uniform_) return computeOn({in}, out, {}, r.padT, r.padB, wait);
    uint16_t id = wait;
    const auto rowRuns = runs(taps_.rows, t.h0, t.h0 + t.hs), colRuns = runs(taps_.cols, 0, y_.s[3]);
    for (auto [oy0, oy1] : rowRuns)
      for (auto [ox0, ox1] : colRuns) {
        // The input rows/columns this block's windows read, clipped to the
        // loaded rows and the input's columns; the rest is padding.
        const auto span = [](int64_t o0, int64_t o1, int64_t stride, int64_t pad, int64_t extent, int64_t first,
                             int64_t last) {
          int64_t i0 = o0 * stride - pad, i1 = (o1 - 1) * stride - pad + extent - 1;
          int64_t lo = std::max(i0, first), hi = std::min(i1, last);
          return std::array<int64_t, 4>{lo, hi - lo + 1, lo - i0, i1 - hi}; // first, count, pads before/after
        };
        auto ry = span(oy0, oy1, p_.strideH, p_.padTop, kernelRows(), r.r0, r.r0 + r.rows - 1);
        auto rx = span(ox0, ox1, p_.strideW, p_.padLeft, (p_.kw - 1) * p_.dilationW + 1, 0, x_.s[3] - 1);
        LocalTensor bin = in, bout = out;
        bin.offset += u32(((ry[0] - r.r0) * in.stride.h + rx[0] * in.stride.w) * int64_t(dtypeBytes(x_.dtype)));
        bin.shape.h = u32(ry[1]), bin.shape.w = u32(rx[1]);
        bout.offset += u32(((oy0 - t.h0) * out.stride.h + ox0 * out.stride.w) * int64_t(dtypeBytes(y_.dtype)));
        bout.shape.h = u32(oy1 - oy0), bout.shape.w = u32(ox1 - ox0);
        id = emitPord(bin, bout, u32(ry[2]), u32(ry[3]), u32(rx[2]), u32(rx[3]), taps_.at(oy0, ox0), wait);
      }
    return id;
  }
  uint16_t computeOn(const std::vector<LocalTensor> &ins, const LocalTensor &out, const std::vector<LocalTensor> &,
                     int64_t padT, int64_t padB, uint16_t wait) override {
    return emitPord(ins[0], out, u32(padT), u32(padB), u32(p_.padLeft), u32(p_.padRight), taps_.at(0, 0), wait);
  }
  uint16_t store(const Tile &t, unsigned set, uint16_t wait) override {
    return e_.move(false, y_, t.n0, t.ns, t.c0, t.cs, t.h0, t.hs, outBuf(t, set), wait);
  }

private:
  // The maximal runs [b, e) of equal counts in v[lo, hi).
  static std::vector<std::pair<int64_t, int64_t>> runs(const std::vector<int64_t> &v, int64_t lo, int64_t hi) {
    std::vector<std::pair<int64_t, int64_t>> r;
    for (int64_t i = lo; i < hi; ++i)
      if (r.empty() || v[size_t(i)] != v[size_t(r.back().first)]) r.push_back({i, i + 1});
      else r.back().second = i + 1;
    return r;
  }
  // One pord over `in` -> `out`; an average's windows all cover `taps` taps.
  uint16_t emitPord(const LocalTensor &in, const LocalTensor &out, uint32_t padT, uint32_t padB, uint32_t padL,
                    uint32_t padR, int64_t taps, uint16_t wait) {
    isa::Pord c;
    c.eu = isMax_ ? isa::EuOp::Max : isa::EuOp::Mac;
    c.input = in.operand(hw_), c.output = out.operand(hw_);
    if (isMax_) {
      c.kernel = c.input;
    } else if (y_.dtype == DType::F32) {
      c.kernel = constantF(1.0f / float(taps));
      c.rshift = 0;
    } else {
      c.kernel = constant(DType::U8, averageMultiplier(op_, taps));
      c.rshift = op_.rshift;
    }
    c.kernel.shape = {1, out.shape.c, u32(p_.kh), u32(p_.kw)};
    c.kernelInsH = u32(p_.dilationH - 1), c.kernelInsW = u32(p_.dilationW - 1);
    c.padTop = padT, c.padBottom = padB, c.padLeft = padL, c.padRight = padR;
    c.strideH = u32(p_.strideH), c.strideW = u32(p_.strideW);
    return e_.b->tiu(c, wait);
  }

  DTensor x_, y_;
  WindowParams p_;
  AverageTaps taps_;
  bool isMax_ = false, uniform_ = true;
};

} // namespace

namespace ops {
const OpImpl Pool{OpKind::Pool, validatePool, evaluatePool, slicedAs<PoolOp>, nullptr, checkEndPadding};
const OpImpl GlobalAvgPool{OpKind::GlobalAvgPool, validateGlobalAvgPool, evaluateGlobalAvgPool, slicedAs<PoolOp>,
                           nullptr, nullptr};
} // namespace ops

} // namespace tpu::backend
