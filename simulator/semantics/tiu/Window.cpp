// Window commands: conv (convolution, dilation and input insertion, kernel
// rotation for transposed convolutions) and pord (depthwise convolution,
// average and max pooling), on one engine: the padded input split into its
// stride phases, every kernel tap a contiguous run (runWindow).
#include "simulator/semantics/tiu/TiuClasses.h"
#include "simulator/semantics/tiu/TiuSupport.h"

#include "simulator/semantics/ByteRuns.h"
#include "simulator/semantics/Scratch.h"
#include "simulator/semantics/TiuExec.h"
#include "support/Parallel.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <vector>

namespace tpu::sim::tiu {

using namespace isa;

namespace {

enum class Reduce { MulAdd, Max };

struct WindowJob {
  const char *cls;
  LocalTensor in, kernel, bias, out;
  WindowAxis rows, cols; // geometry: pads, insertion, kernel size and dilation, stride
  bool hasBias = false, depthwise = false, resAdd = false, relu = false, rotate = false;
  Reduce reduce = Reduce::MulAdd;
  uint32_t rshift = 0;
};

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

// One window command on the phase planes, in named steps: the geometry and
// scratch buffers (the constructor), the kernels in the layouts the
// accumulators read (prepareKernels), then per image the planes
// (fillPlanes), the int8 tap groups (packTapGroups), the sums of the blocks
// of four output channels (accumulateBlocks) and of the other channels
// (accumulateOtherChannels), and the write-back (writeOutput).
template <class T> class WindowRun {
public:
  WindowRun(const WindowJob &job, LocalMemory &memory);

  void run() {
    prepareKernels();
    for (uint32_t n = 0; n < is.n; ++n) {
      fillPlanes(n);
      packTapGroups();
      accumulateBlocks();
      accumulateOtherChannels();
      writeOutput(n);
    }
  }

private:
  // The padded input of each channel is split into its sH x sW stride
  // phases: phase (py, px) holds the padded rows py, py + sH, ... and columns
  // px, px + sW, ... Output (oy, ox) reads tap (y, x) at padded
  // (oy*sH + y*dilH, ox*sW + x*dilW), which is element (oy + y*dilH/sH,
  // ox + x*dilW/sW) of phase (y*dilH % sH, x*dilW % sW). So every tap is one
  // contiguous run over the output's rows laid out Wq wide; the columns past
  // OW are computed and ignored (one spare row at the end covers the runs
  // that start late in the last phase).
  size_t planeIndex(uint32_t c, uint64_t yy, uint64_t xx) const {
    return size_t(c) * chanSize + ((yy % sH) * sW + xx % sW) * phaseSize + (yy / sH) * Wq + xx / sW;
  }
  size_t tapIndex(uint32_t c, uint32_t y, uint32_t x) const {
    return planeIndex(c, uint64_t(y) * dilH, uint64_t(x) * dilW);
  }
  // Output channel o's taps, dense [ic][kh][kw] (depthwise: [kh][kw]), rotated if asked.
  void loadKernel(uint32_t o, T *dst) const;
  void prepareKernels();
  void packGroupWeights();
  template <class P, class Load> void fillPlaneBuffer(P *pl, P pad, Load loadInto);
  void fillPlanes(uint32_t n);
  void packTapGroups();
  void accumulateBlocks();
  void accumulateOtherChannels();
  void writeOutput(uint32_t n);

  const WindowJob &j;
  LocalMemory &mem;
  const Shape4 &is, &os;
  uint32_t IC, OC, OH, OW, KH, KW, padT, padB, padL, padR, insH, insW, sH, sW, dilH, dilW;
  uint64_t Hp, Wp, Hq, Wq;
  T padValue;
  uint32_t kIc;
  size_t taps, nStep;
  bool denseKernel;
  size_t phaseSize, chanSize, len, planesSize;
  uint32_t blocks;
  size_t accSize;
  std::vector<T> accOwn;
  T *acc;
  HostIsa hostSimd;
  int G;
  uint32_t flip;
  size_t groupCount, groupsSize;
  bool useGroups;
  std::vector<int32_t> groupsOwn;
  int32_t *groups;
  bool bytePlanes;
  std::vector<T> planesOwn;
  std::vector<uint8_t> bytePlanesOwn;
  T *planes;
  uint8_t *planes8;
  bool bytesInPlace;
  std::vector<int32_t> kgOwn, corr, tails;
  int32_t *kg;
  std::vector<QuadWeights> quadWeights;
  uint32_t kernFirst;
  std::vector<T> kern, k4;
  std::vector<size_t> tapOff;
  bool narrowIntOut;
  IntRange outRange;
};

template <class T>
WindowRun<T>::WindowRun(const WindowJob &job, LocalMemory &memory)
    : j(job), mem(memory), is(job.in.shape), os(job.out.shape) {
  IC = is.c, OC = os.c, OH = os.h, OW = os.w, KH = j.rows.kernel, KW = j.cols.kernel;
  padT = j.rows.padBefore, padB = j.rows.padAfter, padL = j.cols.padBefore, padR = j.cols.padAfter;
  insH = j.rows.inputIns, insW = j.cols.inputIns;
  sH = phaseStride(j.rows, OH), sW = phaseStride(j.cols, OW);
  dilH = j.rows.kernelIns + 1, dilW = j.cols.kernelIns + 1;
  Hp = j.rows.paddedInput(), Wp = j.cols.paddedInput();
  padValue = j.reduce == Reduce::Max ? std::numeric_limits<T>::lowest() : T(0);

  kIc = j.depthwise ? 1 : IC;
  taps = size_t(kIc) * KH * KW;
  nStep = size_t(j.kernel.stride.n) * j.kernel.elemBytes;
  // A kernel stored dense [ic][kh][kw] in each lane is that order already.
  const Strides4 &ks = j.kernel.stride;
  denseKernel = !j.depthwise && !j.rotate && !j.kernel.isConst && ks.w == 1 && ks.h == KW && ks.n == uint64_t(KH) * KW;

  Hq = (Hp + sH - 1) / sH, Wq = (Wp + sW - 1) / sW;
  phaseSize = size_t(Hq) * Wq, chanSize = phaseSize * sH * sW, len = size_t(OH) * Wq;
  planesSize = size_t(IC) * chanSize + Wq + kConvBlockPad;
  blocks = !j.depthwise && j.reduce == Reduce::MulAdd ? OC / 4 : 0;
  accSize = size_t(OC) * len;
  acc = scratch<T, 1>(accSize, accOwn);
  // int8 x int8 convolutions (exact in int32) use grouped taps: in bytes
  // (convQuads4Vnni) when the weights are signed and the host has AVX-512
  // VNNI, else in 16-bit halves (convPairs4Avx2 or its scalar twin).
  hostSimd = hostIsa();
  const bool signedWeights = j.kernel.prec == Prec::Int8 && j.kernel.isSigned && !j.kernel.isConst;
  G = hostSimd == HostIsa::Avx512Vnni && signedWeights && j.in.prec == Prec::Int8 ? 4 : 2;
  flip = j.in.isSigned ? 0x80 : 0;
  groupCount = (taps + G - 1) / G, groupsSize = groupCount * len + kConvBlockPad;
  useGroups = std::is_same_v<T, int32_t> && blocks > 0 && groupsSize * sizeof(int32_t) <= kMaxTapGroupBytes;
  groups = useGroups ? scratch<int32_t, 2>(groupsSize, groupsOwn) : nullptr;
  // When byte groups serve every output channel, the planes hold the input
  // bytes as the groups take them (signed ones plus 128) instead of widened values.
  bytePlanes = useGroups && G == 4 && blocks * 4 == OC && !j.in.isConst;
  planes = bytePlanes ? nullptr : scratch<T, 0>(planesSize, planesOwn);
  planes8 = bytePlanes ? scratch<uint8_t, 4>(planesSize, bytePlanesOwn) : nullptr;
  // Their weights: a dense int8 kernel's bytes are G = 4 groups already
  // (read in place, the last partial group copied to tails); otherwise packed
  // [block][group][4] into kg. corr holds the starting sums.
  bytesInPlace = G == 4 && denseKernel;
  corr.assign(useGroups ? size_t(blocks) * 4 : 0, 0);
  tails.assign(bytesInPlace && taps % 4 ? size_t(blocks) * 4 : 0, 0);
  kg = useGroups && !bytesInPlace ? scratch<int32_t, 3>(size_t(blocks) * 4 * groupCount, kgOwn) : nullptr;
  quadWeights.resize(useGroups && G == 4 ? blocks : 0);
  kernFirst = useGroups ? blocks * 4 : 0;
  // int32 sums to an int8/int16 result are written back in 32 bits (requantizeRow32).
  narrowIntOut = std::is_same_v<T, int32_t> && !j.out.isFloat() && j.out.elemBytes <= 2;
  outRange = intRange(j.out.prec, j.out.isSigned);
}

template <class T> void WindowRun<T>::loadKernel(uint32_t o, T *dst) const {
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
}

// The kernels in the layouts the accumulators read: the int8 groups' weights,
// the taps of the other channels (kern), the blocks' taps (k4) and where
// each tap starts in the planes (tapOff).
template <class T> void WindowRun<T>::prepareKernels() {
  packGroupWeights();
  // The taps of the channels the groups leave, kern[(o - kernFirst) * taps + t].
  kern.assign(j.reduce == Reduce::MulAdd ? size_t(OC - kernFirst) * taps : 0, T(0));
  forEachItem(j.reduce == Reduce::MulAdd ? OC - kernFirst : 0, taps,
              [&](uint32_t i) { loadKernel(kernFirst + i, &kern[size_t(i) * taps]); });
  // The other blocks of four output channels (convBlock4) and their taps, [block][tap][4].
  k4.assign(useGroups ? 0 : size_t(blocks) * 4 * taps, T(0));
  for (uint32_t blk = 0; blk < (useGroups ? 0 : blocks); ++blk)
    for (size_t t = 0; t < taps; ++t)
      for (uint32_t b = 0; b < 4; ++b) k4[(size_t(blk) * taps + t) * 4 + b] = kern[size_t(blk * 4 + b) * taps + t];
  // Where each tap (ic, kh, kw) of a convolution starts in the planes.
  tapOff.assign(j.depthwise ? 0 : taps, 0);
  for (size_t t = 0; t < tapOff.size(); ++t)
    tapOff[t] = tapIndex(uint32_t(t / (KH * KW)), uint32_t(t / KW % KH), uint32_t(t % KW));
}

// The weights of the int8 tap groups, per block of four output channels, and
// their starting sums.
template <class T> void WindowRun<T>::packGroupWeights() {
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
}

// Row y of channel c into the plane buffer pl, through loadInto(c, y, row).
// Every element of the phases is input data unless there is padding,
// insertion or a phase longer than the padded input; then all start as
// pad. The spare tail is read by runs whose results are dropped.
template <class T> template <class P, class Load> void WindowRun<T>::fillPlaneBuffer(P *pl, P pad, Load loadInto) {
  const bool dense = !(padT | padB | padL | padR | insH | insW) && Hq * sH == Hp && Wq * sW == Wp;
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
            for (uint32_t x = x0; x < is.w; x += sW) *dst++ = row[x];
          }
          continue;
        }
        // Column x goes to padded column padL + x*(insW+1): phase and index
        // advance without a division per element.
        uint64_t px = padL % sW, qx = padL / sW;
        for (uint32_t x = 0; x < is.w; ++x) {
          rowBase[px * phaseSize + qx] = row[x];
          for (px += insW + 1; px >= sW; px -= sW) ++qx;
        }
      }
  });
}

