// Reduce: sum, mean, max, min, product or L2 norm over any NCHW dims.
// Strided GDMA loads bring the kept dims to local n and c (c over the
// lanes) and the reduced dims to h and w; then one window over the whole
// (h, w) plane reduces it: pord avg for sums and means (int8: a uint8
// multiplier and a right shift), pord max for max, and min as -max(-x).
// The product is an ar multiply tree (halving w, then h); the L2 norm is
// x * x, a pord sum, rsqrt and 1 / r. The output holds the kept elements in
// the input's C order, in any shape of that element count.
// LayerNorm and Softmax / LogSoftmax (fp32) use the same arrangement with the
// normalized dims as the reduced ones and store their result back through
// the input's strides; softmax's exp and log are the kernel library's
// programs (FloatKernels.h).
#include "compiler/Backend/Ops/Reduce.h"
#include "compiler/Backend/Emit.h"
#include "compiler/Backend/FloatKernels.h"
#include "compiler/Backend/OpRegistry.h"
#include "compiler/Backend/OpValidation.h"
#include "compiler/Backend/ReferenceEval.h"

#include "isa/TiuCommand.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tpu::backend {

namespace {

using namespace emit;
using isa::EuOp;

// The input's arrangement: kept dims merged onto n and c, reduced onto h and w.
Result<ReducePlan> planAxes(const Tensor &x, const std::array<bool, 4> &axes) {
  struct Dim {
    int64_t size, stride;
    bool reduced, batch;
  };
  const auto xs = x.nchw();
  const DTensor xd = DTensor::of(x, 0);
  const bool n4 = xd.n4();
  const auto st = xd.strides();
  // Dims of size 1 drop out; adjacent dims of one kind merge when their
  // strides continue each other (never a 4N batch).
  std::vector<Dim> dims;
  for (int d = 0; d < 4; ++d) {
    if (xs[d] == 1) continue;
    const Dim cur{xs[d], st[d], axes[size_t(d)], d == 0};
    if (!dims.empty()) {
      Dim &m = dims.back();
      if (m.reduced == cur.reduced && !(n4 && m.batch) && m.stride == cur.size * cur.stride &&
          m.size * cur.size <= kMaxDim) {
        m.size *= cur.size, m.stride = cur.stride, m.batch = false;
        continue;
      }
    }
    dims.push_back(cur);
  }
  std::vector<Dim> kept, reduced;
  for (const Dim &d : dims) (d.reduced ? reduced : kept).push_back(d);
  if (kept.size() > 2 || reduced.size() > 2)
    return makeError("the kept and the reduced dims do not merge into two of each (", kept.size(), " kept, ",
                     reduced.size(), " reduced", n4 ? "; an int8 batch merges with nothing" : "", ")");
  for (const Dim &d : dims)
    if (d.size > kMaxDim) return makeError("a dim of ", d.size, " exceeds the ", kMaxDim, " of a command field");
  const bool bigBatch = n4 && xs[0] > 4;
  if (bigBatch && axes[0]) return makeError("an int8 reduction over a batch of more than 4 items (4N groups)");
  ReducePlan p;
  auto place = [&](int slot, const Dim &d) { p.size[size_t(slot)] = d.size, p.xStride[size_t(slot)] = d.stride; };
  if (kept.size() == 2) place(0, kept[0]), place(1, kept[1]);
  if (kept.size() == 1) place(kept[0].batch && bigBatch ? 0 : 1, kept[0]);
  if (reduced.size() == 2) place(2, reduced[0]), place(3, reduced[1]);
  if (reduced.size() == 1) place(3, reduced[0]);
  p.xGroups = bigBatch, p.xGroupElems = 4 * xs[1] * xs[2] * xs[3];
  return p;
}

// The output strides of a Reduce: the kept elements in C order, local n outer.
} // namespace

Result<ReducePlan> planReduce(const Tensor &x, const Tensor &y, const std::array<bool, 4> &axes) {
  auto planned = planAxes(x, axes);
  if (!planned) return planned;
  ReducePlan p = planned.take();
  if (y.numel() != p.size[0] * p.size[1])
    return makeError("output has ", y.numel(), " elements, the kept dims ", p.size[0] * p.size[1]);
  p.yStride = {p.size[1], 1};
  if (stored4N(y)) {
    const auto ys = y.nchw();
    const int64_t rest = ys[1] * ys[2] * ys[3];
    if (rest == 1) {
      // one element per item: the 4N bytes are the items in order
    } else if (p.size[0] == ys[0] && p.size[1] == rest) {
      p.yGroups = true, p.yStride = {1, 4}, p.yGroupElems = 4 * rest;
    } else {
      return makeError("an int8 output whose batch is not the input's kept batch (4N groups)");
    }
  }
  return p;
}

