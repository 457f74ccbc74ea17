// Gemm family: top.gemm and top.matmul with a constant right operand ->
// tpu.fc (weight [n, k], alpha and beta folded into weight and bias, a
// matmul's add of one constant per output column into the bias; transA: the
// fc reads its input transposed). An activation of more than 2 dims is one
// fc over the rows of its leading dims; a batched weight (3-D, 4-D) is one
// fc per batch matrix, its rows cut out and the results put together by
// tpu.move; a bias (C) whose rows differ is an fp32 add behind the fc.
// top.matmul of two activations -> tpu.matmul (fp32; in INT8 an fp32
// island, as TPU-MLIR does on BM1684); so does a top.gemm whose right
// operand is an activation, its transposes tpu.move, alpha a tpu.mul and
// beta * C a tpu.add (NumPy broadcast).

#include "compiler/Lowering/Lowerer.h"

#include <numeric>

using namespace mlir;

namespace tpu::lowering {

namespace {
// The weight as [n, k] (transB: it is [n, k] already, else [k, n]), times alpha.
std::vector<float> weightRows(const float *wv, int64_t n, int64_t k, bool transB, double alpha) {
  std::vector<float> w(size_t(n * k));
  for (int64_t j = 0; j < n; ++j)
    for (int64_t q = 0; q < k; ++q) w[size_t(j * k + q)] = float(alpha) * wv[size_t(transB ? j * k + q : q * n + j)];
  return w;
}

// The add that is v's only user when it adds a constant of one value per
// column of v ([n] or [1, ..., n], or a scalar): torch's Linear over an N-D
// input is a matmul and such an add.
top::AddOp columnBiasAdd(Value v) {
  if (!v.hasOneUse()) return nullptr;
  auto add = dyn_cast<top::AddOp>(*v.getUsers().begin());
  if (!add) return nullptr;
  Value c = add.getLhs() == v ? add.getRhs() : add.getLhs();
  if (!c.getDefiningOp<top::WeightOp>()) return nullptr;
  auto cs = shapeOf(c), vs = shapeOf(v);
  if (cs.size() > vs.size() || shapeOf(add.getOutput()) != vs) return nullptr;
  for (size_t d = 0; d + 1 < cs.size(); ++d)
    if (cs[d] != 1) return nullptr;
  return cs.empty() || cs.back() == 1 || cs.back() == vs.back() ? add : nullptr;
}
} // namespace

Status Lowerer::lowerFc(Operation *op, Value a, Value bw, Value c, double alpha, double beta, bool transA,
                        bool transB) {
  Value result = op->getResult(0);
  std::string name = names_[result];
  auto as = shapeOf(a), bs = shapeOf(bw);
  if (as.size() < 2 || bs.size() < 2) return noLowering(op, "a 1-D operand (fc multiplies matrices)");
  top::AddOp biasAdd = !c && bs.size() == 2 ? columnBiasAdd(result) : nullptr;
  if (biasAdd) {
    c = biasAdd.getLhs() == result ? biasAdd.getRhs() : biasAdd.getLhs();
    result = biasAdd.getOutput();
  }
  auto relu = fusibleRelu(result);
  if (relu) result = relu->getResult(0);
  const std::string &outName = names_[result];
  if (transA && as.size() != 2) return noLowering(op, "a transposed activation of more than 2 dims");
  auto wv = weightValues(bw, "the right operand", op);
  if (!wv) return noLowering(op, wv.message());
  if (bs.size() > 2) return lowerBatchedFc(op, a, *wv, bool(relu));
  const int64_t kdim = transA ? as[0] : as.back(), n = transB ? bs[0] : bs[1];
  std::vector<float> w = weightRows(wv->data(), n, kdim, transB, alpha);
  auto outShape = shapeOf(result);
  // C broadcasts over the [M, N] output: one value per output column is the
  // fc's bias; a C whose rows differ is added behind it.
  std::vector<float> bias, matrix;
  if (c && !isa<NoneType>(c.getType())) {
    auto cv = weightValues(c, "the bias (C)", op);
    if (!cv) return noLowering(op, cv.message());
    auto cs = shapeOf(c);
    const int64_t cols = cs.empty() ? 1 : cs.back(), rows = int64_t(cv->size()) / cols, m = outShape[0];
    if ((cols != 1 && cols != n) || (rows != 1 && rows != m))
      return noLowering(op, "the bias (C) does not broadcast to the output");
    if (llvm::all_of(llvm::seq<size_t>(0, cv->size()), [&](size_t i) { return (*cv)[i] == (*cv)[i % size_t(cols)]; })) {
      for (int64_t j = 0; j < n; ++j) bias.push_back(float(beta) * (*cv)[size_t(j % cols)]);
    } else {
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) matrix.push_back(float(beta) * (*cv)[size_t(i % rows * cols + j % cols)]);
    }
  }
  const bool doRelu = bool(relu);
  bool int8 = wantInt8(name) && wantInt8(outName);
  if (int8 && !matrix.empty()) {
    out_.fallbacks.push_back(outName + ": a gemm bias whose rows differ is an fp32 add (runs in fp32 between casts)");
    int8 = false;
  }
  // The fc itself, or the fc before the add of a bias matrix.
  const std::string fcName = matrix.empty() ? outName : outName + "_fc";
  Value out = lowerWeighted(a, name, fcName, outShape, "weight", {n, kdim}, w, bias, "fc", int8,
                            [&](Type t, Value x, const WeightPair &p, uint64_t r) {
                              return make<tpuir::FcOp>(fcName, t, x, p.weight, p.bias, transA,
                                                       doRelu && matrix.empty(), r);
                            });
  if (!matrix.empty()) {
    Value cw = addWeight(name + "_c", NpyArray::from(outShape, matrix.data(), matrix.size()), b_.getF32Type());
    out = make<tpuir::AddOp>(outName, f32Type(outShape), out, cw, doRelu, uint64_t(0), ArrayRef<int64_t>{});
  }
  if (relu) fused_.insert(relu);
  if (biasAdd) fused_.insert(biasAdd);
  (int8 ? vals_[result].i8 : vals_[result].f32) = out;
  return Status::ok();
}

