#include "simulator/semantics/TiuExec.h"

#include "simulator/semantics/ByteRuns.h"
#include "simulator/semantics/IntArith.h"
#include "simulator/semantics/LocalTensor.h"
#include "simulator/semantics/Scratch.h"
#include "support/Parallel.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <sstream>
#include <vector>

namespace tpu::sim {

using namespace isa;

namespace {

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

using NamedTensors = std::initializer_list<std::pair<const LocalTensor *, const char *>>;

Status requireRowMatrices(NamedTensors ops, const char *cls) {
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
Status requireNarrowInputs(NamedTensors ops, const char *cls) {
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
Status sameDomain(NamedTensors ops, bool &isFloat) {
  const auto *first = ops.begin();
  isFloat = first->first->isFloat();
  for (const auto &[t, field] : ops)
    if (t->isFloat() != isFloat)
      return makeError(field, " = ", precName(t->prec), " mixes fp32 and integer operands (",
                       first->second, " = ", precName(first->first->prec), ")");
  return Status::ok();
}

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

// ---------------------------------------------------------------------------
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
  case Prec::Int8: return t.isSigned ? widenRow<int8_t>(p, step, count, out) : widenRow<uint8_t>(p, step, count, out);
  case Prec::Int16: return t.isSigned ? widenRow<int16_t>(p, step, count, out) : widenRow<uint16_t>(p, step, count, out);
  case Prec::Int32: return t.isSigned ? widenRow<int32_t>(p, step, count, out) : widenRow<uint32_t>(p, step, count, out);
  case Prec::Fp32: return widenRow<float>(p, step, count, out);
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
void storeFloatRow(const LocalTensor &t, LocalMemory &m, uint32_t n, uint32_t c, uint32_t h, size_t W,
                   const float *v) {
  uint8_t *p = t.ptr(m, n, c, h, 0);
  const size_t step = size_t(t.stride.w) * t.elemBytes;
  for (size_t i = 0; i < W; ++i) std::memcpy(p + i * step, &v[i], 4);
}
// The integer write-back of a row (see writeInt), in place.
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
// The fp32 write-back of a row (see writeFloat), in place.
void writeFloatRow(const LocalTensor &t, LocalMemory &m, uint32_t n, uint32_t c, uint32_t h, size_t W,
                   float *v, bool doRelu, std::vector<int64_t> &tmp) {
  if (doRelu)
    for (size_t i = 0; i < W; ++i) v[i] = relu(v[i]);
  if (t.isFloat()) return storeFloatRow(t, m, n, c, h, W, v);
  const IntRange r = intRange(t.prec, t.isSigned);
  for (size_t i = 0; i < W; ++i) tmp[i] = fp32ToInt(v[i], r);
  storeIntRow(t, m, n, c, h, W, tmp.data());
}

// ---------------------------------------------------------------------------
// Window operations: conv, depthwise, average and max pooling.

enum class Reduce { MulAdd, Max };

struct WindowJob {
  const char *cls;
  LocalTensor in, kernel, bias, out;
  WindowAxis rows, cols; // geometry: pads, insertion, kernel size and dilation, stride
  bool hasBias = false, depthwise = false, resAdd = false, relu = false, rotate = false;
  Reduce reduce = Reduce::MulAdd;
  uint32_t rshift = 0;
};

// writeIntRow's rule for one int32 sum to an 8- or 16-bit destination [lo, hi].
inline int32_t requantize32(int32_t v, unsigned rshift, bool doRelu, int32_t lo, int32_t hi) {
  int32_t x = roundingRightShiftIn(v, rshift);
  if (doRelu) x = x < 0 ? 0 : x;
  return x < lo ? lo : x > hi ? hi : x;
}
// The integer write-back of int32 sums (fitsInt32) to an 8- or 16-bit
// destination [lo, hi], in place: writeIntRow's rules in 32 bits, which vectorize.
TPU_MULTIVERSION void
requantizeRow32(int32_t *__restrict v, size_t W, unsigned rshift, bool doRelu, int32_t lo, int32_t hi) {
  for (size_t i = 0; i < W; ++i) v[i] = requantize32(v[i], rshift, doRelu, lo, hi);
}
// The same write-back of a conv row's sums a[i] + bias (+ old[i]) stored
// straight to a contiguous 8- or 16-bit row.
template <class D>
TPU_MULTIVERSION void requantizeStoreRow(uint8_t *__restrict p, const int32_t *__restrict a, int32_t bias,
                                         const int32_t *__restrict old, size_t W, unsigned rshift, bool doRelu,
                                         int32_t lo, int32_t hi) {
  for (size_t i = 0; i < W; ++i) {
    const D d = D(requantize32(a[i] + bias + (old ? old[i] : 0), rshift, doRelu, lo, hi));
    std::memcpy(p + i * sizeof(D), &d, sizeof(D));
  }
}
template <class T>
TPU_MULTIVERSION void
mulAddRun(T *__restrict acc, const T *__restrict src, T k, size_t len) {
  for (size_t e = 0; e < len; ++e) acc[e] += k * src[e];
}
template <class T>
TPU_MULTIVERSION void
maxRun(T *__restrict acc, const T *__restrict src, size_t len) {
  for (size_t e = 0; e < len; ++e) acc[e] = std::max(acc[e], src[e]);
}


// A command's loops split over host threads (support/Parallel.h) in chunks of
// at least this much work (elements moved or multiply-accumulates): a chunk
// then takes some microseconds, more than handing it to a thread does.
constexpr uint64_t kMinChunkWork = uint64_t(1) << 18;
// Items per chunk when each item is `work` units.
int64_t grainFor(uint64_t work) { return int64_t(std::max<uint64_t>(1, kMinChunkWork / std::max<uint64_t>(1, work))); }
// Runs fn(i) for every i in [0, n), items of `work` units each, over the host threads.
template <class F> void forEachItem(uint64_t n, uint64_t work, F &&fn) {
  parallelFor(int64_t(n), grainFor(work), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) fn(uint32_t(i));
  });
}

// Output columns the conv kernels below keep in registers at a time (at
// most); their column ranges start at multiples of it.
constexpr size_t kConvColumnStep = 32;
// Elements the conv kernels may read past the last tap's run.
constexpr size_t kConvBlockPad = kConvColumnStep;
// The conv kernels read every tap (or tap pair) of their column range for
// each block of four output channels: a range whose runs fit this many bytes
// stays in the core's L2 cache across all the blocks.
constexpr size_t kConvTileBytes = size_t(256) << 10;

// Four output channels of a convolution over the phase planes (runWindow):
// acc[b * len + e] = sum over taps t, in order, of k4[4t + b] * planes[tapOff[t] + e].
// Blocks of two vectors of outputs stay in registers across all taps; each accumulator
// starts at zero and adds the products in tap order, so the sums are the
// same operations as one tap at a time.
template <class T>
TPU_MULTIVERSION void
convBlock4(T *__restrict acc, size_t len, size_t eBegin, size_t eEnd, const T *__restrict planes,
           const size_t *__restrict tapOff, const T *__restrict k4, size_t taps) {
  typedef T V __attribute__((vector_size(32))); // 8 int32/fp32 (AVX2 register; two SSE ones by default)
  constexpr size_t L = sizeof(V) / sizeof(T), E = 2 * L;
  static_assert(kConvColumnStep % E == 0);
  for (size_t e0 = eBegin; e0 < eEnd; e0 += E) {
    V r[4][2] = {};
    for (size_t t = 0; t < taps; ++t) {
      V v0, v1;
      std::memcpy(&v0, planes + tapOff[t] + e0, sizeof(V));
      std::memcpy(&v1, planes + tapOff[t] + e0 + L, sizeof(V));
      for (size_t b = 0; b < 4; ++b) {
        const V k = V{} + k4[4 * t + b];
        r[b][0] += k * v0;
        r[b][1] += k * v1;
      }
    }
    // The last block may be partial: the planes have kConvBlockPad readable
    // elements past the end, the results past len are dropped.
    const size_t valid = std::min(E, len - e0);
    for (size_t b = 0; b < 4; ++b) std::memcpy(acc + b * len + e0, &r[b][0], valid * sizeof(T));
  }
}

// int8 convolutions (runWindow<int32_t>): the taps are grouped by G and
// packed into 32-bit words, groups[g * len + e] holding taps G*g ... G*g+G-1
// at output e (packTapGroup), so that one instruction multiplies and adds a
// whole group: G = 2 as 16-bit halves (vpmaddwd), G = 4 as bytes (AVX-512
// VNNI vpdpbusd, unsigned input bytes times signed weight bytes; a signed
// input is stored plus 128, and corr[b] = -128 * (sum of channel b's weights)
// starts the sum). Output channel b's G weights of group g are packed the
// same way (QuadWeights, kg). Integer sums are exact in any order and wrap modulo 2^32
// alike (fitsInt32 bounds the true sum), so the results are those of
// convBlock4.
__attribute__((target("avx2"))) void convPairs4Avx2(int32_t *__restrict acc, size_t len, size_t eBegin,
                                                    size_t eEnd, const int32_t *__restrict pairs,
                                                    size_t pairCount, const int32_t *__restrict k2) {
  for (size_t e0 = eBegin; e0 < eEnd; e0 += 16) {
    __m256i r[4][2];
    for (auto &rb : r) rb[0] = rb[1] = _mm256_setzero_si256();
    for (size_t p = 0; p < pairCount; ++p) {
      const int32_t *src = pairs + p * len + e0;
      const __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(src));
      const __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(src + 8));
      for (size_t b = 0; b < 4; ++b) {
        const __m256i k = _mm256_set1_epi32(k2[4 * p + b]);
        r[b][0] = _mm256_add_epi32(r[b][0], _mm256_madd_epi16(v0, k));
        r[b][1] = _mm256_add_epi32(r[b][1], _mm256_madd_epi16(v1, k));
      }
    }
    const size_t valid = std::min<size_t>(16, len - e0);
    for (size_t b = 0; b < 4; ++b) {
      alignas(32) int32_t out[16];
      _mm256_store_si256(reinterpret_cast<__m256i *>(out), r[b][0]);
      _mm256_store_si256(reinterpret_cast<__m256i *>(out + 8), r[b][1]);
      std::memcpy(acc + b * len + e0, out, valid * sizeof(int32_t));
    }
  }
}
// The weights of group q for channel b are the 4 bytes at w[b] + q * wStride
// (the kernel's own bytes when it is stored dense, else the packed kg); a
// tail group (taps not a multiple of 4) follows from tail[b], zero-padded.
struct QuadWeights {
  const uint8_t *w[4];
  size_t wStride;
  const int32_t *tail; // nullptr: no tail group
};
__attribute__((target("avx512f,avx512vnni"))) void
convQuads4Vnni(int32_t *__restrict acc, size_t len, size_t eBegin, size_t eEnd, const int32_t *__restrict quads,
               size_t quadCount, const QuadWeights &kw, const int32_t *__restrict corr) {
  auto weight = [&](size_t b, size_t q) {
    int32_t k;
    std::memcpy(&k, kw.w[b] + q * kw.wStride, 4);
    return k;
  };
  for (size_t e0 = eBegin; e0 < eEnd; e0 += 32) {
    __m512i r[4][2];
    for (size_t b = 0; b < 4; ++b) r[b][0] = r[b][1] = _mm512_set1_epi32(corr[b]);
    for (size_t q = 0; q < quadCount; ++q) {
      const int32_t *src = quads + q * len + e0;
      const __m512i v0 = _mm512_loadu_si512(src), v1 = _mm512_loadu_si512(src + 16);
      for (size_t b = 0; b < 4; ++b) {
        const __m512i k = _mm512_set1_epi32(weight(b, q));
        r[b][0] = _mm512_dpbusd_epi32(r[b][0], v0, k);
        r[b][1] = _mm512_dpbusd_epi32(r[b][1], v1, k);
      }
    }
    if (kw.tail) {
      const int32_t *src = quads + quadCount * len + e0;
      const __m512i v0 = _mm512_loadu_si512(src), v1 = _mm512_loadu_si512(src + 16);
      for (size_t b = 0; b < 4; ++b) {
        const __m512i k = _mm512_set1_epi32(kw.tail[b]);
        r[b][0] = _mm512_dpbusd_epi32(r[b][0], v0, k);
        r[b][1] = _mm512_dpbusd_epi32(r[b][1], v1, k);
      }
    }
    const size_t valid = std::min<size_t>(32, len - e0);
    for (size_t b = 0; b < 4; ++b) {
      alignas(64) int32_t out[32];
      _mm512_store_si512(out, r[b][0]);
      _mm512_store_si512(out + 16, r[b][1]);
      std::memcpy(acc + b * len + e0, out, valid * sizeof(int32_t));
    }
  }
}
// Sum of n signed bytes modulo 2^32 (vectorizes).
TPU_MULTIVERSION uint32_t sumInt8(const uint8_t *__restrict p, size_t n) {
  uint32_t sum = 0;
  for (size_t i = 0; i < n; ++i) sum += uint32_t(int32_t(int8_t(p[i])));
  return sum;
}
int32_t low16(int32_t v) { return int16_t(uint32_t(v) & 0xFFFF); }
int32_t high16(int32_t v) { return int16_t(uint32_t(v) >> 16); }
void convPairs4Scalar(int32_t *acc, size_t len, size_t eBegin, size_t eEnd, const int32_t *pairs, size_t pairCount,
                      const int32_t *k2) {
  for (size_t b = 0; b < 4; ++b)
    for (size_t e = eBegin; e < std::min(eEnd, len); ++e) {
      int32_t sum = 0;
      for (size_t p = 0; p < pairCount; ++p) {
        const int32_t v = pairs[p * len + e], k = k2[4 * p + b];
        sum += low16(v) * low16(k) + high16(v) * high16(k);
      }
      acc[b * len + e] = sum;
    }
}
// Packs G values (int8/uint8, as int32) into a group word: G = 2 as 16-bit
// halves, G = 4 as bytes each XORed with `flip` (0x80 turns a signed byte
// into the unsigned one 128 higher).
template <int G> uint32_t packGroup(const int32_t *const *runs, size_t e, uint32_t flip) {
  uint32_t word = 0;
  for (int i = 0; i < G; ++i)
    word |= (G == 2 ? uint32_t(runs[i][e]) & 0xFFFF : (uint32_t(runs[i][e]) ^ flip) & 0xFF) << (32 / G * i);
  return word;
}
// One group's words over a run of `len` outputs (the layout the conv kernels
// read). Past the last tap the runs repeat one: its weights are zero.
template <int G>
TPU_MULTIVERSION void packTapGroup(int32_t *__restrict out, const int32_t *const *runs, size_t len, uint32_t flip) {
  for (size_t e = 0; e < len; ++e) out[e] = int32_t(packGroup<G>(runs, e, flip));
}
// count bytes `step` apart, each XORed with flip, into dst.
TPU_MULTIVERSION void flipBytes(const uint8_t *__restrict src, size_t step, size_t count, uint8_t flip,
                                uint8_t *__restrict dst) {
  if (step == 1) {
    for (size_t x = 0; x < count; ++x) dst[x] = src[x] ^ flip;
    return;
  }
  for (size_t x = 0; x < count; ++x) dst[x] = src[x * step] ^ flip;
}
// The grouped taps may take this many bytes; larger convolutions use convBlock4.
constexpr size_t kMaxTapGroupBytes = size_t(256) << 20;

