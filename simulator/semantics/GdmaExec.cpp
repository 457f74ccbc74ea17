#include "simulator/semantics/GdmaExec.h"

#include "arith/IntArith.h"
#include "memory/GdmaAccess.h"
#include "simulator/semantics/ByteRuns.h"
#include "simulator/semantics/Scratch.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include <immintrin.h>

namespace tpu::sim {

using isa::GdmaCommand;
using isa::GdmaFormat;
using isa::GdmaSpecialFunc;

namespace {

// Copies `count` elements of B bytes, `srcStep` / `dstStep` bytes apart.
template <uint32_t B>
void copyElementsOf(uint8_t *dst, uint64_t dstStep, const uint8_t *src, uint64_t srcStep, uint32_t count) {
  for (uint32_t w = 0; w < count; ++w) std::memcpy(dst + w * dstStep, src + w * srcStep, B);
}
// The bytes of an int8 4N layout's items are every fourth byte: sixteen
// items at a time in SSE2 (x86-64's baseline), the rest one by one. Whole
// words are read (and the scatter rewrites them with their other three
// bytes unchanged) except the last item's, which may end past the buffer.
void gatherEveryFourthByte(uint8_t *dst, const uint8_t *src, uint32_t count) {
  const __m128i low = _mm_set1_epi32(0xFF);
  uint32_t w = 0;
  for (; w + 16 < count; w += 16) { // not the last item's word
    __m128i v[4];
    for (int i = 0; i < 4; ++i)
      v[i] = _mm_and_si128(_mm_loadu_si128(reinterpret_cast<const __m128i *>(src + 4 * w + 16 * i)), low);
    const __m128i lo = _mm_packs_epi32(v[0], v[1]), hi = _mm_packs_epi32(v[2], v[3]); // 0..255 stay exact
    _mm_storeu_si128(reinterpret_cast<__m128i *>(dst + w), _mm_packus_epi16(lo, hi));
  }
  for (; w < count; ++w) dst[w] = src[4 * w];
}
void scatterEveryFourthByte(uint8_t *dst, const uint8_t *src, uint32_t count) {
  const __m128i high = _mm_set1_epi32(int32_t(0xFFFFFF00u)), zero = _mm_setzero_si128();
  uint32_t w = 0;
  for (; w + 16 < count; w += 16) { // not the last item's word
    const __m128i items = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + w));
    const __m128i half[2] = {_mm_unpacklo_epi8(items, zero), _mm_unpackhi_epi8(items, zero)};
    for (int i = 0; i < 4; ++i) {
      __m128i *p = reinterpret_cast<__m128i *>(dst + 4 * w + 16 * i);
      const __m128i words = i % 2 ? _mm_unpackhi_epi16(half[i / 2], zero) : _mm_unpacklo_epi16(half[i / 2], zero);
      _mm_storeu_si128(p, _mm_or_si128(_mm_and_si128(_mm_loadu_si128(p), high), words));
    }
  }
  for (; w < count; ++w) dst[4 * w] = src[w];
}
void copyElements(uint8_t *dst, uint64_t dstStep, const uint8_t *src, uint64_t srcStep, uint32_t count,
                  uint32_t B) {
  if (B == 1 && srcStep == 4 && dstStep == 1) return gatherEveryFourthByte(dst, src, count);
  if (B == 1 && srcStep == 1 && dstStep == 4) return scatterEveryFourthByte(dst, src, count);
  switch (B) {
  case 1: return copyElementsOf<1>(dst, dstStep, src, srcStep, count);
  case 2: return copyElementsOf<2>(dst, dstStep, src, srcStep, count);
  default: return copyElementsOf<4>(dst, dstStep, src, srcStep, count);
  }
}

// No two elements of an H x W plane (byte steps per row and per element)
// share a byte, rows or columns apart: then the order its elements are
// written in does not matter.
bool planeSelfDisjoint(uint64_t hStep, uint64_t wStep, uint32_t H, uint32_t W, uint32_t B) {
  const bool byRows = (W == 1 || wStep >= B) && (H == 1 || hStep >= (W - 1) * wStep + B);
  const bool byColumns = (H == 1 || hStep >= B) && (W == 1 || wStep >= (H - 1) * hStep + B);
  return byRows || byColumns;
}

