// Data movement family: top.permute, top.pad (constant, reflect, edge),
// top.tile, top.expand, top.depth_to_space, top.gather (constant indices),
// top.split, and the cases of top.concat / top.slice / top.reshape that are
// no channel concat, positive-step slice or free view: all tpu.move, whose
// pieces (strided boxes of element copies) are computed here. int8 is the
// same copy at one byte per element: one input keeps its scale (the copy is
// exact); several inputs (concat) are requantized to the output's.

#include "compiler/Lowering/Lowerer.h"

#include <algorithm>
#include <cmath>

using namespace mlir;

namespace tpu::lowering {

namespace {

// C-order element strides of a shape.
std::vector<int64_t> compactStrides(ArrayRef<int64_t> shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t k = shape.size(); k-- > 1;) s[k - 1] = s[k] * shape[k];
  return s;
}

int64_t dot(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  int64_t r = 0;
  for (size_t k = 0; k < a.size(); ++k) r += a[k] * b[k];
  return r;
}

// The whole tensor in C order: a copy (another batch in int8, a graph
// output that is a graph input).
MovePieces wholeCopy(ArrayRef<int64_t> shape) {
  MovePieces p;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  p.add(0, {n}, 0, {1}, 0, {1});
  return p;
}

} // namespace

void MovePieces::add(int input, std::vector<int64_t> size, int64_t src, std::vector<int64_t> srcStride, int64_t dst,
                     std::vector<int64_t> dstStride) {
  // Size-1 dims go; neighbours that step like one dim on both sides merge.
  std::vector<int64_t> sz, ss, ds;
  for (size_t k = 0; k < size.size(); ++k) {
    if (size[k] == 1) continue;
    if (!sz.empty() && ss.back() == size[k] * srcStride[k] && ds.back() == size[k] * dstStride[k]) {
      sz.back() *= size[k], ss.back() = srcStride[k], ds.back() = dstStride[k];
      continue;
    }
    sz.push_back(size[k]), ss.push_back(srcStride[k]), ds.push_back(dstStride[k]);
  }
  if (sz.size() > 4) { // the outer dims are walked here, the last four are one piece each
    for (int64_t i = 0; i < sz[0]; ++i)
      add(input, {sz.begin() + 1, sz.end()}, src + i * ss[0], {ss.begin() + 1, ss.end()}, dst + i * ds[0],
          {ds.begin() + 1, ds.end()});
    return;
  }
  while (sz.size() < 4) sz.insert(sz.begin(), 1), ss.insert(ss.begin(), 0), ds.insert(ds.begin(), 0);
  backend::MovePiece m;
  m.input = input, m.src = src, m.dst = dst;
  std::copy(sz.begin(), sz.end(), m.size.begin());
  std::copy(ss.begin(), ss.end(), m.srcStride.begin());
  std::copy(ds.begin(), ds.end(), m.dstStride.begin());
  const std::vector<int64_t> piece = tpuir::movePieceValues({m});
  values.insert(values.end(), piece.begin(), piece.end());
}

Result<std::vector<Value>> Lowerer::int8AtScaleOf(Operation *op, ValueRange inputs, const std::string &name) {
  const float so = scaleOf(name);
  std::vector<Value> ins;
  for (Value v : inputs) {
    Value x = i8(v);
    float si = scaleOfValue(x);
    if (si != so || isUnsigned(x) != unsignedOf(name)) {
      const auto type = qType(shapeOf(v), name);
      Value &requant = requants_[{x.getAsOpaquePointer(), type.getAsOpaquePointer()}];
      if (!requant) {
        auto r = chooseShift({{double(si) / so, 16383}});
        if (!r) return noLowering(op, "an input scale that no int16 multiplier maps to the output's");
        requant = make<tpuir::RequantOp>(names_[v] + "_requant", type, x, false, uint64_t(*r),
                                         ArrayRef<int64_t>{fixedPoint(double(si) / so, *r)});
      }
      x = requant;
    }
    ins.push_back(x);
  }
  return ins;
}