// The host instruction sets the int8 conv kernels may use; tests lower it.
std::atomic<int> gHostIsaLimit{int(HostIsa::Avx512Vnni)};
HostIsa detectHostIsa() {
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vnni")) return HostIsa::Avx512Vnni;
  return __builtin_cpu_supports("avx2") ? HostIsa::Avx2 : HostIsa::Scalar;
}

// The stride that splits the padded input into phases (runWindow): a
// single output row or column never steps, so its stride is left out (it may
// exceed the input and would only spread the phases).
uint32_t phaseStride(const WindowAxis &a, uint32_t outputs) { return outputs > 1 ? a.stride : 1; }

template <class T> void runWindow(const WindowJob &j, LocalMemory &mem) {
  const Shape4 &is = j.in.shape, &os = j.out.shape;
  const uint32_t IC = is.c, OC = os.c, OH = os.h, OW = os.w, KH = j.rows.kernel, KW = j.cols.kernel;
  const uint32_t padT = j.rows.padBefore, padB = j.rows.padAfter, padL = j.cols.padBefore, padR = j.cols.padAfter;
  const uint32_t insH = j.rows.inputIns, insW = j.cols.inputIns;
  const uint32_t sH = phaseStride(j.rows, OH), sW = phaseStride(j.cols, OW);
  const uint32_t dilH = j.rows.kernelIns + 1, dilW = j.cols.kernelIns + 1;
  const uint64_t Hp = j.rows.paddedInput(), Wp = j.cols.paddedInput();
  const T padValue = j.reduce == Reduce::Max ? std::numeric_limits<T>::lowest() : T(0);

  // Kernel taps, dense [ic][kh][kw] per output channel (depthwise: [kh][kw]), rotated if asked.
  const uint32_t kIc = j.depthwise ? 1 : IC;
  const size_t taps = size_t(kIc) * KH * KW;
  const size_t nStep = size_t(j.kernel.stride.n) * j.kernel.elemBytes;
  // A kernel stored dense [ic][kh][kw] in each lane is that order already.
  const Strides4 &ks = j.kernel.stride;
  const bool denseKernel = !j.depthwise && !j.rotate && !j.kernel.isConst && ks.w == 1 && ks.h == KW &&
                           ks.n == uint64_t(KH) * KW;
  auto loadKernel = [&](uint32_t o, T *dst) {
    if (denseKernel) return widenStrided(j.kernel, j.kernel.ptr(mem, 0, o, 0, 0), j.kernel.elemBytes, taps, dst);
    std::vector<T> col(std::max(kIc, KW));
    for (uint32_t y = 0; y < KH; ++y) {
      const uint32_t sy = j.rotate ? KH - 1 - y : y;
      if (j.depthwise) {
        loadRow(j.kernel, mem, 0, o, sy, false, KW, col.data());
        for (uint32_t x = 0; x < KW; ++x) dst[size_t(y) * KW + x] = col[j.rotate ? KW - 1 - x : x];
        continue;
      }
      for (uint32_t x = 0; x < KW; ++x) { // the kernel's n is the input channel
        const uint32_t sx = j.rotate ? KW - 1 - x : x;
        if (j.kernel.isConst)
          loadRow(j.kernel, mem, 0, o, sy, false, kIc, col.data());
        else
          widenStrided(j.kernel, j.kernel.ptr(mem, 0, o, sy, sx), nStep, kIc, col.data());
        for (uint32_t i = 0; i < kIc; ++i) dst[(size_t(i) * KH + y) * KW + x] = col[i];
      }
    }
  };

  // The padded input of each channel is split into its sH x sW stride
  // phases: phase (py, px) holds the padded rows py, py + sH, ... and columns
  // px, px + sW, ... Output (oy, ox) reads tap (y, x) at padded
  // (oy*sH + y*dilH, ox*sW + x*dilW), which is element (oy + y*dilH/sH,
  // ox + x*dilW/sW) of phase (y*dilH % sH, x*dilW % sW). So every tap is one
  // contiguous run over the output's rows laid out Wq wide; the columns past
  // OW are computed and ignored (one spare row at the end covers the runs
  // that start late in the last phase).
  const uint64_t Hq = (Hp + sH - 1) / sH, Wq = (Wp + sW - 1) / sW;
  const size_t phaseSize = size_t(Hq) * Wq, chanSize = phaseSize * sH * sW, len = size_t(OH) * Wq;
  const size_t planesSize = size_t(IC) * chanSize + Wq + kConvBlockPad;
  auto planeIndex = [&](uint32_t c, uint64_t yy, uint64_t xx) {
    return size_t(c) * chanSize + ((yy % sH) * sW + xx % sW) * phaseSize + (yy / sH) * Wq + xx / sW;
  };
  auto tapIndex = [&](uint32_t c, uint32_t y, uint32_t x) {
    return planeIndex(c, uint64_t(y) * dilH, uint64_t(x) * dilW);
  };
  const uint32_t blocks = !j.depthwise && j.reduce == Reduce::MulAdd ? OC / 4 : 0;
  const size_t accSize = size_t(OC) * len;
  std::vector<T> accOwn;
  T *acc = scratch<T, 1>(accSize, accOwn);
  // int8 x int8 convolutions (exact in int32) use grouped taps: in bytes
  // (convQuads4Vnni) when the weights are signed and the host has AVX-512
  // VNNI, else in 16-bit halves (convPairs4Avx2 or its scalar twin).
  const HostIsa isa = hostIsa();
  const bool signedWeights = j.kernel.prec == Prec::Int8 && j.kernel.isSigned && !j.kernel.isConst;
  const int G = isa == HostIsa::Avx512Vnni && signedWeights && j.in.prec == Prec::Int8 ? 4 : 2;
  const uint32_t flip = j.in.isSigned ? 0x80 : 0;
  const size_t groupCount = (taps + G - 1) / G, groupsSize = groupCount * len + kConvBlockPad;
  const bool useGroups = std::is_same_v<T, int32_t> && blocks > 0 && groupsSize * sizeof(int32_t) <= kMaxTapGroupBytes;
  std::vector<int32_t> groupsOwn;
  int32_t *groups = useGroups ? scratch<int32_t, 2>(groupsSize, groupsOwn) : nullptr;
  // When byte groups serve every output channel, the planes hold the input
  // bytes as the groups take them (signed ones plus 128) instead of widened values.
  const bool bytePlanes = useGroups && G == 4 && blocks * 4 == OC && !j.in.isConst;
  std::vector<T> planesOwn;
  std::vector<uint8_t> bytePlanesOwn;
  T *planes = bytePlanes ? nullptr : scratch<T, 0>(planesSize, planesOwn);
  uint8_t *planes8 = bytePlanes ? scratch<uint8_t, 4>(planesSize, bytePlanesOwn) : nullptr;
  // Their weights: a dense int8 kernel's bytes are G = 4 groups already
  // (read in place, the last partial group copied to tails); otherwise packed
  // [block][group][4] into kg. corr holds the starting sums.
  const bool bytesInPlace = G == 4 && denseKernel;
  std::vector<int32_t> kgOwn, corr(useGroups ? size_t(blocks) * 4 : 0),
      tails(bytesInPlace && taps % 4 ? size_t(blocks) * 4 : 0);
  int32_t *kg = useGroups && !bytesInPlace ? scratch<int32_t, 3>(size_t(blocks) * 4 * groupCount, kgOwn) : nullptr;
  std::vector<QuadWeights> quadWeights(useGroups && G == 4 ? blocks : 0);
  if constexpr (std::is_same_v<T, int32_t>)
    parallelFor(useGroups ? blocks : 0, grainFor(4 * taps), [&](int64_t blkBegin, int64_t blkEnd) {
      // A channel's taps, padded with zeros to G * groupCount.
      std::vector<T> k(bytesInPlace ? 0 : G * groupCount, T(0));
      for (int64_t blk = blkBegin; blk < blkEnd; ++blk) {
        for (uint32_t b = 0; b < 4; ++b) {
          const uint32_t o = uint32_t(blk * 4 + b);
          if (bytesInPlace) {
            const uint8_t *bytes = j.kernel.ptr(mem, 0, o, 0, 0);
            quadWeights[blk].w[b] = bytes;
            if (taps % 4) {
              uint32_t tail = 0;
              std::memcpy(&tail, bytes + taps / 4 * 4, taps % 4);
              tails[o] = int32_t(tail);
            }
            corr[o] = flip ? int32_t(0u - 128u * sumInt8(bytes, taps)) : 0;
            continue;
          }
          loadKernel(o, k.data());
          const int32_t *runs[4] = {k.data(), k.data() + 1, k.data() + 2, k.data() + 3};
          for (size_t g = 0; g < groupCount; ++g)
            kg[(size_t(blk) * groupCount + g) * 4 + b] =
                int32_t(G == 4 ? packGroup<4>(runs, 4 * g, 0) : packGroup<2>(runs, 2 * g, 0));
          uint32_t sum = 0;
          for (size_t t = 0; t < taps; ++t)
            sum += uint32_t(k[t]);
          corr[o] = G == 4 && flip ? int32_t(0u - 128u * sum) : 0;
        }
        if (G != 4) continue;
        QuadWeights &qw = quadWeights[blk];
        qw.tail = bytesInPlace && taps % 4 ? &tails[size_t(blk) * 4] : nullptr;
        qw.wStride = bytesInPlace ? 4 : 16;
        if (!bytesInPlace)
          for (uint32_t b = 0; b < 4; ++b)
            qw.w[b] = reinterpret_cast<const uint8_t *>(&kg[size_t(blk) * groupCount * 4 + b]);
      }
    });
  // The taps of the channels the groups leave, kern[(o - kernFirst) * taps + t].
  const uint32_t kernFirst = useGroups ? blocks * 4 : 0;
  std::vector<T> kern(j.reduce == Reduce::MulAdd ? size_t(OC - kernFirst) * taps : 0);
  forEachItem(j.reduce == Reduce::MulAdd ? OC - kernFirst : 0, taps,
              [&](uint32_t i) { loadKernel(kernFirst + i, &kern[size_t(i) * taps]); });
  // The other blocks of four output channels (convBlock4) and their taps, [block][tap][4].
  std::vector<T> k4(useGroups ? 0 : size_t(blocks) * 4 * taps);
  for (uint32_t blk = 0; blk < (useGroups ? 0 : blocks); ++blk)
    for (size_t t = 0; t < taps; ++t)
      for (uint32_t b = 0; b < 4; ++b)
        k4[(size_t(blk) * taps + t) * 4 + b] = kern[size_t(blk * 4 + b) * taps + t];
  // Where each tap (ic, kh, kw) of a convolution starts in the planes.
  std::vector<size_t> tapOff(j.depthwise ? 0 : taps);
  for (size_t t = 0; t < tapOff.size(); ++t)
    tapOff[t] = tapIndex(uint32_t(t / (KH * KW)), uint32_t(t / KW % KH), uint32_t(t % KW));
  // int32 sums to an int8/int16 result are written back in 32 bits (requantizeRow32).
  const bool narrowIntOut = std::is_same_v<T, int32_t> && !j.out.isFloat() && j.out.elemBytes <= 2;
  const IntRange outRange = intRange(j.out.prec, j.out.isSigned);
  for (uint32_t n = 0; n < is.n; ++n) {
    // Every element of the phases is input data unless there is padding,
    // insertion or a phase longer than the padded input; then all start as
    // pad. The spare tail is read by runs whose results are dropped.
    const bool dense = !(padT | padB | padL | padR | insH | insW) && Hq * sH == Hp && Wq * sW == Wp;
    // Row y of channel c into a plane buffer pl, through loadInto(c, y, row).
    auto fillPlanes = [&](auto *pl, auto pad, auto loadInto) {
      using P = std::remove_pointer_t<decltype(pl)>;
      std::fill(dense ? pl + size_t(IC) * chanSize : pl, pl + planesSize, pad);
      parallelFor(IC, grainFor(size_t(is.h) * is.w), [&](int64_t cBegin, int64_t cEnd) {
        std::vector<P> row(is.w);
        for (uint32_t c = uint32_t(cBegin); c < cEnd; ++c)
          for (uint32_t y = 0; y < is.h; ++y) {
            P *rowBase = pl + planeIndex(c, padT + uint64_t(y) * (insH + 1), 0);
            if (sW == 1 && insW == 0) { // the row is contiguous in its phase
              loadInto(c, y, rowBase + padL);
              continue;
            }
            loadInto(c, y, row.data());
            if (insW == 0) { // phase r takes every sW-th column from the first x with (padL + x) % sW == r
              for (uint32_t r = 0; r < sW; ++r) {
                const uint32_t x0 = (r + sW - padL % sW) % sW;
                P *dst = rowBase + size_t(r) * phaseSize + (uint64_t(padL) + x0) / sW;
                for (uint32_t x = x0; x < is.w; x += sW)
                  *dst++ = row[x];
              }
              continue;
            }
            // Column x goes to padded column padL + x*(insW+1): phase and index
            // advance without a division per element.
            uint64_t px = padL % sW, qx = padL / sW;
            for (uint32_t x = 0; x < is.w; ++x) {
              rowBase[px * phaseSize + qx] = row[x];
              for (px += insW + 1; px >= sW; px -= sW)
                ++qx;
            }
          }
      });
    };
    if (bytePlanes)
      fillPlanes(planes8, uint8_t(uint32_t(padValue) ^ flip), [&](uint32_t c, uint32_t y, uint8_t *dst) {
        flipBytes(j.in.ptr(mem, n, c, y, 0), size_t(j.in.stride.w), is.w, uint8_t(flip), dst);
      });
    else
      fillPlanes(planes, padValue,
                 [&](uint32_t c, uint32_t y, T *dst) { loadRow(j.in, mem, n, c, y, false, is.w, dst); });
    // Inserted zeros are zeros even for max pooling; padding is the pad value.
    if (j.reduce == Reduce::Max && (insH || insW))
      for (uint32_t c = 0; c < IC; ++c)
        for (uint64_t y = padT; y < Hp - padB; ++y)
          for (uint64_t x = padL; x < Wp - padR; ++x)
            if ((y - padT) % (insH + 1) || (x - padL) % (insW + 1))
              planes[planeIndex(c, y, x)] = T(0);

    // convBlock4 stores its blocks whole; the other channels accumulate.
    std::fill(acc + size_t(blocks) * 4 * len, acc + accSize, j.reduce == Reduce::Max ? padValue : T(0));
    // Per output element the taps are summed in (ic, kh, kw) order: the fp32
    // result depends on it (docs/isa.md).
    if constexpr (std::is_same_v<T, int32_t>)
      if (useGroups) {
        forEachItem(groupCount, len, [&](uint32_t g) {
          const size_t *off[4];
          for (int i = 0; i < G; ++i)
            off[i] = &tapOff[std::min(size_t(G) * g + i, taps - 1)];
          if (bytePlanes) {
            const uint8_t *runs[4] = {planes8 + *off[0], planes8 + *off[1], planes8 + *off[2], planes8 + *off[3]};
            return interleaveByteRuns(reinterpret_cast<uint8_t *>(groups + size_t(g) * len), runs, len);
          }
          const int32_t *runs[4];
          for (int i = 0; i < G; ++i)
            runs[i] = planes + *off[i];
          (G == 4 ? packTapGroup<4> : packTapGroup<2>)(groups + size_t(g) * len, runs, len, flip);
        });
        std::fill(groups + groupCount * len, groups + groupsSize, 0);
      }
    // Column tiles of the output, each run for all blocks while its tap runs
    // are in cache; the (tile, block) items go over the host threads, and
    // every element gets the same operations whichever thread computes it.
    const size_t runs = useGroups ? groupCount : taps;
    const size_t tileCols =
        std::max<size_t>(1, kConvTileBytes / (runs * sizeof(T) * kConvColumnStep)) * kConvColumnStep;
    const size_t tiles = (len + tileCols - 1) / tileCols;
    forEachItem(tiles * blocks, uint64_t(4) * taps * tileCols, [&](uint32_t item) {
      const uint32_t blk = item % blocks;
      const size_t eBegin = item / blocks * tileCols, eEnd = std::min(len, eBegin + tileCols);
      T *a = &acc[size_t(blk) * 4 * len];
      if constexpr (std::is_same_v<T, int32_t>)
        if (useGroups) {
          if (G == 4)
            return convQuads4Vnni(a, len, eBegin, eEnd, groups, groupCount - (quadWeights[blk].tail ? 1 : 0),
                                  quadWeights[blk], &corr[size_t(blk) * 4]);
          const int32_t *k = &kg[size_t(blk) * 4 * groupCount];
          return (isa >= HostIsa::Avx2 ? convPairs4Avx2 : convPairs4Scalar)(a, len, eBegin, eEnd, groups, groupCount,
                                                                            k);
        }
      convBlock4(a, len, eBegin, eEnd, planes, tapOff.data(), &k4[size_t(blk) * 4 * taps], taps);
    });
    const uint32_t tapsPerOutput = uint32_t(j.depthwise ? KH * KW : taps);
    forEachItem(OC - blocks * 4, tapsPerOutput * len, [&](uint32_t rest) {
      const uint32_t o = blocks * 4 + rest;
      T *a = &acc[size_t(o) * len];
      uint32_t icBegin = j.depthwise ? o : 0, icEnd = j.depthwise ? o + 1 : IC;
      for (uint32_t i = icBegin; i < icEnd; ++i)
        for (uint32_t y = 0; y < KH; ++y)
          for (uint32_t x = 0; x < KW; ++x) {
            if (j.reduce == Reduce::Max)
              maxRun(a, planes + tapIndex(i, y, x), len);
            else
              mulAddRun(a, planes + tapIndex(i, y, x),
                        kern[size_t(o - kernFirst) * taps + ((i - icBegin) * KH + y) * KW + x], len);
          }
    });
    parallelFor(OC, grainFor(size_t(OH) * OW), [&](int64_t ocBegin, int64_t ocEnd) {
      std::vector<T> row(j.resAdd ? OW : 0);
      std::vector<int64_t> intRow(OW), intTmp(OW);
      std::vector<int32_t> row32(narrowIntOut ? OW : 0);
      std::vector<float> floatRow(OW), floatTmp(OW);
      for (uint32_t oc = uint32_t(ocBegin); oc < ocEnd; ++oc) {
        T b = T(0);
        if (j.hasBias)
          loadRow(j.bias, mem, 0, oc, 0, false, 1, &b);
        for (uint32_t oy = 0; oy < OH; ++oy) {
          const T *a = &acc[size_t(oc) * len + size_t(oy) * Wq];
          if (j.resAdd)
            loadRow(j.out, mem, n, oc, oy, false, OW, row.data());
          if constexpr (std::is_same_v<T, int32_t>)
            if (narrowIntOut) {
              const size_t step = size_t(j.out.stride.w) * j.out.elemBytes;
              if (step == j.out.elemBytes) { // contiguous: one pass
                (step == 1 ? requantizeStoreRow<uint8_t> : requantizeStoreRow<uint16_t>)(
                    j.out.ptr(mem, n, oc, oy, 0), a, b, j.resAdd ? row.data() : nullptr, OW, j.rshift, j.relu,
                    int32_t(outRange.lo), int32_t(outRange.hi));
                continue;
              }
              for (uint32_t ox = 0; ox < OW; ++ox)
                row32[ox] = a[ox] + b + (j.resAdd ? row[ox] : 0);
              requantizeRow32(row32.data(), OW, j.rshift, j.relu, int32_t(outRange.lo), int32_t(outRange.hi));
              storeIntRow(j.out, mem, n, oc, oy, OW, row32.data());
              continue;
            }
          for (uint32_t ox = 0; ox < OW; ++ox) {
            T v = a[ox];
            if (j.hasBias)
              v += b;
            if (j.resAdd)
              v += row[ox];
            if constexpr (std::is_floating_point_v<T>)
              floatRow[ox] = v;
            else
              intRow[ox] = v;
          }
          if constexpr (std::is_floating_point_v<T>)
            writeFloatRow(j.out, mem, n, oc, oy, OW, floatRow.data(), j.relu, intTmp);
          else
            writeIntRow(j.out, mem, n, oc, oy, OW, intRow.data(), j.rshift, j.relu, floatTmp);
        }
      }
    });
  }
}