// Staging limits: a strided span or a plane read at once, a window over a
// global side's whole range.
constexpr uint64_t kMaxSpanBytes = 1 << 20, kMaxWindowBytes = 256 << 20;
// Is a global range of `extent` bytes holding `payload` bytes of elements
// worth reading (and writing back) whole?
bool worthWindow(uint64_t extent, uint64_t payload) {
  return extent <= kMaxWindowBytes && extent <= std::max(4 * payload, kMaxSpanBytes);
}

// Reads every element of `v` into `buf` (n,c,h,w order), or writes `buf` to
// `v` skipping lanes the mask disables. Rows with unit w stride move as one
// block. A global view whose whole address range is not much larger than
// its data (short 4N rows, channel strides) is read once into a window,
// moved row by row there and, for a write, written back once; otherwise
// rows go to global memory one by one (a strided read fetches the row's
// span once when it is small).
template <bool kWrite>
Status transferRows(const GdmaView &v, LocalMemory &lmem,
                    GlobalMemory &gmem, uint8_t *buf, uint64_t laneMask) {
  const uint32_t W = v.shape[3], B = v.bytes;
  const uint64_t ws = v.stride[3], rowBytes = uint64_t(W) * B;
  const uint64_t spanBytes = ((W - 1) * ws + 1) * B;
  std::vector<uint8_t> spanOwn, windowOwn;
  uint8_t *window = nullptr;
  uint64_t windowBytes = 0;
  if (!v.local) {
    const uint64_t extent = v.rowOffset(v.shape[0] - 1, v.shape[1] - 1, v.shape[2] - 1) + spanBytes;
    if (worthWindow(extent, v.elements() * B)) {
      window = scratch<uint8_t, 2>(extent, windowOwn), windowBytes = extent;
      TPU_RETURN_IF_ERROR(gmem.read(v.addr, window, extent));
    }
  }
  const uint64_t hStep = v.local ? uint64_t(v.lmem.stride.h) * v.lmem.elemBytes : v.stride[2] * B;
  for (uint32_t n = 0; n < v.shape[0]; ++n)
    for (uint32_t c = 0; c < v.shape[1]; ++c) {
      const uint64_t planeOffset = v.rowOffset(n, c, 0);
      uint8_t *plane = nullptr;
      if (v.local) {
        const uint32_t lane = v.lmem.laneOf(c);
        if (kWrite && !laneEnabled(laneMask, lane)) {
          buf += rowBytes * v.shape[2];
          continue;
        }
        plane = lmem.lane(lane) + planeOffset;
      } else if (window) {
        plane = window + planeOffset;
      }
      const uint32_t H = v.shape[2];
      if (plane && ws == 1 && hStep == rowBytes) { // the plane's rows are one run
        kWrite ? std::memcpy(plane, buf, rowBytes * H) : std::memcpy(buf, plane, rowBytes * H);
        buf += rowBytes * H;
        continue;
      }
      // Columns are the runs (a 4N word's items); written column by column
      // only if no two elements overlap.
      if (plane && ws != 1 && hStep == B && H > W && (!kWrite || planeSelfDisjoint(hStep, ws * B, H, W, B))) {
        for (uint32_t w = 0; w < W; ++w)
          kWrite ? copyElements(plane + w * ws * B, B, buf + w * B, rowBytes, H, B)
                 : copyElements(buf + w * B, rowBytes, plane + w * ws * B, B, H, B);
        buf += rowBytes * H;
        continue;
      }
      for (uint32_t h = 0; h < H; ++h, buf += rowBytes) {
        const uint64_t first = planeOffset + h * hStep;
        uint8_t *p = plane ? plane + h * hStep : nullptr;
        if (p) {
          if (ws == 1)
            kWrite ? std::memcpy(p, buf, rowBytes) : std::memcpy(buf, p, rowBytes);
          else if (kWrite)
            copyElements(p, ws * B, buf, B, W, B);
          else
            copyElements(buf, B, p, ws * B, W, B);
          continue;
        }
        const uint64_t addr = v.addr + first;
        if (ws == 1) {
          TPU_RETURN_IF_ERROR(kWrite ? gmem.write(addr, buf, rowBytes) : gmem.read(addr, buf, rowBytes));
        } else if (!kWrite && spanBytes <= kMaxSpanBytes) {
          uint8_t *span = scratch<uint8_t, 3>(spanBytes, spanOwn);
          TPU_RETURN_IF_ERROR(gmem.read(addr, span, spanBytes));
          copyElements(buf, B, span, ws * B, W, B);
        } else {
          for (uint32_t w = 0; w < W; ++w)
            TPU_RETURN_IF_ERROR(kWrite ? gmem.write(addr + w * ws * B, buf + w * B, B)
                                       : gmem.read(addr + w * ws * B, buf + w * B, B));
        }
      }
    }
  if (kWrite && window) return gmem.write(v.addr, window, windowBytes);
  return Status::ok();
}

