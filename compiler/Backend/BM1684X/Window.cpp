// The window ops on the BM1684X: Conv, ConvTranspose, Fc, MatMul, Pool and GlobalAvgPool.
#include "compiler/Backend/BM1684X/Compiler.h"

#include "compiler/Backend/Ops/Fc.h"
#include "compiler/Backend/Ops/MatMul.h"
#include "compiler/Backend/Ops/Window.h"
#include "compiler/Backend/ReferenceEval.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>

namespace tpu::backend::bm1684x {

namespace {

// Output rows [oh0, oh0 + count) of a window over `inRows` input rows: the input rows they read and the
// pads above and below them.
struct RowWindow {
  uint64_t first = 0, count = 0, padUp = 0, padDown = 0;
};
RowWindow inputRows(uint64_t oh0, uint64_t count, const WindowParams &p, uint64_t inRows) {
  int64_t start = int64_t(oh0) * p.strideH - p.padTop;
  int64_t end = int64_t(oh0 + count - 1) * p.strideH - p.padTop + (p.kh - 1) * p.dilationH; // inclusive
  int64_t first = std::max<int64_t>(start, 0), last = std::min<int64_t>(end, int64_t(inRows) - 1);
  RowWindow r;
  r.first = uint64_t(first);
  r.count = last >= first ? uint64_t(last - first + 1) : 0;
  r.padUp = uint64_t(first - start);
  r.padDown = uint64_t(end - std::max(last, first - 1));
  return r;
}

} // namespace

std::vector<uint8_t> rotatedConvWeights(const Tensor &w, int64_t groups) {
  const auto [ic, ocg, kh, kw] = w.nchw();
  const int64_t icg = ic / groups;
  const size_t b = bytesOf(w.dtype);
  std::vector<uint8_t> out(w.data.size());
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t i = 0; i < icg; ++i)
      for (int64_t o = 0; o < ocg; ++o)
        for (int64_t y = 0; y < kh; ++y)
          for (int64_t x = 0; x < kw; ++x)
            std::memcpy(&out[size_t((((g * ocg + o) * icg + i) * kh + (kh - 1 - y)) * kw + (kw - 1 - x)) * b],
                        &w.data[size_t((((g * icg + i) * ocg + o) * kh + y) * kw + x) * b], b);
  return out;
}

bool unevenAverage(const Op &op, const Tensor &x, const Tensor &y) { return !averageTapsOf(op, x, y).uniform(); }

int64_t int8SumBound(const Graph &g, const Op &op) {
  const Tensor &x = g.tensors[size_t(op.inputs[0])], &w = g.tensors[size_t(op.inputs[1])];
  const int64_t xMax = largestMagnitude(x.dtype);
  int64_t maxBias = 0, wMax = 0;
  if (op.inputs.size() > 2)
    for (int32_t b : toInts(g.tensors[size_t(op.inputs[2])].data, g.tensors[size_t(op.inputs[2])].dtype))
      maxBias = std::max(maxBias, std::abs(int64_t(b)));
  const std::vector<int32_t> wi = toInts(w.data, w.dtype);
  for (int32_t v : wi) wMax = std::max(wMax, std::abs(int64_t(v)));
  if (op.kind == OpKind::ConvTranspose) { // [ic, oc / groups, kh, kw]: each output sums ic / groups * kh * kw taps
    const auto [ic, ocg, kh, kw] = w.nchw();
    return xMax * wMax * (ic / op.params<WindowParams>().groups) * kh * kw + maxBias;
  }
  // Conv (depthwise too) and Fc: one row of weights per output channel.
  const int64_t channels = std::max<int64_t>(w.nchw()[0], 1), row = int64_t(wi.size()) / channels;
  int64_t worst = 0;
  for (int64_t o = 0; o < channels; ++o) {
    int64_t sum = 0;
    for (int64_t i = 0; i < row; ++i) sum += std::abs(int64_t(wi[size_t(o * row + i)]));
    worst = std::max(worst, sum);
  }
  return xMax * worst + maxBias;
}