// Image n into the planes (as bytes for the byte groups, else widened to T).
template <class T> void WindowRun<T>::fillPlanes(uint32_t n) {
  if (bytePlanes)
    fillPlaneBuffer(planes8, uint8_t(uint32_t(padValue) ^ flip), [&](uint32_t c, uint32_t y, uint8_t *dst) {
      flipBytes(j.in.ptr(mem, n, c, y, 0), size_t(j.in.stride.w), is.w, uint8_t(flip), dst);
    });
  else
    fillPlaneBuffer(planes, padValue,
                    [&](uint32_t c, uint32_t y, T *dst) { loadRow(j.in, mem, n, c, y, false, is.w, dst); });
  // Inserted zeros are zeros even for max pooling; padding is the pad value.
  if (j.reduce == Reduce::Max && (insH || insW))
    for (uint32_t c = 0; c < IC; ++c)
      for (uint64_t y = padT; y < Hp - padB; ++y)
        for (uint64_t x = padL; x < Wp - padR; ++x)
          if ((y - padT) % (insH + 1) || (x - padL) % (insW + 1)) planes[planeIndex(c, y, x)] = T(0);

  // convBlock4 stores its blocks whole; the other channels accumulate.
  std::fill(acc + size_t(blocks) * 4 * len, acc + accSize, j.reduce == Reduce::Max ? padValue : T(0));
}