// Checks the window geometry and that res0's h/w are the output it implies.
Status checkWindow(const WindowJob &j) {
  if (j.rows.stride == 0)
    return makeError("res_op_y_str = 0: the stride must be at least 1");
  if (j.cols.stride == 0)
    return makeError("res_op_x_str = 0: the stride must be at least 1");
  if (j.rows.kernel == 0 || j.cols.kernel == 0)
    return makeError("opd1_h/opd1_w: kernel size ", j.rows.kernel, "x", j.cols.kernel, " is empty");
  uint64_t Hp = j.rows.paddedInput(), Wp = j.cols.paddedInput();
  uint64_t KHe = j.rows.dilatedKernel(), KWe = j.cols.dilatedKernel();
  if (KHe > Hp)
    return makeError("opd1_h = ", j.rows.kernel, ": dilated kernel height ", KHe, " exceeds padded input height ", Hp);
  if (KWe > Wp)
    return makeError("opd1_w = ", j.cols.kernel, ": dilated kernel width ", KWe, " exceeds padded input width ", Wp);
  uint64_t OH = j.rows.outputSize(), OW = j.cols.outputSize();
  if (j.out.shape.h != OH)
    return makeError("res0_h = ", j.out.shape.h, " but the window gives ", OH, " output rows");
  if (j.out.shape.w != OW)
    return makeError("res0_w = ", j.out.shape.w, " but the window gives ", OW, " output columns");
  if (j.out.shape.n != j.in.shape.n)
    return makeError("res0_n = ", j.out.shape.n, " differs from opd0_n = ", j.in.shape.n);
  return Status::ok();
}

