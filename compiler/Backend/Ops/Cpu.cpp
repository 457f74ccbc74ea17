// Cpu: an op the chip has no command for, run by the host (kernels/HostOps.h)
// in a CPU sub-net of its own. It emits nothing; its tensors live in DDR as
// compact C order, fp32 or int32 (integer tensors hold exact integers).
#include "compiler/Backend/Ops/Cpu.h"

#include "compiler/Backend/OpRegistry.h"
#include "compiler/Backend/OpValidation.h"
#include "compiler/Backend/ReferenceEval.h"
#include "support/Npz.h"

#include <algorithm>

namespace tpu::backend {

namespace {

bool hostType(DType t) { return t == DType::F32 || t == DType::I32; }

Status validateCpu(const OpCheck &c) {
  const kernels::HostCall &call = c.op.params<CpuParams>().call;
  std::vector<kernels::Shape> inputs;
  for (size_t i = 0; i < c.op.inputs.size(); ++i) {
    const Tensor &x = c.in(i);
    if (!hostType(x.dtype))
      return makeError("input '", x.name, "' is ", dtypeName(x.dtype), "; a host op reads float32 or int32");
    inputs.push_back(x.shape);
  }
  if (!hostType(c.y.dtype)) return makeError("output is ", dtypeName(c.y.dtype), "; a host op writes float32 or int32");
  TPU_RETURN_IF_ERROR(call.check(inputs));
  if (call.resultShapes[call.result] != c.y.shape)
    return makeError(kernels::findHostOp(call.code)->name, " result ", call.result, " is ",
                     shapeToString(call.resultShapes[call.result]), ", the output ", shapeToString(c.y.shape));
  return Status::ok();
}

// fp32 values of the first `count` elements of a host tensor (int32 ones
// converted exactly).
std::vector<float> hostValues(const Bytes &b, DType t, size_t count) {
  if (t == DType::F32) return std::vector<float>(floats(b), floats(b) + count);
  std::vector<float> v;
  for (int32_t x : toInts(b, t)) v.push_back(float(x));
  v.resize(count);
  return v;
}

// The host op on its inputs' real shapes (r.shapes, when the caller tracks
// them); the result's values come first in `out`, which keeps the output
// tensor's size, and its real shape goes to r.shapes.
Status evaluateCpu(const RefArgs &r, Bytes &out) {
  const kernels::HostCall &call = r.op.params<CpuParams>().call;
  std::vector<std::vector<float>> values;
  std::vector<kernels::ConstView> views;
  for (size_t i = 0; i < r.op.inputs.size(); ++i) {
    const kernels::Shape &shape = r.shapes ? (*r.shapes)[size_t(r.op.inputs[i])] : r.input(i).shape;
    values.push_back(hostValues(*r.in[i], r.input(i).dtype, size_t(kernels::numElements(shape))));
    views.push_back({shape, nullptr});
  }
  for (size_t i = 0; i < values.size(); ++i) views[i].data = values[i].data();
  auto y = call.run(views);
  if (!y) return y.status();
  if (r.shapes) (*r.shapes)[size_t(r.op.output)] = y->shape;
  std::vector<float> &v = y->values;
  v.resize(r.count, 0.0f);
  if (r.y.dtype == DType::F32) {
    out = fromFloats(v);
    return Status::ok();
  }
  out = fromInts(std::vector<int64_t>(v.begin(), v.end()), r.y.dtype);
  return Status::ok();
}

void emitNothing(emit::Emitter &, const Op &) {}

} // namespace

bool shapeFromData(const Graph &g, int id) {
  for (const Op &op : g.ops) {
    if (op.output != id) continue;
    if (op.kind != OpKind::Cpu) return false;
    const kernels::HostCall &call = op.params<CpuParams>().call;
    std::vector<bool> fromData;
    std::vector<kernels::Shape> shapes;
    for (int in : op.inputs) {
      fromData.push_back(shapeFromData(g, in));
      shapes.push_back(g.tensors[size_t(in)].shape);
    }
    return kernels::resultShapeFromData(*kernels::findHostOp(call.code), call.attrs, shapes, fromData);
  }
  return false;
}

namespace ops {
const OpImpl Cpu{OpKind::Cpu, validateCpu, nullptr, nullptr, emitNothing, nullptr, false, nullptr, false, evaluateCpu};
} // namespace ops

} // namespace tpu::backend