// The int8 tap groups of the planes: G taps' runs interleaved per element.
// Per output element the taps are summed in (ic, kh, kw) order: the fp32
// result depends on it (docs/isa.md).
template <class T> void WindowRun<T>::packTapGroups() {
  if constexpr (std::is_same_v<T, int32_t>)
    if (useGroups) {
      forEachItem(groupCount, len, [&](uint32_t g) {
        const size_t *off[4];
        for (int i = 0; i < G; ++i) off[i] = &tapOff[std::min(size_t(G) * g + i, taps - 1)];
        if (bytePlanes) {
          const uint8_t *runs[4] = {planes8 + *off[0], planes8 + *off[1], planes8 + *off[2], planes8 + *off[3]};
          return interleaveByteRuns(reinterpret_cast<uint8_t *>(groups + size_t(g) * len), runs, len);
        }
        const int32_t *runs[4];
        for (int i = 0; i < G; ++i) runs[i] = planes + *off[i];
        (G == 4 ? packTapGroup<4> : packTapGroup<2>)(groups + size_t(g) * len, runs, len, flip);
      });
      std::fill(groups + groupCount * len, groups + groupsSize, 0);
    }
}

// Column tiles of the output, each run for all blocks while its tap runs
// are in cache; the (tile, block) items go over the host threads, and
// every element gets the same operations whichever thread computes it.
template <class T> void WindowRun<T>::accumulateBlocks() {
  const size_t runs = useGroups ? groupCount : taps;
  const size_t tileCols = std::max<size_t>(1, kConvTileBytes / (runs * sizeof(T) * kConvColumnStep)) * kConvColumnStep;
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
        return (hostSimd >= HostIsa::Avx2 ? convPairs4Avx2 : convPairs4Scalar)(a, len, eBegin, eEnd, groups, groupCount,
                                                                               k);
      }
    convBlock4(a, len, eBegin, eEnd, planes, tapOff.data(), &k4[size_t(blk) * 4 * taps], taps);
  });
}

