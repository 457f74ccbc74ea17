// Folds constant arithmetic into weights (see Passes.td). Every rewrite reads
// the weights it needs from the WeightStore and adds the results under new
// names; the pass saves the store once at the end.
#include "compiler/Dialect/Top/TopOps.h"
#include "compiler/Dialect/Top/WeightStore.h"
#include "compiler/Transforms/Passes.h"
#include "compiler/Transforms/PassWeights.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

using namespace mlir;

namespace top {
#define GEN_PASS_DEF_TOPFOLDWEIGHTS
#include "compiler/Transforms/Passes.h.inc"

namespace {

// Values of a f32 weight, or nullopt if `v` is not one.
std::optional<std::vector<float>> weightValues(const WeightStore &store, Value v) {
  auto w = v.getDefiningOp<WeightOp>();
  if (!w) return std::nullopt;
  auto a = store.get(w);
  if (!a || !(*a)->is<float>()) return std::nullopt;
  return (*a)->values<float>();
}

// A per-channel vector of length `channels` from a constant that broadcasts
// against an NC... tensor of rank `rank` along dim 1 only (scalar, [C,1,..],
// [1,C,1,..]); nullopt otherwise.
std::optional<std::vector<float>> perChannel(const WeightStore &store, Value v, int64_t channels, int64_t rank) {
  auto values = weightValues(store, v);
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!values || !type || type.getRank() > rank) return std::nullopt;
  if (values->size() == 1) return std::vector<float>(channels, (*values)[0]);
  auto shape = type.getShape();
  int64_t offset = rank - type.getRank();
  for (int64_t d = 0; d < type.getRank(); ++d) {
    int64_t dim = d + offset;
    if (shape[d] != 1 && !(dim == 1 && shape[d] == channels)) return std::nullopt;
  }
  if (int64_t(values->size()) != channels) return std::nullopt;
  return values;
}

Value makeWeight(PatternRewriter &rewriter, WeightStore &store, Operation *anchor, const std::string &base,
                 std::vector<int64_t> shape, const std::vector<float> &values) {
  std::string name = store.add(base, tpu::NpyArray::from<float>(shape, values));
  auto type = RankedTensorType::get(shape, rewriter.getF32Type());
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(anchor);
  return rewriter.create<WeightOp>(NameLoc::get(rewriter.getStringAttr(name)), type, rewriter.getStringAttr(name));
}

std::string nameOf(Value v) {
  if (auto w = v.getDefiningOp<WeightOp>()) return w.getName().str();
  return "w";
}

struct WeightPattern {
  explicit WeightPattern(WeightStore &store) : store(store) {}
  WeightStore &store;
};

// Output channel of each filter element: conv filters are [oc, ic/g, k...];
// transposed-conv filters are [ic, oc/g, k...] with input channel i in group i / (ic/g).
std::vector<int64_t> outputChannelOfFilter(Operation *conv, RankedTensorType wType) {
  int64_t d0 = wType.getDimSize(0), d1 = wType.getDimSize(1);
  int64_t per = wType.getNumElements() / (d0 * d1);
  std::vector<int64_t> oc(wType.getNumElements());
  auto transposed = dyn_cast<ConvTransposeOp>(conv);
  int64_t groups = transposed ? transposed.getGroup() : 1, icPerGroup = d0 / groups;
  for (int64_t a = 0; a < d0; ++a)
    for (int64_t b = 0; b < d1; ++b)
      for (int64_t i = 0; i < per; ++i)
        oc[(a * d1 + b) * per + i] = transposed ? (a / icPerGroup) * d1 + b : a;
  return oc;
}

// Rewrites a conv / conv_transpose so that out' = out * scale[oc] + shift[oc], in place of `replaced`.
template <typename ConvT>
LogicalResult rescaleConv(PatternRewriter &rewriter, WeightStore &store, ConvT conv, Operation *replaced,
                          const std::vector<float> &scale, const std::vector<float> &shift) {
  auto w = weightValues(store, conv.getFilter());
  if (!w) return failure();
  auto wType = cast<RankedTensorType>(conv.getFilter().getType());
  int64_t oc = cast<RankedTensorType>(conv.getType()).getDimSize(1);
  if (int64_t(scale.size()) != oc || int64_t(shift.size()) != oc) return failure();
  std::vector<float> bias(oc, 0.0f);
  if (!isa<NoneType>(conv.getBias().getType())) {
    auto b = weightValues(store, conv.getBias());
    if (!b || int64_t(b->size()) != oc) return failure();
    bias = *b;
  }
  std::vector<float> nw(*w);
  std::vector<int64_t> channel = outputChannelOfFilter(conv, wType);
  for (size_t i = 0; i < nw.size(); ++i) nw[i] *= scale[channel[i]];
  for (int64_t o = 0; o < oc; ++o) bias[o] = bias[o] * scale[o] + shift[o];
  std::vector<int64_t> wShape(wType.getShape().begin(), wType.getShape().end());
  Value newW = makeWeight(rewriter, store, conv, nameOf(conv.getFilter()) + "_folded", wShape, nw);
  Value newB = makeWeight(rewriter, store, conv, nameOf(conv.getFilter()) + "_bias_folded", {oc}, bias);
  rewriter.modifyOpInPlace(conv, [&] {
    conv.getFilterMutable().assign(newW);
    conv.getBiasMutable().assign(newB);
    conv->setLoc(replaced->getLoc());
  });
  rewriter.replaceOp(replaced, conv.getOutput());
  return success();
}

// The single-use conv without fused activation that produces v.
ConvOp plainConv(Value v) {
  auto conv = v.getDefiningOp<ConvOp>();
  return conv && conv->hasOneUse() && !conv.getDoRelu() ? conv : ConvOp();
}

// Applies rescaleConv to whichever convolution (plain or transposed) produces v.
LogicalResult rescaleProducer(PatternRewriter &rewriter, WeightStore &store, Value v, Operation *replaced,
                              const std::vector<float> &scale, const std::vector<float> &shift) {
  if (ConvOp conv = plainConv(v)) return rescaleConv(rewriter, store, conv, replaced, scale, shift);
  if (auto convT = v.getDefiningOp<ConvTransposeOp>(); convT && convT->hasOneUse())
    return rescaleConv(rewriter, store, convT, replaced, scale, shift);
  return failure();
}

bool isConvolution(Value v) {
  auto t = v.getDefiningOp<ConvTransposeOp>();
  return plainConv(v) || (t && t->hasOneUse());
}

struct FoldBatchNormIntoConv : OpRewritePattern<BatchNormOp>, WeightPattern {
  FoldBatchNormIntoConv(MLIRContext *ctx, WeightStore &store) : OpRewritePattern(ctx), WeightPattern(store) {}
  LogicalResult matchAndRewrite(BatchNormOp bn, PatternRewriter &rewriter) const override {
    if (!isConvolution(bn.getInput())) return failure();
    auto gamma = weightValues(store, bn.getScale()), beta = weightValues(store, bn.getBias());
    auto mean = weightValues(store, bn.getMean()), var = weightValues(store, bn.getVariance());
    if (!gamma || !beta || !mean || !var) return failure();
    size_t oc = gamma->size();
    std::vector<float> scale(oc), shift(oc);
    for (size_t c = 0; c < oc; ++c) {
      scale[c] = (*gamma)[c] / std::sqrt((*var)[c] + float(bn.getEpsilon().convertToDouble()));
      shift[c] = (*beta)[c] - (*mean)[c] * scale[c];
    }
    return rescaleProducer(rewriter, store, bn.getInput(), bn, scale, shift);
  }
};

// conv * c and conv + c with c constant per output channel.
template <typename OpT, bool isMul> struct FoldBinaryIntoConv : OpRewritePattern<OpT>, WeightPattern {
  FoldBinaryIntoConv(MLIRContext *ctx, WeightStore &store) : OpRewritePattern<OpT>(ctx), WeightPattern(store) {}
  LogicalResult matchAndRewrite(OpT op, PatternRewriter &rewriter) const override {
    for (int side = 0; side < 2; ++side) {
      Value convOut = side ? op.getRhs() : op.getLhs();
      Value other = side ? op.getLhs() : op.getRhs();
      if (!isConvolution(convOut) || op.getType() != convOut.getType()) continue;
      auto outType = cast<RankedTensorType>(convOut.getType());
      int64_t oc = outType.getDimSize(1);
      auto c = perChannel(store, other, oc, outType.getRank());
      if (!c) continue;
      std::vector<float> scale(oc, 1.0f), shift(oc, 0.0f);
      (isMul ? scale : shift) = *c;
      return rescaleProducer(rewriter, store, convOut, op, scale, shift);
    }
    return failure();
  }
};

// batch_norm * c and batch_norm + c with c per channel: fold into its scale/bias.
template <typename OpT, bool isMul> struct FoldBinaryIntoBatchNorm : OpRewritePattern<OpT>, WeightPattern {
  FoldBinaryIntoBatchNorm(MLIRContext *ctx, WeightStore &store) : OpRewritePattern<OpT>(ctx), WeightPattern(store) {}
  LogicalResult matchAndRewrite(OpT op, PatternRewriter &rewriter) const override {
    for (int side = 0; side < 2; ++side) {
      auto bn = (side ? op.getRhs() : op.getLhs()).template getDefiningOp<BatchNormOp>();
      Value other = side ? op.getLhs() : op.getRhs();
      if (!bn || !bn->hasOneUse() || op.getType() != bn.getType()) continue;
      auto outType = cast<RankedTensorType>(bn.getType());
      int64_t ch = outType.getDimSize(1);
      auto c = perChannel(store, other, ch, outType.getRank());
      auto gamma = weightValues(store, bn.getScale()), beta = weightValues(store, bn.getBias());
      if (!c || !gamma || !beta) continue;
      for (int64_t i = 0; i < ch; ++i) {
        if (isMul) {
          (*gamma)[i] *= (*c)[i];
          (*beta)[i] *= (*c)[i];
        } else {
          (*beta)[i] += (*c)[i];
        }
      }
      Value g = makeWeight(rewriter, store, bn, nameOf(bn.getScale()) + "_folded", {ch}, *gamma);
      Value b = makeWeight(rewriter, store, bn, nameOf(bn.getBias()) + "_folded", {ch}, *beta);
      rewriter.modifyOpInPlace(bn, [&] {
        bn.getScaleMutable().assign(g);
        bn.getBiasMutable().assign(b);
        bn->setLoc(op->getLoc());
      });
      rewriter.replaceOp(op, bn.getOutput());
      return success();
    }
    return failure();
  }
};

// x / c  ->  x * (1 / c)
struct DivByConstantToMul : OpRewritePattern<DivOp>, WeightPattern {
  DivByConstantToMul(MLIRContext *ctx, WeightStore &store) : OpRewritePattern(ctx), WeightPattern(store) {}
  LogicalResult matchAndRewrite(DivOp div, PatternRewriter &rewriter) const override {
    auto c = weightValues(store, div.getRhs());
    if (!c) return failure();
    for (float &v : *c) v = 1.0f / v;
    auto type = cast<RankedTensorType>(div.getRhs().getType());
    std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
    Value r = makeWeight(rewriter, store, div, nameOf(div.getRhs()) + "_reciprocal", shape, *c);
    rewriter.replaceOpWithNewOp<MulOp>(div, div.getType(), div.getLhs(), r);
    return success();
  }
};

struct FoldWeightsPass : impl::TopFoldWeightsBase<FoldWeightsPass> {
  using TopFoldWeightsBase::TopFoldWeightsBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto store = loadWeightsOrReport(module);
    if (!store) return signalPassFailure();
    size_t before = store->arrays().size();
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldBatchNormIntoConv, DivByConstantToMul, FoldBinaryIntoConv<MulOp, true>,
                 FoldBinaryIntoConv<AddOp, false>, FoldBinaryIntoBatchNorm<MulOp, true>,
                 FoldBinaryIntoBatchNorm<AddOp, false>>(&getContext(), *store);
    GreedyRewriteConfig config;
    config.useTopDownTraversal = true; // deterministic order of new weight names
    if (failed(applyPatternsAndFoldGreedily(module, std::move(patterns), config))) return signalPassFailure();
    if (store->arrays().size() == before) return; // nothing folded: keep the old file
    if (auto st = saveDerivedWeights(module, *store, weightFile, "_folded"); !st) {
      module.emitError() << st.message();
      return signalPassFailure();
    }
  }
};

} // namespace
} // namespace top
