// Gemm family: top.gemm and top.matmul -> tpu.fc (weight [n, k], alpha and
// beta folded into weight and bias; transA: the fc reads its input transposed).

#include "compiler/Lowering/Lowerer.h"

using namespace mlir;

namespace tpu::lowering {

Status Lowerer::lowerFc(Operation *op, Value a, Value bw, Value c, double alpha, double beta, bool transA,
                        bool transB) {
  Value result = op->getResult(0);
  std::string name = names_[result];
  auto relu = fusibleRelu(result);
  if (relu) result = relu.getOutput();
  const std::string &outName = names_[result];
  auto as = shapeOf(a), bs = shapeOf(bw);
  if (as.size() != 2 || bs.size() != 2) return noLowering(op, "fc needs a 2-D activation and a 2-D weight");
  auto wv = weightValues(bw, "the right operand", op);
  if (!wv) return noLowering(op, wv.message());
  const int64_t kdim = transA ? as[0] : as[1], n = transB ? bs[0] : bs[1];
  // Weight as [n, k], alpha folded in.
  std::vector<float> w(size_t(n * kdim));
  for (int64_t j = 0; j < n; ++j)
    for (int64_t q = 0; q < kdim; ++q)
      w[size_t(j * kdim + q)] = float(alpha) * (*wv)[size_t(transB ? j * kdim + q : q * n + j)];
  std::vector<float> bias;
  if (c && !isa<NoneType>(c.getType())) {
    auto cv = weightValues(c, "the bias (C)", op);
    if (!cv) return noLowering(op, cv.message());
    // C broadcasts over the [M, N] output; the back end adds one value per
    // output column, so every row of the broadcast C must be the same.
    auto cs = shapeOf(c);
    const int64_t cols = cs.empty() ? 1 : cs.back();
    if (cols != 1 && cols != n) return noLowering(op, "the bias (C) does not broadcast to the output columns");
    for (size_t i = 0; i < cv->size(); ++i)
      if ((*cv)[i] != (*cv)[i % size_t(cols)])
        return noLowering(op, "a bias (C) whose rows differ (the back end adds one value per output column)");
    for (int64_t j = 0; j < n; ++j) bias.push_back(float(beta) * (*cv)[size_t(j % cols)]);
  }
  auto outShape = shapeOf(result);
  const bool doRelu = bool(relu);
  Value out;
  bool int8 = wantInt8(name) && wantInt8(outName);
  if (int8) {
    Value x = i8(a);
    const float si = scaleOfValue(x), so = scaleOf(outName);
    const double wk = double(si) / so;
    auto r = weightShift(w, bias, wk, so);
    if (!r) {
      out_.fallbacks.push_back(outName + ": fc weights or bias do not fit int8/int16 with any right shift");
      int8 = false;
    } else {
      WeightPair q = addInt8Weights(name, "weight", {n, kdim}, nearestInt8(w, {std::ldexp(wk, *r)}), bias, so, *r);
      out = make<tpuir::FcOp>(outName, qType(outShape, outName), x, q.weight, q.bias, transA, doRelu, uint64_t(*r));
    }
  }
  if (!int8) {
    WeightPair f = addF32Weights(name, "weight", {n, kdim}, w, bias);
    Value x = f32(a);
    out = make<tpuir::FcOp>(outName, f32Type(outShape), x, f.weight, f.bias, transA, doRelu);
  }
  if (relu) fused_.insert(relu);
  (int8 ? vals_[result].i8 : vals_[result].f32) = out;
  return Status::ok();
}

void addGemmLowerings(LoweringTable &t) {
  t.add<top::GemmOp>([](Lowerer &l, top::GemmOp g) {
    return l.lowerFc(g, g.getA(), g.getB(), g.getC(), g.getAlpha().convertToDouble(), g.getBeta().convertToDouble(),
                     g.getTransA(), g.getTransB());
  });
  t.add<top::MatMulOp>(
      [](Lowerer &l, top::MatMulOp m) { return l.lowerFc(m, m.getA(), m.getB(), nullptr, 1.0, 1.0, false, false); });
}

} // namespace tpu::lowering
