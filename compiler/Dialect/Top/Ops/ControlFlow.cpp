// top.if (ControlFlow.td): shape rule and evaluate are the host op's
// (kernels/HostOps.h), set in the td.
#include "compiler/Dialect/Top/HostEval.h"
#include "compiler/Dialect/Top/TopOps.h"

#define GET_OP_CLASSES
#include "compiler/Dialect/Top/Ops/ControlFlow.cpp.inc"
