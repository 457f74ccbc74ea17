// Slice: a strided box of the input, per NCHW dim output element i is input
// element sliceStart + i * sliceStep (step >= 1). Pure data movement in DDR:
// strided S2S copies, the steps folded into the source strides.
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
  for (int d = 0; d < 4; ++d) {
    const int64_t start = c.op.sliceStart[d], step = c.op.sliceStep[d];
    if (step < 1) return makeError("step ", step, " on ", kDimNames[d], " (steps are >= 1)");
    if (start < 0 || start + (c.ys[d] - 1) * step >= xs[d])
      return makeError("output ", kDimNames[d], " = ", c.ys[d], " from start ", start, " step ", step,
                       " reads past the input's ", xs[d]);
  }
  return Status::ok();
}

void evaluateSlice(const RefArgs &r, Bytes &out) {
  const auto &xs = r.xs, &ys = r.ys;
  const auto &start = r.op.sliceStart, &step = r.op.sliceStep;
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

// Element strides of a DDR activation (fp32 1N: n, c, h, w; int8 4N: the
// item within its group of four is the lowest byte, so c, h, w step by 4
// and n counts within one group only).
std::array<int64_t, 4> ddrStrides(const DTensor &d) {
  const int64_t C = d.s[1], H = d.s[2], W = d.s[3];
  if (d.n4()) return {1, 4 * H * W, 4 * W, 4};
  return {C * H * W, H * W, W, 1};
}
// Element offset of item n's first element (c, h, w = 0).
uint64_t itemOffset(const DTensor &d, int64_t n) {
  const int64_t chw = d.s[1] * d.s[2] * d.s[3];
  return d.n4() ? uint64_t((n / 4) * 4 * chw + n % 4) : uint64_t(n * chw);
}

// The S2S copy of a slice, or of each output item (`perItem`): shape and
// strides in elements of `dtype`.
struct SliceCopy {
  DType dtype;
  bool perItem;
  std::array<int64_t, 4> shape, srcStride, dstStride;
};

// fp32, or int8 keeping every batch item: one command for the whole box. An
// int8 slice that keeps all items moves 4N words (4 bytes, the four items of
// a group), so a row stays one contiguous run. int8 that selects items: one
// command per output item (items of different source groups cannot share a
// command's n stride), moving single bytes 4 apart.
SliceCopy planSlice(const DTensor &x, const DTensor &y, const Op &op) {
  const auto &step = op.sliceStep;
  const bool allItems = op.sliceStart[0] == 0 && step[0] == 1 && y.s[0] == x.s[0];
  if (y.n4() && allItems) {
    const int64_t C = x.s[1], H = x.s[2], W = x.s[3];
    return {DType::I32, false, {ceilDiv(y.s[0], 4), y.s[1], y.s[2], y.s[3]},
            {C * H * W, H * W * step[1], W * step[2], step[3]},
            {y.s[1] * y.s[2] * y.s[3], y.s[2] * y.s[3], y.s[3], 1}};
  }
  SliceCopy p{x.dtype, y.n4(), {y.n4() ? 1 : y.s[0], y.s[1], y.s[2], y.s[3]}, ddrStrides(x), ddrStrides(y)};
  for (int d = 0; d < 4; ++d) p.srcStride[d] *= step[d];
  return p;
}

void emitSlice(Emitter &e, const Op &op) {
  const DTensor x = e.ddr(op.inputs[0]), y = e.ddr(op.output);
  const SliceCopy p = planSlice(x, y, op);
  const auto &start = op.sliceStart;
  auto u32s = [](const std::array<int64_t, 4> &a) {
    return std::array<uint32_t, 4>{u32(a[0]), u32(a[1]), u32(a[2]), u32(a[3])};
  };
  if (!p.perItem) {
    // Word (4N) or element units: the box's first element in those units.
    const bool words = p.dtype != x.dtype;
    const auto xs = words ? std::array<int64_t, 4>{0, x.s[2] * x.s[3], x.s[3], 1} : ddrStrides(x);
    const int64_t first = start[0] * xs[0] + start[1] * xs[1] + start[2] * xs[2] + start[3] * xs[3];
    e.s2s(x.addr + uint64_t(first) * dtypeBytes(p.dtype), u32s(p.srcStride), y.addr, u32s(p.dstStride),
          u32s(p.shape), p.dtype, 0);
    return;
  }
  const uint64_t eb = dtypeBytes(x.dtype);
  const auto xs = ddrStrides(x);
  const int64_t inner = start[1] * xs[1] + start[2] * xs[2] + start[3] * xs[3];
  for (int64_t n = 0; n < y.s[0]; ++n) {
    const uint64_t src = x.addr + (itemOffset(x, start[0] + n * op.sliceStep[0]) + uint64_t(inner)) * eb;
    e.s2s(src, u32s(p.srcStride), y.addr + itemOffset(y, n) * eb, u32s(p.dstStride), u32s(p.shape), p.dtype, 0);
  }
}

// A command's shape fields are 16 bits, its strides 32.
Status encodableSlice(const Graph &g, const Op &op) {
  DTensor x, y;
  x.dtype = g.tensors[size_t(op.inputs[0])].dtype, x.s = g.tensors[size_t(op.inputs[0])].nchw();
  y.dtype = g.tensors[size_t(op.output)].dtype, y.s = g.tensors[size_t(op.output)].nchw();
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
const OpImpl Slice{OpKind::Slice, validateSlice, evaluateSlice, nullptr, emitSlice, encodableSlice};
} // namespace ops

} // namespace tpu::backend
