// fp32 element-wise functions as the TIU
// computes them. The BM1684 has no fp32 exp, log or tanh command; each
// function is a straight-line program of ar commands (mul, add, divide,
// rsqrt, taylor, fp32_to_int, select, and the integer and/or/shift on the
// same bytes) over 4-byte registers: the inputs, the output and scratch
// buffers of the output's shape. One program is both what the emitter
// writes (emitKernel) and what the reference evaluates (runKernel, element
// by element with the simulator's arithmetic), so the commands and the Tpu
// interpreter agree bit for bit. The recipes (range reduction + a Taylor
// polynomial, as the chip's library does) are in FloatKernels.cpp and
// docs/codegen.md, "fp32 functions".
#pragma once

#include "kernels/Kernels.h"

#include "isa/Opcodes.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace tpu::backend {

struct KernelProgram {
  // Registers: 0 the result, 1..inputs the inputs (read only), then the
  // temps. Every register holds 4 bytes per element, read as fp32 or int32.
  static constexpr uint8_t kResult = 0;
  struct Operand {
    enum Kind : uint8_t { None, Reg, F32, I32 } kind = None;
    uint8_t reg = 0;
    bool asInt = false; // Reg: the register's bytes as int32
    uint32_t bits = 0;  // F32: the value's bits; I32: the value
  };
  struct Step {
    isa::EuOp eu = isa::EuOp::Add;
    uint8_t dst = 0;
    bool dstInt = false;
    Operand a, b, c, d; // opd0..opd3 (taylor: b unused, `poly` names the table)
    uint8_t poly = 0;
    bool logical = false; // shift: logical (raw bits) instead of arithmetic
    unsigned reads() const { return c.kind == Operand::None ? (b.kind == Operand::None ? 1 : 2) : 3; }
  };
  unsigned inputs = 1, temps = 0;
  std::vector<Step> steps;
  std::vector<std::vector<float>> polys; // Taylor coefficients, lowest term first
  // Offset (in floats) of table p in the coefficient buffer, and its size.
  uint32_t polyOffset(size_t p) const;
  uint32_t coefficientCount() const { return polyOffset(polys.size()); }
};

// The program of fp32 function `kind` (parameters a, b as kernels::unary:
// Elu alpha, HardSigmoid alpha/beta, Selu alpha/gamma); nullopt when the
// chip path has no fp32 recipe for it.
std::optional<KernelProgram> unaryKernel(kernels::UnaryKind kind, float a = 0.0f, float b = 0.0f);
// pow(a, b) of two fp32 inputs: exp(b * log|a|), negative for a < 0 and an
// odd integer b, 1 for b = 0.
const KernelProgram &powKernel();
// sigmoidChip (QuantRef.h) as a program: the same operations in the same order.
const KernelProgram &sigmoidKernel();
// prelu(a, slope b) = max(a, 0) + min(a, 0) * b.
const KernelProgram &preluKernel();
// a > b, a < b, a == b as 1.0 or 0.0 (isGreater/isLess both false: equal).
const KernelProgram &compareKernel(bool isGreater, bool isLess);
// where(cond, x, y) = cond != 0 ? x : y.
const KernelProgram &whereKernel();
// The result of a program on one element (`in` holds p.inputs values).
float runKernel(const KernelProgram &p, const float *in);

namespace emit {
struct Emitter;     // Emit.h
struct LocalTensor; // Emit.h
// Per-lane bytes of the program's coefficient buffer (0: no polynomial).
inline uint64_t kernelFixedBytes(const KernelProgram &p) { return uint64_t(p.coefficientCount()) * 4; }
// Fills the coefficients into `offset` of every lane (one GDMA fill each).
uint16_t loadKernelCoefficients(Emitter &e, const KernelProgram &p, uint32_t offset, uint16_t wait);
// The program's TIU commands: `ins` its fp32 inputs (any strides, e.g.
// broadcast), `out` the fp32 result, `temps` p.temps buffers of out's shape
// and layout; `coef` the offset loadKernelCoefficients filled.
uint16_t emitKernel(Emitter &e, const KernelProgram &p, const std::vector<LocalTensor> &ins, const LocalTensor &out,
                    const std::vector<LocalTensor> &temps, uint32_t coef, uint16_t wait);
} // namespace emit

} // namespace tpu::backend
