// Structural canonicalization of the Top dialect: rewrites that never change
// weight values (those are in compiler/Transforms, which own the weight store).
#include "compiler/Dialect/Top/TopOps.h"

#include <cmath>

using namespace mlir;

namespace top {
namespace {

// The single-use producer of `v` of type OpT, or null.
template <typename OpT> OpT soleUseProducer(Value v) {
  auto op = v.getDefiningOp<OpT>();
  return op && op->hasOneUse() ? op : OpT();
}

// The conv that `v` is, or that it reaches back through single-use
// reshapes, slices and permutes (they commute with a pointwise activation:
// they only select and reorder elements), when that conv has one use and no
// activation yet; the ops crossed, last first, in `moves`. A 3-D conv
// imported as a 2-D one ends in such a chain (docs/compiler.md, "Importer").
ConvOp activationConv(Value v, llvm::SmallVectorImpl<Operation *> &moves) {
  for (Operation *op = v.getDefiningOp(); op && op->hasOneUse(); op = op->getOperand(0).getDefiningOp()) {
    if (auto conv = dyn_cast<ConvOp>(op)) return conv.getDoRelu() ? ConvOp() : conv;
    if (!isa<ReshapeOp, SliceOp, PermuteOp>(op)) return ConvOp();
    moves.push_back(op);
  }
  return ConvOp();
}

// conv [-> moves] -> act  =>  conv{do_relu, relu_limit} [-> moves]. Without
// moves the conv takes the activation's name (its output is the
// activation's); with them the last move does, and the conv and the other
// moves get "_relu" names, so no name of the imported model (a conv
// output's) holds activated values.
LogicalResult fuseActivation(Operation *act, Value input, std::optional<APFloat> limit, PatternRewriter &rewriter) {
  llvm::SmallVector<Operation *> moves;
  ConvOp conv = activationConv(input, moves);
  if (!conv) return failure();
  auto renamed = [&](Operation *op) {
    auto name = dyn_cast<NameLoc>(op->getLoc());
    return name ? Location(NameLoc::get(rewriter.getStringAttr(name.getName().str() + "_relu"))) : op->getLoc();
  };
  rewriter.modifyOpInPlace(conv, [&] {
    conv.setDoRelu(true);
    if (limit) conv.setReluLimit(*limit);
    conv->setLoc(moves.empty() ? act->getLoc() : renamed(conv));
  });
  for (size_t i = 0; i < moves.size(); ++i)
    rewriter.modifyOpInPlace(moves[i], [&] { moves[i]->setLoc(i == 0 ? act->getLoc() : renamed(moves[i])); });
  rewriter.replaceOp(act, input);
  return success();
}

// conv -> relu  =>  conv{do_relu}
struct FuseConvRelu : OpRewritePattern<ReluOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReluOp relu, PatternRewriter &rewriter) const override {
    return fuseActivation(relu, relu.getInput(), std::nullopt, rewriter);
  }
};

// conv -> clip(0, m)  =>  conv{do_relu, relu_limit = m}  (ReLU6 and friends)
struct FuseConvClip : OpRewritePattern<ClipOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ClipOp clip, PatternRewriter &rewriter) const override {
    if (clip.getMin().convertToDouble() != 0.0 || !(clip.getMax().convertToDouble() > 0) ||
        std::isinf(clip.getMax().convertToDouble()))
      return failure();
    return fuseActivation(clip, clip.getInput(), clip.getMax(), rewriter);
  }
};

// pad(constant 0, spatial dims only) -> conv  =>  conv with larger pads
struct FusePadConv : OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvOp conv, PatternRewriter &rewriter) const override {
    auto pad = soleUseProducer<PadOp>(conv.getInput());
    if (!pad || pad.getMode() != "constant" || pad.getValue().convertToDouble() != 0.0) return failure();
    auto p = pad.getPads();
    size_t rank = p.size() / 2, n = conv.getKernelShape().size();
    if (rank != n + 2 || p[0] || p[1] || p[rank] || p[rank + 1]) return failure();
    for (int64_t v : p)
      if (v < 0) return failure();
    llvm::SmallVector<int64_t> pads(conv.getPads());
    for (size_t i = 0; i < n; ++i) {
      pads[i] += p[2 + i];
      pads[n + i] += p[rank + 2 + i];
    }
    rewriter.modifyOpInPlace(conv, [&] {
      conv.setPads(pads);
      conv.getInputMutable().assign(pad.getInput());
    });
    rewriter.eraseOp(pad);
    return success();
  }
};

// reshape(reshape(x))  =>  reshape(x)
struct MergeReshapes : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op, PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<ReshapeOp>();
    if (!inner) return failure();
    rewriter.modifyOpInPlace(op, [&] { op.getInputMutable().assign(inner.getInput()); });
    return success();
  }
};

// permute(permute(x, a), b)  =>  permute(x, a[b[i]])
struct MergePermutes : OpRewritePattern<PermuteOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PermuteOp op, PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<PermuteOp>();
    if (!inner) return failure();
    llvm::SmallVector<int64_t> order;
    for (int64_t o : op.getOrder()) order.push_back(inner.getOrder()[o]);
    rewriter.modifyOpInPlace(op, [&] {
      op.setOrder(order);
      op.getInputMutable().assign(inner.getInput());
    });
    return success();
  }
};

// x * hard_sigmoid(x, 1/6, 0.5)  =>  hard_swish(x)
struct FormHardSwish : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp mul, PatternRewriter &rewriter) const override {
    for (int side = 0; side < 2; ++side) {
      Value x = side ? mul.getRhs() : mul.getLhs(), other = side ? mul.getLhs() : mul.getRhs();
      auto hs = other.getDefiningOp<HardSigmoidOp>();
      if (!hs || hs.getInput() != x || x.getType() != mul.getType()) continue;
      if (std::abs(hs.getAlpha().convertToDouble() - 1.0 / 6) > 1e-6 || std::abs(hs.getBeta().convertToDouble() - 0.5) > 1e-6)
        continue;
      rewriter.replaceOpWithNewOp<HardSwishOp>(mul, mul.getType(), x);
      return success();
    }
    return failure();
  }
};

} // namespace

void TopDialect::getCanonicalizationPatterns(RewritePatternSet &patterns) const {
  patterns.add<FuseConvRelu, FuseConvClip, FusePadConv, MergeReshapes, MergePermutes, FormHardSwish>(
      getContext());
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType()) return getInput();
  return {};
}

OpFoldResult PermuteOp::fold(FoldAdaptor) {
  for (size_t i = 0; i < getOrder().size(); ++i)
    if (getOrder()[i] != int64_t(i)) return {};
  return getInput();
}

} // namespace top