namespace {

// One axis of a phase of a dilated window (emitPhases): the input's first element and count along the
// axis (every f-th), the phase's output count and the pads of its window.
struct PhaseAxis {
  uint64_t first = 0, count = 0, outputs = 0;
  int64_t padBefore = 0, padAfter = 0;
};
// Phase `phase` of f along an axis of `in` inputs and `out` outputs, for the window of k taps, stride s,
// dilation d * f (the phase's own dilation d) and pad padBefore: output o = phase + f * i reads input
// (phase + f * i) * s - padBefore + t * d * f = f * (i * s + t * d + q) + r with q * f + r = phase * s -
// padBefore, 0 <= r < f: the window of dilation d over the inputs r, r + f, ... padded by -q before them.
PhaseAxis phaseAxis(int64_t in, int64_t out, int64_t k, int64_t s, int64_t d, int64_t f, int64_t padBefore,
                    int64_t phase) {
  PhaseAxis a;
  if (phase >= out) return a;
  a.outputs = uint64_t((out - phase + f - 1) / f);
  const int64_t at = phase * s - padBefore;
  const int64_t q = at >= 0 ? at / f : -((-at + f - 1) / f), r = at - q * f;
  const int64_t first = r + f * std::max<int64_t>(q, 0);
  a.first = uint64_t(first);
  a.count = first < in ? uint64_t((in - first + f - 1) / f) : 0;
  a.padBefore = std::max<int64_t>(-q, 0);
  const int64_t need = (int64_t(a.outputs) - 1) * s + (k - 1) * d + 1;
  a.padAfter = std::max<int64_t>(0, need - a.padBefore - int64_t(a.count));
  return a;
}

// The least f dividing `dilation` with dilation / f within the fields (f = dilation at worst).
int64_t phaseFactor(int64_t dilation) {
  for (int64_t f = 1; f < dilation; ++f)
    if (dilation % f == 0 && dilation / f <= kMaxDilation) return f;
  return dilation;
}

} // namespace

// A conv whose dilation is beyond the 4-bit fields, as f x f convs of dilation / f (phaseFactor, per axis):
// phase (py, px) computes the outputs (py + f * i, px + f * j) from every f-th input row and column
// (phaseAxis), both read and written by DMA with the strides times f.
Status Compiler::emitPhases(const Op &op, const WindowJob &job) {
  const WindowParams &p = job.p;
  const int64_t fH = phaseFactor(p.dilationH), fW = phaseFactor(p.dilationW);
  const Dims xd = job.xd, yd = job.yd;
  for (int64_t py = 0; py < fH; ++py)
    for (int64_t px = 0; px < fW; ++px) {
      const PhaseAxis h =
          phaseAxis(int64_t(xd[2]), int64_t(yd[2]), p.kh, p.strideH, p.dilationH / fH, fH, p.padTop, py);
      const PhaseAxis w =
          phaseAxis(int64_t(xd[3]), int64_t(yd[3]), p.kw, p.strideW, p.dilationW / fW, fW, p.padLeft, px);
      if (!h.outputs || !w.outputs) continue;
      if (!h.count || !w.count) return unsupported(op, "a dilated phase whose window lies wholly in the padding");
      WindowJob phase = job;
      phase.p.dilationH /= fH, phase.p.dilationW /= fW;
      phase.p.padTop = h.padBefore, phase.p.padBottom = h.padAfter;
      phase.p.padLeft = w.padBefore, phase.p.padRight = w.padAfter;
      phase.xBase += h.first * job.xStride[2] + w.first * job.xStride[3];
      phase.xd[2] = h.count, phase.xd[3] = w.count;
      phase.xStride[2] *= uint64_t(fH), phase.xStride[3] *= uint64_t(fW);
      phase.yBase += uint64_t(py) * job.yStride[2] + uint64_t(px) * job.yStride[3];
      phase.yd[2] = h.outputs, phase.yd[3] = w.outputs;
      phase.yStride[2] *= uint64_t(fH), phase.yStride[3] *= uint64_t(fW);
      TPU_RETURN_IF_ERROR(emitWindowJob(op, phase));
    }
  return Status::ok();
}