Status checkWindowWork(const HwConfig &cfg, const WindowJob &j) {
  uint64_t Hp = j.rows.paddedInput(), Wp = j.cols.paddedInput();
  uint64_t taps = uint64_t(j.depthwise ? 1 : j.in.shape.c) * j.rows.kernel * j.cols.kernel;
  if (taps > (uint64_t(1) << 31))
    return makeError("opd1: ", taps, " kernel taps per output exceed the limit of 2^31");
  TPU_RETURN_IF_ERROR(checkWork(cfg, j.out.shape.count(), taps, "res0"));
  if (j.reduce == Reduce::MulAdd)
    TPU_RETURN_IF_ERROR(requireNarrowInputs({{&j.in, "opt_opd0_prec"}, {&j.kernel, "opt_opd1_prec"}}, j.cls));
  const uint64_t sH = phaseStride(j.rows, j.out.shape.h), sW = phaseStride(j.cols, j.out.shape.w);
  const uint64_t Hq = (Hp + sH - 1) / sH, Wq = (Wp + sW - 1) / sW;
  TPU_RETURN_IF_ERROR(checkScratch(j.in.shape.c * Hq * sH * Wq * sW, "the padded input (opd0)"));
  return checkScratch(uint64_t(j.out.shape.c) * j.out.shape.h * Wq, "the output accumulator (res0)");
}

template <class Cmd> void copyWindowFields(const Cmd &s, WindowJob &j) {
  j.rows = windowRows(s), j.cols = windowCols(s);
  j.rotate = s.kernelRotate, j.rshift = s.rshift, j.relu = s.relu;
}

// Can every partial sum be held in int32? 8-bit inputs and kernel give
// products of magnitude at most 2^16 (uint8 x uint8); the bias and res_add
// operands of at most 16 bits add below 2^17 more. (The result is the same
// in int64; int32 is faster.)
bool sumsFitInt32(uint64_t products) {
  return products * (uint64_t(1) << 16) + (uint64_t(1) << 17) < (uint64_t(1) << 31);
}
bool fitsInt32(const WindowJob &j) {
  if (j.in.elemBytes != 1) return false;
  if (j.reduce == Reduce::Max) return true;
  uint64_t taps = uint64_t(j.depthwise ? 1 : j.in.shape.c) * j.rows.kernel * j.cols.kernel;
  return j.kernel.elemBytes == 1 && (!j.hasBias || j.bias.elemBytes <= 2) &&
         (!j.resAdd || j.out.elemBytes <= 2) && sumsFitInt32(taps);
}

Status execWindow(const HwConfig &cfg, const WindowJob &j, LocalMemory &mem) {
  TPU_RETURN_IF_ERROR(checkWindow(j));
  TPU_RETURN_IF_ERROR(checkWindowWork(cfg, j));
  bool isFloat = false;
  if (j.reduce == Reduce::MulAdd && j.hasBias)
    TPU_RETURN_IF_ERROR(sameDomain({{&j.in, "opt_opd0_prec"}, {&j.kernel, "opt_opd1_prec"},
                                    {&j.bias, "opt_opd2_prec"}, {&j.out, "opt_res0_prec"}}, isFloat));
  else if (j.reduce == Reduce::MulAdd)
    TPU_RETURN_IF_ERROR(sameDomain({{&j.in, "opt_opd0_prec"}, {&j.kernel, "opt_opd1_prec"},
                                    {&j.out, "opt_res0_prec"}}, isFloat));
  else
    TPU_RETURN_IF_ERROR(sameDomain({{&j.in, "opt_opd0_prec"}, {&j.out, "opt_res0_prec"}}, isFloat));
  if (isFloat)
    runWindow<float>(j, mem);
  else if (fitsInt32(j))
    runWindow<int32_t>(j, mem);
  else
    runWindow<int64_t>(j, mem);
  return Status::ok();
}

Status execConv(const HwConfig &cfg, LocalMemory &mem, const Conv &s) {
  WindowJob j;
  j.cls = "conv";
  TRY_RESOLVE(in, resolveLocal(cfg, s.input, "opd0"));
  TRY_RESOLVE(out, resolveLocal(cfg, s.output, "res0"));
  if (s.weight.shape.n != in.shape.c)
    return makeError("opd1_n = ", s.weight.shape.n, " (kernel input channels) differs from opd0_c = ", in.shape.c);
  if (s.weight.shape.c != out.shape.c)
    return makeError("opd1_c = ", s.weight.shape.c, " (kernel output channels) differs from res0_c = ", out.shape.c);
  TRY_RESOLVE(kernel, resolveLocal(cfg, s.weight, "opd1"));
  j.in = in, j.out = out, j.kernel = kernel;
  j.hasBias = s.hasBias;
  if (s.hasBias) {
    TRY_RESOLVE(bias, resolveLocal(cfg, s.bias, Shape4{1, out.shape.c, 1, 1}, "opd2"));
    j.bias = bias;
  }
  copyWindowFields(s, j);
  j.resAdd = s.resAdd;
  return execWindow(cfg, j, mem);
}

