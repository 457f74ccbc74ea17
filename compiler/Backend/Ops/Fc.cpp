// Fc: (M, K) x (K, N) + bias; rows in n, K over the lanes. The weight is
// [n_out, K], the bias [n_out]; the output's last dim is n_out and its other
// dims are the rows: x (M, K...) flattened for a 2-D output, x (d..., K)
// with the same leading dims for an N-D one (a Linear over NHWC). With
// transposedInput x is (K, M): K items of M channels, read by the mm command
// transposed (gemm transA). K past the 4095 rows one mm command takes (VGG's
// 25088) is cut into chunks that accumulate in the result (eu mac): fp32
// adds each chunk's sum to the previous ones (the reference sums the same
// way); int8 sums exactly in an int32 buffer and requantizes once. The
// output columns lie over the lanes and W columns in each (column j = c * W
// + w of the mm command): a lane's EUs then work on W columns at once
// instead of one.
#include "compiler/Backend/Ops/Fc.h"
#include "compiler/Backend/Emit.h"
#include "compiler/Backend/OpRegistry.h"
#include "compiler/Backend/OpValidation.h"
#include "compiler/Backend/ReferenceEval.h"
#include "timing/TiuTiming.h"

namespace tpu::backend {

namespace {

using namespace emit;

// The left matrix's rows M and columns K, and the output columns.
struct FcDims {
  int64_t m, k, n;
};
FcDims fcDims(const Tensor &x, const Tensor &y) {
  const int64_t n = y.shape.back(), m = y.numel() / n;
  return {m, x.numel() / m, n};
}

Status validateFc(const OpCheck &c) {
  const Tensor &x = c.in(0), &w = c.in(1);
  TPU_RETURN_IF_ERROR(c.sameType(x));
  if (x.shape.empty() || c.y.shape.size() < 2) return makeError("input and output must be matrices (2 or more dims)");
  const auto [m, k, n] = fcDims(x, c.y);
  if (c.op.params<FcParams>().transposedInput) {
    if (x.shape.size() != 2 || c.y.shape.size() != 2 || x.shape[1] != m)
      return makeError("a transposed input must be (K, N) and the output (N, n_out)");
  } else if (c.y.shape.size() == 2 ? x.shape[0] != m
                                   : x.shape.size() != c.y.shape.size() ||
                                         !std::equal(x.shape.begin(), x.shape.end() - 1, c.y.shape.begin())) {
    return makeError("output must be (N, n_out), or (d..., n_out) for an input (d..., K)");
  }
  if (!w.isWeight() || w.shape != std::vector<int64_t>{n, k})
    return makeError("weight '", w.name, "' must be [n_out, K] = [", n, ", ", k, "]");
  TPU_RETURN_IF_ERROR(c.weightType(w, "fc"));
  if (c.op.inputs.size() == 3) { // one value per output column
    const Tensor &b = c.in(2);
    if (!b.isWeight() || b.numel() != n || b.dtype != (c.int8 ? DType::I16 : DType::F32))
      return makeError("bias '", b.name, "' must be a ", c.int8 ? "int16" : "float32", " weight of ", n, " elements");
  }
  return Status::ok();
}

} // namespace

// K is the right matrix's row count (opd1_n) and the left's channels: at
// most 4095 per command. Longer rows run as `count` chunks of `rows` (the
// last one shorter), a multiple of the 64 lanes so that each chunk's left
// columns start in lane 0.
KChunks kChunks(int64_t k) {
  if (k <= maxChannels()) return {k, 1};
  const int64_t lanes = 64, most = maxChannels() / lanes * lanes;
  const int64_t count = ceilDiv(k, most);
  return {ceilDiv(ceilDiv(k, count), lanes) * lanes, count};
}

namespace {

// The right matrix's K rows are one GDMA w extent; a transposed left
// matrix holds K in its rows (no chunks).
Status encodableFc(const Graph &g, const Op &op) {
  const int64_t k = fcDims(g.tensors[size_t(op.inputs[0])], g.tensors[size_t(op.output)]).k;
  if (op.params<FcParams>().transposedInput && k > maxChannels())
    return makeError("K = ", k, " exceeds the ", maxChannels(),
                     " rows one matrix command takes with a transposed input (K splitting is not implemented)");
  if (k > kMaxDim) return makeError("K = ", k, " exceeds the ", kMaxDim, " elements of a weight row one load moves");
  return Status::ok();
}

// The columns W each lane holds: the divisor of n whose lane rounds times EU
// passes (the timing library's count) are fewest, its weights (W x K per
// lane) taking at most a third of a lane and at most the kMaxDim elements of
// the one load run per lane (loadFixed; VGG-16's int8 fc1 would otherwise take
// W = 4, 4 x 25088); the smallest of equals.
int64_t columnsPerLane(int64_t n, int64_t k, DType wt, const isa::HwConfig &hw) {
  int64_t best = 1;
  uint64_t bestCost = UINT64_MAX;
  for (int64_t w = 1; w <= n; ++w) {
    if (n % w) continue;
    if (w > 1 && (uint64_t(w * k) * dtypeBytes(wt) > hw.lmemBytesPerLane / 3 || w * k > kMaxDim)) break;
    const uint64_t cost = timing::laneRounds(uint64_t(n / w), 0, hw) * timing::planePasses(1, uint64_t(w), dtypeBytes(wt), hw);
    if (cost < bestCost) best = w, bestCost = cost;
  }
  return best;
}

void evaluateFc(const RefArgs &r, Bytes &out) {
  const auto [m, k, n] = fcDims(r.x, r.y);
  const bool relu = r.op.relu;
  // Element (i, q) of the left matrix.
  const bool transposed = r.op.params<FcParams>().transposedInput;
  const auto at = [&, m = m, k = k](int64_t i, int64_t q) { return size_t(transposed ? q * m + i : i * k + q); };
  if (r.isInt) {
    auto a = r.ints(0), w = r.ints(1);
    std::vector<int32_t> b;
    if (r.in.size() == 3) b = toInts(*r.in[2], DType::I16);
    std::vector<int64_t> ri(r.count);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        int64_t acc = 0;
        for (int64_t q = 0; q < k; ++q) acc += int64_t(a[at(i, q)]) * w[size_t(j * k + q)];
        if (!b.empty()) acc += b[size_t(j)];
        ri[size_t(i * n + j)] = requantizeOp(acc, r.op, relu, r.y.dtype);
      }
    out = fromInts(ri, r.y.dtype);
    return;
  }
  const float *a = floats(*r.in[0]), *w = floats(*r.in[1]);
  const float *b = r.in.size() == 3 ? floats(*r.in[2]) : nullptr;
  const KChunks chunks = kChunks(k);
  std::vector<float> rf(r.count);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      // Each chunk's products summed from 0; the first adds the bias, the
      // others the result so far.
      float sum = 0.0f;
      for (int64_t q0 = 0; q0 < k; q0 += chunks.rows) {
        float acc = matrixProductSum([&](int64_t q) { return a[at(i, q)]; }, [&](int64_t q) { return w[j * k + q]; },
                                     q0, std::min(k, q0 + chunks.rows));
        if (q0 == 0 && b) acc += b[j];
        if (q0 > 0) acc += sum;
        sum = acc;
      }
      rf[size_t(i * n + j)] = relu ? sim::relu(sum) : sum;
    }
  out = fromFloats(rf);
}