// The window op as one: Conv and Fc (as a 1x1 conv) with weights, Pool and GlobalAvgPool without.
Status Compiler::emitWindow(const Op &op) {
  const Tensor &x = g_.tensors[size_t(op.inputs[0])], &y = g_.tensors[size_t(op.output)];
  const bool transposed = op.kind == OpKind::ConvTranspose;
  const bool isMatMul = op.kind == OpKind::MatMul;
  const bool isConv = op.kind == OpKind::Conv || op.kind == OpKind::Fc || transposed || isMatMul;
  WindowJob job;
  WindowParams &p = job.p;
  if (op.kind == OpKind::Conv || op.kind == OpKind::Pool) p = effectiveWindow(op, x, y);
  // A conv whose kernel is its stride, unpadded (ViT's patches), beyond the 4-bit stride fields: the 1x1 conv
  // over the patches' elements as channels (q = (ic * kh + ky) * kw + kx, the weights' own order), its
  // input gathered by DMA (one per input channel and kernel row).
  const bool patches = op.kind == OpKind::Conv && p.groups == 1 && p.kh == p.strideH && p.kw == p.strideW &&
                       (p.strideH > 15 || p.strideW > 15) && p.dilationH == 1 && p.dilationW == 1 &&
                       !(p.padTop || p.padBottom || p.padLeft || p.padRight) && uint64_t(p.kw) <= map::kLanes;
  job.patch = {patches ? uint64_t(p.kh) : 1, patches ? uint64_t(p.kw) : 1};
  // A transposed conv runs as the stride-1 conv over its input with stride - 1 zeros inserted between
  // elements (opd0_*_ins0), the kernel rotated (rotatedConvWeights), the pads of transposedPads.
  std::array<uint64_t, 2> &inserted = job.inserted;
  if (transposed) {
    p = op.params<WindowParams>();
    if (p.strideH > 16 || p.strideW > 16) return unsupported(op, "a stride above 16 (the 4-bit insertion fields)");
    const TransposedPads t = transposedPads(op, x, y);
    inserted = {uint64_t(p.strideH), uint64_t(p.strideW)};
    p.strideH = p.strideW = 1;
    p.padTop = t.top, p.padBottom = t.bottom, p.padLeft = t.left, p.padRight = t.right;
  }
  if (op.kind == OpKind::GlobalAvgPool) p.kh = x.nchw()[2], p.kw = x.nchw()[3];
  Dims &xd = job.xd, &yd = job.yd, &xStride = job.xStride, &yStride = job.yStride;
  xd = dims(op.inputs[0]), yd = dims(op.output);
  xStride = compactDims(xd), yStride = compactDims(yd);
  if (isMatMul) { // item i: a 1x1 conv over M rows of K, its weights [n][k] the rhs read transposed
    const MatMulDims d = *matMulDims(x, g_.tensors[size_t(op.inputs[1])], y);
    const uint64_t m = uint64_t(d.m), k = uint64_t(d.k), n = uint64_t(d.n);
    xd = {uint64_t(d.b), k, m, 1}, xStride = {m * k, 1, k, 1};
    yd = {uint64_t(d.b), n, m, 1}, yStride = {m * n, 1, n, 1};
    job.wOcStride = 1, job.wIcStride = n, job.wItem = k * n;
  }
  job.xOrig = xd;
  if (patches) { // the window: 1x1 over (n, ic * kh * kw, oh, ow)
    xd = {xd[0], xd[1] * job.patch[0] * job.patch[1], yd[2], yd[3]};
    p = WindowParams{};
  }
  if (op.kind == OpKind::Fc) { // a 1x1 conv over M rows of K: x (M, K) (or (K, M) transposed), y (M, n)
    const uint64_t k = uint64_t(g_.tensors[size_t(op.inputs[1])].shape[1]), n = uint64_t(y.shape.back());
    const uint64_t m = uint64_t(y.numel()) / n;
    const bool t = op.params<FcParams>().transposedInput;
    xd = {1, k, m, 1}, xStride = {m * k, t ? m : 1, t ? 1 : k, 1};
    yd = {1, n, m, 1}, yStride = {m * n, 1, n, 1};
  }
  // One channel per group runs as a depthwise pooling command; other groups as one conv each.
  job.isConv = isConv;
  const bool grouped = op.kind == OpKind::Conv || transposed;
  job.depthwise = grouped && p.groups > 1 && uint64_t(p.groups) == xd[1] && xd[1] == yd[1];
  job.groups = grouped && !job.depthwise ? uint64_t(p.groups) : 1;
  job.isAverage = op.kind == OpKind::GlobalAvgPool || (op.kind == OpKind::Pool && !p.isMax);
  job.patches = patches;
  // An average whose windows divide by different counts (pads left out of the count, ceil mode) sums
  // (multiplier 1) and multiplies each position by its own 1 / count (constantsOf) after.
  job.uneven = job.isAverage && op.kind == OpKind::Pool && unevenAverage(op, x, y);
  for (int64_t v : {p.padTop, p.padBottom, p.padLeft, p.padRight})
    if (v < 0) return unsupported(op, "a negative pad");
  if (op.kind == OpKind::Conv && std::max(p.dilationH, p.dilationW) > kMaxDilation) return emitPhases(op, job);
  return emitWindowJob(op, job);
}