namespace {

bool isSumLike(ReduceMode m) { return m == ReduceMode::Sum || m == ReduceMode::Mean; }

// A sum or mean of every element of x whose DDR bytes are exactly its
// elements (1N, or 4N with full groups) runs over all lanes (SpreadSumOp):
// each of kSpreadRuns runs of the bytes is summed in its own lane, the
// partial sums gather into one lane and are summed there, then the
// multiplier (int8) or 1 / count (fp32 mean) applies once. Else the pord
// window would take the whole tensor through one lane (LPRNet's global
// context: 74 k elements at batch 4). The run length, 0 when the rule does
// not apply.
constexpr int64_t kSpreadRuns = 64;
int64_t spreadSumRun(const Tensor &x, const Tensor &y, const Op &op) {
  const int64_t count = x.numel();
  if (!isSumLike(op.params<ReduceParams>().mode) || y.numel() != 1 || count % kSpreadRuns || count / kSpreadRuns < 2 ||
      count / kSpreadRuns > 0xFFFF || (stored4N(x) && x.nchw()[0] % 4))
    return 0;
  return count / kSpreadRuns;
}

Status validateReduce(const OpCheck &c) {
  const Tensor &x = c.in(0);
  TPU_RETURN_IF_ERROR(c.sameType(x));
  const ReduceParams &p = c.op.params<ReduceParams>();
  TPU_RETURN_IF_ERROR(reduceLayout(x, c.y, p.axes));
  const ReduceMode m = p.mode;
  if (!c.int8) return Status::ok();
  if (m == ReduceMode::Prod || m == ReduceMode::L2)
    return makeError("an int8 product or L2 norm (the chip computes them in fp32)");
  if (isSumLike(m)) {
    TPU_RETURN_IF_ERROR(c.needMultipliers(1));
    if (c.op.multipliers[0] < 0 || c.op.multipliers[0] > 255)
      return makeError("sum multiplier ", c.op.multipliers[0], " is outside [0, 255]");
    return Status::ok();
  }
  TPU_RETURN_IF_ERROR(c.needMultipliers(0));
  if (x.dtype != c.y.dtype || x.scale != c.y.scale) return makeError("an int8 max or min keeps the input's dtype and scale");
  return Status::ok();
}

// Element offsets (C order) of the box whose dims are the input's where
// `mask[d] == want` and 0 elsewhere.
std::vector<int64_t> boxOffsets(const std::array<int64_t, 4> &xs, const std::array<bool, 4> &mask, bool want) {
  const std::array<int64_t, 4> stride{xs[1] * xs[2] * xs[3], xs[2] * xs[3], xs[3], 1};
  std::array<int64_t, 4> ext;
  for (size_t d = 0; d < 4; ++d) ext[d] = mask[d] == want ? xs[d] : 1;
  std::vector<int64_t> v;
  for (int64_t n = 0; n < ext[0]; ++n)
    for (int64_t c = 0; c < ext[1]; ++c)
      for (int64_t h = 0; h < ext[2]; ++h)
        for (int64_t w = 0; w < ext[3]; ++w) v.push_back(n * stride[0] + c * stride[1] + h * stride[2] + w * stride[3]);
  return v;
}

// The product tree the commands run on `rows` x `cols` values (row-major):
// each row halved (odd counts fold their last value into the first), then
// column 0 the same way.
float productTree(std::vector<float> v, int64_t rows, int64_t cols) {
  auto fold = [&](int64_t count, int64_t lines, int64_t lineStep, int64_t step) {
    for (int64_t len = count; len > 1; len /= 2) {
      const int64_t half = len / 2;
      for (int64_t l = 0; l < lines; ++l) {
        float *a = &v[size_t(l * lineStep)];
        for (int64_t e = 0; e < half; ++e) a[e * step] = a[e * step] * a[(e + half) * step];
        if (len % 2) a[0] = a[0] * a[2 * half * step];
      }
    }
  };
  fold(cols, rows, cols, 1);
  fold(rows, 1, 0, cols);
  return v[0];
}

void evaluateReduce(const RefArgs &r, Bytes &out) {
  const ReduceParams &p = r.op.params<ReduceParams>();
  const auto kept = boxOffsets(r.xs, p.axes, false), red = boxOffsets(r.xs, p.axes, true);
  const ReduceMode m = p.mode;
  if (r.isInt) {
    const auto x = r.ints(0);
    std::vector<int64_t> v(kept.size());
    for (size_t k = 0; k < kept.size(); ++k) {
      int64_t acc = isSumLike(m) ? 0 : m == ReduceMode::Max ? std::numeric_limits<int64_t>::lowest()
                                                            : std::numeric_limits<int64_t>::max();
      for (int64_t o : red) {
        const int64_t e = x[size_t(kept[k] + o)];
        acc = isSumLike(m) ? acc + e * r.op.multipliers[0] : m == ReduceMode::Max ? std::max(acc, e) : std::min(acc, e);
      }
      v[k] = isSumLike(m) ? requantizeOp(acc, r.op, false, r.y.dtype) : saturateTo(acc, r.y.dtype);
    }
    out = fromInts(v, r.y.dtype);
    return;
  }
  const float *x = floats(*r.in[0]);
  if (const int64_t run = spreadSumRun(r.x, r.y, r.op)) { // SpreadSumOp's order: runs, then their sums
    float total = 0.0f;
    for (int64_t j = 0; j < kSpreadRuns; ++j) {
      float part = 0.0f;
      for (int64_t i = 0; i < run; ++i) part += x[j * run + i];
      total += part;
    }
    const float y = m == ReduceMode::Mean ? total * (1.0f / float(r.x.numel())) : total;
    out = fromFloats({y});
    return;
  }
  const ReducePlan plan = *planReduce(r.x, r.y, r.op.params<ReduceParams>().axes);
  // The pord sum multiplies every tap by its constant first (no FMA).
  const float k = m == ReduceMode::Mean ? 1.0f / float(red.size()) : 1.0f;
  std::vector<float> v(kept.size()), vals(red.size());
  for (size_t i = 0; i < kept.size(); ++i) {
    for (size_t j = 0; j < red.size(); ++j) vals[j] = x[kept[i] + red[j]];
    float acc = 0.0f;
    switch (m) {
    case ReduceMode::Sum: case ReduceMode::Mean:
      for (float e : vals) acc = acc + k * e;
      break;
    case ReduceMode::L2:
      for (float e : vals) acc = acc + 1.0f * (e * e);
      acc = 1.0f / (1.0f / std::sqrt(acc));
      break;
    case ReduceMode::Max: case ReduceMode::Min: {
      const float sign = m == ReduceMode::Max ? 1.0f : -1.0f; // min = -max(-x)
      acc = std::numeric_limits<float>::lowest();
      for (float e : vals) acc = std::max(acc, e * sign);
      acc = acc * sign;
      break;
    }
    case ReduceMode::Prod: acc = productTree(vals, plan.size[2], plan.size[3]); break;
    }
    v[i] = acc;
  }
  out = fromFloats(v);
}

// ---- LayerNorm: checks and reference ----------------------------------------
Status validateLayerNorm(const OpCheck &c) {
  const Tensor &x = c.in(0);
  if (c.int8 || x.dtype != DType::F32) return makeError("fp32 only (int8 models run it as an fp32 island)");
  if (x.nchw() != c.ys) return makeError("input and output shapes differ");
  const LayerNormParams &p = c.op.params<LayerNormParams>();
  auto plan = planAxes(x, p.axes);
  if (!plan) return plan.status();
  const int64_t count = plan->size[2] * plan->size[3];
  for (size_t i = 1; i < c.op.inputs.size(); ++i) {
    const Tensor &w = c.in(i);
    if (!w.isWeight() || w.dtype != DType::F32 || w.numel() != count)
      return makeError(i == 1 ? "scale" : "bias", " '", w.name, "' must be an fp32 weight of the ", count,
                       " normalized elements");
  }
  if (!(p.epsilon >= 0.0f)) return makeError("epsilon ", p.epsilon, " must be >= 0");
  return Status::ok();
}

void evaluateLayerNorm(const RefArgs &r, Bytes &out) {
  const LayerNormParams &p = r.op.params<LayerNormParams>();
  const auto kept = boxOffsets(r.xs, p.axes, false), norm = boxOffsets(r.xs, p.axes, true);
  const float *x = floats(*r.in[0]);
  const float *gamma = r.in.size() > 1 ? floats(*r.in[1]) : nullptr, *beta = r.in.size() > 2 ? floats(*r.in[2]) : nullptr;
  const float k = 1.0f / float(norm.size());
  std::vector<float> y(r.count), d(norm.size());
  for (int64_t base : kept) {
    float mean = 0.0f, var = 0.0f;
    for (int64_t o : norm) mean = mean + k * x[base + o];
    for (size_t j = 0; j < norm.size(); ++j) d[j] = x[base + norm[j]] - mean;
    for (float e : d) var = var + k * (e * e);
    const float inv = 1.0f / std::sqrt(var + p.epsilon);
    for (size_t j = 0; j < norm.size(); ++j) {
      float v = d[j] * inv;
      if (gamma) v = v * gamma[j];
      if (beta) v = v + beta[j];
      y[size_t(base + norm[j])] = v;
    }
  }
  out = fromFloats(y);
}

// ---- Softmax, LogSoftmax: checks and reference -------------------------------
Status validateSoftmax(const OpCheck &c) {
  TPU_RETURN_IF_ERROR(c.unaryInput());
  if (c.int8) return makeError("fp32 only (int8 models run it as an fp32 island)");
  return planAxes(c.in(0), c.op.params<SoftmaxParams>().axes).status();
}

// max, x - max, exp, sum; softmax e / sum, log-softmax (x - max) - log(sum).
void evaluateSoftmax(const RefArgs &r, Bytes &out) {
  const ReduceAxes &axes = r.op.params<SoftmaxParams>().axes;
  const auto kept = boxOffsets(r.xs, axes, false), axis = boxOffsets(r.xs, axes, true);
  const KernelProgram exp = *unaryKernel(kernels::UnaryKind::Exp), log = *unaryKernel(kernels::UnaryKind::Log);
  const bool isLog = r.op.kind == OpKind::LogSoftmax;
  const float *x = floats(*r.in[0]);
  std::vector<float> y(r.count), d(axis.size()), e(axis.size());
  for (int64_t base : kept) {
    float m = std::numeric_limits<float>::lowest(), sum = 0.0f;
    for (int64_t o : axis) m = std::max(m, x[base + o]);
    for (size_t j = 0; j < axis.size(); ++j) d[j] = x[base + axis[j]] - m, e[j] = runKernel(exp, &d[j]);
    for (float v : e) sum = sum + 1.0f * v;
    const float logSum = isLog ? runKernel(log, &sum) : 0.0f;
    for (size_t j = 0; j < axis.size(); ++j) y[size_t(base + axis[j])] = isLog ? d[j] - logSum : e[j] / sum;
  }
  out = fromFloats(y);
}

// ---- The emitters -----------------------------------------------------------
// What Reduce and LayerNorm share: the input's arrangement, the strided
// moves between DDR and local memory, the window and ar commands.
class AxesOp : public SlicedOp {
public:
  AxesOp(Emitter &e, const Op &op, ReducePlan plan)
      : SlicedOp(e, op), x_(e.ddr(op.inputs[0])), y_(e.ddr(op.output)), plan_(plan) {}
  std::array<int64_t, 3> extents() const override { return {plan_.size[0], plan_.size[1], 1}; }
  bool cutsH() const override { return false; }
  uint16_t load(const Tile &t, unsigned set, uint16_t wait) override {
    return moveTile(true, x_, plan_.xStride, plan_.xGroups, plan_.xGroupElems, t, inBuffer(set, 0, x_.dtype, t), wait);
  }

protected:
  Shape4 inShape(int64_t ns, int64_t cs) const { return {u32(ns), u32(cs), u32(plan_.size[2]), u32(plan_.size[3])}; }
  Shape4 outShape(int64_t ns, int64_t cs) const { return {u32(ns), u32(cs), 1, 1}; }
  // Buffer i of a set, shaped like the tile's input or one value per (n, c).
  LocalTensor inBuffer(unsigned set, size_t i, DType t, const Tile &tile) const {
    return LocalTensor::compact(bufOffset(set, i), t, inShape(tile.ns, tile.cs), lanes());
  }
  LocalTensor outBuffer(unsigned set, size_t i, DType t, const Tile &tile) const {
    return LocalTensor::compact(bufOffset(set, i), t, outShape(tile.ns, tile.cs), lanes());
  }
  // A per-(n, c) value read for every element of `like` (h and w strides 0).
  static LocalTensor spread(LocalTensor v, const LocalTensor &like) {
    v.shape = like.shape, v.stride.h = v.stride.w = 0;
    return v;
  }

