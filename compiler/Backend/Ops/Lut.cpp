// Lut: an int8 activation by table, out = table[uint8(x)] (the table is a
// weight of 256 entries of the output type, activationTable in QuantRef.h).
#include "compiler/Backend/ElementwiseEmitter.h"
#include "compiler/Backend/OpRegistry.h"
#include "compiler/Backend/OpValidation.h"
#include "compiler/Backend/ReferenceEval.h"

namespace tpu::backend {

namespace {

using namespace emit;

Status validateLut(const OpCheck &c) {
  if (!c.int8 || !isInt8Like(c.in(0).dtype)) return makeError("Lut is int8 only (input and output)");
  if (c.in(0).nchw() != c.ys) return makeError("input and output shapes differ");
  const Tensor &t = c.in(1);
  if (!t.isWeight() || t.numel() != 256 || t.dtype != c.y.dtype)
    return makeError("table '", t.name, "' must be a weight of 256 ", dtypeName(c.y.dtype));
  return Status::ok();
}

void evaluateLut(const RefArgs &r, Bytes &out) {
  const Bytes &t = *r.in[1], &x = *r.in[0];
  out.resize(r.count);
  for (size_t i = 0; i < r.count; ++i) out[i] = t[x[i]];
}

class LutOp : public ElementwiseOp {
public:
  LutOp(Emitter &e, const Op &op) : ElementwiseOp(e, op, false), table_(e.am.addr[op.inputs[1]]) {}
  std::vector<uint64_t> fixedBytes(int64_t) const override { return {256}; }
  // The 256-entry table, broadcast into the same offset of every lane.
  uint16_t loadFixed(const Tile &, uint16_t wait) override {
    LocalTensor tb;
    tb.offset = fixed_[0], tb.dtype = outType(), tb.shape = {1, lanes(), 1, 256}, tb.stride = {0, 256, 256, 1};
    return e_.loadWeight(table_, outType(), {1, lanes(), 1, 256}, {0, 0, 256, 1}, tb, wait);
  }
  uint16_t computeOn(const std::vector<LocalTensor> &ins, const LocalTensor &y, const std::vector<LocalTensor> &, int64_t, int64_t,
                     uint16_t wait) override {
    isa::Lut c;
    c.eu = isa::EuOp::Copy;
    c.output = y.operand(hw_), c.index = ins[0].operand(hw_);
    LocalTensor tb;
    tb.offset = fixed_[0], tb.dtype = outType(), tb.shape = {1, y.shape.c, 1, 256}, tb.stride = {0, 0, 0, 1};
    c.table = tb.operand(hw_);
    return e_.b->tiu(c, wait);
  }

private:
  uint64_t table_; // DDR
};

} // namespace

namespace ops {
const OpImpl Lut{OpKind::Lut, validateLut, evaluateLut, slicedAs<LutOp>, nullptr, nullptr};
} // namespace ops

} // namespace tpu::backend