Status execPord(const HwConfig &cfg, LocalMemory &mem, const Pord &s) {
  WindowJob j;
  j.cls = "pord";
  j.depthwise = true;
  TRY_RESOLVE(in, resolveLocal(cfg, s.input, "opd0"));
  TRY_RESOLVE(out, resolveLocal(cfg, s.output, "res0"));
  if (out.shape.c != in.shape.c)
    return makeError("res0_c = ", out.shape.c, " differs from opd0_c = ", in.shape.c);
  j.in = in, j.out = out;
  j.reduce = s.kind() == Pord::Kind::MaxPool ? Reduce::Max : Reduce::MulAdd;
  if (j.reduce == Reduce::MulAdd) {
    TRY_RESOLVE(kernel, resolveLocal(cfg, s.kernel, Shape4{1, in.shape.c, s.kernel.shape.h, s.kernel.shape.w}, "opd1"));
    j.kernel = kernel;
    j.hasBias = s.hasBias;
    if (s.hasBias) {
      TRY_RESOLVE(bias, resolveLocal(cfg, s.bias, Shape4{1, out.shape.c, 1, 1}, "opd2"));
      j.bias = bias;
    }
  } else if (s.hasBias) {
    return makeError("tsk_opd_num = 3: max pooling takes no bias");
  }
  copyWindowFields(s, j);
  return execWindow(cfg, j, mem);
}

// ---------------------------------------------------------------------------
// Matrix products.

template <class T>
T loadAs(const LocalTensor &t, const LocalMemory &m, uint32_t n, uint32_t c, uint32_t h, uint32_t w) {
  if constexpr (std::is_floating_point_v<T>)
    return t.loadFloat(m, n, c, h, w);
  else
    return T(t.loadInt(m, n, c, h, w));
}

// acc[M x N] = L[M x K] * R[K x N], each summed in ascending k.
template <class T> void matmulDense(T *acc, const T *L, const T *R, size_t M, size_t K, size_t N) {
  std::fill(acc, acc + M * N, T(0));
  for (size_t m = 0; m < M; ++m)
    for (size_t k = 0; k < K; ++k) mulAddRun(acc + m * N, R + k * N, L[m * K + k], N);
}

template <class T>
void runMatMul(const MatMul &s, const LocalTensor &left, const LocalTensor &right, const LocalTensor *bias,
               const LocalTensor &out, uint32_t M, uint32_t K, LocalMemory &mem) {
  const uint32_t N = out.shape.c * out.shape.w, ow = out.shape.w, lw = left.shape.w;
  std::vector<T> lOwn, rOwn, accOwn;
  T *L = scratch<T, 4>(size_t(M) * K, lOwn), *R = scratch<T, 5>(size_t(K) * N, rOwn);
  T *acc = scratch<T, 6>(size_t(M) * N, accOwn);
  for (uint32_t m = 0; m < M; ++m)
    for (uint32_t k = 0; k < K; ++k)
      L[size_t(m) * K + k] = s.leftTranspose ? loadAs<T>(left, mem, k, m / lw, 0, m % lw)
                                             : loadAs<T>(left, mem, m, k / lw, 0, k % lw);
  if (ow >= K) {
    for (uint32_t k = 0; k < K; ++k)
      for (uint32_t c = 0; c < out.shape.c; ++c) // a row at a time (loadAs per element was most of the fc layer)
        loadRow(right, mem, k, c, 0, false, ow, &R[size_t(k) * N + size_t(c) * ow]);
  } else { // short rows (an fc layer's w = 1): a column of K at a time
    std::vector<T> col(K);
    for (uint32_t c = 0; c < out.shape.c; ++c)
      for (uint32_t w = 0; w < ow; ++w) {
        widenStrided(right, right.ptr(mem, 0, c, 0, w), size_t(right.stride.n) * right.elemBytes, K, col.data());
        for (uint32_t k = 0; k < K; ++k) R[size_t(k) * N + size_t(c) * ow + w] = col[k];
      }
  }
  matmulDense(acc, L, R, M, K, N);
  for (uint32_t m = 0; m < M; ++m)
    for (uint32_t jj = 0; jj < N; ++jj) {
      uint32_t c = jj / ow, w = jj % ow;
      T v = acc[size_t(m) * N + jj];
      if (bias) v += loadAs<T>(*bias, mem, 0, c, 0, w);
      if (s.eu == EuOp::Mac) v += loadAs<T>(out, mem, m, c, 0, w);
      if constexpr (std::is_floating_point_v<T>)
        writeFloat(mem, out, m, c, 0, w, v, s.relu);
      else
        writeInt(mem, out, m, c, 0, w, v, s.rshift, s.relu);
    }
}

Status execMatMul(const HwConfig &cfg, LocalMemory &mem, const MatMul &s) {
  TRY_RESOLVE(left, resolveLocal(cfg, s.left, "opd0"));
  TRY_RESOLVE(right, resolveLocal(cfg, s.right, "opd1"));
  TRY_RESOLVE(out, resolveLocal(cfg, s.output, "res0"));
  TPU_RETURN_IF_ERROR(requireRowMatrices({{&left, "opd0_h"}, {&right, "opd1_h"}, {&out, "res0_h"}}, "mm"));
  if (right.shape.c != out.shape.c || right.shape.w != out.shape.w)
    return makeError("opd1 (c, w) = (", right.shape.c, ", ", right.shape.w,
                     ") differs from res0 (c, w) = (", out.shape.c, ", ", out.shape.w, ")");
  const uint32_t K = right.shape.n, M = out.shape.n;
  const uint64_t leftCols = uint64_t(left.shape.c) * left.shape.w;
  if (!s.leftTranspose) {
    if (left.shape.n != M) return makeError("opd0_n = ", left.shape.n, " differs from res0_n = ", M);
    if (leftCols < K) return makeError("opd0 holds ", leftCols, " columns (opd0_c * opd0_w) but opd1_n = ", K);
  } else {
    if (left.shape.n != K) return makeError("opd0_n = ", left.shape.n, " differs from opd1_n = ", K, " (left transposed)");
    if (leftCols < M) return makeError("opd0 holds ", leftCols, " columns (opd0_c * opd0_w) but res0_n = ", M);
  }
  TPU_RETURN_IF_ERROR(checkWork(cfg, uint64_t(M) * out.shape.c * out.shape.w, K, "res0"));
  TPU_RETURN_IF_ERROR(checkScratch(uint64_t(M) * K, "the left matrix (opd0)"));
  TPU_RETURN_IF_ERROR(checkScratch(uint64_t(K) * out.shape.c * out.shape.w, "the right matrix (opd1)"));
  std::optional<LocalTensor> bias;
  if (s.hasBias) {
    TRY_RESOLVE(b, resolveLocal(cfg, s.bias, Shape4{1, out.shape.c, 1, out.shape.w}, "opd2"));
    bias = b;
  }
  bool isFloat = false;
  if (bias)
    TPU_RETURN_IF_ERROR(sameDomain({{&left, "opt_opd0_prec"}, {&right, "opt_opd1_prec"},
                                    {&*bias, "opt_opd2_prec"}, {&out, "opt_res0_prec"}}, isFloat));
  else
    TPU_RETURN_IF_ERROR(sameDomain({{&left, "opt_opd0_prec"}, {&right, "opt_opd1_prec"},
                                    {&out, "opt_res0_prec"}}, isFloat));
  TPU_RETURN_IF_ERROR(requireNarrowInputs({{&left, "opt_opd0_prec"}, {&right, "opt_opd1_prec"}}, "mm"));
  const LocalTensor *b = bias ? &*bias : nullptr;
  // As for windows (fitsInt32): 8-bit operands, at most 16-bit bias and accumulated result.
  const bool int32Sums = left.elemBytes == 1 && right.elemBytes == 1 && (!b || b->elemBytes <= 2) &&
                         (s.eu != EuOp::Mac || out.elemBytes <= 2) && sumsFitInt32(K);
  if (isFloat)
    runMatMul<float>(s, left, right, b, out, M, K, mem);
  else if (int32Sums)
    runMatMul<int32_t>(s, left, right, b, out, M, K, mem);
  else
    runMatMul<int64_t>(s, left, right, b, out, M, K, mem);
  return Status::ok();
}

template <class T>
void runMatMul2(const MatMul2 &s, const LocalTensor &left, const LocalTensor &right, const LocalTensor &out,
                LocalMemory &mem) {
  const uint32_t B = out.shape.n, M = out.shape.c, K = left.shape.w, N = out.shape.w;
  std::vector<T> lOwn, rOwn, accOwn;
  T *L = scratch<T, 4>(size_t(M) * K, lOwn), *R = scratch<T, 5>(size_t(K) * N, rOwn);
  T *acc = scratch<T, 6>(size_t(M) * N, accOwn);
  for (uint32_t b = 0; b < B; ++b) {
    for (uint32_t m = 0; m < M; ++m)
      for (uint32_t k = 0; k < K; ++k) L[size_t(m) * K + k] = loadAs<T>(left, mem, b, m, 0, k);
    for (uint32_t k = 0; k < K; ++k)
      for (uint32_t jj = 0; jj < N; ++jj) R[size_t(k) * N + jj] = loadAs<T>(right, mem, b, k, 0, jj);
    matmulDense(acc, L, R, M, K, N);
    for (uint32_t m = 0; m < M; ++m)
      for (uint32_t jj = 0; jj < N; ++jj) {
        T v = acc[size_t(m) * N + jj];
        if (s.resAdd) v += loadAs<T>(out, mem, b, m, 0, jj);
        if constexpr (std::is_floating_point_v<T>)
          writeFloat(mem, out, b, m, 0, jj, v, s.relu);
        else
          writeInt(mem, out, b, m, 0, jj, v, s.rshift, s.relu);
      }
  }
}