// Moves an H x W plane of B-byte elements between two strided layouts
// (byte steps per row and per element), the longer dimension innermost.
void movePlane(uint8_t *dst, uint64_t dH, uint64_t dW, const uint8_t *src, uint64_t sH, uint64_t sW, uint32_t H,
               uint32_t W, uint32_t B) {
  if (dW == B && sW == B) {
    if (dH == uint64_t(W) * B && sH == dH) return void(std::memcpy(dst, src, uint64_t(H) * W * B));
    for (uint32_t h = 0; h < H; ++h) std::memcpy(dst + h * dH, src + h * sH, uint64_t(W) * B);
    return;
  }
  if (B == 1 && W == 4 && dW == 1 && dH == 4 && sH == 1) { // four runs into whole 4N words
    const uint8_t *runs[4] = {src, src + sW, src + 2 * sW, src + 3 * sW};
    return interleaveByteRuns(dst, runs, H);
  }
  if (H > W)
    for (uint32_t w = 0; w < W; ++w) copyElements(dst + w * dW, dH, src + w * sW, sH, H, B);
  else
    for (uint32_t h = 0; h < H; ++h) copyElements(dst + h * dH, dW, src + h * sH, sW, W, B);
}

// One side of a plane-by-plane copy: where plane (n, c) starts and how its
// elements are laid out. A global side is reached either through a window
// (its whole range read once, and written back once for a destination) or
// plane by plane (a dense plane straight from or to its bytes, a sparse one
// through a buffer holding its extent).
struct PlaneSide {
  const GdmaView &v;
  uint64_t hStep, wStep, planeExtent;
  bool dense;
  PlaneSide(const GdmaView &view)
      : v(view), hStep(v.local ? uint64_t(v.lmem.stride.h) * v.lmem.elemBytes : v.stride[2] * v.bytes),
        wStep(v.stride[3] * v.bytes),
        planeExtent((v.shape[2] - 1) * hStep + (v.shape[3] - 1) * wStep + v.bytes),
        dense(wStep == v.bytes && hStep == uint64_t(v.shape[3]) * v.bytes) {}
  bool selfDisjoint() const { return planeSelfDisjoint(hStep, wStep, v.shape[2], v.shape[3], v.bytes); }
};

