// Slice: a strided box of the input, per NCHW dim output element i is input
// element start + i * step (step >= 1). Pure data movement in DDR:
// strided S2S copies, the steps folded into the source strides; nothing
// when the box is a contiguous run the output shares (viewByteOffset).
#include "compiler/Backend/Ops/Slice.h"
#include "compiler/Backend/Emit.h"
#include "compiler/Backend/OpRegistry.h"
#include "compiler/Backend/OpValidation.h"
#include "compiler/Backend/ReferenceEval.h"

#include <cstring>

namespace tpu::backend {

namespace {

using namespace emit;

const char *const kDimNames[4] = {"n", "c", "h", "w"};

Status validateSlice(const OpCheck &c) {
  const Tensor &x = c.in(0);
  const auto xs = x.nchw();
  TPU_RETURN_IF_ERROR(c.sameType(x));
  if (x.dtype != c.y.dtype || (c.int8 && x.scale != c.y.scale))
    return makeError("a slice keeps the input's dtype and scale");
  const SliceParams &p = c.op.params<SliceParams>();
  for (int d = 0; d < 4; ++d) {
    const int64_t start = p.start[d], step = p.step[d];
    if (step < 1) return makeError("step ", step, " on ", kDimNames[d], " (steps are >= 1)");
    if (start < 0 || start + (c.ys[d] - 1) * step >= xs[d])
      return makeError("output ", kDimNames[d], " = ", c.ys[d], " from start ", start, " step ", step,
                       " reads past the input's ", xs[d]);
  }
  return Status::ok();
}

void evaluateSlice(const RefArgs &r, Bytes &out) {
  const auto &xs = r.xs, &ys = r.ys;
  const auto &[start, step] = r.op.params<SliceParams>();
  const size_t e = dtypeBytes(r.y.dtype);
  const Bytes &x = *r.in[0];
  out.resize(r.count * e);
  size_t o = 0;
  for (int64_t n = 0; n < ys[0]; ++n)
    for (int64_t c = 0; c < ys[1]; ++c)
      for (int64_t h = 0; h < ys[2]; ++h)
        for (int64_t w = 0; w < ys[3]; ++w, o += e) {
          const int64_t in = ((((start[0] + n * step[0]) * xs[1] + start[1] + c * step[1]) * xs[2] + start[2] +
                               h * step[2]) *
                                  xs[3] +
                              start[3] + w * step[3]);
          std::memcpy(&out[o], &x[size_t(in) * e], e);
        }
}

// The S2S copy of a slice, or of each output item (`perItem`): shape and
// strides in elements of `dtype`.
struct SliceCopy {
  DType dtype;
  bool perItem;
  std::array<int64_t, 4> shape, srcStride, dstStride;
};

// 1N on both sides (fp32, one-item int8): one command for the whole box. A
// 4N slice that keeps all items moves 4N words (4 bytes, the four items of
// a group), so a row stays one contiguous run. A 4N side otherwise: one
// command per output item (items of different source groups cannot share a
// command's n stride), moving single bytes 4 apart on the 4N side.
SliceCopy planSlice(const DTensor &x, const DTensor &y, const Op &op) {
  const auto &[start, step] = op.params<SliceParams>();
  const bool allItems = start[0] == 0 && step[0] == 1 && y.s[0] == x.s[0];
  if (y.n4() && allItems) {
    const int64_t C = x.s[1], H = x.s[2], W = x.s[3];
    return {DType::I32, false, {ceilDiv(y.s[0], 4), y.s[1], y.s[2], y.s[3]},
            {C * H * W, H * W * step[1], W * step[2], step[3]},
            {y.s[1] * y.s[2] * y.s[3], y.s[2] * y.s[3], y.s[3], 1}};
  }
  const bool perItem = x.n4() || y.n4();
  SliceCopy p{x.dtype, perItem, {perItem ? 1 : y.s[0], y.s[1], y.s[2], y.s[3]}, x.strides(), y.strides()};
  for (int d = 0; d < 4; ++d) p.srcStride[d] *= step[d];
  return p;
}

// A slice of whole channels [c0, ...) (every item, row and column, step 1)
// is a pure view of its input (OpImpl::viewedChannel).
int64_t slicedChannel(const Graph &g, const Op &op) {
  const auto xs = g.tensors[size_t(op.inputs[0])].nchw(), ys = g.tensors[size_t(op.output)].nchw();
  const auto &[start, step] = op.params<SliceParams>();
  for (int d = 0; d < 4; ++d)
    if (step[d] != 1 || (d != 1 && (start[d] != 0 || ys[d] != xs[d]))) return -1;
  return start[1];
}

void emitSlice(Emitter &e, const Op &op) {
  const DTensor x = e.ddr(op.inputs[0]), y = e.ddr(op.output);
  const int64_t inPlace = viewByteOffset(e.g, op);
  if (inPlace >= 0 && y.addr == x.addr + uint64_t(inPlace)) return; // the output is those bytes of x
  const SliceCopy p = planSlice(x, y, op);
  const auto &[start, step] = op.params<SliceParams>();
  auto u32s = [](const std::array<int64_t, 4> &a) {
    return std::array<uint32_t, 4>{u32(a[0]), u32(a[1]), u32(a[2]), u32(a[3])};
  };
  if (!p.perItem) {
    // Word (4N) or element units: the box's first element in those units.
    const bool words = p.dtype != x.dtype;
    const auto xs = words ? std::array<int64_t, 4>{0, x.s[2] * x.s[3], x.s[3], 1} : x.strides();
    const int64_t first = start[0] * xs[0] + start[1] * xs[1] + start[2] * xs[2] + start[3] * xs[3];
    e.s2s(x.addr + uint64_t(first) * dtypeBytes(p.dtype), u32s(p.srcStride), y.addr, u32s(p.dstStride),
          u32s(p.shape), p.dtype, 0);
    return;
  }
  const uint64_t eb = dtypeBytes(x.dtype);
  const auto xs = x.strides();
  const int64_t inner = start[1] * xs[1] + start[2] * xs[2] + start[3] * xs[3];
  for (int64_t n = 0; n < y.s[0]; ++n) {
    const uint64_t src = x.addr + (x.itemOffset(start[0] + n * step[0]) + uint64_t(inner)) * eb;
    e.s2s(src, u32s(p.srcStride), y.addr + y.itemOffset(n) * eb, u32s(p.dstStride), u32s(p.shape), p.dtype, 0);
  }
}

// A command's shape fields are 16 bits, its strides 32.
Status encodableSlice(const Graph &g, const Op &op) {
  const DTensor x = DTensor::of(g.tensors[size_t(op.inputs[0])], 0), y = DTensor::of(g.tensors[size_t(op.output)], 0);
  const SliceCopy p = planSlice(x, y, op);
  for (int d = 0; d < 4; ++d) {
    if (p.shape[d] > 0xFFFF)
      return makeError("output ", kDimNames[d], " = ", p.shape[d], " exceeds the 65535 one GDMA command moves");
    if (p.srcStride[d] > 0xFFFFFFFFll || p.dstStride[d] > 0xFFFFFFFFll)
      return makeError("the ", kDimNames[d], " stride exceeds the 32 bits of a GDMA stride");
  }
  return Status::ok();
}

} // namespace

namespace ops {
// A pure view where it keeps whole channels (viewedChannel).
const OpImpl Slice{OpKind::Slice,
                   validateSlice,
                   evaluateSlice,
                   nullptr,
                   emitSlice,
                   encodableSlice,
                   /*int16Activations=*/false,
                   slicedChannel};
} // namespace ops

} // namespace tpu::backend
