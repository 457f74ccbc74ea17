#include "simulator/semantics/tiu/TiuSupport.h"

#include <sstream>

namespace tpu::sim::tiu {

using namespace isa;

Status requireRowMatrices(NamedOperands ops, const char *cls) {
  for (const auto &[t, field] : ops)
    if (t->shape.h != 1) return makeError(field, " = ", t->shape.h, ": ", cls, " matrices have h = 1");
  return Status::ok();
}

// The simulator's limits on one command (docs/isa.md, "Errors"): no result
// has more elements than local memory has bytes, no command does more than
// 2^36 multiply-accumulates, no scratch buffer exceeds 2^27 elements. Real
// commands stay far below; degenerate ones (zero strides, huge shapes) would
// otherwise run for hours or exhaust host memory.
constexpr uint64_t kMaxOpsPerCommand = uint64_t(1) << 36;
constexpr uint64_t kMaxScratchElements = uint64_t(1) << 27;

Status checkWork(const HwConfig &cfg, uint64_t results, uint64_t opsPerResult, const char *what) {
  if (results > cfg.lmemBytes())
    return makeError(what, " has ", results, " elements, more than local memory holds");
  if (opsPerResult && results > kMaxOpsPerCommand / opsPerResult)
    return makeError(what, ": ", results, " results x ", opsPerResult,
                     " operations each exceeds the simulator's limit of 2^36 per command");
  return Status::ok();
}
Status checkScratch(uint64_t elements, const char *what) {
  if (elements > kMaxScratchElements)
    return makeError(what, " needs ", elements, " elements, more than the simulator's limit of 2^27");
  return Status::ok();
}

// Multiplying classes take 8- or 16-bit integer inputs (or fp32): products
// stay below 2^30 and sums of up to 2^31 of them fit int64.
Status requireNarrowInputs(NamedOperands ops, const char *cls) {
  for (const auto &[t, field] : ops)
    if (!t->isFloat() && t->elemBytes > 2)
      return makeError(field, " = ", precName(t->prec), ": ", cls, " multiplies int8, int16 or fp32 inputs");
  return Status::ok();
}

std::string shapeText(const Shape4 &s) {
  std::ostringstream os;
  os << "(" << s.n << ", " << s.c << ", " << s.h << ", " << s.w << ")";
  return os.str();
}

// Either every listed operand is fp32 or none is: the engine computes in one
// domain per command (docs/isa.md).
Status sameDomain(NamedOperands ops, bool &isFloat) {
  const auto *first = ops.begin();
  isFloat = first->first->isFloat();
  for (const auto &[t, field] : ops)
    if (t->isFloat() != isFloat)
      return makeError(field, " = ", precName(t->prec), " mixes fp32 and integer operands (",
                       first->second, " = ", precName(first->first->prec), ")");
  return Status::ok();
}

// 8-bit inputs and kernel give products of magnitude at most 2^16 (uint8 x
// uint8); the bias and res_add operands of at most 16 bits add below 2^17
// more. (The result is the same in int64; int32 is faster.)
bool sumsFitInt32(uint64_t products) {
  return products * (uint64_t(1) << 16) + (uint64_t(1) << 17) < (uint64_t(1) << 31);
}

void storeFloatRow(const LocalTensor &t, LocalMemory &m, uint32_t n, uint32_t c, uint32_t h, size_t W,
                   const float *v) {
  uint8_t *p = t.ptr(m, n, c, h, 0);
  const size_t step = size_t(t.stride.w) * t.elemBytes;
  for (size_t i = 0; i < W; ++i) std::memcpy(p + i * step, &v[i], 4);
}
void writeIntRow(const LocalTensor &t, LocalMemory &m, uint32_t n, uint32_t c, uint32_t h, size_t W,
                 int64_t *v, unsigned rshift, bool doRelu, std::vector<float> &tmp) {
  if (t.isFloat()) {
    for (size_t i = 0; i < W; ++i) {
      int64_t x = roundingRightShift(v[i], rshift);
      tmp[i] = float(doRelu ? relu(x) : x);
    }
    return storeFloatRow(t, m, n, c, h, W, tmp.data());
  }
  const IntRange r = intRange(t.prec, t.isSigned);
  for (size_t i = 0; i < W; ++i) {
    int64_t x = roundingRightShift(v[i], rshift);
    v[i] = saturate(doRelu ? relu(x) : x, r);
  }
  storeIntRow(t, m, n, c, h, W, v);
}
void writeFloatRow(const LocalTensor &t, LocalMemory &m, uint32_t n, uint32_t c, uint32_t h, size_t W,
                   float *v, bool doRelu, std::vector<int64_t> &tmp) {
  if (doRelu)
    for (size_t i = 0; i < W; ++i) v[i] = relu(v[i]);
  if (t.isFloat()) return storeFloatRow(t, m, n, c, h, W, v);
  const IntRange r = intRange(t.prec, t.isSigned);
  for (size_t i = 0; i < W; ++i) tmp[i] = fp32ToInt(v[i], r);
  storeIntRow(t, m, n, c, h, W, tmp.data());
}

TPU_MULTIVERSION void
requantizeRow32(int32_t *__restrict v, size_t W, unsigned rshift, bool doRelu, int32_t lo, int32_t hi) {
  for (size_t i = 0; i < W; ++i) v[i] = requantize32(v[i], rshift, doRelu, lo, hi);
}

template <class T>
TPU_MULTIVERSION void
mulAddRun(T *__restrict acc, const T *__restrict src, T k, size_t len) {
  for (size_t e = 0; e < len; ++e) acc[e] += k * src[e];
}
template void mulAddRun<float>(float *, const float *, float, size_t);
template void mulAddRun<int32_t>(int32_t *, const int32_t *, int32_t, size_t);
template void mulAddRun<int64_t>(int64_t *, const int64_t *, int64_t, size_t);

} // namespace tpu::sim::tiu
