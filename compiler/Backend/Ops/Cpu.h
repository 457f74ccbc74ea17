// The parameters of a host op (OpKind::Cpu): the call the runtime makes in
// its CPU sub-net (kernels/HostOps.h). docs/codegen.md, "CPU sub-nets".
#pragma once

#include "compiler/Backend/Graph.h"
#include "kernels/HostOps.h"

namespace tpu::backend {

struct CpuParams {
  kernels::HostCall call;
};

// Whether tensor `id` of `g` is written by a host op whose result shape comes
// from the data, or by one reading such a tensor: its values come first and
// its real shape is known only when it runs (evalGraph's `shapes`).
bool shapeFromData(const Graph &g, int id);

} // namespace tpu::backend
