// Top dialect operations: the list of op families. Each family's ops (their
// ODS definitions) are in Ops/<Family>.td, their shape rules, verifiers and
// evaluate in Ops/<Family>.cpp. Conventions (the importer normalises ONNX to
// these):
// - every attribute is explicit and full length (pads = [begins..., ends...],
//   axes non-negative and sorted), so consumers never re-derive ONNX defaults;
// - constant ONNX inputs (shapes, scales, pads, axes, clip bounds) are attributes;
// - each result's location is the ONNX tensor name (loc("name")).
#ifndef TOP_OPS_TD
#define TOP_OPS_TD

include "compiler/Dialect/Top/TopBase.td"

include "compiler/Dialect/Top/Ops/Graph.td"
include "compiler/Dialect/Top/Ops/Conv.td"
include "compiler/Dialect/Top/Ops/Normalize.td"
include "compiler/Dialect/Top/Ops/Gemm.td"
include "compiler/Dialect/Top/Ops/Activation.td"
include "compiler/Dialect/Top/Ops/Elementwise.td"
include "compiler/Dialect/Top/Ops/Pool.td"
include "compiler/Dialect/Top/Ops/Reduce.td"
include "compiler/Dialect/Top/Ops/Shape.td"
include "compiler/Dialect/Top/Ops/DataMovement.td"
include "compiler/Dialect/Top/Ops/Resize.td"
include "compiler/Dialect/Top/Ops/Detection.td"
include "compiler/Dialect/Top/Ops/ControlFlow.td"

#endif // TOP_OPS_TD