Status Lowerer::lowerMove(Operation *op, Value result, ValueRange inputs, const MovePieces &pieces,
                          std::optional<double> fill) {
  const std::string name = names_[result];
  auto outShape = shapeOf(result);
  auto isConstant = [](Value v) { return bool(v.getDefiningOp<top::WeightOp>()); };
  std::vector<Value> acts;
  for (Value v : inputs)
    if (!isConstant(v)) acts.push_back(v);
  if (acts.empty()) return noLowering(op, "only constant operands");
  const bool int8 = wantInt8(name);
  // int8: one activation keeps its scale; several, or constants, take the
  // output's calibrated scale.
  std::vector<Value> lowered;
  if (!int8) {
    for (Value v : acts) lowered.push_back(f32(v));
  } else if (inputs.size() == 1) {
    lowered.push_back(i8(acts[0]));
  } else {
    auto r = int8AtScaleOf(op, acts, name);
    if (!r) return r.status();
    lowered = std::move(*r);
  }
  Value like = lowered[0];
  const float scale = int8 ? scaleOfValue(like) : 1.0f;
  auto quantize = [&](double v) { return std::clamp(std::nearbyint(v / scale), double(lowest(like)), double(highest(like))); };
  std::vector<Value> ins;
  size_t next = 0;
  for (Value v : inputs) {
    if (!isConstant(v)) {
      ins.push_back(lowered[next++]);
      continue;
    }
    // A constant operand: a weight of the result's element type.
    auto values = weightValues(v, "a constant operand", op);
    if (!values) return noLowering(op, values.message());
    const std::string base = v.getDefiningOp<top::WeightOp>().getName().str();
    if (!int8) {
      ins.push_back(addWeight(base, NpyArray::from(shapeOf(v), values->data(), values->size()), b_.getF32Type()));
    } else if (isUnsigned(like)) {
      std::vector<uint8_t> q;
      for (float x : *values) q.push_back(uint8_t(quantize(x)));
      ins.push_back(addWeight(base + "_u8", NpyArray::from(shapeOf(v), q), b_.getIntegerType(8, false)));
    } else {
      std::vector<int8_t> q;
      for (float x : *values) q.push_back(int8_t(quantize(x)));
      ins.push_back(addWeight(base + "_i8", NpyArray::from(shapeOf(v), q), b_.getIntegerType(8)));
    }
  }
  FloatAttr fillAttr;
  if (fill) fillAttr = b_.getF64FloatAttr(int8 ? quantize(*fill) : *fill);
  Value out = make<tpuir::MoveOp>(name, int8 ? Type(likeType(like, outShape)) : Type(f32Type(outShape)),
                                  ValueRange(ins), pieces.values, fillAttr);
  (int8 ? vals_[result].i8 : vals_[result].f32) = out;
  return Status::ok();
}

Status Lowerer::lowerPermute(top::PermuteOp op) {
  auto in = shapeOf(op.getInput()), out = shapeOf(op.getOutput());
  auto order = op.getOrder();
  const auto inStrides = compactStrides(in);
  std::vector<int64_t> src(order.size());
  for (size_t k = 0; k < order.size(); ++k) src[k] = inStrides[size_t(order[k])];
  MovePieces p;
  p.add(0, out, 0, src, 0, compactStrides(out));
  return lowerMove(op, op.getOutput(), op->getOperands(), p);
}

Status Lowerer::lowerPad(top::PadOp op) {
  auto in = shapeOf(op.getInput()), out = shapeOf(op.getOutput());
  auto pads = op.getPads();
  const std::string mode = op.getMode().str();
  const size_t rank = in.size();
  // Per dim, the runs of output indices whose source index is affine:
  // (output start, length, source start, source step).
  struct Run {
    int64_t outStart, len, srcStart, srcStep;
  };
  std::vector<std::vector<Run>> runs(rank);
  for (size_t k = 0; k < rank; ++k) {
    const int64_t b = pads[k], e = pads[k + rank], n = in[k];
    const int64_t skip = std::max<int64_t>(-b, 0), len = n - skip - std::max<int64_t>(-e, 0);
    if (len < 1) return noLowering(op, "a pad that crops a dim away");
    if (mode == "reflect" && (b >= n || e >= n))
      return noLowering(op, "a reflect pad as large as its dim (" + std::to_string(n) + ")");
    if (b > 0 && mode != "constant") runs[k].push_back({0, b, mode == "edge" ? 0 : b, mode == "edge" ? 0 : -1});
    runs[k].push_back({std::max<int64_t>(b, 0), len, skip, 1});
    if (e > 0 && mode != "constant")
      runs[k].push_back({b + n, e, mode == "edge" ? n - 1 : n - 2, mode == "edge" ? 0 : -1});
  }
  const auto inStrides = compactStrides(in), outStrides = compactStrides(out);
  MovePieces p;
  std::vector<size_t> pick(rank, 0);
  while (true) {
    std::vector<int64_t> size(rank), src(rank), outStart(rank), srcStart(rank);
    for (size_t k = 0; k < rank; ++k) {
      const Run &r = runs[k][pick[k]];
      size[k] = r.len, src[k] = r.srcStep * inStrides[k], outStart[k] = r.outStart, srcStart[k] = r.srcStart;
    }
    p.add(0, size, dot(srcStart, inStrides), src, dot(outStart, outStrides), outStrides);
    size_t k = rank;
    while (k-- > 0 && ++pick[k] == runs[k].size()) pick[k] = 0;
    if (k == size_t(-1)) break;
  }
  bool padded = false;
  for (size_t k = 0; k < rank; ++k) padded |= pads[k] > 0 || pads[k + rank] > 0;
  std::optional<double> fill;
  if (mode == "constant" && padded) fill = op.getValue().convertToDouble();
  return lowerMove(op, op.getOutput(), op->getOperands(), p, fill);
}

