// Upsample: nearest, integer factors scaleH, scaleW.
#include "compiler/Backend/Ops/Upsample.h"
#include "compiler/Backend/Emit.h"
#include "compiler/Backend/OpRegistry.h"
#include "compiler/Backend/OpValidation.h"
#include "compiler/Backend/ReferenceEval.h"

#include "isa/TiuCommand.h"

#include <cstring>

namespace tpu::backend {

namespace {

using namespace emit;

Status validateUpsample(const OpCheck &c) {
  const UpsampleParams &p = c.op.params<UpsampleParams>();
  const auto &ys = c.ys;
  TPU_RETURN_IF_ERROR(c.sameType(c.in(0)));
  auto xs = c.in(0).nchw();
  if (p.scaleH < 1 || p.scaleW < 1 || ys[0] != xs[0] || ys[1] != xs[1] || ys[2] != xs[2] * p.scaleH ||
      ys[3] != xs[3] * p.scaleW)
    return makeError("output must be the input scaled by ", p.scaleH, "x", p.scaleW);
  return Status::ok();
}

void evaluateUpsample(const RefArgs &r, Bytes &out) {
  const auto &xs = r.xs, &ys = r.ys;
  const UpsampleParams &p = r.op.params<UpsampleParams>();
  const size_t e = dtypeBytes(r.y.dtype);
  const Bytes &x = *r.in[0];
  out.resize(r.count * e);
  for (int64_t nc = 0; nc < ys[0] * ys[1]; ++nc)
    for (int64_t oy = 0; oy < ys[2]; ++oy)
      for (int64_t ox = 0; ox < ys[3]; ++ox)
        std::memcpy(&out[size_t((nc * ys[2] + oy) * ys[3] + ox) * e],
                    &x[size_t((nc * xs[2] + oy / p.scaleH) * xs[3] + ox / p.scaleW) * e], e);
}

// ---- The emitter: through local memory -------------------------------------
// Slices are cut along input rows: a slice of hs input rows loads them in
// one contiguous move, scaleH * scaleW TIU copies write each (dy, dx) phase
// into the output rows with strides (scaleH rows, scaleW elements), and one
// store moves the hs * scaleH output rows out. (Scattering single elements
// in DDR costs one burst per element.)
class UpsampleOp : public SlicedOp {
public:
  UpsampleOp(Emitter &e, const Op &op) : SlicedOp(e, op) { x_ = e.ddr(op.inputs[0]), y_ = e.ddr(op.output); }
  std::array<int64_t, 3> extents() const override { return {x_.s[0], x_.s[1], x_.s[2]}; }
  std::vector<uint64_t> setBytes(int64_t ns, int64_t cs, int64_t hs) const override {
    return {LocalTensor::activationBytes(x_, {u32(ns), u32(cs), u32(hs), u32(x_.s[3])}, lanes()),
            LocalTensor::activationBytes(y_, {u32(ns), u32(cs), u32(hs * p_.scaleH), u32(y_.s[3])}, lanes())};
  }
  LocalTensor inBuf(const Tile &t, unsigned set) const {
    return LocalTensor::activation(bufOffset(set, 0), x_, {u32(t.ns), u32(t.cs), u32(t.hs), u32(x_.s[3])}, lanes());
  }
  LocalTensor outBuf(const Tile &t, unsigned set) const {
    return LocalTensor::activation(bufOffset(set, 1), y_, {u32(t.ns), u32(t.cs), u32(t.hs * p_.scaleH), u32(y_.s[3])},
                                   lanes());
  }
  uint16_t load(const Tile &t, unsigned set, uint16_t wait) override {
    return e_.move(true, x_, t.n0, t.ns, t.c0, t.cs, t.h0, t.hs, inBuf(t, set), wait);
  }
  uint16_t compute(const Tile &t, unsigned set, uint16_t wait) override {
    const LocalTensor in = inBuf(t, set), out = outBuf(t, set);
    uint16_t id = wait;
    for (int64_t dy = 0; dy < p_.scaleH; ++dy)
      for (int64_t dx = 0; dx < p_.scaleW; ++dx) {
        LocalTensor phase = out; // output (n, c, iy * scaleH + dy, ix * scaleW + dx)
        phase.offset += u32((dy * y_.s[3] + dx) * dtypeBytes(y_.dtype));
        phase.shape = in.shape;
        phase.stride.h = out.stride.h * u32(p_.scaleH), phase.stride.w = out.stride.w * u32(p_.scaleW);
        isa::Arith c;
        c.eu = isa::EuOp::Copy, c.opdCount = 1;
        c.res0 = phase.operand(hw_), c.opd0 = in.operand(hw_);
        id = e_.b->tiu(c, wait);
      }
    return id;
  }
  uint16_t store(const Tile &t, unsigned set, uint16_t wait) override {
    return e_.move(false, y_, t.n0, t.ns, t.c0, t.cs, t.h0 * p_.scaleH, t.hs * p_.scaleH, outBuf(t, set), wait);
  }

private:
  const UpsampleParams &p_ = op_.params<UpsampleParams>();
  DTensor x_, y_;
};

} // namespace

namespace ops {
const OpImpl Upsample{OpKind::Upsample, validateUpsample, evaluateUpsample, slicedAs<UpsampleOp>, nullptr, nullptr};
} // namespace ops

} // namespace tpu::backend