Status Compiler::emitWindowJob(const Op &op, const WindowJob &job) {
  const WindowParams &p = job.p;
  const Dims &xd = job.xd, &yd = job.yd, &xStride = job.xStride, &yStride = job.yStride;
  const std::array<uint64_t, 2> &inserted = job.inserted;
  const bool isConv = job.isConv, depthwise = job.depthwise, isAverage = job.isAverage, uneven = job.uneven;
  const uint64_t groups = job.groups, wOcStride = job.wOcStride, wIcStride = job.wIcStride, wItem = job.wItem;
  // Element types: the input's, the output's and the weights' (a 16-bit float op's filter is 16-bit, its
  // bias fp32). A 16-bit average widens its input to fp32 in local memory and sums 1/count * x term by
  // term (pord.depthwise of a constant), as its fp32 form; a 16-bit depthwise conv with a bias sums into
  // fp32 and adds the fp32 bias after (the pooling commands' bias has the input's type).
  const DType xt = g_.tensors[size_t(op.inputs[0])].dtype, yt = g_.tensors[size_t(op.output)].dtype;
  const DType wt = isConv ? stored_[size_t(op.inputs[1])] : DType::F32; // as stored (CodeGen.cpp)
  const bool half = isHalf(xt), widen = half && isAverage;
  // int8 (the BM1684's integer semantics): a conv's or an average's exact sums in int32 (conv.normal with a
  // kernel zero point of 0, then the int32 bias and relu added; pord.depthwise(relu) with its int32 bias;
  // pord.avgpooling with multiplier 1 and no shift), then quant.rq1 (the average's multiplier, the op's
  // rounding right shift) saturates them to the result; max pooling selects in the input's type.
  const bool integer = isInteger(xt), intSums = integer && (isConv || isAverage);
  if (integer) {
    if (uneven) return unsupported(op, "an int8 average whose windows divide by different counts");
    if (!intSums && xt != yt) return unsupported(op, "an int8 max pooling that changes the type");
    if (xt == DType::I16 && (depthwise || !isConv)) return unsupported(op, "an int16 input");
    if (isConv) // every sum within int32
      if (const int64_t bound = int8SumBound(g_, op); bound > INT32_MAX)
        return unsupported(op, "int8 sums that can reach " + std::to_string(bound) + ", beyond int32");
  }
  const uint64_t xb = bytesOf(xt), yb = bytesOf(yt), wb = bytesOf(wt);
  const uint64_t xAddress = addressOf(op.inputs[0]) + job.xBase * xb;
  const uint64_t yAddress = addressOf(op.output) + job.yBase * yb;
  if (half && uneven) return unsupported(op, "a 16-bit average whose windows divide by different counts");
  // Pads beyond the 4-bit fields are written into local memory around the input: the tile is filled with
  // the pad value, the input rows loaded inside it, and the command pads nothing.
  const bool padInMemory = std::max({p.padTop, p.padBottom, p.padLeft, p.padRight}) > int64_t(kMaxPad);
  if (padInMemory && inserted[0] * inserted[1] > 1) return unsupported(op, "a transposed conv with a pad above 15");
  if (padInMemory && widen) return unsupported(op, "a 16-bit average with a pad above 15");
  const uint64_t padLeft = padInMemory ? uint64_t(p.padLeft) : 0, padRight = padInMemory ? uint64_t(p.padRight) : 0;
  const uint64_t tileWidth = xd[3] + padLeft + padRight; // of the input tile
  for (int64_t v : {p.strideH, p.strideW})               // res_op_*_str: 4 bits
    if (v < 1 || v > 15) return unsupported(op, "a stride of " + std::to_string(v) + " (1 to 15)");
  for (int64_t v : {p.dilationH, p.dilationW}) // opd1_*_ins0 = dilation - 1: 4 bits
    if (v < 1 || v > kMaxDilation)
      return unsupported(op, "a dilation of " + std::to_string(v) + " (1 to " + std::to_string(kMaxDilation) + ")");

  const uint64_t kk = uint64_t(p.kh * p.kw);
  const bool hasWeights = isConv;
  const bool hasBias = isConv && op.inputs.size() > 2, biasAfter = half && depthwise && hasBias;
  const uint64_t ic = xd[1] / groups, oc = yd[1] / groups; // per group
  // A conv's 16-bit weights are Ic32, its 8-bit ones Ic64: per output channel, the input channels in groups
  // of 32 (64), the group's 32 (64) adjacent for each kernel position (IC_PARALLEL 64 bytes); 32-bit ones
  // Ic1 (ic * kh * kw packed).
  const bool icPacked = hasWeights && !depthwise && wb < kF32;
  const uint64_t icGroup = 64 / wb;
  auto weightRowOf = [&](uint64_t channels) {
    return depthwise ? kk : icPacked ? ceilDiv(channels, icGroup) * icGroup * kk : channels * kk;
  };
  // An Fc sums K in its reference's chunks (Ops/Fc.h kChunks): one conv per chunk (first input channel,
  // count), each over its own block of weights, into fp32 partial sums added in the reference's order.
  std::vector<std::pair<uint64_t, uint64_t>> chunks{{0, ic}};
  if (op.kind == OpKind::Fc && !integer && kChunks(int64_t(ic)).count > 1) {
    const uint64_t step = uint64_t(kChunks(int64_t(ic)).rows);
    chunks.clear();
    for (uint64_t q0 = 0; q0 < ic; q0 += step) chunks.push_back({q0, std::min(step, ic - q0)});
  }
  const bool chunked = chunks.size() > 1;
  std::vector<uint64_t> blockRow; // elements a lane row of each chunk's weights takes, then their sum
  uint64_t weightRows = 0;
  for (const auto &[q0, count] : chunks) blockRow.push_back(weightRowOf(count)), weightRows += blockRow.back();
  // Per lane, for a channel step of `cRows` lane rows and `oRows` output rows.
  auto weightBytes = [&](uint64_t cRows) { return hasWeights ? cRows * weightRows * wb : 0; };
  // Input rows as the window sees them: with zeros inserted, (h - 1) * step + 1.
  const uint64_t windowRows = (xd[2] - 1) * inserted[0] + 1;
  // The most input rows a slice of oRows output rows reads: its whole window span (the first slice's pads
  // take some of it, a later slice's do not; pads in memory are rows of the tile).
  auto inputRowsOf = [&](uint64_t oRows) {
    const uint64_t span = (oRows - 1) * uint64_t(p.strideH) + uint64_t((p.kh - 1) * p.dilationH) + 1;
    return padInMemory ? span : std::min(span, windowRows);
  };
  auto inputBytes = [&](uint64_t cRows, uint64_t oRows) {
    const uint64_t inChannels = isConv && !depthwise ? rows(ic) : cRows;
    return inChannels * alignedPlane(inputRowsOf(oRows) * tileWidth, widen ? DType::F32 : xt) * (widen ? kF32 : xb);
  };
  auto outputBytes = [&](uint64_t cRows, uint64_t oRows, DType t) {
    return cRows * alignedPlane(oRows * yd[3], t) * bytesOf(t);
  };
  // The weights and bias, then each slice's own buffers twice (ping-pong: slice k works in set k % 2, so
  // the DMA loads slice k + 1 while the TIU computes slice k): input, output, (uneven) the divisors'
  // reciprocals, (widen) the 16-bit input before it is widened, (biasAfter) the fp32 sums, (chunked) the
  // fp32 sum so far and a chunk's.
  auto sliceBuffers = [&](uint64_t cRows, uint64_t oRows) {
    std::vector<uint64_t> b{inputBytes(cRows, oRows), outputBytes(cRows, oRows, yt)};
    if (uneven) b.push_back(outputBytes(cRows, oRows, DType::F32));
    if (widen) b.push_back(cRows * alignedPlane(inputRowsOf(oRows) * tileWidth, xt) * xb);
    if (biasAfter || intSums) b.push_back(outputBytes(cRows, oRows, DType::F32)); // fp32 or int32 sums
    if (chunked) b.insert(b.end(), 2, outputBytes(cRows, oRows, DType::F32));
    return b;
  };
  size_t setCount = 2; // one when two sets of the smallest slice do not fit
  auto buffers = [&](uint64_t cRows, uint64_t oRows) {
    std::vector<uint64_t> b{weightBytes(cRows), hasBias ? cRows * kF32 : 0};
    const std::vector<uint64_t> slice = sliceBuffers(cRows, oRows);
    for (size_t set = 0; set < setCount; ++set) b.insert(b.end(), slice.begin(), slice.end());
    return b;
  };
  LmemPlan plan;
  // With inserted zeros the rows are not sliced (a slice could start on an inserted row).
  const uint64_t minRows = inserted[0] > 1 ? yd[2] : 1;
  auto slicing = [&] {
    return largestSlicing(oc, yd[2], minRows,
                          [&](uint64_t cRows, uint64_t oRows) { return plan.place(buffers(cRows, oRows)); });
  };
  Slicing s = slicing();
  if (!s.rowStep) setCount = 1, s = slicing();
  if (!s.rowStep) {
    const std::vector<uint64_t> one = buffers(1, minRows);
    return unsupported(op, std::to_string(minRows) + " output row(s) of 64 channels need " +
                               std::to_string(std::accumulate(one.begin(), one.end(), uint64_t(0))) +
                               " bytes of a lane's " + std::to_string(map::kLaneBytes));
  }
  plan.place(buffers(s.channelStep / map::kLanes, s.rowStep));
  const uint64_t wOff = plan.offsets[0], bOff = plan.offsets[1];
  struct SliceSet {
    uint64_t in = 0, out = 0, recips = 0, stage = 0, acc = 0, sum = 0, part = 0;
  };
  const size_t perSet = sliceBuffers(1, 1).size();
  auto setOf = [&](size_t k) {
    size_t i = 2 + k * perSet;
    SliceSet set;
    set.in = plan.offsets[i++], set.out = plan.offsets[i++];
    if (uneven) set.recips = plan.offsets[i++];
    if (widen) set.stage = plan.offsets[i++];
    if (biasAfter || intSums) set.acc = plan.offsets[i++];
    if (chunked) set.sum = plan.offsets[i++], set.part = plan.offsets[i++];
    return set;
  };
  const std::array<SliceSet, 2> sets{setOf(0), setOf(setCount - 1)};
  const uint64_t inputCapacity = sets[0].out - sets[0].in;
  uint64_t slice = 0;
  // A slice's store is issued after the next slice's loads, so the DMA queue does not wait behind it.
  std::optional<std::pair<Region, Region>> pendingStore;
  auto flushStore = [&]() -> Status {
    if (!pendingStore) return Status::ok();
    const auto [from, to] = *pendingStore;
    pendingStore.reset();
    return program_.dma(from, to);
  };
  const DType inType = widen ? DType::F32 : xt; // of the tile the command reads
  const uint32_t padValue = !p.isMax || isConv ? 0
                            : integer          ? integerBits(xt == DType::U8 ? 0 : -128, xt)
                                               : constantBits(-std::numeric_limits<float>::infinity(), xt);
  for (uint64_t g = 0; g < groups; ++g)
    for (uint64_t c0 = 0; c0 < oc; c0 += s.channelStep) {
      const uint64_t cs = std::min(s.channelStep, oc - c0), oc0 = g * oc + c0; // output channels from oc0
      // The weights of item n (the same for every item but MatMul's) into the Ic1 or Ic32 layout, and the
      // bias. In DDR, element (o, i, k) of a channel's i * kk + k at o * ocStride + (i * kk + k) * wIcStride.
      // A chunk's block of weights starts after the earlier chunks' blocks (rows(cs) lane rows each).
      std::vector<uint64_t> blockAt{wOff};
      for (uint64_t row : blockRow) blockAt.push_back(blockAt.back() + rows(cs) * row * wb);
      auto loadWeights = [&](uint64_t n) -> Status {
        const uint64_t perChannel = depthwise ? kk : ic * kk, ocStride = wOcStride ? wOcStride : perChannel;
        const uint64_t from = addressOf(op.inputs[1]) + (n * wItem + oc0 * ocStride) * wb;
        for (size_t j = 0; j < chunks.size(); ++j) {
          const auto [q0, count] = chunks[j];
          const uint64_t row = blockRow[j], at = from + q0 * kk * wIcStride * wb;
          if (icPacked) // one DMA per group of 32 (64) input channels
            for (uint64_t i0 = 0; i0 < count; i0 += icGroup) {
              const Dims shape{1, cs, std::min(icGroup, count - i0), kk};
              TPU_RETURN_IF_ERROR(program_.dma(
                  {at + i0 * kk * wIcStride * wb, shape, {0, ocStride, kk * wIcStride, wIcStride}, wt},
                  {map::kLmemStart + blockAt[j] + i0 * kk * wb, shape, {rows(cs) * row, row, 1, icGroup}, wt}));
            }
          else
            TPU_RETURN_IF_ERROR(
                program_.dma({at, {1, cs, 1, row}, {0, ocStride, 0, wIcStride}, wt},
                             {map::kLmemStart + blockAt[j], {1, cs, 1, row}, {rows(cs) * row, row, row, 1}, wt}));
        }
        if (!hasBias) return Status::ok();
        const DType bt = integer ? DType::I32 : DType::F32; // an int8 op's bias as stored: int32
        Region bsrc{addressOf(op.inputs[2]) + oc0 * kF32, {1, cs, 1, 1}, {cs, 1, 1, 1}, bt};
        return program_.dma(bsrc, {map::kLmemStart + bOff, bsrc.shape, {rows(cs), 1, 1, 1}, bt});
      };
      if (hasWeights && !wItem) TPU_RETURN_IF_ERROR(loadWeights(0));
      for (uint64_t n = 0; n < yd[0]; ++n) {
        if (hasWeights && wItem) TPU_RETURN_IF_ERROR(loadWeights(n));
        for (uint64_t oh0 = 0; oh0 < yd[2]; oh0 += s.rowStep) {
          const uint64_t ohs = std::min(s.rowStep, yd[2] - oh0);
          const SliceSet &set = sets[slice++ % 2];
          const uint64_t inOff = set.in, yOff = set.out, stageOff = set.stage, accOff = set.acc;
          const uint64_t sumOff = set.sum, partOff = set.part;
          RowWindow r = inputRows(oh0, ohs, p, windowRows);
          if (inserted[0] > 1) r.count = xd[2]; // the whole input: its rows, not the window's
          if ((!padInMemory && (r.padUp > kMaxPad || r.padDown > kMaxPad)) || r.count == 0)
            return unsupported(op, "a slice whose rows lie wholly in the padding");
          const uint64_t inC = isConv && !depthwise ? ic : cs, inC0 = isConv && !depthwise ? g * ic : c0;
          const Dims tileShape{1, inC, r.count + (padInMemory ? r.padUp + r.padDown : 0), tileWidth};
          if (rows(inC) * alignedPlane(tileShape[2] * tileShape[3], inType) * bytesOf(inType) > inputCapacity)
            return makeError("internal: ", op.name, ": an input slice overruns its local buffer");
          Dims inShape{1, inC, r.count, xd[3]};
          const Region from = ddrBox(xAddress, xStride, {n, inC0, r.first, 0}, inShape, xt);
          if (padInMemory) { // the pad value around, the rows inside
            const Region tile = localAligned(inOff, tileShape, xt);
            TPU_RETURN_IF_ERROR(program_.fill(tile, padValue));
            Region inside = tile;
            inside.address += (r.padUp * tileWidth + padLeft) * xb, inside.shape = inShape;
            TPU_RETURN_IF_ERROR(program_.dma(from, inside));
            r.padUp = r.padDown = 0;
          } else if (job.patches) {
            TPU_RETURN_IF_ERROR(loadPatches(op, job.xOrig, job.patch, n, oh0, inShape, inOff));
          } else if (widen) { // loaded 16-bit, copied to fp32 exactly
            TPU_RETURN_IF_ERROR(program_.dma(from, localAligned(stageOff, inShape, xt)));
            TPU_RETURN_IF_ERROR(convert(inShape, inOff, DType::F32, stageOff, xt));
          } else {
            TPU_RETURN_IF_ERROR(program_.dma(from, localAligned(inOff, inShape, xt)));
          }
          TPU_RETURN_IF_ERROR(flushStore());
          Dims outShape{1, cs, ohs, yd[3]};
          const char *mnemonic = isConv && !depthwise                 ? "conv.normal"
                                 : depthwise && op.relu && !biasAfter ? "pord.depthwiserelu"
                                 : depthwise || widen                 ? "pord.depthwise"
                                 : isAverage                          ? "pord.avgpooling"
                                                                      : "pord.maxpooling";
          WindowParams commandWindow = p;
          if (padInMemory) commandWindow.padLeft = commandWindow.padRight = 0;
          // A chunk's input channels start at lane 0 of lane row q0 / 64 (chunks are whole lane rows).
          const uint64_t inRow = alignedPlane(tileShape[2] * tileShape[3], inType) * bytesOf(inType);
          for (size_t j = 0; j < chunks.size(); ++j) {
            const auto [q0, count] = chunks[j];
            const bool last = j + 1 == chunks.size();
            const uint64_t result = chunked ? (j == 0 ? sumOff : partOff) : biasAfter || intSums ? accOff : yOff;
            const DType resultType = biasAfter || chunked ? DType::F32 : intSums ? DType::I32 : yt;
            TPU_ASSIGN_OR_RETURN(Command c,
                                 windowCommand(mnemonic, outShape, {tileShape[2], tileWidth}, commandWindow,
                                               {r.padUp, r.padDown}, padValue, inOff + q0 / map::kLanes * inRow, result,
                                               inType, resultType));
            if (isConv && !depthwise) TPU_RETURN_IF_ERROR(c.set("opd0_c", count));
            TPU_RETURN_IF_ERROR(c.set("opd0_y_ins0", inserted[0] - 1));
            TPU_RETURN_IF_ERROR(c.set("opd0_x_ins0", inserted[1] - 1));
            if (hasWeights) TPU_RETURN_IF_ERROR(c.set("opd1_addr", blockAt[j]));
            if (widen) // each term 1/count * x, summed from 0 (the fp32 form's order)
              TPU_RETURN_IF_ERROR(setFields(c, {{"opd1_const", 1},
                                                {"opd1_addr", floatBits(1.0f / float(kk))},
                                                {"opd2_const", 1},
                                                {"opd2_addr", 0}}));
            else if (isAverage && integer) // the plain sum: multiplier 1, shift 0 (res1_addr)
              TPU_RETURN_IF_ERROR(setFields(c, {{"opd1_const", 1}, {"opd1_addr", 1}}));
            else if (isAverage)
              TPU_RETURN_IF_ERROR(setMultiplier(c, uneven ? 1.0f : 1.0f / float(kk)));
            if (isConv && integer) TPU_RETURN_IF_ERROR(c.set("opd1_sign", 1)); // int8 weights
            const bool withBias = hasBias && !biasAfter && !(integer && !depthwise) && j == 0;
            if (isConv) {
              TPU_RETURN_IF_ERROR(c.set("opd2_const", withBias ? 0 : 1));
              TPU_RETURN_IF_ERROR(c.set("opd2_addr", withBias ? bOff : 0));
            }
            TPU_RETURN_IF_ERROR(program_.tiu(std::move(c)));
            if (j > 0) { // this chunk's sum + the sum so far
              TPU_ASSIGN_OR_RETURN(Command add,
                                   arithCommand("arith.add", outShape, last ? yOff : sumOff, partOff, sumOff, 0.0f,
                                                {last ? yt : DType::F32, DType::F32, DType::F32}));
              TPU_RETURN_IF_ERROR(program_.tiu(std::move(add)));
            }
          }
          if (biasAfter) { // the fp32 sums + the fp32 bias, rounded once
            TPU_ASSIGN_OR_RETURN(Command add, arithCommand("arith.add", outShape, yOff, accOff, bOff, 0.0f,
                                                           {yt, DType::F32, DType::F32}));
            TPU_RETURN_IF_ERROR(setFields(add, {{"opd1_str", 3}, {"opd1_c_str", 1}}));
            TPU_RETURN_IF_ERROR(program_.tiu(std::move(add)));
          }
          if (intSums) { // + bias, relu, then requantised into the output tile
            if (hasBias && !depthwise) {
              TPU_ASSIGN_OR_RETURN(Command add, arithCommand("arith.add", outShape, accOff, accOff, bOff, 0.0f,
                                                             {DType::I32, DType::I32, DType::I32}));
              TPU_RETURN_IF_ERROR(setFields(add, {{"opd1_str", 3}, {"opd1_c_str", 1}}));
              TPU_RETURN_IF_ERROR(program_.tiu(std::move(add)));
            }
            if (op.relu && !depthwise) {
              TPU_ASSIGN_OR_RETURN(Command r, intArithCommand("arith.max", outShape, accOff, accOff, std::nullopt, 0,
                                                              {DType::I32, DType::I32, DType::I32}));
              TPU_RETURN_IF_ERROR(program_.tiu(std::move(r)));
            }
            const int32_t multiplier = isAverage ? op.multipliers.at(0) : 1;
            TPU_ASSIGN_OR_RETURN(Command rq,
                                 requantCommand(outShape, yOff, yt, accOff, DType::I32, multiplier, op.rshift));
            TPU_RETURN_IF_ERROR(program_.tiu(std::move(rq)));
          }
          Region out = localAligned(yOff, outShape, yt);
          if (uneven) { // the rows' reciprocals, the same for every channel, then sum * reciprocal
            const uint64_t rOff = set.recips;
            TPU_RETURN_IF_ERROR(program_.dma({tables_.at(&op) + oh0 * yd[3] * kF32, outShape, {0, 0, yd[3], 1}},
                                             localAligned(rOff, outShape)));
            TPU_ASSIGN_OR_RETURN(Command m, arithCommand("arith.mul", outShape, yOff, yOff, rOff, 0.0f));
            TPU_RETURN_IF_ERROR(program_.tiu(std::move(m)));
          }
          if (op.relu && (!depthwise || biasAfter) && !intSums) {
            TPU_ASSIGN_OR_RETURN(Command r,
                                 arithCommand("arith.max", outShape, yOff, yOff, std::nullopt, 0.0f, {yt, yt}));
            TPU_RETURN_IF_ERROR(program_.tiu(std::move(r)));
          }
          pendingStore.emplace(out, ddrBox(yAddress, yStride, {n, oc0, oh0, 0}, outShape, yt));
        }
      }
    }
  return flushStore();
}

