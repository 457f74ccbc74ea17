// Blocked single-precision GEMM. Each C element is accumulated over k in
// ascending order in one register/stack slot, whatever the blocking and the
// thread split, so results are bit-identical for any thread count.
#include "kernels/Kernels.h"
#include "support/Parallel.h"

#include <algorithm>
#include <cstring>

namespace tpu::kernels {
namespace {

constexpr int64_t kColBlock = 128;   // columns of B kept hot
constexpr int64_t kDepthBlock = 256; // rows of B per panel (256x128 floats = 128 KiB)
constexpr int64_t kTileCols = 32;    // tile: R rows x 32 columns (fastest on SSE2 here, perf/InterpBench)

// C[i..i+R, j..j+W) over depth [k0, k1): the accumulators start from C
// unless k0 == 0 and, with R and W fixed, stay in registers.
template <int R, int W>
void fullTile(int64_t i, int64_t j, int64_t k0, int64_t k1, const float *a, int64_t lda, const float *b, int64_t ldb,
              float *c, int64_t ldc) {
  float acc[R][W];
  for (int r = 0; r < R; ++r)
    for (int x = 0; x < W; ++x) acc[r][x] = k0 == 0 ? 0.0f : c[(i + r) * ldc + j + x];
  for (int64_t kk = k0; kk < k1; ++kk) {
    const float *brow = b + kk * ldb + j;
    for (int r = 0; r < R; ++r) {
      float av = a[(i + r) * lda + kk];
      for (int x = 0; x < W; ++x) acc[r][x] += av * brow[x];
    }
  }
  for (int r = 0; r < R; ++r)
    for (int x = 0; x < W; ++x) c[(i + r) * ldc + j + x] = acc[r][x];
}

// The same for the last, narrower column strip (w < W), one row at a time.
void edgeTile(int64_t i, int64_t j, int64_t w, int64_t k0, int64_t k1, const float *a, int64_t lda, const float *b,
              int64_t ldb, float *c, int64_t ldc) {
  float acc[kTileCols];
  for (int64_t x = 0; x < w; ++x) acc[x] = k0 == 0 ? 0.0f : c[i * ldc + j + x];
  for (int64_t kk = k0; kk < k1; ++kk) {
    float av = a[i * lda + kk];
    const float *brow = b + kk * ldb + j;
    for (int64_t x = 0; x < w; ++x) acc[x] += av * brow[x];
  }
  for (int64_t x = 0; x < w; ++x) c[i * ldc + j + x] = acc[x];
}

void gemmTile(int64_t i0, int64_t i1, int64_t jBegin, int64_t jEnd, int64_t k, const float *a, int64_t lda,
              const float *b, int64_t ldb, float *c, int64_t ldc) {
  if (k == 0) {
    for (int64_t i = i0; i < i1; ++i) std::fill(c + i * ldc + jBegin, c + i * ldc + jEnd, 0.0f);
    return;
  }
  for (int64_t j0 = jBegin; j0 < jEnd; j0 += kColBlock) {
    int64_t j1 = std::min(jEnd, j0 + kColBlock);
    for (int64_t k0 = 0; k0 < k; k0 += kDepthBlock) {
      int64_t k1 = std::min(k, k0 + kDepthBlock);
      int64_t jFull = j0 + (j1 - j0) / kTileCols * kTileCols;
      int64_t i = i0;
      for (; i + 4 <= i1; i += 4)
        for (int64_t j = j0; j < jFull; j += kTileCols) fullTile<4, kTileCols>(i, j, k0, k1, a, lda, b, ldb, c, ldc);
      for (; i < i1; ++i)
        for (int64_t j = j0; j < jFull; j += kTileCols) fullTile<1, kTileCols>(i, j, k0, k1, a, lda, b, ldb, c, ldc);
      if (jFull < j1)
        for (int64_t r = i0; r < i1; ++r) edgeTile(r, jFull, j1 - jFull, k0, k1, a, lda, b, ldb, c, ldc);
    }
  }
}

} // namespace

void gemm(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b, int64_t ldb, float *c,
          int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  // Small problems are not worth a thread.
  int64_t work = m * n * std::max<int64_t>(k, 1);
  if (work < (1 << 17)) {
    gemmTile(0, m, 0, n, k, a, lda, b, ldb, c, ldc);
    return;
  }
  if (m >= 4 * numThreads()) {
    parallelFor((m + 3) / 4, 1, [&](int64_t b0, int64_t b1) {
      gemmTile(b0 * 4, std::min(m, b1 * 4), 0, n, k, a, lda, b, ldb, c, ldc);
    });
  } else {
    int64_t blocks = (n + kColBlock - 1) / kColBlock;
    parallelFor(blocks, 1, [&](int64_t b0, int64_t b1) {
      gemmTile(0, m, b0 * kColBlock, std::min(n, b1 * kColBlock), k, a, lda, b, ldb, c, ldc);
    });
  }
}

Result<Shape> matmulShape(const Shape &a, const Shape &b) {
  if (a.empty() || b.empty()) return makeError("matmul operands must not be scalars");
  Shape a2 = a.size() == 1 ? Shape{1, a[0]} : a;
  Shape b2 = b.size() == 1 ? Shape{b[0], 1} : b;
  int64_t ka = a2.back(), kb = b2[b2.size() - 2];
  if (ka != kb) return makeError("matmul inner dimensions differ: ", ka, " vs ", kb);
  Shape aBatch(a2.begin(), a2.end() - 2), bBatch(b2.begin(), b2.end() - 2);
  auto batch = broadcastShape(aBatch, bBatch);
  if (!batch) return batch.status();
  Shape out = *batch;
  if (a.size() > 1) out.push_back(a2[a2.size() - 2]);
  if (b.size() > 1) out.push_back(b2.back());
  return out;
}

void matmul(const float *a, const Shape &aShape, const float *b, const Shape &bShape, float *out) {
  Shape a2 = aShape.size() == 1 ? Shape{1, aShape[0]} : aShape;
  Shape b2 = bShape.size() == 1 ? Shape{bShape[0], 1} : bShape;
  int64_t m = a2[a2.size() - 2], k = a2.back(), n = b2.back();
  Shape aBatch(a2.begin(), a2.end() - 2), bBatch(b2.begin(), b2.end() - 2);
  Shape batch = *broadcastShape(aBatch, bBatch);
  size_t rank = batch.size();
  // Batch strides in units of whole matrices; 0 where an operand broadcasts.
  auto batchStrides = [&](const Shape &s) {
    std::vector<int64_t> st(rank, 0);
    int64_t acc = 1;
    for (size_t i = 0; i < s.size(); ++i) {
      size_t d = s.size() - 1 - i;
      st[rank - 1 - i] = s[d] == 1 ? 0 : acc;
      acc *= s[d];
    }
    return st;
  };
  std::vector<int64_t> sa = batchStrides(aBatch), sb = batchStrides(bBatch);
  int64_t batches = numElements(batch);
  std::vector<int64_t> idx(rank, 0);
  for (int64_t t = 0; t < batches; ++t) {
    int64_t oa = 0, ob = 0;
    for (size_t d = 0; d < rank; ++d) {
      oa += idx[d] * sa[d];
      ob += idx[d] * sb[d];
    }
    gemm(m, n, k, a + oa * m * k, k, b + ob * k * n, n, out + t * m * n, n);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < batch[d]) break;
      idx[d] = 0;
    }
  }
}

} // namespace tpu::kernels