  // Items [t.n0, +ns) and channels [t.c0, +cs) of local n and c between DDR
  // (element strides `ds` of local n, c, h, w) and `l`; 4N groups one command each.
  uint16_t moveTile(bool toLocal, const DTensor &d, const std::array<int64_t, 4> &ds, bool groups, int64_t groupElems,
                    const Tile &t, const LocalTensor &l, uint16_t wait) {
    const uint64_t e = dtypeBytes(d.dtype);
    uint16_t id = 0;
    for (int64_t n = t.n0; n < t.n0 + t.ns;) {
      const int64_t count = groups ? std::min(t.n0 + t.ns, (n / 4 + 1) * 4) - n : t.ns;
      const int64_t item = groups ? (n / 4) * groupElems + n % 4 : n * ds[0];
      isa::GdmaCommand c;
      c.direction = toLocal ? isa::GdmaDirection::S2L : isa::GdmaDirection::L2S;
      isa::GdmaTensor gt, lt;
      gt.addr = d.addr + uint64_t(item + t.c0 * ds[1]) * e, gt.format = lt.format = formatOf(d.dtype);
      gt.shape = lt.shape = {u32(count), l.shape.c, l.shape.h, l.shape.w};
      gt.stride = {u32(ds[0]), u32(ds[1]), u32(ds[2]), u32(ds[3])};
      lt.addr = l.addr(hw_) + uint32_t((n - t.n0) * l.stride.n * e);
      lt.stride = {l.stride.n, l.stride.c, l.stride.h, l.stride.w};
      c.src = toLocal ? gt : lt;
      c.dst = toLocal ? lt : gt;
      id = e_.b->gdma(c, wait);
      n += count;
    }
    return id;
  }

