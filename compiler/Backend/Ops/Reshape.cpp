// Reshape: free. Same bytes and dtype; the output shares the input's DDR
// bytes (AddressAssigner), so no commands. int8 keeps the batch (its 4N
// layout interleaves the items: another batch is a Move).
#include "compiler/Backend/OpRegistry.h"
#include "compiler/Backend/OpValidation.h"
#include "compiler/Backend/ReferenceEval.h"

namespace tpu::backend {

namespace {

Status validateReshape(const OpCheck &c) {
  const Tensor &x = c.in(0);
  if (x.dtype != c.y.dtype || x.numel() != c.y.numel())
    return makeError("a reshape keeps dtype and element count");
  if (c.int8 && x.nchw()[0] != c.ys[0]) return makeError("an int8 reshape keeps the batch");
  return Status::ok();
}

void evaluateReshape(const RefArgs &r, Bytes &out) { out = *r.in[0]; }

void emitNothing(emit::Emitter &, const Op &) {}

} // namespace

namespace ops {
const OpImpl Reshape{OpKind::Reshape, validateReshape, evaluateReshape, nullptr, emitNothing, nullptr};
} // namespace ops

} // namespace tpu::backend