// The patches of output rows [oh0, oh0 + shape[2]) of item n, as the channels of local `shape` at `offset`:
// channel (ic * kh + ky) * kw + kx, row oh, column ow holds x[n][ic][oh * kh + ky][ow * kw + kx]; one DMA
// per input channel and kernel row (its kw channels).
Status Compiler::loadPatches(const Op &op, const Dims &x, const std::array<uint64_t, 2> &kernel, uint64_t n,
                             uint64_t oh0, const Dims &shape, uint64_t offset) {
  const auto [kh, kw] = kernel;
  const DType t = g_.tensors[size_t(op.inputs[0])].dtype;
  const Region tile = localAligned(offset, shape, t);
  for (uint64_t ic = 0; ic < x[1]; ++ic)
    for (uint64_t ky = 0; ky < kh; ++ky) {
      const uint64_t q = (ic * kh + ky) * kw; // the first of these kw channels
      const uint64_t from = ((n * x[1] + ic) * x[2] + oh0 * kh + ky) * x[3];
      const Region src{
          addressOf(op.inputs[0]) + from * bytesOf(t), {1, kw, shape[2], shape[3]}, {0, 1, kh * x[3], kw}, t};
      const Region dst{tile.address + (q % map::kLanes) * map::kLaneBytes +
                           q / map::kLanes * tile.stride[1] * bytesOf(t),
                       src.shape, tile.stride, t};
      TPU_RETURN_IF_ERROR(program_.dma(src, dst));
    }
  return Status::ok();
}

} // namespace tpu::backend::bm1684x