// S2L and L2S copies without a format change or reordering, when both sides
// have the same shape: each plane moves straight between local and global
// memory, without a staging buffer for the whole tensor. Returns false
// (having touched nothing) when a global plane is too sparse for that, or
// when destination elements overlap (the element path keeps their order).
Result<bool> copyByPlanes(const GdmaPlan &plan, LocalMemory &lmem, GlobalMemory &gmem, uint64_t laneMask) {
  const GdmaView &s = plan.src, &d = plan.dst;
  PlaneSide src(s), dst(d);
  if (!dst.selfDisjoint()) return false;
  const PlaneSide &global = s.local ? dst : src, &loc = s.local ? src : dst;
  const GdmaView &g = global.v, &l = loc.v;
  const uint64_t extent = g.rowOffset(g.shape[0] - 1, g.shape[1] - 1, 0) + global.planeExtent;
  const bool useWindow = !global.dense && worthWindow(extent, g.elements() * g.bytes);
  if (!global.dense && !useWindow && global.planeExtent > kMaxSpanBytes) return false;
  std::vector<uint8_t> windowOwn, planeOwn;
  uint8_t *window = nullptr;
  if (useWindow) {
    window = scratch<uint8_t, 2>(extent, windowOwn);
    TPU_RETURN_IF_ERROR(gmem.read(g.addr, window, extent));
  }
  uint8_t *buffer = useWindow ? nullptr : scratch<uint8_t, 3>(global.planeExtent, planeOwn);
  const uint32_t H = s.shape[2], W = s.shape[3], B = s.bytes;
  for (uint32_t n = 0; n < s.shape[0]; ++n)
    for (uint32_t c = 0; c < s.shape[1]; ++c) {
      const uint32_t lane = l.lmem.laneOf(c);
      if (d.local && !laneEnabled(laneMask, lane)) continue;
      uint8_t *local = lmem.lane(lane) + l.rowOffset(n, c, 0);
      const uint64_t addr = g.addr + g.rowOffset(n, c, 0);
      if (global.dense && loc.dense) { // one run on both sides
        TPU_RETURN_IF_ERROR(d.local ? gmem.read(addr, local, global.planeExtent)
                                    : gmem.write(addr, local, global.planeExtent));
        continue;
      }
      uint8_t *plane = window ? window + g.rowOffset(n, c, 0) : buffer;
      if (!window && (d.local || !global.dense)) // a source, or a destination whose gaps keep their bytes
        TPU_RETURN_IF_ERROR(gmem.read(addr, plane, global.planeExtent));
      if (d.local)
        movePlane(local, dst.hStep, dst.wStep, plane, src.hStep, src.wStep, H, W, B);
      else
        movePlane(plane, dst.hStep, dst.wStep, local, src.hStep, src.wStep, H, W, B);
      if (!window && !d.local) TPU_RETURN_IF_ERROR(gmem.write(addr, plane, global.planeExtent));
    }
  if (window && !d.local) TPU_RETURN_IF_ERROR(gmem.write(g.addr, window, extent));
  return true;
}

// Calls fn with a value of the C++ type that holds one element of format f.
template <typename Fn> void withElementType(GdmaFormat f, Fn &&fn) {
  switch (f) {
  case GdmaFormat::Fp32: fn(float{}); return;
  case GdmaFormat::Int16: fn(int16_t{}); return;
  case GdmaFormat::Uint8: fn(uint8_t{}); return;
  default: fn(int8_t{}); return; // Int8 (fp16 was rejected by planGdma)
  }
}

// Converts `count` elements (docs/isa.md: ints convert exactly to fp32, fp32
// rounds to ints with the shared rule, every integer result saturates).
template <typename T> constexpr IntRange rangeOf() {
  return {int64_t(std::numeric_limits<T>::min()), int64_t(std::numeric_limits<T>::max())};
}
template <typename From, typename To>
void convertElements(const uint8_t *in, uint8_t *out, uint64_t count) {
  for (uint64_t i = 0; i < count; ++i, in += sizeof(From), out += sizeof(To)) {
    From v;
    std::memcpy(&v, in, sizeof v);
    To r;
    if constexpr (std::is_same_v<To, float>) r = float(v);
    else if constexpr (std::is_same_v<From, float>) r = To(fp32ToInt(v, rangeOf<To>()));
    else r = To(saturate(int64_t(v), rangeOf<To>()));
    std::memcpy(out, &r, sizeof r);
  }
}

// The source element each destination element takes, for the functions that
// move elements by coordinates; -1 for a channel shifted in from outside.
int64_t sourceIndex(const GdmaCommand &cmd, const std::array<uint32_t, 4> &s, uint32_t n,
                    uint32_t c, uint32_t h, uint32_t w) {
  int64_t sn = n, sc = c, sh = h, sw = w;
  switch (cmd.specialFunc) {
  case GdmaSpecialFunc::Transpose: sn = c, sc = n; break;
  case GdmaSpecialFunc::CwTranspose: sc = w, sw = c; break;
  case GdmaSpecialFunc::LrnShift:
    sc = cmd.lrnShiftDir ? sc + cmd.lrnShiftNum : sc - int64_t(cmd.lrnShiftNum);
    if (sc < 0 || sc >= int64_t(s[1])) return -1;
    break;
  default: break;
  }
  return ((sn * s[1] + sc) * s[2] + sh) * s[3] + sw;
}