  // One window over the whole (h, w) plane: the max, or the sum of every
  // tap times `kernel` (int8: the multiplier, then op.rshift).
  uint16_t window(const LocalTensor &x, const LocalTensor &y, bool isMax, LocalOperand kernel, uint16_t wait) {
    isa::Pord c;
    c.eu = isMax ? EuOp::Max : EuOp::Mac;
    c.input = x.operand(hw_), c.output = y.operand(hw_);
    c.kernel = isMax ? c.input : kernel;
    if (!isMax && y.dtype != DType::F32) c.rshift = op_.rshift;
    c.kernel.shape = {1, x.shape.c, x.shape.h, x.shape.w};
    c.strideH = c.strideW = 1;
    return e_.b->tiu(c, wait);
  }
  // 1 / (the plane's element count), the constant of a mean.
  LocalOperand meanKernel() const { return constantF(1.0f / float(plan_.size[2] * plan_.size[3])); }

  uint16_t arith(EuOp eu, const LocalTensor &res, LocalOperand a, LocalOperand b, uint16_t wait, uint8_t count = 2) {
    isa::Arith c;
    c.eu = eu, c.res0 = res.operand(hw_), c.opd0 = a, c.opd1 = b, c.opdCount = count;
    c.opd0.shape = c.opd1.shape = res.shape;
    return e_.b->tiu(c, wait);
  }

