// Recognises op chains that exporters write for ops ONNX (before opset
// 17/18/20) lacks: LayerNorm, GELU and Mish. Constants are read from the
// weight store.
#include "compiler/Dialect/Top/TopOps.h"
#include "compiler/Dialect/Top/WeightStore.h"
#include "compiler/Transforms/PassWeights.h"
#include "compiler/Transforms/Passes.h"
#include "kernels/Kernels.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

using namespace mlir;

namespace top {
#define GEN_PASS_DEF_TOPFUSEPATTERNS
#include "compiler/Transforms/Passes.h.inc"

namespace {

// The value of a constant whose elements are all equal, if `v` is one.
std::optional<double> uniformConstant(const WeightStore &store, Value v) {
  auto w = v.getDefiningOp<WeightOp>();
  if (!w) return std::nullopt;
  auto a = store.get(w);
  if (!a || !(*a)->is<float>() || (*a)->numel() < 1) return std::nullopt;
  auto values = (*a)->values<float>();
  for (float x : values)
    if (x != values[0]) return std::nullopt;
  return values[0];
}

bool near(std::optional<double> v, double want, double tol = 1e-4) {
  return v && std::abs(*v - want) <= tol * std::max(1.0, std::abs(want));
}

// If `op` is a binary op of type OpT with `v` on one side, the other side.
template <typename OpT> Value otherOperand(OpT op, Value v) {
  if (op.getLhs() == v) return op.getRhs();
  if (op.getRhs() == v) return op.getLhs();
  return {};
}

bool trailingAxes(ArrayRef<int64_t> axes, int64_t rank) {
  if (axes.empty()) return false;
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] != rank - int64_t(axes.size()) + int64_t(i)) return false;
  return true;
}

struct StorePattern {
  explicit StorePattern(const WeightStore &store) : store(store) {}
  const WeightStore &store;
};

// ... div(sub(x, mean(x)), sqrt(mean(sq(sub)) + eps)) [* gamma] [+ beta]
struct FuseLayerNorm : OpRewritePattern<DivOp>, StorePattern {
  FuseLayerNorm(MLIRContext *ctx, const WeightStore &store) : OpRewritePattern(ctx), StorePattern(store) {}
  LogicalResult matchAndRewrite(DivOp div, PatternRewriter &rewriter) const override {
    auto sub = div.getLhs().getDefiningOp<SubOp>();
    auto sqrt = div.getRhs().getDefiningOp<SqrtOp>();
    if (!sub || !sqrt) return failure();
    auto mean = sub.getRhs().getDefiningOp<ReduceMeanOp>();
    Value x = sub.getLhs();
    auto xType = dyn_cast<RankedTensorType>(x.getType());
    if (!mean || mean.getInput() != x || !mean.getKeepdims() || !xType ||
        !trailingAxes(mean.getAxes(), xType.getRank()) || div.getType() != xType)
      return failure();
    auto addEps = sqrt.getInput().getDefiningOp<AddOp>();
    if (!addEps) return failure();
    auto var = addEps.getLhs().getDefiningOp<ReduceMeanOp>();
    auto eps = uniformConstant(store, addEps.getRhs());
    if (!var || !eps || var.getAxes() != mean.getAxes() || !var.getKeepdims()) return failure();
    Operation *square = var.getInput().getDefiningOp();
    bool isSquare = false;
    if (auto pow = dyn_cast_or_null<PowOp>(square))
      isSquare = pow.getLhs() == sub.getResult() && near(uniformConstant(store, pow.getRhs()), 2.0, 0);
    else if (auto mul = dyn_cast_or_null<MulOp>(square))
      isSquare = mul.getLhs() == sub.getResult() && mul.getRhs() == sub.getResult();
    if (!isSquare) return failure();
    // Every intermediate must feed only this chain (sub also feeds the square).
    for (Operation *op : {mean.getOperation(), square, var.getOperation(), addEps.getOperation(), sqrt.getOperation()})
      if (!op->hasOneUse()) return failure();
    if (!llvm::all_of(sub->getUsers(), [&](Operation *u) { return u == div || u == square; })) return failure();

    // Optional affine tail: * gamma, + beta (constants over the normalised dims).
    Operation *last = div;
    Value gamma, beta;
    auto normalisedOnly = [&](Value c) {
      auto t = dyn_cast<RankedTensorType>(c.getType());
      if (!c.getDefiningOp<WeightOp>() || !t || t.getRank() > int64_t(mean.getAxes().size())) return false;
      auto b = tpu::kernels::broadcastShape({t.getShape().begin(), t.getShape().end()},
                                            {xType.getShape().begin(), xType.getShape().end()});
      return b && llvm::ArrayRef<int64_t>(*b) == xType.getShape();
    };
    if (div->hasOneUse())
      if (auto mul = dyn_cast<MulOp>(*div->getUsers().begin()))
        if (Value g = otherOperand(mul, div.getResult()); g && normalisedOnly(g) && mul.getType() == xType) {
          gamma = g;
          last = mul;
          if (mul->hasOneUse())
            if (auto add = dyn_cast<AddOp>(*mul->getUsers().begin()))
              if (Value b = otherOperand(add, mul.getResult()); b && normalisedOnly(b) && add.getType() == xType) {
                beta = b;
                last = add;
              }
        }
    rewriter.setInsertionPoint(last);
    Value none = rewriter.create<NoneOp>(last->getLoc(), rewriter.getNoneType());
    auto ln = rewriter.create<LayerNormOp>(last->getLoc(), xType, x, gamma ? gamma : none, beta ? beta : none,
                                           rewriter.getI64IntegerAttr(mean.getAxes().front()),
                                           rewriter.getF64FloatAttr(*eps));
    rewriter.replaceOp(last, ln.getOutput());
    return success();
  }
};

