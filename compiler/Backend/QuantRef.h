// The op-level reference: exactly what the generated commands compute, op by
// op, on plain arrays. int8 ops are bit-exact with the chip (exact integer
// accumulation, + bias, IntArith's rounding right shift, relu, saturation);
// fp32 ops follow the same formulas in fp32 (conv and fc through
// kernels). The Tpu interpreter calls these, so the interpreter and
// the bmodel agree bit for bit. Formulas per op kind: docs/codegen.md.
#pragma once

#include "compiler/Backend/Graph.h"
#include "kernels/Kernels.h"
#include "support/Status.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace tpu::backend {

// Tensor values: C order, 1N, in the tensor's dtype.
using Bytes = std::vector<uint8_t>;

// Evaluates one op of `g`; `inputs[i]` holds the value of op.inputs[i]
// (weights included). `out` receives the output tensor's bytes. `shapes`,
// when given, holds every tensor's real shape (indexed like g.tensors): a
// host op whose result shape comes from the data reads its inputs' and
// writes its output's there, its values first in `out` (sized for the
// tensor's shape, the most it can hold; docs/codegen.md "Shapes from the data").
Status evalOp(const Graph &g, const Op &op, const std::vector<const Bytes *> &inputs, Bytes &out,
              std::vector<kernels::Shape> *shapes = nullptr);

// Evaluates the graph (validated first). `inputs` are the graph inputs in
// order. Returns every tensor's value, indexed like g.tensors, and, given
// `shapes`, every tensor's real shape.
Result<std::vector<Bytes>> evalGraph(const Graph &g, const std::vector<Bytes> &inputs,
                                     std::vector<kernels::Shape> *shapes = nullptr);

// The int8 formulas as scalar helpers (shared by evalOp and tests).
// Add/Max: requantize(eu(a*m0, b*m1)); Mul: requantize(a*b*m).
int64_t int8Binary(OpKind kind, int64_t a, int64_t b, const Op &op, DType out);
// LeakyRelu int8: max(x, requantize(x * m, rshift)) (0 <= slope <= 1).
int64_t int8LeakyRelu(int64_t x, const Op &op, DType out);
// Cast fp32 -> int8: round half to even of x * (1 / scale), saturated.
int64_t quantizeValue(float x, float scale, DType out);

// fp32 sigmoid as the generated commands compute it, step for step:
// t = clamp(x, -kClamp, kClamp) * (-1 / 2^kSquarings); e = Taylor series of
// exp(t) (kExpTerms terms, Horner); e squared kSquarings times (= exp(-x));
// 1 / (e + 1). |error| < 3e-6 against the exact function.
struct SigmoidRecipe {
  static constexpr float kClamp = 20.0f;
  static constexpr unsigned kSquarings = 6;
  static constexpr unsigned kExpTerms = 9;
  static const std::array<float, kExpTerms> &expCoefficients(); // 1/k!, lowest first
};
float sigmoidChip(float x);

// The fp32 functions of the Unary kind (programs of TIU commands,
// FloatKernels.h): whether `kind` (with parameters a, b) has one, and the
// names of tpu.unary's `function` attribute ("exp", "log", ...).
bool hasUnaryRecipe(kernels::UnaryKind kind, float a = 0.0f, float b = 0.0f);
const char *unaryName(kernels::UnaryKind kind);
std::optional<kernels::UnaryKind> unaryFromName(std::string_view name);

// x * scale + shift applied inside a table, before or after the function.
struct TableAffine {
  float scale = 1.0f, shift = 0.0f;
};
// The 256-entry table of a Lut op computing `kind` (kernels'
// fp32 function, parameters a, b as there): entry i is the input code
// (int8 or uint8 i) dequantized with inScale, mapped by `before`, passed
// through the function, mapped by `after` and quantized with outScale
// (quantizeValue). The affines let the lowering fold scalar scale/shift ops
// around an activation into its table (no requantization of their own).
Bytes activationTable(kernels::UnaryKind kind, float a, float b, DType in, float inScale, DType out,
                      float outScale, TableAffine before = {}, TableAffine after = {});

} // namespace tpu::backend