// The destination elements in dst n,c,h,w order, in dst format: `src`
// itself, or `out` (scratch of d.elements() * d.bytes bytes) filled.
uint8_t *destinationElements(const GdmaCommand &cmd, const GdmaPlan &plan, uint8_t *src, uint8_t *out) {
  const GdmaView &d = plan.dst;
  const uint32_t Bd = d.bytes;
  const size_t outBytes = d.elements() * Bd;
  if (!plan.readsSrc) { // constant fill: the low bytes of constant_value, little endian
    uint8_t pattern[4];
    for (int i = 0; i < 4; ++i) pattern[i] = uint8_t(cmd.constantValue >> (8 * i));
    for (size_t i = 0; i < outBytes; i += Bd) std::memcpy(out + i, pattern, Bd);
    return out;
  }
  const GdmaView &s = plan.src;
  const bool reorders = cmd.specialFunc != GdmaSpecialFunc::None &&
                        cmd.specialFunc != GdmaSpecialFunc::FormatConvert;
  if (!reorders) {
    if (s.format == d.format) return src;
    withElementType(s.format, [&](auto from) {
      withElementType(d.format, [&](auto to) {
        convertElements<decltype(from), decltype(to)>(src, out, d.elements());
      });
    });
    return out;
  }
  std::fill(out, out + outBytes, 0);
  uint8_t *o = out;
  for (uint32_t n = 0; n < d.shape[0]; ++n)
    for (uint32_t c = 0; c < d.shape[1]; ++c)
      for (uint32_t h = 0; h < d.shape[2]; ++h)
        for (uint32_t w = 0; w < d.shape[3]; ++w, o += Bd) {
          int64_t j = sourceIndex(cmd, s.shape, n, c, h, w);
          if (j >= 0) std::memcpy(o, src + j * Bd, Bd);
        }
  return out;
}

} // namespace

Status executeGdma(const isa::HwConfig &cfg, LocalMemory &lmem, GlobalMemory &gmem,
                   const GdmaCommand &cmd) {
  if (lmem.lanes() != cfg.npuLanes || lmem.laneBytes() != cfg.lmemBytesPerLane)
    return makeError("local memory (", lmem.lanes(), " x ", lmem.laneBytes(),
                     " bytes) does not match the hardware config (", cfg.npuLanes, " x ",
                     cfg.lmemBytesPerLane, ")");
  auto plan = planGdma(cfg, cmd);
  if (!plan) return plan.status();
  // Global ranges were checked against cfg: a write must not fail half-way.
  if (gmem.base() != cfg.globalMemBase || gmem.size() != cfg.globalMemBytes)
    return makeError("global memory [0x", std::hex, gmem.base(), ", +0x", gmem.size(),
                     ") does not match the hardware config");

  const GdmaView &s = plan->src, &d = plan->dst;
  if (plan->readsSrc && s.local != d.local && s.format == d.format && s.shape == d.shape &&
      (cmd.specialFunc == GdmaSpecialFunc::None || cmd.specialFunc == GdmaSpecialFunc::FormatConvert)) {
    auto done = copyByPlanes(*plan, lmem, gmem, cmd.laneMask);
    if (!done) return done.status();
    if (*done) return Status::ok();
  }
  std::vector<uint8_t> srcOwn, outOwn;
  uint8_t *src = nullptr;
  if (plan->readsSrc) {
    src = scratch<uint8_t, 0>(plan->src.elements() * plan->src.bytes, srcOwn);
    TPU_RETURN_IF_ERROR(transferRows<false>(plan->src, lmem, gmem, src, 0));
  }
  uint8_t *out = scratch<uint8_t, 1>(plan->dst.elements() * plan->dst.bytes, outOwn);
  return transferRows<true>(plan->dst, lmem, gmem, destinationElements(cmd, *plan, src, out), cmd.laneMask);
}

} // namespace tpu::sim
