// ONNX reductions: the Reduce* ops with a Top op, the ones composed of a pre-op, a sum and a
// post-op (ReduceL1, ReduceLogSumExp...), ArgMax, ArgMin, the running sum CumSum and TopK.
#include "compiler/Import/OnnxNodeImporter.h"

using namespace mlir;

namespace tpu::onnx {

namespace {

// Axes of a Reduce op: attribute before `inputFromOpset`, input 1 from then on.
Result<std::optional<std::vector<int64_t>>> reduceAxes(OnnxImporter &im, const Node &n, int64_t inputFromOpset) {
  if (im.opset() >= inputFromOpset) {
    if (!im.present(n, 1)) return std::optional<std::vector<int64_t>>();
    auto a = im.constInts(n, 1, "axes");
    if (!a) return a.status();
    return std::optional<std::vector<int64_t>>(a.take());
  }
  return n.getInts("axes");
}

// The normalized axes a Reduce op reduces over: the given ones, else all of
// `rank`; nullopt when none are given and noop_with_empty_axes is set.
Result<std::optional<std::vector<int64_t>>> reducedAxes(OnnxImporter &im, const Node &n, int64_t inputFromOpset,
                                                        size_t rank) {
  auto axes = reduceAxes(im, n, inputFromOpset);
  if (!axes) return axes.status();
  if (*axes && !(*axes)->empty()) {
    auto norm = normalizeAxes(**axes, rank);
    if (!norm) return Status(norm.status()).prefix(n.describe());
    return std::optional<std::vector<int64_t>>(norm.take());
  }
  if (n.getInt("noop_with_empty_axes", 0)) return std::optional<std::vector<int64_t>>();
  std::vector<int64_t> all;
  for (size_t i = 0; i < rank; ++i) all.push_back(i);
  return std::optional<std::vector<int64_t>>(all);
}

// Folded on a constant input (shape arithmetic: ReduceProd of a Shape) when
// `foldName` names a ConstFold reduction.
template <typename OpT> OpHandler reduceHandler(int64_t axesInputFromOpset, const std::string &foldName = "") {
  return [axesInputFromOpset, foldName](OnnxImporter &im, const Node &n) -> Status {
    auto xs = im.shapeOf(n, 0);
    if (!xs) return xs.status();
    auto axes = reducedAxes(im, n, axesInputFromOpset, xs->size());
    if (!axes) return axes.status();
    if (!*axes) {
      im.alias(n.outputs[0], n.inputs[0]);
      return Status::ok();
    }
    const std::vector<int64_t> &list = **axes;
    bool keepdims = n.getInt("keepdims", 1) != 0;
    if (const NpyArray *c = im.constInput(n, 0); c && !foldName.empty())
      return im.bindConst(n, reduceArray(foldName, *c, list, keepdims));
    return unary<OpT>(im, n, {im.ints("axes", list), im.boolean("keepdims", keepdims)});
  };
}

template <typename OpT> OpHandler argReduceHandler() {
  return [](OnnxImporter &im, const Node &n) -> Status {
    auto xs = im.shapeOf(n, 0);
    if (!xs) return xs.status();
    auto axis = normalizeAxis(n.getInt("axis", 0), xs->size());
    if (!axis) return Status(axis.status()).prefix(n.describe());
    return unary<OpT>(im, n,
                      {im.i64("axis", *axis), im.boolean("keepdims", n.getInt("keepdims", 1) != 0),
                       im.boolean("select_last_index", n.getInt("select_last_index", 0) != 0)});
  };
}

// Reduce ops that are a pre-op, a sum and a post-op (ReduceL1, ReduceLogSumExp...).
OpHandler composedReduceHandler(std::function<Value(Composer &, Value)> pre, std::function<Value(Composer &, Value)> post) {
  return [pre, post](OnnxImporter &im, const Node &n) -> Status {
    auto xs = im.shapeOf(n, 0);
    if (!xs) return xs.status();
    auto axes = reducedAxes(im, n, 18, xs->size());
    if (!axes) return axes.status();
    std::vector<int64_t> list = axes->value_or(std::vector<int64_t>{});
    Composer c(im, n);
    Value x = pre(c, c.input(0));
    Value sum = list.empty() ? x
                             : c.op<top::ReduceSumOp>(post ? "sum" : "", {x},
                                                      {im.ints("axes", list),
                                                       im.boolean("keepdims", n.getInt("keepdims", 1) != 0)});
    if (post) post(c, sum);
    else if (list.empty()) c.op<top::ReshapeOp>("", {x}, {im.ints("shape", *xs)});
    return c.status();
  };
}

// CumSum(x, axis): the axis a constant input of one value.
Status cumSum(OnnxImporter &im, const Node &n) {
  auto xs = im.shapeOf(n, 0);
  if (!xs) return xs.status();
  auto given = im.constInt(n, 1, "axis");
  if (!given) return given.status();
  auto axis = normalizeAxis(*given, int64_t(xs->size()));
  if (!axis) return Status(axis.status()).prefix(n.describe());
  return unary<top::CumSumOp>(im, n,
                              {im.i64("axis", *axis), im.boolean("exclusive", n.getInt("exclusive", 0) != 0),
                               im.boolean("reverse", n.getInt("reverse", 0) != 0)});
}

// TopK(x, k): k an input (an attribute before opset 10); results values and
// indices, always sorted. A k computed at run time (torchvision's
// min(candidates, boxes kept)) stays an input, bounded by the axis.
Status topK(OnnxImporter &im, const Node &n) {
  auto xs = im.shapeOf(n, 0);
  if (!xs) return xs.status();
  auto axis = normalizeAxis(n.getInt("axis", -1), int64_t(xs->size()));
  if (!axis) return Status(axis.status()).prefix(n.describe());
  auto x = im.operand(n, 0);
  if (!x) return x.status();
  std::vector<mlir::Value> operands{*x};
  int64_t k = n.getInt("k", -1);
  if (im.opset() >= 10 && im.constInput(n, 1)) {
    auto given = im.constInt(n, 1, "k");
    if (!given) return given.status();
    k = *given;
  } else if (im.opset() >= 10) {
    auto ks = im.shapeOf(n, 1);
    if (!ks) return ks.status();
    if (tpu::kernels::numElements(*ks) != 1)
      return makeError(n.describe(), ": k must hold one value, it holds ", tpu::kernels::numElements(*ks));
    auto kv = im.operand(n, 1);
    if (!kv) return kv.status();
    operands.push_back(*kv);
    k = (*xs)[size_t(*axis)];
  }
  auto op =
      im.build<top::TopKOp>(n, operands,
                            {im.i64("k", k), im.i64("axis", *axis), im.boolean("largest", n.getInt("largest", 1) != 0),
                             im.boolean("sorted", n.getInt("sorted", 1) != 0)},
                            2);
  return op ? Status::ok() : op.status();
}

} // namespace

void registerReduceOps(OpTable &t) {
  t.add("ReduceMean", reduceHandler<top::ReduceMeanOp>(18, "Mean"));
  t.add("ReduceSum", reduceHandler<top::ReduceSumOp>(13, "Sum"));
  t.add("ReduceMax", reduceHandler<top::ReduceMaxOp>(18, "Max"));
  t.add("ReduceMin", reduceHandler<top::ReduceMinOp>(18, "Min"));
  t.add("ReduceProd", reduceHandler<top::ReduceProdOp>(18, "Prod"));
  t.add("ReduceL2", reduceHandler<top::ReduceL2Op>(18));
  t.add("ReduceSumSquare", composedReduceHandler([](Composer &c, Value x) { return c.op<top::MulOp>("square", {x, x}); },
                                                nullptr));
  t.add("ReduceL1", composedReduceHandler([](Composer &c, Value x) { return c.op<top::AbsOp>("abs", {x}); }, nullptr));
  t.add("ReduceLogSum", composedReduceHandler([](Composer &, Value x) { return x; },
                                             [](Composer &c, Value s) { return c.op<top::LogOp>("", {s}); }));
  t.add("ReduceLogSumExp", composedReduceHandler([](Composer &c, Value x) { return c.op<top::ExpOp>("exp", {x}); },
                                                [](Composer &c, Value s) { return c.op<top::LogOp>("", {s}); }));
  t.add("ArgMax", argReduceHandler<top::ArgMaxOp>());
  t.add("ArgMin", argReduceHandler<top::ArgMinOp>());
  t.add("CumSum", cumSum, {2});
  t.add("TopK", topK, {2, 10});
}

} // namespace tpu::onnx
