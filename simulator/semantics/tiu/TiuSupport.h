// What every TIU command class (tiu/*.cpp, one file per class) shares:
// operand checks and the simulator's limits, the write-back rules, whole-row
// loads and stores, and the hot loops used by more than one class. Internal
// to the semantics library; the entry point is executeTiu (TiuExec.h).
#pragma once

#include "arith/IntArith.h"
#include "isa/HwConfig.h"
#include "isa/TiuCommand.h"
#include "memory/LocalTensor.h"
#include "memory/Memory.h"
#include "support/Status.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

// Resolves an operand into `var` (a const LocalTensor &) or returns its error.
#define TRY_RESOLVE(var, expr)                                                                     \
  auto var##Result = (expr);                                                                       \
  if (!var##Result.isOk()) return var##Result.status();                                            \
  const LocalTensor &var = *var##Result

// The hot loops, compiled for AVX2 too and picked at load time (GCC
// function multi-versioning). Each element's arithmetic is the same in every
// version: no FMA contraction, so fp32 results do not depend on the CPU.
// Clang (the fuzz build) does not multi-version templates: one version there.
#if defined(__clang__)
#define TPU_MULTIVERSION
#else
#define TPU_MULTIVERSION __attribute__((target_clones("avx2", "default")))
#endif

namespace tpu::sim::tiu {

// Operands with the command field that names each, for error messages.
using NamedOperands = std::initializer_list<std::pair<const LocalTensor *, const char *>>;

// Matrix classes (mm, mm2): every listed operand has h = 1.
Status requireRowMatrices(NamedOperands ops, const char *cls);
// The simulator's limits on one command (docs/isa.md, "Errors"): no result
// has more elements than local memory has bytes, no command does more than
// 2^36 multiply-accumulates (`results` x `opsPerResult`), no scratch buffer
// exceeds 2^27 elements.
Status checkWork(const isa::HwConfig &cfg, uint64_t results, uint64_t opsPerResult, const char *what);
Status checkScratch(uint64_t elements, const char *what);
// Multiplying classes take 8- or 16-bit integer inputs (or fp32).
Status requireNarrowInputs(NamedOperands ops, const char *cls);
// Either every listed operand is fp32 or none is; isFloat says which.
Status sameDomain(NamedOperands ops, bool &isFloat);
// "(n, c, h, w)" for messages.
std::string shapeText(const isa::Shape4 &s);
// Can a sum of `products` 8-bit x 8-bit products plus a 16-bit bias and a
// 16-bit old result be held in int32 (the faster accumulator)?
bool sumsFitInt32(uint64_t products);

// Write-back shared by every class: integers are rounded-shifted, relu'd and
// saturated; floats are relu'd and stored (converted if the result is integer).
// An integer result written to an fp32 destination (conversions) is shifted,
// relu'd and converted exactly as far as fp32 allows.
inline void writeInt(LocalMemory &m, const LocalTensor &out, uint32_t n, uint32_t c, uint32_t h,
                     uint32_t w, int64_t acc, unsigned rshift, bool doRelu) {
  if (out.isFloat()) {
    int64_t v = roundingRightShift(acc, rshift);
    out.storeFloat(m, n, c, h, w, float(doRelu ? relu(v) : v));
    return;
  }
  out.storeInt(m, n, c, h, w, requantize(acc, rshift, doRelu, out.prec, out.isSigned));
}
inline void writeFloat(LocalMemory &m, const LocalTensor &out, uint32_t n, uint32_t c, uint32_t h,
                       uint32_t w, float v, bool doRelu) {
  if (doRelu) v = relu(v);
  if (out.isFloat())
    out.storeFloat(m, n, c, h, w, v);
  else
    out.storeInt(m, n, c, h, w, fp32ToInt(v, out.prec, out.isSigned));
}

// Rows: each operand's row (n, c, h, 0..W-1) is widened into a buffer, the
// eu op runs over whole rows with the switch outside the loop, and the row is
// narrowed back with the write-back rules. Same results as element by element.
template <class S, class V> void widenRow(const uint8_t *p, size_t step, size_t W, V *out) {
  if (sizeof(S) == 1 && step == 4 && W > 0) {
    // Every fourth byte (int8 4N): whole 32-bit loads up to the last item,
    // whose word may end past the row, then the last byte alone.
    for (size_t i = 0; i + 1 < W; ++i) {
      uint32_t word;
      std::memcpy(&word, p + 4 * i, 4);
      out[i] = V(S(uint8_t(word)));
    }
    out[W - 1] = V(S(p[4 * (W - 1)]));
    return;
  }
  if (step == sizeof(S)) { // contiguous: the same loop with a constant step vectorizes
    for (size_t i = 0; i < W; ++i) {
      S s;
      std::memcpy(&s, p + i * sizeof(S), sizeof(S));
      out[i] = V(s);
    }
    return;
  }
  for (size_t i = 0; i < W; ++i) {
    S s;
    std::memcpy(&s, p + i * step, sizeof(S));
    out[i] = V(s);
  }
}
// `count` elements from `p`, `step` bytes apart, converted to V.
template <class V> void widenStrided(const LocalTensor &t, const uint8_t *p, size_t step, size_t count, V *out) {
  switch (t.prec) {
  case isa::Prec::Int8: return t.isSigned ? widenRow<int8_t>(p, step, count, out) : widenRow<uint8_t>(p, step, count, out);
  case isa::Prec::Int16: return t.isSigned ? widenRow<int16_t>(p, step, count, out) : widenRow<uint16_t>(p, step, count, out);
  case isa::Prec::Int32: return t.isSigned ? widenRow<int32_t>(p, step, count, out) : widenRow<uint32_t>(p, step, count, out);
  case isa::Prec::Fp32: return widenRow<float>(p, step, count, out);
  }
}
template <class V>
void loadRow(const LocalTensor &t, const LocalMemory &m, uint32_t n, uint32_t c, uint32_t h, bool broadcastW,
             size_t W, V *out) {
  if (t.isConst) {
    V v;
    if constexpr (std::is_floating_point_v<V>)
      v = t.loadFloat(m, 0, 0, 0, 0);
    else
      v = t.loadInt(m, 0, 0, 0, 0);
    std::fill(out, out + W, v);
    return;
  }
  widenStrided(t, t.ptr(m, n, c, h, 0), broadcastW ? 0 : size_t(t.stride.w) * t.elemBytes, W, out);
}
template <class D, class S> void narrowRow(uint8_t *p, size_t step, size_t W, const S *v) {
  if (sizeof(D) == 1 && step == 4 && W > 0) {
    // Every fourth byte (int8 4N): the low byte of each 32-bit word up to the
    // last item replaced (the other batch items' bytes kept), then the last.
    for (size_t i = 0; i + 1 < W; ++i) {
      uint32_t word;
      std::memcpy(&word, p + 4 * i, 4);
      word = (word & ~0xFFu) | (uint32_t(v[i]) & 0xFFu);
      std::memcpy(p + 4 * i, &word, 4);
    }
    p[4 * (W - 1)] = uint8_t(v[W - 1]);
    return;
  }
  if (step == sizeof(D)) { // contiguous (see widenRow)
    for (size_t i = 0; i < W; ++i) {
      D d = D(v[i]);
      std::memcpy(p + i * sizeof(D), &d, sizeof(D));
    }
    return;
  }
  for (size_t i = 0; i < W; ++i) {
    D d = D(v[i]);
    std::memcpy(p + i * step, &d, sizeof(D));
  }
}
// Stores integers already in range (or to be truncated) into an integer row.
template <class S>
void storeIntRow(const LocalTensor &t, LocalMemory &m, uint32_t n, uint32_t c, uint32_t h, size_t W, const S *v) {
  uint8_t *p = t.ptr(m, n, c, h, 0);
  const size_t step = size_t(t.stride.w) * t.elemBytes;
  switch (t.elemBytes) {
  case 1: return narrowRow<uint8_t>(p, step, W, v);
  case 2: return narrowRow<uint16_t>(p, step, W, v);
  default: return narrowRow<uint32_t>(p, step, W, v);
  }
}
// Stores fp32 values into an fp32 row.
void storeFloatRow(const LocalTensor &t, LocalMemory &m, uint32_t n, uint32_t c, uint32_t h, size_t W,
                   const float *v);
// The integer write-back of a row (see writeInt), in place; tmp holds W floats.
void writeIntRow(const LocalTensor &t, LocalMemory &m, uint32_t n, uint32_t c, uint32_t h, size_t W,
                 int64_t *v, unsigned rshift, bool doRelu, std::vector<float> &tmp);
// The fp32 write-back of a row (see writeFloat), in place; tmp holds W integers.
void writeFloatRow(const LocalTensor &t, LocalMemory &m, uint32_t n, uint32_t c, uint32_t h, size_t W,
                   float *v, bool doRelu, std::vector<int64_t> &tmp);

// writeIntRow's rule for one int32 sum to an 8- or 16-bit destination [lo, hi].
inline int32_t requantize32(int32_t v, unsigned rshift, bool doRelu, int32_t lo, int32_t hi) {
  int32_t x = roundingRightShiftIn(v, rshift);
  if (doRelu) x = x < 0 ? 0 : x;
  return x < lo ? lo : x > hi ? hi : x;
}
// The integer write-back of int32 sums (sumsFitInt32) to an 8- or 16-bit
// destination [lo, hi], in place: writeIntRow's rules in 32 bits, which vectorize.
void requantizeRow32(int32_t *__restrict v, size_t W, unsigned rshift, bool doRelu, int32_t lo, int32_t hi);
// acc[e] += k * src[e] for e < len (T = float, int32_t, int64_t).
template <class T> void mulAddRun(T *__restrict acc, const T *__restrict src, T k, size_t len);

} // namespace tpu::sim::tiu
