// Concat along channels: pure data movement in DDR (one S2S copy per input
// not written in place).
#include "compiler/Backend/Emit.h"
#include "compiler/Backend/OpRegistry.h"
#include "compiler/Backend/OpValidation.h"
#include "compiler/Backend/ReferenceEval.h"

#include <cstring>

namespace tpu::backend {

namespace {

using namespace emit;

Status validateConcat(const OpCheck &c) {
  const auto &ys = c.ys;
  int64_t channels = 0;
  for (size_t i = 0; i < c.op.inputs.size(); ++i) {
    const Tensor &x = c.in(i);
    auto xs = x.nchw();
    TPU_RETURN_IF_ERROR(c.sameType(x));
    if (x.dtype != c.y.dtype) return makeError("input '", x.name, "' dtype differs from the output's");
    if (xs[0] != ys[0] || xs[2] != ys[2] || xs[3] != ys[3])
      return makeError("input '", x.name, "' differs from the output outside the channel axis");
    channels += xs[1];
  }
  if (channels != ys[1]) return makeError("input channels sum to ", channels, ", output has ", ys[1]);
  return Status::ok();
}

void evaluateConcat(const RefArgs &r, Bytes &out) {
  const auto &ys = r.ys;
  const size_t e = dtypeBytes(r.y.dtype);
  const int64_t plane = ys[2] * ys[3];
  out.resize(r.count * e);
  int64_t c0 = 0;
  for (size_t i = 0; i < r.in.size(); ++i) {
    const int64_t ci = r.input(i).nchw()[1];
    for (int64_t n = 0; n < ys[0]; ++n)
      std::memcpy(&out[size_t((n * ys[1] + c0) * plane) * e], &(*r.in[i])[size_t(n * ci * plane) * e],
                  size_t(ci * plane) * e);
    c0 += ci;
  }
}

// A DDR activation viewed as (groups, C, rows, W) with its strides: 4N int8
// folds each group's four items into the rows (4H rows of W bytes per channel).
// An input already in place (its producer wrote it into the output's
// channels: AddressAssigner) is not copied.
void emitConcat(Emitter &e, const Op &op) {
  DTensor y = e.ddr(op.output);
  const int64_t H = y.s[2], W = y.s[3];
  const bool n4 = y.n4();
  const int64_t groups = n4 ? ceilDiv(y.s[0], 4) : y.s[0], rows = n4 ? 4 * H : H;
  int64_t c0 = 0;
  for (int t : op.inputs) {
    DTensor x = e.ddr(t);
    const int64_t ci = x.s[1];
    const uint64_t eb = dtypeBytes(x.dtype);
    const int64_t inPlace = channelByteOffset(e.g.tensors[size_t(op.output)], c0);
    if (inPlace >= 0 && x.addr == y.addr + uint64_t(inPlace)) {
      c0 += ci;
      continue;
    }
    e.s2s(x.addr, {u32(ci * rows * W), u32(rows * W), u32(W), 1},
          y.addr + uint64_t(c0 * rows * W) * eb, {u32(y.s[1] * rows * W), u32(rows * W), u32(W), 1},
          {u32(groups), u32(ci), u32(rows), u32(W)}, x.dtype, 0);
    c0 += ci;
  }
}


} // namespace

namespace ops {
const OpImpl Concat{OpKind::Concat, validateConcat, evaluateConcat, nullptr, emitConcat, nullptr, false, nullptr, true};
} // namespace ops

} // namespace tpu::backend