// matmul by a weight [B..., k, n] (the activation [B..., m, k], the same
// batch dims): per batch matrix, its m rows of the activation cut out
// (tpu.move), an fc, and the B results moved into the output. One weight
// tensor, one shift: every fc is int8 or none is.
Status Lowerer::lowerBatchedFc(Operation *op, Value a, const std::vector<float> &wv, bool doRelu) {
  Value result = op->getResult(0);
  const std::string name = names_[result];
  if (doRelu) result = fusibleRelu(result)->getResult(0);
  const std::string &outName = names_[result];
  auto as = shapeOf(a), bs = shapeOf(op->getOperand(1)), outShape = shapeOf(result);
  if (as.size() != bs.size() || !std::equal(as.begin(), as.end() - 2, bs.begin()))
    return noLowering(op, "a batched weight whose batch dims differ from the activation's");
  const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  const int64_t batches = std::accumulate(bs.begin(), bs.end() - 2, int64_t(1), std::multiplies<>());
  std::vector<float> w(wv.size());
  for (int64_t b = 0; b < batches; ++b) {
    std::vector<float> rows = weightRows(wv.data() + b * k * n, n, k, false, 1.0);
    std::copy(rows.begin(), rows.end(), w.begin() + b * n * k);
  }
  bool int8 = wantInt8(name) && wantInt8(outName);
  std::optional<Int8Weighting> q8;
  if (int8 && !(q8 = int8Weighting(a, outName, "fc", w, {}))) int8 = false;
  Value x = int8 ? q8->x : f32(a);
  const Type outType = int8 ? Type(qType({m, n}, outName)) : Type(f32Type({m, n}));
  std::vector<Value> parts;
  MovePieces gather;
  for (int64_t b = 0; b < batches; ++b) {
    const std::string part = outName + "_" + std::to_string(b);
    MovePieces rows;
    rows.add(0, {m, k}, b * m * k, {k, 1}, 0, {k, 1});
    Value xb = make<tpuir::MoveOp>(part + "_rows", int8 ? Type(likeType(x, {m, k})) : Type(f32Type({m, k})),
                                   ValueRange{x}, rows.values, FloatAttr());
    std::vector<float> wb(w.begin() + b * n * k, w.begin() + (b + 1) * n * k);
    WeightPair p = int8 ? addInt8Weights(name + "_" + std::to_string(b), "weight", {n, k},
                                         nearestInt8(wb, {std::ldexp(q8->wk, q8->rshift)}), {}, q8->outScale,
                                         q8->rshift)
                        : addF32Weights(name + "_" + std::to_string(b), "weight", {n, k}, wb, {});
    parts.push_back(make<tpuir::FcOp>(part, outType, xb, p.weight, p.bias, false, doRelu, uint64_t(int8 ? q8->rshift : 0)));
    gather.add(int(b), {m, n}, 0, {n, 1}, b * m * n, {n, 1});
  }
  auto resultType = int8 ? Type(qType(outShape, outName)) : Type(f32Type(outShape));
  Value out = make<tpuir::MoveOp>(outName, resultType, ValueRange(parts), gather.values, FloatAttr());
  if (doRelu) fused_.insert(result.getDefiningOp());
  (int8 ? vals_[result].i8 : vals_[result].f32) = out;
  return Status::ok();
}