class FcOp : public SlicedOp {
public:
  FcOp(Emitter &e, const Op &op) : SlicedOp(e, op) {
    const Tensor &xt = e.g.tensors[op.inputs[0]], &yt = e.g.tensors[op.output];
    x_ = e.ddr(op.inputs[0]), y_ = e.ddr(op.output);
    const auto [m, k, n] = fcDims(xt, yt);
    k_ = k, chunks_ = kChunks(k);
    rowsPerItem_ = p_.transposedInput ? 1 : m / xt.shape[0];
    x_.s = p_.transposedInput ? std::array<int64_t, 4>{k, m, 1, 1} : std::array<int64_t, 4>{m, k, 1, 1};
    wt_ = e.g.tensors[op.inputs[1]].dtype, waddr_ = e.am.addr[op.inputs[1]];
    w_ = columnsPerLane(n, k, wt_, e.hw);
    y_.s = {m, n / w_, 1, w_};
    if (op.inputs.size() == 3) baddr_ = e.am.addr[op.inputs[2]], bt_ = e.g.tensors[op.inputs[2]].dtype;
  }
  std::array<int64_t, 3> extents() const override { return {y_.s[0], y_.s[1], 1}; }
  bool cutsH() const override { return false; }
  std::vector<uint64_t> setBytes(int64_t ns, int64_t cs, int64_t) const override {
    std::vector<uint64_t> v{LocalTensor::activationBytes(x_, leftShape(ns), lanes()),
                            LocalTensor::activationBytes(y_, outShape(ns, cs), lanes())};
    if (int32Sums()) v.push_back(LocalTensor::bytes(DType::I32, outShape(ns, cs), lanes()));
    return v;
  }
  std::vector<uint64_t> fixedBytes(int64_t cs) const override {
    std::vector<uint64_t> v{LocalTensor::bytes(wt_, {u32(k_), u32(cs), 1, u32(w_)}, lanes())};
    if (baddr_) v.push_back(LocalTensor::perChannelBytes(bt_, cs, lanes()) * uint64_t(w_));
    return v;
  }
  Shape4 outShape(int64_t ns, int64_t cs) const { return {u32(ns), u32(cs), 1, u32(w_)}; }
  // Each output column's K rows contiguous in its lane, the lane's W columns
  // one after another (one load run per channel slice).
  LocalTensor rightBuf(int64_t cs) const {
    LocalTensor b;
    b.offset = fixed_[0], b.dtype = wt_, b.shape = {u32(k_), u32(cs), 1, u32(w_)};
    b.stride = {1, u32(w_ * k_), 1, u32(k_)};
    return b;
  }
  // One value per output column, a lane's W in a row.
  LocalTensor biasBuf(int64_t cs) const {
    LocalTensor b = LocalTensor::perChannel(fixed_[1], bt_, {1, u32(cs), 1, u32(w_)});
    b.stride.c = u32(w_), b.stride.w = 1;
    return b;
  }
  // ns rows of K: (ns, K), or transposed (K, ns).
  Shape4 leftShape(int64_t ns) const {
    return p_.transposedInput ? Shape4{u32(k_), u32(ns), 1, 1} : Shape4{u32(ns), u32(k_), 1, 1};
  }
  LocalTensor leftBuf(const Tile &t, unsigned set) const {
    return LocalTensor::activation(bufOffset(set, 0), x_, leftShape(t.ns), lanes());
  }
  LocalTensor outBuf(const Tile &t, unsigned set) const {
    return LocalTensor::activation(bufOffset(set, 1), y_, outShape(t.ns, t.cs), lanes());
  }
  uint16_t loadFixed(const Tile &t, uint16_t wait) override {
    // DDR weight [n_out, K] is the local layout's order: the same bytes seen
    // as (1, channels, 1, W * K) on both sides, one run.
    const uint32_t run = u32(w_ * k_);
    LocalTensor view = rightBuf(t.cs);
    view.shape = {1, u32(t.cs), 1, run}, view.stride = {0, run, run, 1};
    uint16_t id = e_.loadWeight(waddr_ + uint64_t(t.c0 * w_ * k_) * dtypeBytes(wt_), wt_, {1, u32(t.cs), 1, run},
                                {0, run, run, 1}, view, wait);
    if (baddr_) {
      const LocalTensor b = biasBuf(t.cs);
      id = e_.loadWeight(baddr_ + uint64_t(t.c0 * w_) * dtypeBytes(bt_), bt_, {1, u32(t.cs), 1, u32(w_)},
                         {0, u32(w_), u32(w_), 1}, b, wait);
    }
    return id;
  }
  uint16_t load(const Tile &t, unsigned set, uint16_t wait) override {
    if (p_.transposedInput) return e_.move(true, x_, 0, k_, t.n0, t.ns, 0, 1, leftBuf(t, set), wait);
    return moveRows(true, x_, t.n0, t.ns, 0, k_, leftBuf(t, set), wait);
  }
  // Rows [m0, m0 + ms), channels [c0, c0 + cs) (of d.s[3] columns each) of
  // a matrix in DDR to/from `l`. fp32 rows are contiguous, and so are int8
  // ones of one row per item (4N: Emitter::move). The int8 rows of an N-D
  // tensor are rowsPerItem_ consecutive rows of each batch item, an item's
  // element e at byte group * 4 * (elements per item) + 4e + item % 4: one
  // command per item.
  uint16_t moveRows(bool toLocal, const DTensor &d, int64_t m0, int64_t ms, int64_t c0, int64_t cs,
                    const LocalTensor &l, uint16_t wait) {
    if (!d.n4() || rowsPerItem_ == 1) return e_.move(toLocal, d, m0, ms, c0, cs, 0, 1, l, wait);
    const int64_t w = d.s[3], cols = d.s[1] * w, perItem = rowsPerItem_ * cols;
    uint16_t id = 0;
    for (int64_t m = m0; m < m0 + ms;) {
      const int64_t item = m / rowsPerItem_, count = std::min(m0 + ms, (item + 1) * rowsPerItem_) - m;
      isa::GdmaTensor gt, lt;
      gt.addr = d.addr + uint64_t(item / 4 * 4 * perItem + (m % rowsPerItem_ * cols + c0 * w) * 4 + item % 4);
      gt.format = lt.format = formatOf(d.dtype);
      gt.shape = lt.shape = {u32(count), u32(cs), 1, u32(w)};
      gt.stride = {u32(4 * cols), u32(4 * w), 1, 4};
      lt.addr = l.addr(hw_) + uint32_t((m - m0) * l.stride.n), lt.stride = {l.stride.n, l.stride.c, l.stride.h, l.stride.w};
      isa::GdmaCommand c;
      c.direction = toLocal ? isa::GdmaDirection::S2L : isa::GdmaDirection::L2S;
      c.src = toLocal ? gt : lt;
      c.dst = toLocal ? lt : gt;
      id = e_.b->gdma(c, wait);
      m += count;
    }
    return id;
  }
  uint16_t compute(const Tile &t, unsigned set, uint16_t wait) override {
    const LocalTensor out = outBuf(t, set);
    // int8 chunks sum into int32 (rshift 0), requantized by one add of 0.
    const LocalTensor sums = int32Sums() ? LocalTensor::compact(bufOffset(set, 2), DType::I32, out.shape, lanes()) : out;
    uint16_t id = 0;
    for (int64_t q = 0; q < chunks_.count; ++q) {
      const int64_t q0 = q * chunks_.rows, rows = std::min(k_ - q0, chunks_.rows);
      const bool last = q + 1 == chunks_.count;
      LocalTensor right = rightBuf(t.cs);
      right.offset += u32(q0 * dtypeBytes(wt_)), right.shape.n = u32(rows);
      isa::MatMul c;
      c.eu = q == 0 ? isa::EuOp::Mul : isa::EuOp::Mac;
      c.leftTranspose = p_.transposedInput;
      c.left = chunks_.count == 1 ? leftBuf(t, set).operand(hw_)
                                  : leftBuf(t, set).channels(u32(q0), u32(rows), lanes()).operand(hw_);
      c.right = right.operand(hw_), c.output = sums.operand(hw_);
      if (baddr_ && q == 0) c.hasBias = true, c.bias = biasBuf(t.cs).operand(hw_);
      if (last && !int32Sums()) c.rshift = op_.rshift, c.relu = op_.relu;
      id = e_.b->tiu(c, wait);
    }
    if (!int32Sums()) return id;
    isa::Arith c;
    c.eu = isa::EuOp::Add, c.res0 = out.operand(hw_), c.opd0 = sums.operand(hw_), c.opd1 = constant(DType::I32, 0);
    c.opd1.shape = out.shape, c.opdCount = 2, c.rshift = op_.rshift, c.relu = op_.relu;
    return e_.b->tiu(c, wait);
  }
  uint16_t store(const Tile &t, unsigned set, uint16_t wait) override {
    return moveRows(false, y_, t.n0, t.ns, t.c0, t.cs, outBuf(t, set), wait);
  }

private:
  const FcParams &p_ = op_.params<FcParams>();
  bool int32Sums() const { return chunks_.count > 1 && y_.dtype != DType::F32; }
  DTensor x_, y_;
  int64_t k_ = 1;
  int64_t w_ = 1; // output columns per lane (columnsPerLane)
  KChunks chunks_{1, 1};
  int64_t rowsPerItem_ = 1; // rows of the matrix per batch item (an N-D input's leading dims)
  DType wt_ = DType::F32, bt_ = DType::F32;
  uint64_t waddr_ = 0, baddr_ = 0;
};

} // namespace

namespace ops {
const OpImpl Fc{OpKind::Fc, validateFc, evaluateFc, slicedAs<FcOp>, nullptr, encodableFc};
} // namespace ops

} // namespace tpu::backend
