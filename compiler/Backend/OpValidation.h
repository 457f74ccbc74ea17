// Internal to compiler/Backend: what the per-kind checks (OpImpl::validate,
// OpImpl::encodable) share. Graph::validate builds the OpCheck.
#pragma once

#include "compiler/Backend/Graph.h"
#include "compiler/Backend/Ops/Window.h"
#include "support/Status.h"

#include <array>
#include <cstddef>
#include <cstdint>

namespace tpu::backend {

// Hardware limits of the fields the emitters fill (isa/tables/tiu_fields.def).
constexpr int64_t kMaxPad = 15, kMaxStride = 15;
// Zeros inserted between input rows or kernel taps (the *_ins0 fields).
constexpr int64_t kMaxZeroInsert = 15;

// The op being checked, its output, and the checks several kinds make.
struct OpCheck {
  OpCheck(const Graph &graph, const Op &o);
  const Graph &g;
  const Op &op;
  const Tensor &y;
  std::array<int64_t, 4> ys; // the output's NCHW
  bool int8;                 // the output is an integer activation: int8-like, or int16 for the kinds that take
                             // it (OpImpl::int16Activations)

  const Tensor &in(size_t i) const { return g.tensors[size_t(op.inputs[i])]; }
  Status needInputs(size_t lo, size_t hi) const;
  // int8 only: exactly n multipliers.
  Status needMultipliers(size_t n) const;
  // An integer activation (int8-like or int16) exactly when the output is.
  Status sameType(const Tensor &t) const;
  // One activation input of the output's type and shape (the unary kinds).
  Status unaryInput() const;
  // A weight of the output's element family: int8-like for int8, else fp32
  // ("weight 'w' dtype int16 does not fit a float32 <what>").
  Status weightType(const Tensor &w, const char *what) const;
  // Input i, when present, is a bias: a weight of one value per output
  // channel, int16 for int8, else fp32.
  Status optionalBias(size_t i) const;
};

Status fitsInt16(int32_t multiplier);
// Kernel, stride, pads and output size of a Conv/Pool window over x; with
// fieldLimits, also that stride, pads and dilation fit their command fields.
Status checkWindow(const OpCheck &c, const Tensor &x, bool fieldLimits = true);
// A Conv/Pool's end pads, grown for ceil mode, fit their 4-bit fields.
Status checkEndPadding(const Graph &g, const Op &op);
// The window of a ConvTranspose from input (N, C, H, W) xs to output ys as
// the chip runs it (Ops/Conv.cpp): the stride as zeros inserted between
// input rows (at most 16), the dilation as zeros between kernel taps (at
// most 16), the equivalent stride-1 conv's pads in [0, 15].
Status checkTransposedWindow(const WindowParams &p, const std::array<int64_t, 4> &xs,
                             const std::array<int64_t, 4> &ys);

} // namespace tpu::backend
