// Pool (max, average) and GlobalAvgPool: checks, reference and emitter (a
// global average is the pool emitter with one window over H x W).
#include "compiler/Backend/Emit.h"
#include "compiler/Backend/OpRegistry.h"
#include "compiler/Backend/OpValidation.h"
#include "compiler/Backend/ReferenceEval.h"

#include <algorithm>
#include <limits>

namespace tpu::backend {

namespace {

using namespace emit;

// An int8 average's multiplier goes into a uint8 constant.
Status averageMultiplier(const OpCheck &c) {
  TPU_RETURN_IF_ERROR(c.needMultipliers(1));
  if (c.int8 && (c.op.multipliers[0] < 0 || c.op.multipliers[0] > 255))
    return makeError("average multiplier ", c.op.multipliers[0], " is outside [0, 255]");
  return Status::ok();
}

Status validatePool(const OpCheck &c) {
  TPU_RETURN_IF_ERROR(c.sameType(c.in(0)));
  TPU_RETURN_IF_ERROR(checkWindow(c, c.in(0)));
  if (c.in(0).nchw()[1] != c.ys[1]) return makeError("pooling changes the channel count");
  if (c.op.window.dilationH != 1 || c.op.window.dilationW != 1) return makeError("pooling takes no dilation");
  return c.op.window.isMax ? Status::ok() : averageMultiplier(c);
}

Status validateGlobalAvgPool(const OpCheck &c) {
  TPU_RETURN_IF_ERROR(c.sameType(c.in(0)));
  auto xs = c.in(0).nchw();
  const auto &ys = c.ys;
  if (ys[0] != xs[0] || ys[1] != xs[1] || ys[2] != 1 || ys[3] != 1)
    return makeError("output must be (N, C, 1, 1) of the input");
  return averageMultiplier(c);
}

// A window reduction over (N, C, H, W): `combine(acc, v, inside)` per tap;
// padding reads 0 (sum) or never wins (max).
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
            int64_t iy = oy * p.strideH - p.padTop + ky, ix = ox * p.strideW - p.padLeft + kx;
            bool inside = iy >= 0 && iy < xs[2] && ix >= 0 && ix < xs[3];
            a = combine(a, inside ? plane[iy * xs[3] + ix] : T(0), inside);
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

// Max or average over window p (the average's divisor fixed: padding counts as 0).
void evaluateWindow(const RefArgs &r, const WindowParams &p, bool isMax, Bytes &out) {
  const auto &xs = r.xs, &ys = r.ys;
  if (r.isInt) {
    auto xi = r.ints(0);
    std::vector<int32_t> acc;
    if (isMax)
      windowPool<int32_t>(xi.data(), xs, p, ys, std::numeric_limits<int32_t>::lowest(),
                          [](int32_t a, int32_t v, bool in) { return in ? std::max(a, v) : a; }, acc);
    else
      windowPool<int32_t>(xi.data(), xs, p, ys, 0, [](int32_t a, int32_t v, bool) { return a + v; }, acc);
    std::vector<int64_t> ri(r.count);
    for (size_t i = 0; i < r.count; ++i)
      ri[i] = isMax ? saturateTo(acc[i], r.y.dtype) : requantizeOp(int64_t(acc[i]) * r.op.multipliers[0], r.op, false, r.y.dtype);
    out = fromInts(ri, r.y.dtype);
    return;
  }
  // The chip multiplies every tap by the constant 1/(kh*kw) and sums (no FMA).
  const float k = 1.0f / float(p.kh * p.kw);
  std::vector<float> rf;
  if (isMax)
    windowPool<float>(floats(*r.in[0]), xs, p, ys, std::numeric_limits<float>::lowest(),
                      [](float a, float v, bool in) { return in ? std::max(a, v) : a; }, rf);
  else
    windowPool<float>(floats(*r.in[0]), xs, p, ys, 0.0f,
                      [k](float a, float v, bool) { float t = k * v; return a + t; }, rf);
  out = fromFloats(rf);
}

void evaluatePool(const RefArgs &r, Bytes &out) {
  evaluateWindow(r, effectiveWindow(r.op, r.x, r.y), r.op.window.isMax, out);
}

void evaluateGlobalAvgPool(const RefArgs &r, Bytes &out) { evaluateWindow(r, globalWindow(r.x), false, out); }

// ---- The emitter (max, average, global average) ----------------------------
class PoolOp : public SlicedOp, public LocalOp {
public:
  PoolOp(Emitter &e, const Op &op) : SlicedOp(e, op) {
    x_ = e.ddr(op.inputs[0]), y_ = e.ddr(op.output);
    if (op.kind == OpKind::Pool) {
      p_ = effectiveWindow(op, e.g.tensors[op.inputs[0]], e.g.tensors[op.output]);
    } else {
      p_.kh = x_.s[2], p_.kw = x_.s[3];
    }
    isMax_ = op.kind == OpKind::Pool && op.window.isMax;
  }
  std::array<int64_t, 3> extents() const override { return {y_.s[0], y_.s[1], y_.s[2]}; }
  int64_t inRows(int64_t hs) const { return (hs - 1) * p_.strideH + p_.kh; }
  std::vector<uint64_t> setBytes(int64_t ns, int64_t cs, int64_t hs) const override {
    int64_t rows = std::min(inRows(hs), x_.s[2]);
    return {LocalTensor::activationBytes(x_.dtype, {u32(ns), u32(cs), u32(rows), u32(x_.s[3])}, lanes()),
            LocalTensor::activationBytes(y_.dtype, {u32(ns), u32(cs), u32(hs), u32(y_.s[3])}, lanes())};
  }
  struct Rows { int64_t r0, rows, padT, padB; };
  Rows rowsFor(const Tile &t) const {
    int64_t iy0 = t.h0 * p_.strideH - p_.padTop, iy1 = iy0 + inRows(t.hs) - 1;
    int64_t r0 = std::max<int64_t>(0, iy0), r1 = std::min(x_.s[2] - 1, iy1);
    return {r0, r1 - r0 + 1, r0 - iy0, iy1 - r1};
  }
  LocalTensor inBuf(const Tile &t, unsigned set) const {
    return LocalTensor::activation(bufOffset(set, 0), x_.dtype, {u32(t.ns), u32(t.cs), u32(rowsFor(t).rows), u32(x_.s[3])}, lanes());
  }
  LocalTensor outBuf(const Tile &t, unsigned set) const {
    return LocalTensor::activation(bufOffset(set, 1), y_.dtype, {u32(t.ns), u32(t.cs), u32(t.hs), u32(y_.s[3])}, lanes());
  }
  uint16_t load(const Tile &t, unsigned set, uint16_t wait) override {
    Rows r = rowsFor(t);
    return e_.move(true, x_, t.n0, t.ns, t.c0, t.cs, r.r0, r.rows, inBuf(t, set), wait);
  }
  LocalOp *local() override { return op_.kind == OpKind::Pool ? this : nullptr; }
  std::pair<int64_t, int64_t> inputRows(int64_t lo, int64_t hi) const override {
    return {lo * p_.strideH - p_.padTop, hi * p_.strideH - p_.padTop + p_.kh - 1};
  }
  uint16_t compute(const Tile &t, unsigned set, uint16_t wait) override {
    Rows r = rowsFor(t);
    return computeOn({inBuf(t, set)}, outBuf(t, set), {}, r.padT, r.padB, wait);
  }
  uint16_t computeOn(const std::vector<LocalTensor> &ins, const LocalTensor &out, const std::vector<LocalTensor> &,
                     int64_t padT, int64_t padB, uint16_t wait) override {
    const Tile t{0, out.shape.n, 0, out.shape.c, 0, out.shape.h};
    Rows r{0, ins[0].shape.h, padT, padB};
    isa::Pord c;
    c.eu = isMax_ ? isa::EuOp::Max : isa::EuOp::Mac;
    c.input = ins[0].operand(hw_), c.output = out.operand(hw_);
    if (isMax_) {
      c.kernel = c.input;
    } else if (y_.dtype == DType::F32) {
      c.kernel = constantF(1.0f / float(p_.kh * p_.kw));
      c.rshift = 0;
    } else {
      c.kernel = constant(DType::U8, op_.multipliers[0]);
      c.rshift = op_.rshift;
    }
    c.kernel.shape = {1, u32(t.cs), u32(p_.kh), u32(p_.kw)};
    c.padTop = u32(r.padT), c.padBottom = u32(r.padB), c.padLeft = u32(p_.padLeft), c.padRight = u32(p_.padRight);
    c.strideH = u32(p_.strideH), c.strideW = u32(p_.strideW);
    return e_.b->tiu(c, wait);
  }
  uint16_t store(const Tile &t, unsigned set, uint16_t wait) override {
    return e_.move(false, y_, t.n0, t.ns, t.c0, t.cs, t.h0, t.hs, outBuf(t, set), wait);
  }

private:
  DTensor x_, y_;
  WindowParams p_;
  bool isMax_ = false;
};

} // namespace

namespace ops {
const OpImpl Pool{OpKind::Pool, validatePool, evaluatePool, slicedAs<PoolOp>, nullptr, checkEndPadding};
const OpImpl GlobalAvgPool{OpKind::GlobalAvgPool, validateGlobalAvgPool, evaluateGlobalAvgPool, slicedAs<PoolOp>,
                           nullptr, nullptr};
} // namespace ops

} // namespace tpu::backend