Status execMatMul2(const HwConfig &cfg, LocalMemory &mem, const MatMul2 &s) {
  TRY_RESOLVE(left, resolveLocal(cfg, s.left, "opd0"));
  TRY_RESOLVE(right, resolveLocal(cfg, s.right, "opd1"));
  TRY_RESOLVE(out, resolveLocal(cfg, s.output, "res0"));
  TPU_RETURN_IF_ERROR(requireRowMatrices({{&left, "opd0_h"}, {&right, "opd1_h"}, {&out, "res0_h"}}, "mm2"));
  if (left.shape.n != out.shape.n || right.shape.n != out.shape.n)
    return makeError("opd0_n = ", left.shape.n, ", opd1_n = ", right.shape.n, " and res0_n = ", out.shape.n,
                     " must be equal (batch)");
  if (left.shape.c != out.shape.c) return makeError("opd0_c = ", left.shape.c, " differs from res0_c = ", out.shape.c);
  if (right.shape.c != left.shape.w) return makeError("opd1_c = ", right.shape.c, " differs from opd0_w = ", left.shape.w);
  if (right.shape.w != out.shape.w) return makeError("opd1_w = ", right.shape.w, " differs from res0_w = ", out.shape.w);
  TPU_RETURN_IF_ERROR(checkWork(cfg, out.shape.count(), left.shape.w, "res0"));
  TPU_RETURN_IF_ERROR(checkScratch(uint64_t(left.shape.c) * left.shape.w, "the left matrix (opd0)"));
  TPU_RETURN_IF_ERROR(checkScratch(uint64_t(right.shape.c) * right.shape.w, "the right matrix (opd1)"));
  bool isFloat = false;
  TPU_RETURN_IF_ERROR(sameDomain({{&left, "opt_opd0_prec"}, {&right, "opt_opd1_prec"}, {&out, "opt_res0_prec"}}, isFloat));
  TPU_RETURN_IF_ERROR(requireNarrowInputs({{&left, "opt_opd0_prec"}, {&right, "opt_opd1_prec"}}, "mm2"));
  if (isFloat)
    runMatMul2<float>(s, left, right, out, mem);
  else
    runMatMul2<int64_t>(s, left, right, out, mem);
  return Status::ok();
}

// ---------------------------------------------------------------------------
// Element-wise classes.

// Which inputs an eu op reads.
struct Arity {
  bool a, b, c, d; // opd0, opd1, opd2, opd3
};
Arity arityOf(EuOp e, TiuTask task) {
  switch (e) {
  case EuOp::Copy: case EuOp::Fp32ToInt: case EuOp::IntNormalize: case EuOp::Fp32Normalize:
  case EuOp::Rsqrt:
    return {true, false, false, false};
  case EuOp::AddTree: case EuOp::Select: return {true, true, true, false};
  case EuOp::SelectGt: case EuOp::SelectEq: case EuOp::CmpSelect: return {true, true, true, true};
  case EuOp::Mac: return {true, true, task == TiuTask::MdLinear, false};
  default: return {true, true, false, false};
  }
}

bool isBitwise(EuOp e) { return e == EuOp::And || e == EuOp::Or || e == EuOp::Xor; }
bool needsFloat(EuOp e) {
  return e == EuOp::Divide || e == EuOp::Taylor || e == EuOp::Fp32ToInt || e == EuOp::Fp32Normalize ||
         e == EuOp::Rsqrt;
}
bool needsInt(EuOp e) { return isBitwise(e) || e == EuOp::Shift || e == EuOp::IntNormalize; }

// Leading redundant sign bits of v as a `bits`-bit integer.
int64_t redundantSignBits(int64_t v, unsigned bits) {
  int64_t n = 0;
  for (int b = int(bits) - 2; b >= 0 && ((v >> b) & 1) == ((v >> (bits - 1)) & 1); --b) ++n;
  return n;
}

struct ElementwiseJob {
  EuOp eu;
  LocalTensor res0, res1, a, b, c, d;
  Arity arity;
  bool hasRes1 = false, isFloat = false, relu = false, logicalShift = false;
  uint32_t rshift = 0;
  uint32_t taylorTerms = 0;
  Shape4 aMask{1, 1, 1, 1}, bMask{1, 1, 1, 1}; // vc: 0 = broadcast index along that dim
};

int64_t shiftBy(int64_t a, int64_t b) {
  int64_t s = std::clamp<int64_t>(b, -63, 62);
  return s >= 0 ? satShl(a, unsigned(s)) : roundingRightShift(a, unsigned(-s));
}

// One row of an integer-domain op: r = eu(a, b, c, d, old). Returns whether r
// keeps its low bits (bitwise) instead of the saturating write-back.
bool intRowOp(const ElementwiseJob &j, size_t W, const int64_t *a, const int64_t *b, const int64_t *c,
              const int64_t *d, const int64_t *old, int64_t *r, int64_t *r1) {
  const unsigned aBits = 8 * j.a.elemBytes;
  switch (j.eu) {
  case EuOp::Mul: for (size_t i = 0; i < W; ++i) r[i] = satMul(a[i], b[i]); break;
  case EuOp::Mac:
    for (size_t i = 0; i < W; ++i) r[i] = satAdd(satMul(a[i], b[i]), j.arity.c ? c[i] : old[i]);
    break;
  case EuOp::Add: for (size_t i = 0; i < W; ++i) r[i] = a[i] + b[i]; break;
  case EuOp::Sub: for (size_t i = 0; i < W; ++i) r[i] = a[i] - b[i]; break;
  case EuOp::Max: for (size_t i = 0; i < W; ++i) r[i] = std::max(a[i], b[i]); break;
  case EuOp::Min: for (size_t i = 0; i < W; ++i) r[i] = std::min(a[i], b[i]); break;
  case EuOp::Shift:
    if (!j.logicalShift) {
      for (size_t i = 0; i < W; ++i) r[i] = shiftBy(a[i], b[i]);
      break;
    }
    for (size_t i = 0; i < W; ++i) {
      uint64_t bits = uint64_t(a[i]) & (aBits >= 64 ? ~0ull : (1ull << aBits) - 1);
      int64_t s = std::clamp<int64_t>(b[i], -63, 62);
      r[i] = int64_t(s >= 0 ? bits << s : bits >> -s);
    }
    return true;
  case EuOp::And: for (size_t i = 0; i < W; ++i) r[i] = a[i] & b[i]; return true;
  case EuOp::Or: for (size_t i = 0; i < W; ++i) r[i] = a[i] | b[i]; return true;
  case EuOp::Xor: for (size_t i = 0; i < W; ++i) r[i] = a[i] ^ b[i]; return true;
  case EuOp::SelectGt: for (size_t i = 0; i < W; ++i) r[i] = a[i] > b[i] ? c[i] : d[i]; break;
  case EuOp::SelectEq: for (size_t i = 0; i < W; ++i) r[i] = a[i] == b[i] ? c[i] : d[i]; break;
  case EuOp::IntNormalize: for (size_t i = 0; i < W; ++i) r[i] = redundantSignBits(a[i], aBits); break;
  case EuOp::AddTree: for (size_t i = 0; i < W; ++i) r[i] = a[i] + b[i] + c[i]; break;
  case EuOp::Copy: std::copy(a, a + W, r); break;
  case EuOp::SquareSum: for (size_t i = 0; i < W; ++i) r[i] = satMul(a[i] + b[i], a[i] + b[i]); break;
  case EuOp::SquareDiff: for (size_t i = 0; i < W; ++i) r[i] = satMul(a[i] - b[i], a[i] - b[i]); break;
  case EuOp::Cmp: for (size_t i = 0; i < W; ++i) r[i] = a[i] > b[i] ? 1 : 0; break;
  case EuOp::Select: for (size_t i = 0; i < W; ++i) r[i] = a[i] != 0 ? b[i] : c[i]; break;
  case EuOp::CmpSelect:
    for (size_t i = 0; i < W; ++i) {
      r[i] = a[i] > b[i] ? a[i] : b[i];
      r1[i] = a[i] > b[i] ? c[i] : d[i];
    }
    break;
  default: break; // excluded by validation
  }
  return false;
}

// One row of an fp32-domain op. fp32_normalize writes integers to ri and
// returns true; everything else writes r.
bool floatRowOp(const ElementwiseJob &j, size_t W, const float *a, const float *b, const float *c, const float *d,
                const float *old, const float *coef, float *r, float *r1, int64_t *ri) {
  switch (j.eu) {
  case EuOp::Mul: for (size_t i = 0; i < W; ++i) r[i] = a[i] * b[i]; break;
  case EuOp::Mac:
    for (size_t i = 0; i < W; ++i) r[i] = a[i] * b[i] + (j.arity.c ? c[i] : old[i]);
    break;
  case EuOp::Add: for (size_t i = 0; i < W; ++i) r[i] = a[i] + b[i]; break;
  case EuOp::Sub: for (size_t i = 0; i < W; ++i) r[i] = a[i] - b[i]; break;
  case EuOp::Max: for (size_t i = 0; i < W; ++i) r[i] = std::max(a[i], b[i]); break;
  case EuOp::Min: for (size_t i = 0; i < W; ++i) r[i] = std::min(a[i], b[i]); break;
  case EuOp::SelectGt: for (size_t i = 0; i < W; ++i) r[i] = a[i] > b[i] ? c[i] : d[i]; break;
  case EuOp::SelectEq: for (size_t i = 0; i < W; ++i) r[i] = a[i] == b[i] ? c[i] : d[i]; break;
  case EuOp::Divide: for (size_t i = 0; i < W; ++i) r[i] = a[i] / b[i]; break;
  case EuOp::Taylor: // Horner, highest term first: coefficient t of this channel is coef[t]
    for (size_t i = 0; i < W; ++i) {
      float v = 0.0f;
      for (uint32_t t = j.taylorTerms; t-- > 0;) v = v * a[i] + coef[t];
      r[i] = v;
    }
    break;
  case EuOp::Fp32ToInt: case EuOp::Copy: std::copy(a, a + W, r); break;
  case EuOp::Fp32Normalize:
    for (size_t i = 0; i < W; ++i) {
      int e = 0;
      std::frexp(a[i], &e);
      ri[i] = a[i] == 0.0f ? 0 : e - 1;
    }
    return true;
  case EuOp::Rsqrt: for (size_t i = 0; i < W; ++i) r[i] = 1.0f / std::sqrt(a[i]); break;
  case EuOp::AddTree: for (size_t i = 0; i < W; ++i) r[i] = a[i] + b[i] + c[i]; break;
  case EuOp::SquareSum: for (size_t i = 0; i < W; ++i) r[i] = (a[i] + b[i]) * (a[i] + b[i]); break;
  case EuOp::SquareDiff: for (size_t i = 0; i < W; ++i) r[i] = (a[i] - b[i]) * (a[i] - b[i]); break;
  case EuOp::Cmp: for (size_t i = 0; i < W; ++i) r[i] = a[i] > b[i] ? 1.0f : 0.0f; break;
  case EuOp::Select: for (size_t i = 0; i < W; ++i) r[i] = a[i] != 0.0f ? b[i] : c[i]; break;
  case EuOp::CmpSelect:
    for (size_t i = 0; i < W; ++i) {
      r[i] = a[i] > b[i] ? a[i] : b[i];
      r1[i] = a[i] > b[i] ? c[i] : d[i];
    }
    break;
  default: break; // excluded by validation
  }
  return false;
}