Status Lowerer::lowerTile(top::TileOp op) {
  auto in = shapeOf(op.getInput()), out = shapeOf(op.getOutput());
  const auto inStrides = compactStrides(in), outStrides = compactStrides(out);
  // Each dim as (repeat, index): the source ignores the repeat.
  std::vector<int64_t> size, src, dst;
  for (size_t k = 0; k < in.size(); ++k) {
    size.push_back(out[k] / in[k]), src.push_back(0), dst.push_back(in[k] * outStrides[k]);
    size.push_back(in[k]), src.push_back(inStrides[k]), dst.push_back(outStrides[k]);
  }
  MovePieces p;
  p.add(0, size, 0, src, 0, dst);
  return lowerMove(op, op.getOutput(), op->getOperands(), p);
}

Status Lowerer::lowerExpand(top::ExpandOp op) {
  auto in = shapeOf(op.getInput()), out = shapeOf(op.getOutput());
  const auto inStrides = compactStrides(in);
  const size_t lead = out.size() - in.size();
  std::vector<int64_t> src(out.size(), 0);
  for (size_t k = lead; k < out.size(); ++k) src[k] = in[k - lead] == 1 ? 0 : inStrides[k - lead];
  MovePieces p;
  p.add(0, out, 0, src, 0, compactStrides(out));
  return lowerMove(op, op.getOutput(), op->getOperands(), p);
}

Status Lowerer::lowerDepthToSpace(top::DepthToSpaceOp op) {
  auto in = shapeOf(op.getInput());
  if (in.size() != 4) return noLowering(op, "only 4-D (NCHW) inputs");
  const int64_t b = int64_t(op.getBlocksize()), N = in[0], C = in[1], H = in[2], W = in[3], Co = C / (b * b);
  // Output (n, c, h*b + i, w*b + j) as the box (n, c, h, i, w, j).
  const bool dcr = op.getMode() == "DCR";
  const std::vector<int64_t> size{N, Co, H, b, W, b};
  const std::vector<int64_t> dst{Co * H * b * W * b, H * b * W * b, b * W * b, W * b, b, 1};
  const std::vector<int64_t> src{C * H * W, (dcr ? 1 : b * b) * H * W, W, (dcr ? b * Co : b) * H * W, 1,
                                 (dcr ? Co : 1) * H * W};
  MovePieces p;
  p.add(0, size, 0, src, 0, dst);
  return lowerMove(op, op.getOutput(), op->getOperands(), p);
}

Status Lowerer::lowerGather(top::GatherOp op) {
  auto in = shapeOf(op.getInput());
  auto idx = weightValues(op.getIndices(), "the indices", op);
  if (!idx) return noLowering(op, "indices that are not a constant");
  const auto [outer, len, inner] = kernels::splitAtAxis(in, size_t(op.getAxis()));
  const int64_t count = int64_t(idx->size());
  std::vector<int64_t> at;
  for (float f : *idx) {
    int64_t i = int64_t(f);
    if (i < -len || i >= len) return noLowering(op, "an index " + std::to_string(i) + " outside the axis");
    at.push_back(i < 0 ? i + len : i);
  }
  // Runs of consecutive indices are one box each.
  MovePieces p;
  for (int64_t j = 0; j < count;) {
    int64_t run = 1;
    while (j + run < count && at[size_t(j + run)] == at[size_t(j)] + run) ++run;
    p.add(0, {outer, run, inner}, at[size_t(j)] * inner, {len * inner, inner, 1}, j * inner,
          {count * inner, inner, 1});
    j += run;
  }
  return lowerMove(op, op.getOutput(), op.getInput(), p);
}