// The channels outside the blocks (depthwise, pooling, the last OC % 4), one tap run at a time.
template <class T> void WindowRun<T>::accumulateOtherChannels() {
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
}

// The sums plus bias (and the old output for resAdd) written to image n's output.
template <class T> void WindowRun<T>::writeOutput(uint32_t n) {
  parallelFor(OC, grainFor(size_t(OH) * OW), [&](int64_t ocBegin, int64_t ocEnd) {
    std::vector<T> row(j.resAdd ? OW : 0);
    std::vector<int64_t> intRow(OW), intTmp(OW);
    std::vector<int32_t> row32(narrowIntOut ? OW : 0);
    std::vector<float> floatRow(OW), floatTmp(OW);
    for (uint32_t oc = uint32_t(ocBegin); oc < ocEnd; ++oc) {
      T b = T(0);
      if (j.hasBias) loadRow(j.bias, mem, 0, oc, 0, false, 1, &b);
      for (uint32_t oy = 0; oy < OH; ++oy) {
        const T *a = &acc[size_t(oc) * len + size_t(oy) * Wq];
        if (j.resAdd) loadRow(j.out, mem, n, oc, oy, false, OW, row.data());
        if constexpr (std::is_same_v<T, int32_t>)
          if (narrowIntOut) {
            const size_t step = size_t(j.out.stride.w) * j.out.elemBytes;
            if (step == j.out.elemBytes) { // contiguous: one pass
              (step == 1 ? requantizeStoreRow<uint8_t>
                         : requantizeStoreRow<uint16_t>)(j.out.ptr(mem, n, oc, oy, 0), a, b,
                                                         j.resAdd ? row.data() : nullptr, OW, j.rshift, j.relu,
                                                         int32_t(outRange.lo), int32_t(outRange.hi));
              continue;
            }
            for (uint32_t ox = 0; ox < OW; ++ox) row32[ox] = a[ox] + b + (j.resAdd ? row[ox] : 0);
            requantizeRow32(row32.data(), OW, j.rshift, j.relu, int32_t(outRange.lo), int32_t(outRange.hi));
            storeIntRow(j.out, mem, n, oc, oy, OW, row32.data());
            continue;
          }
        for (uint32_t ox = 0; ox < OW; ++ox) {
          T v = a[ox];
          if (j.hasBias) v += b;
          if (j.resAdd) v += row[ox];
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

template <class T> void runWindow(const WindowJob &j, LocalMemory &mem) { WindowRun<T>(j, mem).run(); }

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

} // namespace

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

} // namespace tpu::sim::tiu

namespace tpu::sim {

HostIsa hostIsa() {
  static const HostIsa detected = tiu::detectHostIsa();
  return std::min(detected, HostIsa(tiu::gHostIsaLimit.load()));
}

void limitHostIsa(HostIsa limit) { tiu::gHostIsaLimit.store(int(limit)); }

} // namespace tpu::sim