// Integer ops whose operands and result fit int32 and whose exact results
// fit int32 run in 32 bits (narrowRowOp), which vectorizes: the same values
// as intRowOp, which never saturates there. Sums of int32 operands are
// checked per row; a row that overflows is redone in 64 bits.
bool fitsInt32Values(const LocalTensor &t) { return t.elemBytes <= 2 || (t.elemBytes == 4 && t.isSigned); }
uint64_t maxMagnitude(const LocalTensor &t) {
  return t.elemBytes == 1 ? (t.isSigned ? 128 : 255) : (t.isSigned ? 32768 : 65535);
}
bool fitsNarrowOp(const ElementwiseJob &j) {
  if (j.isFloat || j.hasRes1 || j.res0.isFloat() || !fitsInt32Values(j.res0) || !fitsInt32Values(j.a)) return false;
  switch (j.eu) {
  case EuOp::Copy: return true;
  case EuOp::Add: case EuOp::Sub: case EuOp::Max: case EuOp::Min: return fitsInt32Values(j.b);
  case EuOp::Mul:
    return j.a.elemBytes <= 2 && j.b.elemBytes <= 2 && maxMagnitude(j.a) * maxMagnitude(j.b) < (uint64_t(1) << 31);
  default: return false;
  }
}
// Returns false when a sum or difference overflowed int32 (r is then unused).
TPU_MULTIVERSION bool narrowRowOp(EuOp eu, size_t W, const int32_t *__restrict a, const int32_t *__restrict b,
                                  int32_t *__restrict r) {
  uint32_t overflow = 0;
  switch (eu) {
  case EuOp::Mul: for (size_t i = 0; i < W; ++i) r[i] = a[i] * b[i]; break;
  case EuOp::Add:
    for (size_t i = 0; i < W; ++i) {
      const uint32_t x = uint32_t(a[i]), y = uint32_t(b[i]), z = x + y;
      overflow |= (x ^ z) & (y ^ z);
      r[i] = int32_t(z);
    }
    break;
  case EuOp::Sub:
    for (size_t i = 0; i < W; ++i) {
      const uint32_t x = uint32_t(a[i]), y = uint32_t(b[i]), z = x - y;
      overflow |= (x ^ y) & (x ^ z);
      r[i] = int32_t(z);
    }
    break;
  case EuOp::Max: for (size_t i = 0; i < W; ++i) r[i] = std::max(a[i], b[i]); break;
  case EuOp::Min: for (size_t i = 0; i < W; ++i) r[i] = std::min(a[i], b[i]); break;
  default: std::copy(a, a + W, r); break; // Copy (fitsNarrowOp)
  }
  return !(overflow >> 31);
}

// Row buffers of one domain, sized on first use: a command allocates (and
// zeroes) only the ones its rows take.
template <class V> struct RowBuffers {
  std::vector<V> a, b, c, d, old, r, r1;
  RowBuffers &sized(size_t W) {
    if (a.size() < W)
      for (std::vector<V> *v : {&a, &b, &c, &d, &old, &r, &r1}) v->resize(W);
    return *this;
  }
};

// Bytes [first, end) an operand of shape S spans in its lane (strides are unsigned).
std::pair<uint64_t, uint64_t> laneSpan(const LocalTensor &t, const Shape4 &S) {
  return {t.laneOffset, t.offset(S.n - 1, S.c - 1, S.h - 1, S.w - 1) + t.elemBytes};
}
bool sameLayout(const LocalTensor &x, const LocalTensor &y) {
  return x.laneOffset == y.laneOffset && x.npuOffset == y.npuOffset && x.stride == y.stride &&
         x.elemBytes == y.elemBytes;
}
// Can the rows of every (n, c) run as one row of h * w elements? Each
// operand's rows must continue one another, and no result may overlap
// another operand except element for element (then the order of rows
// cannot change what is read).
bool rowsMerge(const ElementwiseJob &j) {
  const Shape4 &S = j.res0.shape;
  const Shape4 whole{1, 1, 1, 1};
  if (S.h < 2 || j.eu == EuOp::Taylor || !(j.aMask == whole) || !(j.bMask == whole)) return false;
  std::vector<const LocalTensor *> inputs{&j.a}, results{&j.res0};
  if (j.arity.b) inputs.push_back(&j.b);
  if (j.arity.c) inputs.push_back(&j.c);
  if (j.arity.d) inputs.push_back(&j.d);
  if (j.hasRes1) results.push_back(&j.res1);
  auto continuous = [&](const LocalTensor *t) { return t->isConst || t->stride.h == uint64_t(t->stride.w) * S.w; };
  auto apart = [&](const LocalTensor *x, const LocalTensor *y) {
    if (x->isConst || y->isConst) return true;
    const auto [x0, x1] = laneSpan(*x, S);
    const auto [y0, y1] = laneSpan(*y, S);
    return x1 <= y0 || y1 <= x0;
  };
  for (const LocalTensor *r : results) {
    if (!continuous(r)) return false;
    for (const LocalTensor *t : inputs)
      if (!continuous(t) || !(apart(r, t) || sameLayout(*r, *t))) return false;
  }
  return results.size() == 1 || apart(results[0], results[1]);
}

void runElementwise(const ElementwiseJob &j, LocalMemory &mem) {
  const Shape4 &am = j.aMask, &bm = j.bMask;
  const bool merge = rowsMerge(j);
  const Shape4 S = merge ? Shape4{j.res0.shape.n, j.res0.shape.c, 1, j.res0.shape.h * j.res0.shape.w} : j.res0.shape;
  const size_t W = S.w;
  const bool readsOld = j.eu == EuOp::Mac && !j.arity.c;
  const bool narrow = fitsNarrowOp(j);
  const IntRange resRange = intRange(j.res0.prec, j.res0.isSigned);
  RowBuffers<int64_t> ib;
  RowBuffers<int32_t> nb;
  RowBuffers<float> fb;
  std::vector<int64_t> itmp;
  std::vector<float> ftmp, coef(j.taylorTerms);
  for (uint32_t n = 0; n < S.n; ++n)
    for (uint32_t c = 0; c < S.c; ++c)
      for (uint32_t h = 0; h < S.h; ++h) {
        const uint32_t an = n * am.n, ac = c * am.c, ah = h * am.h, bn = n * bm.n, bc = c * bm.c, bh = h * bm.h;
        if (j.isFloat) {
          fb.sized(W), itmp.resize(W), ftmp.resize(W);
          loadRow(j.a, mem, an, ac, ah, am.w == 0, W, fb.a.data());
          if (j.eu == EuOp::Taylor) loadRow(j.b, mem, 0, c, 0, false, j.taylorTerms, coef.data());
          else if (j.arity.b) loadRow(j.b, mem, bn, bc, bh, bm.w == 0, W, fb.b.data());
          if (j.arity.c) loadRow(j.c, mem, n, c, h, false, W, fb.c.data());
          if (j.arity.d) loadRow(j.d, mem, n, c, h, false, W, fb.d.data());
          if (readsOld) loadRow(j.res0, mem, n, c, h, false, W, fb.old.data());
          if (floatRowOp(j, W, fb.a.data(), fb.b.data(), fb.c.data(), fb.d.data(), fb.old.data(), coef.data(),
                         fb.r.data(), fb.r1.data(), itmp.data())) {
            writeIntRow(j.res0, mem, n, c, h, W, itmp.data(), 0, false, ftmp);
            continue;
          }
          if (j.hasRes1) writeFloatRow(j.res1, mem, n, c, h, W, fb.r1.data(), false, itmp);
          writeFloatRow(j.res0, mem, n, c, h, W, fb.r.data(), j.relu, itmp);
          continue;
        }
        if (narrow) {
          nb.sized(W);
          loadRow(j.a, mem, an, ac, ah, am.w == 0, W, nb.a.data());
          if (j.arity.b) loadRow(j.b, mem, bn, bc, bh, bm.w == 0, W, nb.b.data());
          if (narrowRowOp(j.eu, W, nb.a.data(), nb.b.data(), nb.r.data())) {
            requantizeRow32(nb.r.data(), W, j.rshift, j.relu, int32_t(resRange.lo), int32_t(resRange.hi));
            storeIntRow(j.res0, mem, n, c, h, W, nb.r.data());
            continue;
          }
        }
        ib.sized(W), ftmp.resize(W);
        loadRow(j.a, mem, an, ac, ah, am.w == 0, W, ib.a.data());
        if (j.arity.b) loadRow(j.b, mem, bn, bc, bh, bm.w == 0, W, ib.b.data());
        if (j.arity.c) loadRow(j.c, mem, n, c, h, false, W, ib.c.data());
        if (j.arity.d) loadRow(j.d, mem, n, c, h, false, W, ib.d.data());
        if (readsOld) loadRow(j.res0, mem, n, c, h, false, W, ib.old.data());
        bool wrap = intRowOp(j, W, ib.a.data(), ib.b.data(), ib.c.data(), ib.d.data(), ib.old.data(),
                             ib.r.data(), ib.r1.data());
        if (j.hasRes1) writeIntRow(j.res1, mem, n, c, h, W, ib.r1.data(), 0, false, ftmp);
        if (wrap)
          storeIntRow(j.res0, mem, n, c, h, W, ib.r.data());
        else
          writeIntRow(j.res0, mem, n, c, h, W, ib.r.data(), j.rshift, j.relu, ftmp);
      }
}