Status Lowerer::lowerSplit(top::SplitOp op) {
  auto in = shapeOf(op.getInput());
  const size_t axis = size_t(op.getAxis());
  const auto inStrides = compactStrides(in);
  int64_t offset = 0;
  for (Value r : op.getOutputs()) {
    auto out = shapeOf(r);
    for (int64_t d : out)
      if (d < 1) return noLowering(op, "an empty part");
    MovePieces p;
    p.add(0, out, offset * inStrides[axis], inStrides, 0, compactStrides(out));
    TPU_RETURN_IF_ERROR(lowerMove(op, r, op.getInput(), p));
    offset += out[axis];
  }
  return Status::ok();
}

// Concat along any axis: each input is a box at its offset (a constant one
// a weight), except that constants of one repeated value (a channel pad
// spelled as a concat with zeros) are the fill instead.
Status Lowerer::lowerConcatMove(top::ConcatOp op) {
  auto out = shapeOf(op.getOutput());
  const size_t axis = size_t(op.getAxis());
  const auto outStrides = compactStrides(out);
  // The one value every constant operand repeats, if there is one.
  std::optional<double> fill;
  bool uniform = true;
  for (Value v : op.getInputs())
    if (v.getDefiningOp<top::WeightOp>()) {
      auto values = weightValues(v, "a constant operand", op);
      if (!values) return noLowering(op, values.message());
      for (float x : *values) {
        uniform &= !fill || *fill == x;
        fill = x;
      }
    }
  if (!uniform) fill.reset();
  MovePieces p;
  std::vector<Value> ins;
  int64_t offset = 0;
  for (Value v : op.getInputs()) {
    auto in = shapeOf(v);
    if (!fill || !v.getDefiningOp<top::WeightOp>()) {
      p.add(int(ins.size()), in, 0, compactStrides(in), offset * outStrides[axis], outStrides);
      ins.push_back(v);
    }
    offset += in[axis];
  }
  return lowerMove(op, op.getOutput(), ins, p, fill);
}

// A slice with a negative step: its source strides are negative.
Status Lowerer::lowerSliceMove(top::SliceOp op) {
  auto in = shapeOf(op.getInput()), out = shapeOf(op.getOutput());
  const auto inStrides = compactStrides(in);
  auto starts = op.getStarts(), steps = op.getSteps();
  std::vector<int64_t> src(in.size());
  for (size_t k = 0; k < in.size(); ++k) src[k] = steps[k] * inStrides[k];
  MovePieces p;
  p.add(0, out, dot(starts, inStrides), src, 0, compactStrides(out));
  return lowerMove(op, op.getOutput(), op->getOperands(), p);
}

Status Lowerer::lowerReshapeMove(top::ReshapeOp op) {
  return lowerMove(op, op.getOutput(), op->getOperands(), wholeCopy(shapeOf(op.getOutput())));
}

Value Lowerer::copyOfInput(Value input, const std::string &name) {
  MovePieces p = wholeCopy(shapeOf(input));
  return make<tpuir::MoveOp>(name, f32Type(shapeOf(input)), ValueRange{f32(input)}, p.values, FloatAttr());
}

Result<Value> Lowerer::copyOfConstant(Value constant, const std::string &name) {
  auto values = weightValues(constant, "a returned constant", nullptr);
  if (!values) return values.status();
  NpyArray a = NpyArray::from(shapeOf(constant), values->data(), values->size());
  Value w = addWeight(name + "_const", std::move(a), b_.getF32Type());
  MovePieces p = wholeCopy(shapeOf(constant));
  return make<tpuir::MoveOp>(name, f32Type(shapeOf(constant)), ValueRange{w}, p.values, FloatAttr());
}

void addDataMovementLowerings(LoweringTable &t) {
  t.add<top::PermuteOp>([](Lowerer &l, top::PermuteOp op) { return l.lowerPermute(op); });
  t.add<top::PadOp>([](Lowerer &l, top::PadOp op) { return l.lowerPad(op); });
  t.add<top::TileOp>([](Lowerer &l, top::TileOp op) { return l.lowerTile(op); });
  t.add<top::ExpandOp>([](Lowerer &l, top::ExpandOp op) { return l.lowerExpand(op); });
  t.add<top::DepthToSpaceOp>([](Lowerer &l, top::DepthToSpaceOp op) { return l.lowerDepthToSpace(op); });
  t.add<top::GatherOp>([](Lowerer &l, top::GatherOp op) { return l.lowerGather(op); });
  t.add<top::SplitOp>([](Lowerer &l, top::SplitOp op) { return l.lowerSplit(op); });
}

} // namespace tpu::lowering