Status Lowerer::lowerMatMul(top::MatMulOp op) {
  Value a = op.getA(), b = op.getB(), result = op.getOutput();
  if (b.getDefiningOp<top::WeightOp>()) return lowerFc(op, a, b, nullptr, 1.0, 1.0, false, false);
  if (a.getDefiningOp<top::WeightOp>()) return noLowering(op, "a constant left operand times an activation");
  const auto as = shapeOf(a), bs = shapeOf(b);
  if (as.size() < 2 || bs.size() < 2) return noLowering(op, "a 1-D operand of a product of two activations");
  if (as.size() != bs.size() || !std::equal(as.begin(), as.end() - 2, bs.begin()))
    return noLowering(op, "operands whose leading (batch) dims differ (no broadcasting of two activations)");
  const std::string &name = names_[result];
  if (wantInt8(name)) out_.fallbacks.push_back(name + ": a matmul of two activations runs in fp32 on the BM1684");
  vals_[result].f32 = make<tpuir::MatMulOp>(name, f32Type(shapeOf(result)), f32(a), f32(b));
  return Status::ok();
}

Status Lowerer::lowerGemmOfActivations(top::GemmOp op) {
  Value a = op.getA(), b = op.getB(), c = op.getC(), result = op.getOutput();
  if (a.getDefiningOp<top::WeightOp>()) return noLowering(op, "a constant left operand times an activation");
  const auto as = shapeOf(a), bs = shapeOf(b), outShape = shapeOf(result);
  if (as.size() != 2 || bs.size() != 2) return noLowering(op, "a gemm operand that is not a matrix");
  const std::string &name = names_[result];
  if (wantInt8(name))
    out_.fallbacks.push_back(name + ": a gemm whose right operand is an activation runs in fp32 on the BM1684");
  const double alpha = op.getAlpha().convertToDouble(), beta = op.getBeta().convertToDouble();
  const bool hasC = c && !isa<NoneType>(c.getType()) && beta != 0;
  auto transposed = [&](Value v, const std::string &suffix) -> Value {
    const auto s = shapeOf(v);
    MovePieces p;
    p.add(0, {s[1], s[0]}, 0, {1, s[1]}, 0, {s[0], 1});
    return make<tpuir::MoveOp>(name + suffix, f32Type({s[1], s[0]}), ValueRange{f32(v)}, p.values, FloatAttr());
  };
  auto scalar = [&](const std::string &wname, double v) {
    const float f = float(v);
    return addWeight(wname, NpyArray::from({1, 1}, &f, 1), b_.getF32Type());
  };
  Value x = op.getTransA() ? transposed(a, "_at") : f32(a);
  Value y = op.getTransB() ? transposed(b, "_bt") : f32(b);
  // Each step is named after the result when it is the last one.
  Value out = make<tpuir::MatMulOp>(alpha != 1 || hasC ? name + "_ab" : name, f32Type(outShape), x, y);
  if (alpha != 1)
    out = make<tpuir::MulOp>(hasC ? name + "_alpha_ab" : name, f32Type(outShape), out, scalar(name + "_alpha", alpha),
                             false, uint64_t(0), ArrayRef<int64_t>{});
  if (hasC) {
    auto cs = shapeOf(c);
    Value addend;
    if (c.getDefiningOp<top::WeightOp>()) {
      auto cv = weightValues(c, "the bias (C)", op);
      if (!cv) return noLowering(op, cv.message());
      for (float &v : *cv) v = float(beta * v);
      cs.insert(cs.begin(), 2 - std::min<size_t>(cs.size(), 2), 1);
      addend = addWeight(name + "_c", NpyArray::from(cs, *cv), b_.getF32Type());
    } else {
      addend = f32(c);
      if (beta != 1)
        addend = make<tpuir::MulOp>(name + "_beta_c", f32Type(cs), addend, scalar(name + "_beta", beta), false,
                                    uint64_t(0), ArrayRef<int64_t>{});
    }
    out = make<tpuir::AddOp>(name, f32Type(outShape), out, addend, false, uint64_t(0), ArrayRef<int64_t>{});
  }
  vals_[result].f32 = out;
  return Status::ok();
}

void addGemmLowerings(LoweringTable &t) {
  t.add<top::GemmOp>([](Lowerer &l, top::GemmOp g) {
    if (!g.getB().getDefiningOp<top::WeightOp>()) return l.lowerGemmOfActivations(g);
    return l.lowerFc(g, g.getA(), g.getB(), g.getC(), g.getAlpha().convertToDouble(), g.getBeta().convertToDouble(),
                     g.getTransA(), g.getTransB());
  });
  t.add<top::MatMulOp>([](Lowerer &l, top::MatMulOp m) { return l.lowerMatMul(m); });
}

} // namespace tpu::lowering
