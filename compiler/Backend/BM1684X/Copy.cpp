// The copy kinds on the BM1684X (Concat, Move, Slice, Upsample) as DDR-to-DDR DMA.
#include "compiler/Backend/BM1684X/Compiler.h"

#include "compiler/Backend/Ops/Move.h"
#include "compiler/Backend/Ops/Slice.h"
#include "compiler/Backend/Ops/Upsample.h"

#include <algorithm>

namespace tpu::backend::bm1684x {

// DDR-to-DDR copies: one DMA per box, a box longer than the 16-bit size fields along a dim cut into
// pieces along it. A DMA's stride fields are unsigned: a dim both sides step backwards along is walked
// forwards from its last element; a dim only one side steps backwards along is cut into single elements.
Status Compiler::copy(const Op &op, int from, int64_t src, const std::array<int64_t, 4> &srcStride, int64_t dst,
                      const std::array<int64_t, 4> &dstStride, const std::array<int64_t, 4> &size) {
  for (size_t d = 0; d < 4; ++d) {
    const bool backwards = size[d] > 1 && (srcStride[d] < 0 || dstStride[d] < 0);
    if (backwards && srcStride[d] < 0 && dstStride[d] < 0) {
      std::array<int64_t, 4> ss = srcStride, ds = dstStride;
      ss[d] = -ss[d], ds[d] = -ds[d];
      return copy(op, from, src + (size[d] - 1) * srcStride[d], ss, dst + (size[d] - 1) * dstStride[d], ds, size);
    }
    const int64_t piece = backwards ? 1 : kMaxDim;
    if (size[d] > piece) {
      for (int64_t at = 0; at < size[d]; at += piece) {
        std::array<int64_t, 4> part = size;
        part[d] = std::min<int64_t>(piece, size[d] - at);
        TPU_RETURN_IF_ERROR(
            copy(op, from, src + at * srcStride[d], srcStride, dst + at * dstStride[d], dstStride, part));
      }
      return Status::ok();
    }
  }
  Dims shape{}, ss{}, ds{};
  for (size_t d = 0; d < 4; ++d) // a backward stride is left only on dims of one element, which never step
    shape[d] = uint64_t(size[d]), ss[d] = uint64_t(std::max<int64_t>(srcStride[d], 0)),
    ds[d] = uint64_t(std::max<int64_t>(dstStride[d], 0));
  if (src < 0 || dst < 0) return unsupported(op, "a copy from before a tensor's start");
  const DType t = g_.tensors[size_t(op.output)].dtype; // the input's too (copies keep the type)
  return program_.dma({addressOf(from) + uint64_t(src) * bytesOf(t), shape, ss, t},
                      {addressOf(op.output) + uint64_t(dst) * bytesOf(t), shape, ds, t});
}

// Move (its pieces after an optional fill), Slice and Upsample as DDR-to-DDR copies.
Status Compiler::emitCopies(const Op &op) {
  const Tensor &y = g_.tensors[size_t(op.output)];
  const Dims yd = dims(op.output), xd = dims(op.inputs[0]);
  const std::array<int64_t, 4> ys = compactStrides(yd), xs = compactStrides(xd);
  const std::array<int64_t, 4> ye{int64_t(yd[0]), int64_t(yd[1]), int64_t(yd[2]), int64_t(yd[3])};
  if (op.kind == OpKind::Slice) {
    const auto &[start, step] = op.params<SliceParams>();
    int64_t src = 0;
    std::array<int64_t, 4> stride{};
    for (size_t d = 0; d < 4; ++d) src += start[d] * xs[d], stride[d] = step[d] * xs[d];
    return copy(op, op.inputs[0], src, stride, 0, ys, ye);
  }
  if (op.kind == OpKind::Upsample) { // one copy per (dy, dx) of the factors: every row and column replicated
    const auto &p = op.params<UpsampleParams>();
    const std::array<int64_t, 4> size{int64_t(xd[0]), int64_t(xd[1]), int64_t(xd[2]), int64_t(xd[3])};
    for (int64_t dy = 0; dy < p.scaleH; ++dy)
      for (int64_t dx = 0; dx < p.scaleW; ++dx)
        TPU_RETURN_IF_ERROR(
            copy(op, op.inputs[0], 0, xs, dy * ys[2] + dx, {ys[0], ys[1], ys[2] * p.scaleH, p.scaleW}, size));
    return Status::ok();
  }
  const MoveParams &m = op.params<MoveParams>();
  if (m.fills) {
    if (y.numel() > kMaxDim * kMaxDim) return unsupported(op, "a fill of more than 65535 x 65535 elements");
    // The output as rows of up to 65535 elements, and the rest.
    const uint64_t count = uint64_t(y.numel()), width = std::min<uint64_t>(count, uint64_t(kMaxDim));
    const uint64_t full = count / width, rest = count % width;
    const uint64_t at = addressOf(op.output);
    const uint32_t bits = constantBits(m.fillValue, y.dtype);
    TPU_RETURN_IF_ERROR(program_.fill({at, {1, 1, full, width}, {0, 0, width, 1}, y.dtype}, bits));
    if (rest)
      TPU_RETURN_IF_ERROR(
          program_.fill({at + full * width * bytesOf(y.dtype), {1, 1, 1, rest}, {0, 0, 0, 1}, y.dtype}, bits));
  }
  for (const MovePiece &piece : m.pieces)
    TPU_RETURN_IF_ERROR(
        copy(op, op.inputs[size_t(piece.input)], piece.src, piece.srcStride, piece.dst, piece.dstStride, piece.size));
  return Status::ok();
}

// Along channels: each input copied DDR to DDR into its channels of the output.
Status Compiler::emitConcat(const Op &op) {
  const Dims yd = dims(op.output);
  const std::array<int64_t, 4> ys = compactStrides(yd);
  int64_t c0 = 0;
  for (int in : op.inputs) {
    const Dims xd = dims(in);
    if (xd[0] != yd[0] || xd[2] != yd[2] || xd[3] != yd[3]) return unsupported(op, "inputs of other n, h or w");
    TPU_RETURN_IF_ERROR(copy(op, in, 0, compactStrides(xd), c0 * ys[1], ys,
                             {int64_t(xd[0]), int64_t(xd[1]), int64_t(xd[2]), int64_t(xd[3])}));
    c0 += int64_t(xd[1]);
  }
  return Status::ok();
}

} // namespace tpu::backend::bm1684x