// mul(mul(x, add(erf(x / sqrt2), 1)), 0.5) and the orderings exporters use.
struct FuseGelu : OpRewritePattern<ErfOp>, StorePattern {
  FuseGelu(MLIRContext *ctx, const WeightStore &store) : OpRewritePattern(ctx), StorePattern(store) {}
  LogicalResult matchAndRewrite(ErfOp erf, PatternRewriter &rewriter) const override {
    // erf input: x / sqrt(2) or x * (1/sqrt(2)).
    Value x;
    Operation *scaleOp = erf.getInput().getDefiningOp();
    if (auto div = dyn_cast_or_null<DivOp>(scaleOp)) {
      if (near(uniformConstant(store, div.getRhs()), std::sqrt(2.0))) x = div.getLhs();
    } else if (auto mul = dyn_cast_or_null<MulOp>(scaleOp)) {
      if (near(uniformConstant(store, mul.getRhs()), std::sqrt(0.5))) x = mul.getLhs();
      else if (near(uniformConstant(store, mul.getLhs()), std::sqrt(0.5))) x = mul.getRhs();
    }
    if (!x || !scaleOp->hasOneUse() || !erf->hasOneUse()) return failure();
    auto add = dyn_cast<AddOp>(*erf->getUsers().begin());
    if (!add || !add->hasOneUse() || !near(uniformConstant(store, otherOperand(add, erf.getResult())), 1.0, 0))
      return failure();
    auto mul1 = dyn_cast<MulOp>(*add->getUsers().begin());
    if (!mul1) return failure();
    Value other = otherOperand(mul1, add.getResult());
    Operation *last = nullptr;
    if (other == x) { // (x * (erf + 1)) * 0.5
      if (!mul1->hasOneUse()) return failure();
      auto half = dyn_cast<MulOp>(*mul1->getUsers().begin());
      if (half && near(uniformConstant(store, otherOperand(half, mul1.getResult())), 0.5, 0)) last = half;
    } else if (auto halfX = other.getDefiningOp<MulOp>()) { // (x * 0.5) * (erf + 1)
      Value hx = otherOperand(halfX, x);
      if (hx && halfX->hasOneUse() && near(uniformConstant(store, hx), 0.5, 0)) last = mul1;
    }
    if (!last || last->getResult(0).getType() != x.getType()) return failure();
    rewriter.setInsertionPoint(last);
    auto gelu = rewriter.create<GeluOp>(last->getLoc(), x.getType(), x);
    rewriter.replaceOp(last, gelu.getOutput());
    return success();
  }
};

