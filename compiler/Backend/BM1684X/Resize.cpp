// Resize on the BM1684X: along w, then along h, each output line gathered by DMA and blended.
#include "compiler/Backend/BM1684X/Compiler.h"

#include <tuple>

namespace tpu::backend::bm1684x {

namespace {

// Whether a Resize leaves an axis as it is.
bool identity(const kernels::ResizeTaps &t, uint64_t in) {
  if (t.i0.size() != in) return false;
  for (size_t x = 0; x < t.i0.size(); ++x)
    if (t.i0[x] != int64_t(x) || t.w[x] != 0.0f) return false;
  return true;
}

} // namespace

std::vector<float> blendWeights(const kernels::ResizeTaps &t) {
  std::vector<float> v;
  for (float w : t.w) v.push_back(1.0f - w);
  v.insert(v.end(), t.w.begin(), t.w.end());
  return v;
}
// Resize, as the reference: along w, then along h (through a DDR intermediate when both change). A 16-bit
// Resize runs as its fp32 form: its input widened into DDR, the result rounded once from DDR.
Status Compiler::emitResize(const Op &op) {
  const auto &p = op.params<ResizeParams>();
  const Dims xd = dims(op.inputs[0]), yd = dims(op.output);
  const bool alongW = !identity(p.w, xd[3]), alongH = !identity(p.h, xd[2]);
  const uint64_t weights = tables_.at(&op), hWeights = weights + 2 * p.w.w.size() * kF32;
  const Dims mid{xd[0], xd[1], xd[2], yd[3]};
  if (!alongW && !alongH)
    return copy(op, op.inputs[0], 0, compactStrides(xd), 0, compactStrides(yd),
                {int64_t(xd[0]), int64_t(xd[1]), int64_t(xd[2]), int64_t(xd[3])});
  const DType t = g_.tensors[size_t(op.inputs[0])].dtype;
  const ResizeScratch &s = scratch_.at(&op);
  const uint64_t xCount = xd[0] * xd[1] * xd[2] * xd[3], yCount = yd[0] * yd[1] * yd[2] * yd[3];
  uint64_t from = addressOf(op.inputs[0]), to = addressOf(op.output);
  if (isHalf(t)) {
    TPU_RETURN_IF_ERROR(convertInDdr(from, t, s.wideIn, DType::F32, xCount));
    from = s.wideIn, to = s.wideOut;
  }
  if (alongW) TPU_RETURN_IF_ERROR(resizeAxis(op, 3, p.w, weights, from, xd, alongH ? s.mid : to));
  if (alongH) TPU_RETURN_IF_ERROR(resizeAxis(op, 2, p.h, hWeights, alongW ? s.mid : from, mid, to));
  if (isHalf(t)) TPU_RETURN_IF_ERROR(convertInDdr(s.wideOut, DType::F32, addressOf(op.output), t, yCount));
  return Status::ok();
}

// `count` compact elements at DDR `from` converted into `to` (widened exactly or rounded once): rows of up
// to kRow elements, up to one per lane at a time, through a local tile of each type.
Status Compiler::convertInDdr(uint64_t from, DType fromType, uint64_t to, DType toType, uint64_t count) {
  constexpr uint64_t kRow = 1024;
  const uint64_t a = 0, b = alignUp(kRow * kF32, map::kBankBytes);
  for (uint64_t at = 0; at < count;) {
    const uint64_t width = std::min(kRow, count - at), lanes = std::min<uint64_t>(map::kLanes, (count - at) / width);
    const Dims shape{1, lanes, 1, width}, stride{0, width, width, 1};
    TPU_RETURN_IF_ERROR(
        program_.dma({from + at * bytesOf(fromType), shape, stride, fromType}, localAligned(a, shape, fromType)));
    TPU_RETURN_IF_ERROR(convert(shape, b, toType, a, fromType));
    TPU_RETURN_IF_ERROR(
        program_.dma(localAligned(b, shape, toType), {to + at * bytesOf(toType), shape, stride, toType}));
    at += lanes * width;
  }
  return Status::ok();
}

// One axis (2: h, 3: w) of a resize from the compact DDR tensor `from` of dims `in` to `to`: channels and the
// other axis sliced; per slice, output index x gathers source lines i0[x] into tile a and i1[x] into tile b
// (one DMA each), then b * w, a * (1 - w), their sum (the weights one copy per lane, from `weights`), and
// the indices whose w is 0 copied again over the blend (the reference returns the source there).
Status Compiler::resizeAxis(const Op &op, size_t axis, const kernels::ResizeTaps &t, uint64_t weights, uint64_t from,
                            const Dims &in, uint64_t to) {
  const uint64_t count = t.i0.size(), other = axis == 3 ? in[2] : in[3];
  Dims out = in;
  out[axis] = count;
  LmemPlan lmem;
  auto fits = [&](uint64_t cRows, uint64_t otherStep) {
    const uint64_t plane = cRows * alignedPlane(otherStep * count) * kF32, vector = alignedPlane(count) * kF32;
    return lmem.place({plane, plane, vector, vector});
  };
  const Slicing s = largestSlicing(in[1], other, 1, fits);
  if (!s.rowStep) return unsupported(op, "one line of " + std::to_string(count) + " elements does not fit a lane");
  fits(s.channelStep / map::kLanes, s.rowStep);
  const uint64_t a = lmem.offsets[0], b = lmem.offsets[1], w0 = lmem.offsets[2], w1 = lmem.offsets[3];
  for (auto [offset, tile] : {std::pair{uint64_t(0), w0}, std::pair{count, w1}})
    TPU_RETURN_IF_ERROR(program_.dma({weights + offset * kF32, {1, map::kLanes, 1, count}, {0, 0, 0, 1}},
                                     localAligned(tile, {1, map::kLanes, 1, count})));
  const Dims inStride = compactDims(in), outStride = compactDims(out);
  for (uint64_t n = 0; n < in[0]; ++n)
    for (uint64_t c0 = 0; c0 < in[1]; c0 += s.channelStep)
      for (uint64_t o0 = 0; o0 < other; o0 += s.rowStep) {
        const uint64_t cs = std::min(s.channelStep, in[1] - c0), os = std::min(s.rowStep, other - o0);
        const Dims shape = axis == 3 ? Dims{1, cs, os, count} : Dims{1, cs, count, os};
        Dims line = shape; // one index of the axis
        line[axis] = 1;
        const Dims at = axis == 3 ? Dims{n, c0, o0, 0} : Dims{n, c0, 0, o0};
        const Region ta = localAligned(a, shape), tb = localAligned(b, shape);
        auto gather = [&](const Region &tile, int64_t source, uint64_t x) {
          Dims src = at;
          src[axis] = uint64_t(source);
          Region dst = tile;
          dst.address += x * tile.stride[axis] * kF32, dst.shape = line;
          return program_.dma(ddrBox(from, inStride, src, line), dst);
        };
        for (uint64_t x = 0; x < count; ++x) {
          TPU_RETURN_IF_ERROR(gather(ta, t.i0[x], x));
          TPU_RETURN_IF_ERROR(gather(tb, t.i1[x], x));
        }
        for (auto [mnemonic, dst, lhs, weight] :
             {std::tuple{"arith.mul", b, b, w1}, std::tuple{"arith.mul", a, a, w0}, std::tuple{"arith.add", a, a, b}}) {
          TPU_ASSIGN_OR_RETURN(Command c, arithCommand(mnemonic, shape, dst, lhs, weight, 0.0f));
          if (weight != b) // the weights: index x along the axis, the same in every lane, row and line
            TPU_RETURN_IF_ERROR(setFields(c, {{"opd1_str", 3}, {axis == 3 ? "opd1_w_str" : "opd1_h_str", 1}}));
          TPU_RETURN_IF_ERROR(program_.tiu(std::move(c)));
        }
        for (uint64_t x = 0; x < count; ++x)
          if (t.w[x] == 0.0f) TPU_RETURN_IF_ERROR(gather(ta, t.i0[x], x));
        TPU_RETURN_IF_ERROR(program_.dma(ta, ddrBox(to, outStride, at, shape)));
      }
  return Status::ok();
}

} // namespace tpu::backend::bm1684x
