// Four byte runs interleaved into 32-bit words (byte i of word e is runs[i][e]):
// the 4N layout's words from four batch items (GDMA) and the int8 conv's tap
// groups from four taps (TIU). Sixteen words at a time in SSE2, x86-64's
// baseline; whole words are written, so nothing is read back.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

namespace tpu::sim {

inline void interleaveByteRuns(uint8_t *dst, const uint8_t *const runs[4], size_t count) {
  size_t e = 0;
  for (; e + 16 <= count; e += 16) {
    __m128i v[4];
    for (int i = 0; i < 4; ++i) v[i] = _mm_loadu_si128(reinterpret_cast<const __m128i *>(runs[i] + e));
    const __m128i p01[2] = {_mm_unpacklo_epi8(v[0], v[1]), _mm_unpackhi_epi8(v[0], v[1])};
    const __m128i p23[2] = {_mm_unpacklo_epi8(v[2], v[3]), _mm_unpackhi_epi8(v[2], v[3])};
    for (int i = 0; i < 4; ++i) {
      const __m128i words =
          i % 2 ? _mm_unpackhi_epi16(p01[i / 2], p23[i / 2]) : _mm_unpacklo_epi16(p01[i / 2], p23[i / 2]);
      _mm_storeu_si128(reinterpret_cast<__m128i *>(dst + 4 * e + 16 * i), words);
    }
  }
  for (; e < count; ++e)
    for (int i = 0; i < 4; ++i) dst[4 * e + i] = runs[i][e];
}

} // namespace tpu::sim