// x * clip(x + 3, 0, 6) / 6 (PaddlePaddle's hard_swish; also * (1/6)).
struct FuseHardSwish : OpRewritePattern<ClipOp>, StorePattern {
  FuseHardSwish(MLIRContext *ctx, const WeightStore &store) : OpRewritePattern(ctx), StorePattern(store) {}
  LogicalResult matchAndRewrite(ClipOp clip, PatternRewriter &rewriter) const override {
    if (clip.getMin().convertToDouble() != 0.0 || clip.getMax().convertToDouble() != 6.0 || !clip->hasOneUse())
      return failure();
    auto add = clip.getInput().getDefiningOp<AddOp>();
    if (!add || !add->hasOneUse()) return failure();
    Value x = near(uniformConstant(store, add.getRhs()), 3.0, 0) ? add.getLhs()
              : near(uniformConstant(store, add.getLhs()), 3.0, 0) ? add.getRhs() : Value();
    auto mul = dyn_cast<MulOp>(*clip->getUsers().begin());
    if (!x || !mul || otherOperand(mul, clip.getResult()) != x || !mul->hasOneUse()) return failure();
    Operation *scale = *mul->getUsers().begin();
    bool sixth = false;
    if (auto div = dyn_cast<DivOp>(scale)) sixth = div.getLhs() == mul.getResult() && near(uniformConstant(store, div.getRhs()), 6.0, 0);
    else if (auto m = dyn_cast<MulOp>(scale)) sixth = near(uniformConstant(store, otherOperand(m, mul.getResult())), 1.0 / 6);
    if (!sixth || scale->getResult(0).getType() != x.getType()) return failure();
    rewriter.setInsertionPoint(scale);
    auto hs = rewriter.create<HardSwishOp>(scale->getLoc(), x.getType(), x);
    rewriter.replaceOp(scale, hs.getOutput());
    return success();
  }
};

// mul(x, tanh(softplus(x))), either operand order (torch's Mish before opset 18).
struct FuseMish : OpRewritePattern<SoftplusOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftplusOp softplus, PatternRewriter &rewriter) const override {
    Value x = softplus.getInput();
    if (!softplus->hasOneUse()) return failure();
    auto tanh = dyn_cast<TanhOp>(*softplus->getUsers().begin());
    if (!tanh || !tanh->hasOneUse()) return failure();
    auto mul = dyn_cast<MulOp>(*tanh->getUsers().begin());
    if (!mul || otherOperand(mul, tanh.getResult()) != x || mul.getResult().getType() != x.getType()) return failure();
    rewriter.setInsertionPoint(mul);
    auto mish = rewriter.create<MishOp>(mul.getLoc(), x.getType(), x);
    rewriter.replaceOp(mul, mish.getOutput());
    return success();
  }
};

struct FusePatternsPass : impl::TopFusePatternsBase<FusePatternsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto store = loadWeightsOrReport(module);
    if (!store) return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    populateFusePatterns(patterns, *store);
    if (failed(applyPatternsAndFoldGreedily(module, std::move(patterns)))) return signalPassFailure();
  }
};

} // namespace

void populateFusePatterns(RewritePatternSet &patterns, const WeightStore &store) {
  patterns.add<FuseLayerNorm, FuseGelu, FuseHardSwish>(patterns.getContext(), store);
  patterns.add<FuseMish>(patterns.getContext());
}

} // namespace top
