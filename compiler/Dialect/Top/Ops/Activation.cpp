// The element-wise functions of one tensor (Activation.td): shape rule
// Top_SameShapeOp's, evaluate the host op's (set in the td).
#include "compiler/Dialect/Top/HostEval.h"
#include "compiler/Dialect/Top/ShapeRules.h"
#include "compiler/Dialect/Top/TopOps.h"

#define GET_OP_CLASSES
#include "compiler/Dialect/Top/Ops/Activation.cpp.inc"
