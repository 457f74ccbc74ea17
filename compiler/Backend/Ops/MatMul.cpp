// MatMul: the product of two activations, lhs [..., M, K] x rhs [..., K, N]
// -> [..., M, N] over equal leading dims (their product B: attention's Q.K^T
// and P.V per head). fp32 only: BM1684 has no int8 form with a per-tensor
// scale for it (TPU-MLIR runs it in fp32 too); int8 models run it as an fp32
// island. One mm2 command per slice: left (B, M, 1, K) with the M rows in
// lanes, right (B, K, 1, N), result (B, M, 1, N), which are the C-order
// tensors' own layouts, so loads and stores are plain moves. Slices cut B
// and M (the right matrices of a slice's batches are loaded whole).
#include "compiler/Backend/Ops/MatMul.h"

#include "compiler/Backend/Emit.h"
#include "compiler/Backend/OpRegistry.h"
#include "compiler/Backend/OpValidation.h"
#include "compiler/Backend/ReferenceEval.h"

namespace tpu::backend {

Result<MatMulDims> matMulDims(const Tensor &lhs, const Tensor &rhs, const Tensor &y) {
  const auto &l = lhs.shape, &r = rhs.shape;
  if (l.size() < 2 || l.size() != r.size())
    return makeError("lhs and rhs need the same rank, at least 2 (", l.size(), " and ", r.size(), ")");
  const size_t lead = l.size() - 2;
  if (!std::equal(l.begin(), l.begin() + lead, r.begin()))
    return makeError("lhs and rhs leading (batch) dims differ");
  if (l[lead + 1] != r[lead])
    return makeError("lhs has K = ", l[lead + 1], " columns but rhs K = ", r[lead], " rows");
  MatMulDims d;
  for (size_t i = 0; i < lead; ++i) d.b *= l[i];
  d.m = l[lead], d.k = l[lead + 1], d.n = r[lead + 1];
  std::vector<int64_t> want(l.begin(), l.begin() + lead);
  want.push_back(d.m), want.push_back(d.n);
  if (y.shape != want) return makeError("output must be the leading dims, M = ", d.m, " and N = ", d.n);
  return d;
}

namespace {

using namespace emit;

Status validateMatMul(const OpCheck &c) {
  if (c.in(0).isWeight() || c.in(1).isWeight()) return makeError("both inputs must be activations");
  TPU_RETURN_IF_ERROR(c.sameType(c.in(0)));
  TPU_RETURN_IF_ERROR(c.sameType(c.in(1)));
  if (c.int8) return makeError("fp32 only (int8 models run it as an fp32 island)");
  return matMulDims(c.in(0), c.in(1), c.y).status();
}

// K rows of the right matrix lie in lanes (opd1_c); K and N are w extents.
Status encodableMatMul(const Graph &g, const Op &op) {
  auto d = matMulDims(g.tensors[size_t(op.inputs[0])], g.tensors[size_t(op.inputs[1])], g.tensors[size_t(op.output)]);
  if (!d) return d.status();
  if (d->k > maxChannels())
    return makeError("K = ", d->k, " exceeds the ", maxChannels(),
                     " rows one mm2 command takes (K splitting is not implemented)");
  if (d->n > kMaxDim) return makeError("N = ", d->n, " exceeds ", kMaxDim);
  return Status::ok();
}

// The mm2 command's arithmetic: per output element, matrixProductSum over K.
void evaluateMatMul(const RefArgs &r, Bytes &out) {
  const MatMulDims d = *matMulDims(r.input(0), r.input(1), r.y);
  const float *a = floats(*r.in[0]), *b = floats(*r.in[1]);
  std::vector<float> y(r.count);
  for (int64_t i = 0; i < d.b; ++i) {
    const float *ai = a + i * d.m * d.k, *bi = b + i * d.k * d.n;
    for (int64_t m = 0; m < d.m; ++m)
      for (int64_t n = 0; n < d.n; ++n)
        y[size_t((i * d.m + m) * d.n + n)] =
            matrixProductSum([&](int64_t k) { return ai[m * d.k + k]; }, [&](int64_t k) { return bi[k * d.n + n]; }, 0, d.k);
  }
  out = fromFloats(y);
}

class MatMulOp : public SlicedOp {
public:
  MatMulOp(Emitter &e, const Op &op)
      : SlicedOp(e, op),
        d_(*matMulDims(e.g.tensors[size_t(op.inputs[0])], e.g.tensors[size_t(op.inputs[1])],
                       e.g.tensors[size_t(op.output)])) {
    l_ = e.ddr(op.inputs[0]), r_ = e.ddr(op.inputs[1]), y_ = e.ddr(op.output);
    l_.s = {d_.b, d_.m, 1, d_.k}, r_.s = {d_.b, d_.k, 1, d_.n}, y_.s = {d_.b, d_.m, 1, d_.n};
  }
  std::array<int64_t, 3> extents() const override { return {d_.b, d_.m, 1}; }
  bool cutsH() const override { return false; }
  std::vector<uint64_t> setBytes(int64_t ns, int64_t cs, int64_t) const override {
    return {LocalTensor::bytes(DType::F32, leftShape(ns, cs), lanes()),
            LocalTensor::bytes(DType::F32, rightShape(ns), lanes()),
            LocalTensor::bytes(DType::F32, outShape(ns, cs), lanes())};
  }
  uint16_t load(const Tile &t, unsigned set, uint16_t wait) override {
    e_.move(true, l_, t.n0, t.ns, t.c0, t.cs, 0, 1, buf(set, 0, leftShape(t.ns, t.cs)), wait);
    return e_.move(true, r_, t.n0, t.ns, 0, d_.k, 0, 1, buf(set, 1, rightShape(t.ns)), wait);
  }
  uint16_t compute(const Tile &t, unsigned set, uint16_t wait) override {
    isa::MatMul2 c;
    c.left = buf(set, 0, leftShape(t.ns, t.cs)).operand(hw_);
    c.right = buf(set, 1, rightShape(t.ns)).operand(hw_);
    c.output = buf(set, 2, outShape(t.ns, t.cs)).operand(hw_);
    return e_.b->tiu(c, wait);
  }
  uint16_t store(const Tile &t, unsigned set, uint16_t wait) override {
    return e_.move(false, y_, t.n0, t.ns, t.c0, t.cs, 0, 1, buf(set, 2, outShape(t.ns, t.cs)), wait);
  }

private:
  Shape4 leftShape(int64_t ns, int64_t cs) const { return {u32(ns), u32(cs), 1, u32(d_.k)}; }
  Shape4 rightShape(int64_t ns) const { return {u32(ns), u32(d_.k), 1, u32(d_.n)}; }
  Shape4 outShape(int64_t ns, int64_t cs) const { return {u32(ns), u32(cs), 1, u32(d_.n)}; }
  LocalTensor buf(unsigned set, size_t i, Shape4 s) const {
    return LocalTensor::compact(bufOffset(set, i), DType::F32, s, lanes());
  }
  MatMulDims d_;
  DTensor l_, r_, y_;
};

} // namespace

namespace ops {
const OpImpl MatMul{OpKind::MatMul, validateMatMul, evaluateMatMul, slicedAs<MatMulOp>, nullptr, encodableMatMul};
} // namespace ops

} // namespace tpu::backend