Status execElementwise(const HwConfig &cfg, LocalMemory &mem, const Elementwise &s, TiuTask task) {
  ElementwiseJob j;
  j.eu = s.eu;
  j.arity = arityOf(s.eu, task);
  j.relu = s.relu, j.rshift = s.rshift, j.logicalShift = s.logicalShift;
  const std::string_view cls = tiuTaskName(task);
  if (task == TiuTask::MdScalar && !s.opd1.isConst)
    return makeError("opt_opd1_const = 0: md_scalar needs a constant opd1");
  TRY_RESOLVE(res0, resolveLocal(cfg, s.res0, "res0"));
  j.res0 = res0;
  TPU_RETURN_IF_ERROR(checkWork(cfg, res0.shape.count(), s.eu == EuOp::Taylor ? s.opd1.shape.w : 1, "res0"));
  const Shape4 S = res0.shape;
  Shape4 aShape = S, bShape = S;
  if (task == TiuTask::VecCorr) {
    aShape = {S.n, S.c, S.h, 1}, bShape = {1, 1, 1, S.w};
    j.aMask = {1, 1, 1, 0}, j.bMask = {0, 0, 0, 1};
  }
  TRY_RESOLVE(a, resolveLocal(cfg, s.opd0, aShape, "opd0"));
  j.a = a;
  std::vector<std::pair<const LocalTensor *, const char *>> domainOps{{&j.a, "opt_opd0_prec"}};
  if (s.eu == EuOp::Taylor) {
    if (s.opd1.isConst) return makeError("opt_opd1_const = 1: taylor reads a coefficient table from opd1");
    j.taylorTerms = s.opd1.shape.w;
    TRY_RESOLVE(b, resolveLocal(cfg, s.opd1, Shape4{1, S.c, 1, s.opd1.shape.w}, "opd1"));
    if (!b.isFloat()) return makeError("opt_opd1_prec = ", precName(b.prec), ": taylor coefficients are fp32");
    j.b = b;
  } else if (j.arity.b) {
    TRY_RESOLVE(b, resolveLocal(cfg, s.opd1, bShape, "opd1"));
    j.b = b;
    domainOps.push_back({&j.b, "opt_opd1_prec"});
  }
  if (j.arity.c) {
    TRY_RESOLVE(c, resolveLocal(cfg, s.opd2, S, "opd2"));
    j.c = c;
    domainOps.push_back({&j.c, "opt_opd2_prec"});
  }
  if (j.arity.d) {
    LocalOperand d = s.opd2;
    d.isConst = s.opd3Const;
    (d.isConst ? d.constValue : d.addr) = s.opd3Addr;
    TRY_RESOLVE(dt, resolveLocal(cfg, d, S, "opd3"));
    j.d = dt;
    domainOps.push_back({&j.d, "opt_opd2_prec (opd3)"});
  }
  // Conversions change domain; everything else computes in the inputs' domain.
  bool isFloat = j.a.isFloat();
  for (const auto &[t, field] : domainOps)
    if (t->isFloat() != isFloat)
      return makeError(cls, ".", euOpName(s.eu), ": ", field, " = ", precName(t->prec),
                       " mixes fp32 and integer inputs (opt_opd0_prec = ", precName(j.a.prec), ")");
  if (s.eu != EuOp::Copy && s.eu != EuOp::Fp32ToInt && s.eu != EuOp::Fp32Normalize &&
      res0.isFloat() != isFloat)
    return makeError(cls, ".", euOpName(s.eu), ": opt_res0_prec = ", precName(res0.prec),
                     " but the inputs are ", isFloat ? "fp32" : "integer");
  if (needsFloat(s.eu) && !isFloat)
    return makeError(cls, ".", euOpName(s.eu), " needs fp32 inputs (opt_opd0_prec = ", precName(j.a.prec), ")");
  if (needsInt(s.eu) && isFloat)
    return makeError(cls, ".", euOpName(s.eu), " needs integer inputs (opt_opd0_prec = fp32)");
  if ((s.eu == EuOp::Fp32ToInt || s.eu == EuOp::Fp32Normalize) && res0.isFloat())
    return makeError(cls, ".", euOpName(s.eu), " writes an integer (opt_res0_prec = fp32)");
  j.isFloat = isFloat;
  if (s.eu == EuOp::CmpSelect) {
    LocalOperand r1 = s.res0;
    r1.addr = s.res1Addr;
    TRY_RESOLVE(res1, resolveLocal(cfg, r1, "res1"));
    j.res1 = res1;
    j.hasRes1 = true;
  }
  runElementwise(j, mem);
  return Status::ok();
}

// ---------------------------------------------------------------------------
// Reductions, table lookup, rearrangement.

Status execMdSum(const HwConfig &cfg, LocalMemory &mem, const MdSum &s) {
  TRY_RESOLVE(in, resolveLocal(cfg, s.input, "opd0"));
  TRY_RESOLVE(out, resolveLocal(cfg, s.output, "res0"));
  if (out.shape.n != in.shape.n || out.shape.c != in.shape.c)
    return makeError("res0 shape ", shapeText(out.shape), " must keep opd0's n and c ", shapeText(in.shape));
  if (out.shape.h != 1 && out.shape.h != in.shape.h)
    return makeError("res0_h = ", out.shape.h, " must be 1 or opd0_h = ", in.shape.h);
  if (out.shape.w != 1 && out.shape.w != in.shape.w)
    return makeError("res0_w = ", out.shape.w, " must be 1 or opd0_w = ", in.shape.w);
  TPU_RETURN_IF_ERROR(checkWork(cfg, out.shape.count(), in.shape.count() / out.shape.count(), "res0"));
  bool isFloat = false;
  TPU_RETURN_IF_ERROR(sameDomain({{&in, "opt_opd0_prec"}, {&out, "opt_res0_prec"}}, isFloat));
  const bool sumH = out.shape.h == 1, sumW = out.shape.w == 1;
  for (uint32_t n = 0; n < out.shape.n; ++n)
    for (uint32_t c = 0; c < out.shape.c; ++c)
      for (uint32_t oh = 0; oh < out.shape.h; ++oh)
        for (uint32_t ow = 0; ow < out.shape.w; ++ow) {
          uint32_t h0 = sumH ? 0 : oh, h1 = sumH ? in.shape.h : oh + 1;
          uint32_t w0 = sumW ? 0 : ow, w1 = sumW ? in.shape.w : ow + 1;
          if (isFloat) {
            float acc = 0.0f; // h-major, ascending
            for (uint32_t h = h0; h < h1; ++h)
              for (uint32_t w = w0; w < w1; ++w) acc += in.loadFloat(mem, n, c, h, w);
            writeFloat(mem, out, n, c, oh, ow, acc, s.relu);
          } else {
            int64_t acc = 0;
            for (uint32_t h = h0; h < h1; ++h)
              for (uint32_t w = w0; w < w1; ++w) acc = satAdd(acc, in.loadInt(mem, n, c, h, w));
            writeInt(mem, out, n, c, oh, ow, acc, s.rshift, s.relu);
          }
        }
  return Status::ok();
}

Status execLut(const HwConfig &cfg, LocalMemory &mem, const Lut &s) {
  TRY_RESOLVE(out, resolveLocal(cfg, s.output, "res0"));
  TPU_RETURN_IF_ERROR(checkWork(cfg, out.shape.count(), 1, "res0"));
  TRY_RESOLVE(idx, resolveLocal(cfg, s.index, out.shape, "opd0"));
  if (idx.prec != Prec::Int8 || idx.isFloat())
    return makeError("opt_opd0_prec = ", precName(idx.prec), ": lut indices are 8-bit");
  if (s.table.isConst) return makeError("opt_opd1_const = 1: the lut table must be in local memory");
  TRY_RESOLVE(table, resolveLocal(cfg, s.table, Shape4{1, out.shape.c, 1, 256}, "opd1"));
  const Shape4 &S = out.shape;
  for (uint32_t n = 0; n < S.n; ++n)
    for (uint32_t c = 0; c < S.c; ++c)
      for (uint32_t h = 0; h < S.h; ++h)
        for (uint32_t w = 0; w < S.w; ++w) {
          uint32_t i = uint32_t(idx.loadInt(mem, n, c, h, w)) & 0xff;
          if (table.isFloat())
            writeFloat(mem, out, n, c, h, w, table.loadFloat(mem, 0, c, 0, i), false);
          else
            writeInt(mem, out, n, c, h, w, table.loadInt(mem, 0, c, 0, i), 0, false);
        }
  return Status::ok();
}

// res0 <- opd0 element by element in (n, c, h, w) order; shapes may differ
// when the element counts agree. Values convert as ar copy does.
Status execLma(const HwConfig &cfg, LocalMemory &mem, const Lma &s) {
  TRY_RESOLVE(in, resolveLocal(cfg, s.input, "opd0"));
  TRY_RESOLVE(out, resolveLocal(cfg, s.output, "res0"));
  TPU_RETURN_IF_ERROR(checkWork(cfg, out.shape.count(), 1, "res0"));
  if (!in.isConst && in.shape.count() != out.shape.count())
    return makeError("res0 shape ", shapeText(out.shape), " and opd0 shape ", shapeText(in.shape),
                     " hold different element counts");
  const Shape4 &I = in.shape, &S = out.shape;
  uint32_t n = 0, c = 0, h = 0, w = 0; // read position
  for (uint32_t on = 0; on < S.n; ++on)
    for (uint32_t oc = 0; oc < S.c; ++oc)
      for (uint32_t oh = 0; oh < S.h; ++oh)
        for (uint32_t ow = 0; ow < S.w; ++ow) {
          if (in.isFloat())
            writeFloat(mem, out, on, oc, oh, ow, in.loadFloat(mem, n, c, h, w), false);
          else
            writeInt(mem, out, on, oc, oh, ow, in.loadInt(mem, n, c, h, w), 0, false);
          if (++w == I.w) {
            w = 0;
            if (++h == I.h) {
              h = 0;
              if (++c == I.c) c = 0, ++n;
            }
          }
        }
  return Status::ok();
}

} // namespace

HostIsa hostIsa() {
  static const HostIsa detected = detectHostIsa();
  return std::min(detected, HostIsa(gHostIsaLimit.load()));
}

void limitHostIsa(HostIsa limit) { gHostIsaLimit.store(int(limit)); }

Status executeTiu(const HwConfig &cfg, LocalMemory &mem, const TiuCommand &cmd) {
  if (mem.lanes() != cfg.npuLanes || mem.laneBytes() != cfg.lmemBytesPerLane)
    return makeError("local memory geometry ", mem.lanes(), "x", mem.laneBytes(),
                     " does not match the hardware config ", cfg.npuLanes, "x", cfg.lmemBytesPerLane);
  TPU_RETURN_IF_ERROR(validateTiu(cmd));
  const TiuTask task = cmd.task();
  Status st = std::visit(
      [&](const auto &s) -> Status {
        using T = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<T, Conv>) return execConv(cfg, mem, s);
        else if constexpr (std::is_same_v<T, Pord>) return execPord(cfg, mem, s);
        else if constexpr (std::is_same_v<T, MatMul>) return execMatMul(cfg, mem, s);
        else if constexpr (std::is_same_v<T, MatMul2>) return execMatMul2(cfg, mem, s);
        else if constexpr (std::is_same_v<T, MdSum>) return execMdSum(cfg, mem, s);
        else if constexpr (std::is_same_v<T, Lut>) return execLut(cfg, mem, s);
        else if constexpr (std::is_same_v<T, Lma>) return execLma(cfg, mem, s);
        else if constexpr (std::is_same_v<T, ConvCorr> || std::is_same_v<T, Decompress>)
          return makeError("tsk_typ = ", unsigned(task), ": the semantics library does not execute ",
                           tiuTaskName(task), " (docs/isa.md)");
        else return execElementwise(cfg, mem, s, task);
      },
      cmd.op);
  if (!st.isOk()) st.prefix(tiuMnemonic(task, cmd.eu()) + " (cmd_id_tpu " + std::to_string(cmd.cmdIdTpu) + ")");
  return st;
}

} // namespace tpu::sim
