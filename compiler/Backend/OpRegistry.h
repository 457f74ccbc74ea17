// The table of op kinds (OpKinds.def) and what each implements: its checks,
// its reference evaluation and its emitter, together in Ops/<Kind>.cpp (or
// its family's file). The shared code (Graph::validate, evalOp, the code
// generator, layer groups) looks a kind up here; it never switches on it.
#pragma once

#include "compiler/Backend/Graph.h"
#include "compiler/Backend/QuantRef.h"
#include "support/Status.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace tpu::backend {

struct OpCheck; // OpValidation.h
struct RefArgs; // ReferenceEval.h
namespace emit {
struct Emitter; // Emit.h
class SlicedOp;
} // namespace emit

constexpr size_t kOpKindCount = 0
#define TPU_OP_KIND(Name, MinInputs, MaxInputs, TakesWeights, SharesInputBytes) +1
#include "compiler/Backend/OpKinds.def"
    ;

// A kind's line of OpKinds.def.
struct OpKindInfo {
  const char *name;
  size_t minInputs, maxInputs;
  bool takesWeights;
  bool sharesInputBytes;
};
const OpKindInfo &opKindInfo(OpKind k);

// What one kind implements. Exactly one of `sliced` and `direct` is set.
struct OpImpl {
  OpKind kind;
  // The kind's own checks; Graph::validate has checked the shared ones
  // (indices, order, rshift, output dims and dtype, input count, weights).
  Status (*validate)(const OpCheck &c);
  // The output's value from the inputs' values (evalOp, sizes checked).
  void (*evaluate)(const RefArgs &r, Bytes &out);
  // The emitter: a sliced implementation (op alone or in a layer group) ...
  std::unique_ptr<emit::SlicedOp> (*sliced)(emit::Emitter &e, const Op &op);
  // ... or commands emitted directly (pure data movement; may emit none).
  void (*direct)(emit::Emitter &e, const Op &op);
  // Optional (null: none): limits of the command fields the op's parameters
  // go into, checked by compileToBmodel after validate.
  Status (*encodable)(const Graph &g, const Op &op);
  // Whether the kind takes int16 activations (an int8 conv's int16
  // accumulator and the per-channel affine that requantizes it,
  // docs/quantization.md "per-channel weights"); Graph::validate refuses
  // an int16 activation input or output of any other kind.
  bool int16Activations = false;
  // Optional (null: never): a pure view. When the output is whole channels
  // [c, ...) of its first input (every item, row and column), c; else -1.
  // The address assigner then places the output inside the input's bytes
  // where the layout allows (viewByteOffset) and the emitter copies nothing.
  int64_t (*viewedChannel)(const Graph &g, const Op &op) = nullptr;
  // Whether its inputs, in order, fill its output's channels, so that a
  // producer may write its input straight into them (an in-place concat).
  bool joinsInputChannels = false;
  // A host op (Ops/Cpu.cpp): no commands; the code generator gives it a CPU
  // sub-net of its own, its activations may be int32, and its evaluation,
  // which the data can make fail (an index out of range), is this instead
  // of `evaluate`.
  Status (*evaluateOnHost)(const RefArgs &r, Bytes &out) = nullptr;
  bool runsOnHost() const { return evaluateOnHost != nullptr; }
};

// One definition per kind, in the kind's Ops/ file.
namespace ops {
#define TPU_OP_KIND(Name, MinInputs, MaxInputs, TakesWeights, SharesInputBytes) extern const OpImpl Name;
#include "compiler/Backend/OpKinds.def"
} // namespace ops

const OpImpl &opImpl(OpKind k);

} // namespace tpu::backend