  DTensor x_, y_;
  ReducePlan plan_;
};

class ReduceOp : public AxesOp {
public:
  ReduceOp(Emitter &e, const Op &op)
      : AxesOp(e, op,
               *planReduce(e.g.tensors[size_t(op.inputs[0])], e.g.tensors[size_t(op.output)],
                           op.params<ReduceParams>().axes)) {}
  std::vector<uint64_t> setBytes(int64_t ns, int64_t cs, int64_t) const override {
    std::vector<uint64_t> v{LocalTensor::bytes(x_.dtype, inShape(ns, cs), lanes()),
                            LocalTensor::bytes(y_.dtype, outShape(ns, cs), lanes())};
    if (int8Min()) { // -x and its max in int16 (-(-128) needs 9 bits)
      v.push_back(LocalTensor::bytes(DType::I16, inShape(ns, cs), lanes()));
      v.push_back(LocalTensor::bytes(DType::I16, outShape(ns, cs), lanes()));
    }
    return v;
  }
  uint16_t store(const Tile &t, unsigned set, uint16_t wait) override {
    const std::array<int64_t, 4> ys{plan_.yStride[0], plan_.yStride[1], 0, 0};
    return moveTile(false, y_, ys, plan_.yGroups, plan_.yGroupElems, t, outBuffer(set, 1, y_.dtype, t), wait);
  }
  uint16_t compute(const Tile &t, unsigned set, uint16_t wait) override {
    const LocalTensor x = inBuffer(set, 0, x_.dtype, t), y = outBuffer(set, 1, y_.dtype, t);
    const bool fp32 = y_.dtype == DType::F32;
    const LocalOperand floatKernel = mode_ == ReduceMode::Mean ? meanKernel() : constantF(1.0f);
    const LocalOperand sumKernel =
        fp32 ? floatKernel : constant(DType::U8, op_.multipliers.empty() ? 0 : op_.multipliers[0]);
    switch (mode_) {
    case ReduceMode::Sum: case ReduceMode::Mean:
      return window(x, y, false, sumKernel, wait);
    case ReduceMode::Max:
      return window(x, y, true, {}, wait);
    case ReduceMode::Min: {
      if (fp32) {
        arith(EuOp::Mul, x, x.operand(hw_), constantF(-1.0f), wait);
        window(x, y, true, {}, wait);
        return arith(EuOp::Mul, y, y.operand(hw_), constantF(-1.0f), wait);
      }
      const LocalTensor nx = inBuffer(set, 2, DType::I16, t), ny = outBuffer(set, 3, DType::I16, t);
      arith(EuOp::Mul, nx, x.operand(hw_), constant(DType::I8, -1), wait);
      window(nx, ny, true, {}, wait);
      return arith(EuOp::Mul, y, ny.operand(hw_), constant(DType::I8, -1), wait);
    }
    case ReduceMode::Prod: {
      fold(x, 3, wait);
      fold(x, 2, wait);
      LocalTensor first = x;
      first.shape = y.shape;
      return arith(EuOp::Copy, y, first.operand(hw_), LocalOperand{}, wait, 1);
    }
    case ReduceMode::L2:
      arith(EuOp::Mul, x, x.operand(hw_), x.operand(hw_), wait);
      window(x, y, false, constantF(1.0f), wait);
      arith(EuOp::Rsqrt, y, y.operand(hw_), LocalOperand{}, wait, 1);
      return arith(EuOp::Divide, y, constantF(1.0f), y.operand(hw_), wait);
    }
    return wait;
  }

private:
  const ReduceMode mode_ = op_.params<ReduceParams>().mode;
  bool int8Min() const { return mode_ == ReduceMode::Min && y_.dtype != DType::F32; }

