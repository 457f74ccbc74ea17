// TFLite PAD, PADV2, CONCATENATION, SPLIT, SLICE, STRIDED_SLICE, TRANSPOSE.
#include "compiler/Import/tflite/TfliteOpImporter.h"

using namespace mlir;

namespace tpu::tflite {

namespace {

// PAD / PADV2: paddings [rank, 2] (before, after per dim), PADV2's value.
Status pad(TfliteImporter &im, const Operator &op) {
  auto x = im.operand(op, 0);
  if (!x) return x.status();
  size_t rank = shapeOf(*x).size();
  auto p = im.ints(op, 1, "paddings");
  if (!p) return p.status();
  if (p->size() != 2 * rank)
    return makeError(op.describe(), ": paddings need ", rank, " pairs, got ", p->size(), " values");
  std::vector<int64_t> pads(2 * rank);
  for (size_t d = 0; d < rank; ++d) {
    size_t t = rank == 4 ? kToNchwAxis[d] : d;
    pads[t] = (*p)[2 * d];
    pads[t + rank] = (*p)[2 * d + 1];
  }
  double value = 0;
  if (op.builtinCode == PADV2 && im.present(op, 2)) {
    const Tensor *v = im.constant(op, 2);
    if (!v || v->numel() != 1) return makeError(op.describe(), ": the pad value must be a scalar constant");
    auto real = realValues(*v);
    if (!real) return Status(real.status()).prefix(op.describe());
    value = real->as<float>()[0];
  }
  return im.emit<top::PadOp>(op, {*x}, {im.i64s("pads", pads), im.str("mode", "constant"), im.f64("value", value)});
}

Status concat(TfliteImporter &im, const Operator &op) {
  if (op.inputs.empty()) return makeError(op.describe(), ": needs inputs");
  std::vector<Value> ins;
  size_t rank = 0;
  for (size_t i = 0; i < op.inputs.size(); ++i) rank = std::max(rank, im.rankOf(op, i));
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    auto v = im.operand(op, i);
    if (!v) return v.status();
    if (shapeOf(*v).size() != rank) return makeError(op.describe(), ": inputs of different ranks");
    ins.push_back(*v);
  }
  auto axis = im.axisIn(op, op.options.axis, rank);
  if (!axis) return axis.status();
  return im.emit<top::ConcatOp>(op, ins, {im.i64("axis", rank == 4 ? kToNchwAxis[*axis] : *axis)},
                                op.options.activation);
}

// SPLIT: (axis, input), num_splits equal pieces.
Status split(TfliteImporter &im, const Operator &op) {
  auto axisValue = im.ints(op, 0, "axis");
  if (!axisValue) return axisValue.status();
  auto x = im.operand(op, 1);
  if (!x) return x.status();
  std::vector<int64_t> xs = shapeOf(*x);
  if (axisValue->size() != 1) return makeError(op.describe(), ": the axis must be a scalar");
  auto axis = im.axisIn(op, (*axisValue)[0], xs.size());
  if (!axis) return axis.status();
  int64_t n = op.options.numSplits, topAxis = xs.size() == 4 ? kToNchwAxis[*axis] : *axis;
  if (n < 1 || size_t(n) != op.outputs.size() || xs[topAxis] % n)
    return makeError(op.describe(), ": cannot split dim ", xs[topAxis], " into ", n, " pieces for ", op.outputs.size(),
                     " outputs");
  SmallVector<Type> types(n, UnrankedTensorType::get(im.builder().getF32Type()));
  SmallVector<Location> locs;
  for (size_t k = 0; k < op.outputs.size(); ++k) locs.push_back(im.loc(im.uniqueName(im.outName(op, k))));
  auto s = im.builder().create<top::SplitOp>(
      FusedLoc::get(im.builder().getContext(), locs), types, ValueRange{*x},
      ArrayRef<NamedAttribute>{im.i64("axis", topAxis), im.i64s("split", std::vector<int64_t>(n, xs[topAxis] / n))});
  TPU_RETURN_IF_ERROR(im.verified(s, op.describe(), "invalid split"));
  for (int64_t k = 0; k < n; ++k) im.bind(op.outputs[k], s->getResult(k));
  return Status::ok();
}

// SLICE (begin, size; size -1 = to the end) and STRIDED_SLICE (begin, end,
// strides with begin/end/shrink masks), sliced in the module's layout.
Status slice(TfliteImporter &im, const Operator &op, bool strided) {
  auto x = im.operand(op, 0);
  if (!x) return x.status();
  std::vector<int64_t> xs = shapeOf(*x);
  size_t rank = xs.size();
  std::vector<int64_t> native = rank == 4 ? permuted(xs, kNchwToNhwc) : xs;
  auto begin = im.ints(op, 1, "begin"), second = im.ints(op, 2, strided ? "end" : "size");
  if (!begin) return begin.status();
  if (!second) return second.status();
  std::vector<int64_t> steps(rank, 1), ends(rank);
  if (strided) {
    auto st = im.ints(op, 3, "strides");
    if (!st) return st.status();
    steps = *st;
    if (op.options.ellipsisMask || op.options.newAxisMask || op.options.sliceOffset)
      return makeError(op.describe(), ": ellipsis, new-axis masks and offset are not supported");
  }
  if (begin->size() != rank || second->size() != rank || steps.size() != rank)
    return makeError(op.describe(), ": begin/end/strides need ", rank, " values");
  std::vector<int64_t> starts = *begin;
  for (size_t d = 0; d < rank; ++d) {
    if (!strided) {
      ends[d] = (*second)[d] < 0 ? native[d] : starts[d] + (*second)[d];
      continue;
    }
    bool shrink = op.options.shrinkAxisMask >> d & 1;
    if (op.options.beginMask >> d & 1) starts[d] = steps[d] > 0 ? 0 : native[d] - 1;
    ends[d] = shrink ? (starts[d] < 0 ? starts[d] + native[d] : starts[d]) + 1 : (*second)[d];
    if (!shrink && (op.options.endMask >> d & 1)) ends[d] = steps[d] > 0 ? native[d] : -native[d] - 1;
    if (shrink) steps[d] = 1;
  }
  auto p = onnx::normalizeSlice(native, starts, ends, {}, steps);
  if (!p) return Status(p.status()).prefix(op.describe());
  std::vector<int64_t> shrunk; // the output's shape after the shrink mask
  for (size_t d = 0; d < rank; ++d)
    if (!(strided && (op.options.shrinkAxisMask >> d & 1)))
      shrunk.push_back(
          std::max<int64_t>(0, (p->ends[d] - p->starts[d] + p->steps[d] - (p->steps[d] > 0 ? 1 : -1)) / p->steps[d]));
  auto reorder = [&](std::vector<int64_t> v) { return rank == 4 ? permuted(v, kNhwcToNchw) : v; };
  std::string name = im.outName(op);
  bool shrinks = shrunk.size() != rank;
  auto s = im.build<top::SliceOp>(
      shrinks ? name + "_unshrunk" : name, {*x},
      {im.i64s("starts", reorder(p->starts)), im.i64s("ends", reorder(p->ends)), im.i64s("steps", reorder(p->steps))},
      op.describe());
  if (!s) return s.status();
  if (!shrinks) {
    im.bind(op.outputs.at(0), *s);
    return Status::ok();
  }
  Value v = *s;
  if (rank == 4) {
    auto n = im.toNhwc(v, name + "_unshrunk");
    if (!n) return n.status();
    v = *n;
  }
  auto r = im.build<top::ReshapeOp>(name, {v}, {im.i64s("shape", shrunk)}, op.describe());
  if (!r) return r.status();
  return im.bindNative(op, 0, *r);
}

Status transpose(TfliteImporter &im, const Operator &op) {
  auto x = im.nativeOperand(op, 0);
  if (!x) return x.status();
  auto perm = im.ints(op, 1, "perm");
  if (!perm) return perm.status();
  std::vector<int64_t> order = *perm;
  std::vector<int64_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != int64_t(i) || sorted.size() != shapeOf(*x).size())
      return makeError(op.describe(), ": perm ", shapeToString(order), " is not a permutation of the input dims");
  auto r = im.permute(*x, order, im.outName(op) + (order.size() == 4 ? "_nhwc" : ""));
  if (!r) return r.status();
  return im.bindNative(op, 0, *r);
}

} // namespace

void registerDataMovementOps(OpTable &t) {
  t.add(PAD, pad);
  t.add(PADV2, pad);
  t.add(CONCATENATION, concat);
  t.add(SPLIT, split);
  t.add(STRIDED_SLICE, [](TfliteImporter &im, const Operator &op) { return slice(im, op, true); });
  t.add(SLICE, [](TfliteImporter &im, const Operator &op) { return slice(im, op, false); });
  t.add(TRANSPOSE, transpose);
}

} // namespace tpu::tflite
