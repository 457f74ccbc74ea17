// The parameters of a host op (OpKind::Cpu): the call the runtime makes in
// its CPU sub-net (kernels/HostOps.h). docs/codegen.md, "CPU sub-nets".
#pragma once

#include "kernels/HostOps.h"

namespace tpu::backend {

struct CpuParams {
  kernels::HostCall call;
};

} // namespace tpu::backend