  // The product tree along local dim `dim` (3 = w, 2 = h) of x, in place:
  // the first half times the second, an odd last element into the first.
  void fold(const LocalTensor &x, int dim, uint16_t wait) {
    const uint32_t elem = dtypeBytes(x.dtype);
    const uint32_t step = dim == 3 ? x.stride.w : x.stride.h;
    LocalTensor part = x;
    if (dim == 2) part.shape.w = 1; // the w fold left its products in column 0
    const uint32_t count = dim == 3 ? x.shape.w : x.shape.h;
    for (uint32_t len = count; len > 1; len /= 2) {
      const uint32_t half = len / 2;
      LocalTensor a = part, b = part;
      (dim == 3 ? a.shape.w : a.shape.h) = half;
      b.shape = a.shape, b.offset += half * step * elem;
      arith(EuOp::Mul, a, a.operand(hw_), b.operand(hw_), wait);
      if (len % 2) {
        LocalTensor first = part, last = part;
        (dim == 3 ? first.shape.w : first.shape.h) = 1;
        last.shape = first.shape, last.offset += 2 * half * step * elem;
        arith(EuOp::Mul, first, first.operand(hw_), last.operand(hw_), wait);
      }
    }
  }
};

// A sum or mean over every element, spread over the lanes (spreadSumRun):
// one load puts run j of the input's DDR bytes into lane j (wrapping past the
// last lane), md_sum leaves each run's sum in its lane (int32 for int8: exact),
// a local GDMA copy gathers the kSpreadRuns sums into one lane, md_sum adds
// them, and one ar multiply applies the int8 multiplier and right shift (sum
// x * m = m * sum x) or, for an fp32 mean, 1 / count.
class SpreadSumOp : public SlicedOp {
public:
  SpreadSumOp(Emitter &e, const Op &op)
      : SlicedOp(e, op), x_(e.ddr(op.inputs[0])), y_(e.ddr(op.output)),
        run_(spreadSumRun(e.g.tensors[size_t(op.inputs[0])], e.g.tensors[size_t(op.output)], op)) {}
  std::array<int64_t, 3> extents() const override { return {1, kSpreadRuns, 1}; }
  bool cutsC() const override { return false; }
  bool cutsH() const override { return false; }
  std::vector<uint64_t> setBytes(int64_t, int64_t, int64_t) const override {
    const uint32_t L = lanes();
    return {LocalTensor::bytes(x_.dtype, runsShape(), L), LocalTensor::bytes(accType(), {1, u32(kSpreadRuns), 1, 1}, L),
            LocalTensor::bytes(accType(), {1, 1, 1, u32(kSpreadRuns)}, L), LocalTensor::bytes(accType(), {1, 1, 1, 1}, L),
            LocalTensor::bytes(y_.dtype, {1, 1, 1, 1}, L)};
  }
  uint16_t load(const Tile &, unsigned set, uint16_t wait) override {
    return e_.loadWeight(x_.addr, x_.dtype, {1, u32(kSpreadRuns), 1, u32(run_)}, {0, u32(run_), u32(run_), 1},
                         buf(set, 0, x_.dtype, runsShape()), wait);
  }
  uint16_t compute(const Tile &, unsigned set, uint16_t wait) override {
    const LocalTensor runs = buf(set, 0, x_.dtype, runsShape()), parts = buf(set, 1, accType(), {1, u32(kSpreadRuns), 1, 1});
    const LocalTensor row = buf(set, 2, accType(), {1, 1, 1, u32(kSpreadRuns)}), total = buf(set, 3, accType(), {1, 1, 1, 1});
    uint16_t id = sum(parts, runs, wait);
    isa::GdmaCommand g; // the kSpreadRuns sums, lane by lane, into one lane's row (4-byte elements)
    g.direction = isa::GdmaDirection::L2L;
    g.src.addr = parts.addr(hw_), g.dst.addr = row.addr(hw_), g.src.format = g.dst.format = isa::GdmaFormat::Fp32;
    g.src.shape = {1, u32(kSpreadRuns), 1, 1}, g.dst.shape = {1, 1, 1, u32(kSpreadRuns)};
    g.src.stride = {parts.stride.n, parts.stride.c, parts.stride.h, parts.stride.w};
    g.dst.stride = {row.stride.n, row.stride.c, row.stride.h, row.stride.w};
    const uint16_t gathered = e_.b->gdma(g, id);
    id = sum(total, row, gathered);
    isa::Arith a;
    a.eu = isa::EuOp::Mul, a.res0 = buf(set, 4, y_.dtype, {1, 1, 1, 1}).operand(hw_), a.opd0 = total.operand(hw_);
    a.opd1 = y_.dtype == DType::F32 ? constantF(mode_ == ReduceMode::Mean ? 1.0f / float(kSpreadRuns * run_) : 1.0f)
                                    : constant(DType::U8, op_.multipliers.at(0));
    a.opd1.shape = a.opd0.shape = a.res0.shape;
    a.rshift = y_.dtype == DType::F32 ? 0 : uint32_t(op_.rshift);
    return e_.b->tiu(a, id);
  }
  uint16_t store(const Tile &, unsigned set, uint16_t wait) override {
    return e_.move(false, y_, 0, 1, 0, 1, 0, 1, buf(set, 4, y_.dtype, {1, 1, 1, 1}), wait);
  }

private:
  DType accType() const { return y_.dtype == DType::F32 ? DType::F32 : DType::I32; }
  Shape4 runsShape() const { return {1, u32(kSpreadRuns), 1, u32(run_)}; }
  LocalTensor buf(unsigned set, size_t i, DType t, Shape4 s) const { return LocalTensor::compact(bufOffset(set, i), t, s, lanes()); }
  uint16_t sum(const LocalTensor &out, const LocalTensor &in, uint16_t wait) {
    isa::MdSum m;
    m.output = out.operand(hw_), m.input = in.operand(hw_);
    return e_.b->tiu(m, wait);
  }
  const ReduceMode mode_ = op_.params<ReduceParams>().mode;
  DTensor x_, y_;
  int64_t run_;
};

std::unique_ptr<SlicedOp> reduceEmitter(Emitter &e, const Op &op) {
  if (spreadSumRun(e.g.tensors[size_t(op.inputs[0])], e.g.tensors[size_t(op.output)], op))
    return std::make_unique<SpreadSumOp>(e, op);
  return std::make_unique<ReduceOp>(e, op);
}

// An fp32 op whose output has the input's shape (LayerNorm, Softmax): its
// result in buffer 1 of a set goes back through the input's strides.
class PlaneOp : public AxesOp {
public:
  PlaneOp(Emitter &e, const Op &op, const ReduceAxes &axes)
      : AxesOp(e, op, *planAxes(e.g.tensors[size_t(op.inputs[0])], axes)) {}
  uint16_t store(const Tile &t, unsigned set, uint16_t wait) override {
    return moveTile(false, y_, plan_.xStride, false, 0, t, inBuffer(set, 1, DType::F32, t), wait);
  }
};

// LayerNorm: mean, x - mean (in place), its squares' mean, + epsilon,
// rsqrt, times it; then times the scale and plus the bias, which every lane
// holds whole (loaded once, read with n and c strides 0).
class LayerNormOp : public PlaneOp {
public:
  LayerNormOp(Emitter &e, const Op &op) : PlaneOp(e, op, op.params<LayerNormParams>().axes) {
    for (size_t i = 1; i < op.inputs.size(); ++i) params_.push_back(e.am.addr[size_t(op.inputs[i])]);
  }
  std::vector<uint64_t> setBytes(int64_t ns, int64_t cs, int64_t) const override {
    const uint64_t plane = LocalTensor::bytes(DType::F32, inShape(ns, cs), lanes());
    const uint64_t stat = LocalTensor::bytes(DType::F32, outShape(ns, cs), lanes());
    return {plane, plane, stat, stat}; // x (then x - mean), y, mean, variance
  }
  std::vector<uint64_t> fixedBytes(int64_t) const override {
    return std::vector<uint64_t>(params_.size(), uint64_t(plan_.size[2] * plan_.size[3]) * 4);
  }
  uint16_t loadFixed(const Tile &t, uint16_t wait) override {
    uint16_t id = 0;
    const uint32_t copies = u32(std::min<int64_t>(t.cs, lanes()));
    for (size_t i = 0; i < params_.size(); ++i) {
      LocalTensor l = LocalTensor::compact(fixed_[i], DType::F32, {1, copies, u32(plan_.size[2]), u32(plan_.size[3])}, lanes());
      id = e_.loadWeight(params_[i], DType::F32, {1, copies, u32(plan_.size[2]), u32(plan_.size[3])},
                         {0, 0, u32(plan_.size[3]), 1}, l, wait);
    }
    return id;
  }
  uint16_t compute(const Tile &t, unsigned set, uint16_t wait) override {
    const LocalTensor x = inBuffer(set, 0, DType::F32, t), y = inBuffer(set, 1, DType::F32, t);
    const LocalTensor mean = outBuffer(set, 2, DType::F32, t), var = outBuffer(set, 3, DType::F32, t);
    window(x, mean, false, meanKernel(), wait);
    arith(EuOp::Sub, x, x.operand(hw_), spread(mean, x).operand(hw_), wait);
    arith(EuOp::Mul, y, x.operand(hw_), x.operand(hw_), wait);
    window(y, var, false, meanKernel(), wait);
    arith(EuOp::Add, var, var.operand(hw_), constantF(op_.params<LayerNormParams>().epsilon), wait);
    arith(EuOp::Rsqrt, var, var.operand(hw_), LocalOperand{}, wait, 1);
    uint16_t id = arith(EuOp::Mul, y, x.operand(hw_), spread(var, x).operand(hw_), wait);
    const EuOp paramOps[2] = {EuOp::Mul, EuOp::Add};
    for (size_t i = 0; i < params_.size(); ++i) {
      LocalTensor p = LocalTensor::compact(fixed_[i], DType::F32, y.shape, lanes());
      p.stride.n = p.stride.c = 0;
      id = arith(paramOps[i], y, y.operand(hw_), p.operand(hw_), wait);
    }
    return id;
  }

private:
  std::vector<uint64_t> params_; // DDR addresses of the scale and the bias
};

// Softmax: the max, x - max (in place), exp into y, the sum, y / sum;
// LogSoftmax ends with (x - max) - log(sum) instead. The kernels' scratch
// buffers are planes (log reuses them as per-(n, c) values).
class SoftmaxOp : public PlaneOp {
public:
  SoftmaxOp(Emitter &e, const Op &op)
      : PlaneOp(e, op, op.params<SoftmaxParams>().axes), exp_(*unaryKernel(kernels::UnaryKind::Exp)),
        log_(*unaryKernel(kernels::UnaryKind::Log)), isLog_(op.kind == OpKind::LogSoftmax) {}
  std::vector<uint64_t> setBytes(int64_t ns, int64_t cs, int64_t) const override {
    const uint64_t plane = LocalTensor::bytes(DType::F32, inShape(ns, cs), lanes());
    const uint64_t stat = LocalTensor::bytes(DType::F32, outShape(ns, cs), lanes());
    std::vector<uint64_t> v{plane, plane, stat, stat}; // x, y, max (then log sum), sum
    v.insert(v.end(), scratch(), std::max(plane, stat));
    return v;
  }
  std::vector<uint64_t> fixedBytes(int64_t) const override {
    std::vector<uint64_t> v{kernelFixedBytes(exp_)};
    if (isLog_) v.push_back(kernelFixedBytes(log_));
    return v;
  }
  uint16_t loadFixed(const Tile &, uint16_t wait) override {
    uint16_t id = loadKernelCoefficients(e_, exp_, fixed_[0], wait);
    return isLog_ ? std::max(id, loadKernelCoefficients(e_, log_, fixed_[1], wait)) : id;
  }
  uint16_t compute(const Tile &t, unsigned set, uint16_t wait) override {
    const LocalTensor x = inBuffer(set, 0, DType::F32, t), y = inBuffer(set, 1, DType::F32, t);
    const LocalTensor m = outBuffer(set, 2, DType::F32, t), sum = outBuffer(set, 3, DType::F32, t);
    auto temps = [&](bool plane) {
      std::vector<LocalTensor> v;
      for (size_t i = 0; i < scratch(); ++i)
        v.push_back(plane ? inBuffer(set, 4 + i, DType::F32, t) : outBuffer(set, 4 + i, DType::F32, t));
      return v;
    };
    window(x, m, true, {}, wait);
    arith(EuOp::Sub, x, x.operand(hw_), spread(m, x).operand(hw_), wait);
    emitKernel(e_, exp_, {x}, y, temps(true), fixed_[0], wait);
    window(y, sum, false, constantF(1.0f), wait);
    if (!isLog_) return arith(EuOp::Divide, y, y.operand(hw_), spread(sum, y).operand(hw_), wait);
    emitKernel(e_, log_, {sum}, m, temps(false), fixed_[1], wait);
    return arith(EuOp::Sub, y, x.operand(hw_), spread(m, x).operand(hw_), wait);
  }

private:
  size_t scratch() const { return std::max(exp_.temps, isLog_ ? log_.temps : 0u); }
  KernelProgram exp_, log_;
  bool isLog_;
};

} // namespace

Status reduceLayout(const Tensor &x, const Tensor &y, const ReduceAxes &axes) {
  return planReduce(x, y, axes).status();
}

namespace ops {
const OpImpl Reduce{OpKind::Reduce, validateReduce, evaluateReduce, reduceEmitter, nullptr, nullptr};
const OpImpl LayerNorm{OpKind::LayerNorm, validateLayerNorm, evaluateLayerNorm, slicedAs<LayerNormOp>, nullptr, nullptr};
const OpImpl Softmax{OpKind::Softmax, validateSoftmax, evaluateSoftmax, slicedAs<SoftmaxOp>, nullptr, nullptr};
const OpImpl LogSoftmax{OpKind::LogSoftmax, validateSoftmax, evaluateSoftmax, slicedAs<SoftmaxOp>, nullptr, nullptr};
} // namespace ops

} // namespace tpu::backend
