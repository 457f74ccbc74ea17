// Convolution as im2col + GEMM (depthwise as a direct loop), transposed
// convolution as GEMM + col2im, and pooling.
#include "kernels/Kernels.h"
#include "support/Parallel.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace tpu::kernels {

int64_t convOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t padBegin, int64_t padEnd) {
  int64_t span = in + padBegin + padEnd - ((kernel - 1) * dilation + 1);
  return span < 0 ? 0 : span / stride + 1;
}

namespace {

// col[(ci*kh + ki)*kw + kj][oy*ow + ox] = in[ci][oy*sh - pt + ki*dh][ox*sw - pl + kj*dw]
void im2col(const float *in, int64_t channels, const ConvParams &p, float *col) {
  int64_t rows = channels * p.kh * p.kw, spatial = p.oh * p.ow;
  parallelFor(rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, spatial)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      int64_t kj = r % p.kw, ki = (r / p.kw) % p.kh, ci = r / (p.kw * p.kh);
      const float *src = in + ci * p.ih * p.iw;
      float *dst = col + r * spatial;
      for (int64_t oy = 0; oy < p.oh; ++oy) {
        int64_t y = oy * p.strideH - p.padTop + ki * p.dilationH;
        float *drow = dst + oy * p.ow;
        if (y < 0 || y >= p.ih) {
          std::fill(drow, drow + p.ow, 0.0f);
          continue;
        }
        const float *srow = src + y * p.iw;
        for (int64_t ox = 0; ox < p.ow; ++ox) {
          int64_t x = ox * p.strideW - p.padLeft + kj * p.dilationW;
          drow[ox] = (x >= 0 && x < p.iw) ? srow[x] : 0.0f;
        }
      }
    }
  });
}

void addBias(float *out, const float *bias, int64_t channels, int64_t spatial) {
  if (!bias) return;
  for (int64_t c = 0; c < channels; ++c) {
    float b = bias[c];
    float *o = out + c * spatial;
    for (int64_t i = 0; i < spatial; ++i) o[i] += b;
  }
}

// One input channel per output channel: a direct loop beats a 1-row GEMM.
// Tap by tap over whole output rows (vectorizable for stride 1); every output
// adds its taps in (ki, kj) order.
void depthwise(const float *in, const float *weight, const float *bias, float *out, const ConvParams &p) {
  parallelFor(p.n * p.oc, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t nc = c0; nc < c1; ++nc) {
      int64_t c = nc % p.oc;
      const float *src = in + nc * p.ih * p.iw;
      const float *w = weight + c * p.kh * p.kw;
      float *dst = out + nc * p.oh * p.ow;
      std::fill(dst, dst + p.oh * p.ow, 0.0f);
      for (int64_t ki = 0; ki < p.kh; ++ki) {
        for (int64_t kj = 0; kj < p.kw; ++kj) {
          float wv = w[ki * p.kw + kj];
          // Output columns whose input column x = ox*sw - pl + kj*dw is inside.
          int64_t shift = kj * p.dilationW - p.padLeft;
          int64_t oxBegin = shift >= 0 ? 0 : (-shift + p.strideW - 1) / p.strideW;
          int64_t last = p.iw - 1 - shift;
          int64_t oxEnd = last < 0 ? 0 : std::min(p.ow, last / p.strideW + 1);
          for (int64_t oy = 0; oy < p.oh; ++oy) {
            int64_t y = oy * p.strideH - p.padTop + ki * p.dilationH;
            if (y < 0 || y >= p.ih) continue;
            const float *srow = src + y * p.iw + shift;
            float *drow = dst + oy * p.ow;
            if (p.strideW == 1)
              for (int64_t ox = oxBegin; ox < oxEnd; ++ox) drow[ox] += srow[ox] * wv;
            else
              for (int64_t ox = oxBegin; ox < oxEnd; ++ox) drow[ox] += srow[ox * p.strideW] * wv;
          }
        }
      }
      if (bias)
        for (int64_t i = 0; i < p.oh * p.ow; ++i) dst[i] += bias[c];
    }
  });
}

} // namespace

void conv2d(const float *in, const float *weight, const float *bias, float *out, const ConvParams &p) {
  int64_t icg = p.ic / p.groups, ocg = p.oc / p.groups;
  if (icg == 1 && ocg == 1) {
    depthwise(in, weight, bias, out, p);
    return;
  }
  int64_t k = icg * p.kh * p.kw, spatial = p.oh * p.ow;
  bool pointwise = p.kh == 1 && p.kw == 1 && p.strideH == 1 && p.strideW == 1 && p.padTop == 0 && p.padLeft == 0 &&
                   p.oh == p.ih && p.ow == p.iw;
  std::vector<float> col(pointwise ? 0 : k * spatial);
  for (int64_t b = 0; b < p.n; ++b) {
    for (int64_t g = 0; g < p.groups; ++g) {
      const float *src = in + (b * p.ic + g * icg) * p.ih * p.iw;
      if (!pointwise) im2col(src, icg, p, col.data());
      float *dst = out + (b * p.oc + g * ocg) * spatial;
      gemm(ocg, spatial, k, weight + g * ocg * k, k, pointwise ? src : col.data(), spatial, dst, spatial);
      addBias(dst, bias ? bias + g * ocg : nullptr, ocg, spatial);
    }
  }
}

void convTranspose2d(const float *in, const float *weight, const float *bias, float *out, const ConvParams &p) {
  int64_t icg = p.ic / p.groups, ocg = p.oc / p.groups;
  int64_t rows = ocg * p.kh * p.kw, spatialIn = p.ih * p.iw, spatialOut = p.oh * p.ow;
  std::vector<float> wt(rows * icg), col(rows * spatialIn);
  for (int64_t b = 0; b < p.n; ++b) {
    for (int64_t g = 0; g < p.groups; ++g) {
      // Weight group [icg, rows] transposed to [rows, icg].
      const float *w = weight + g * icg * rows;
      for (int64_t ci = 0; ci < icg; ++ci)
        for (int64_t r = 0; r < rows; ++r) wt[r * icg + ci] = w[ci * rows + r];
      const float *src = in + (b * p.ic + g * icg) * spatialIn;
      gemm(rows, spatialIn, icg, wt.data(), icg, src, spatialIn, col.data(), spatialIn);
      float *dst = out + (b * p.oc + g * ocg) * spatialOut;
      // col2im: every output channel is scattered by one thread.
      parallelFor(ocg, 1, [&](int64_t c0, int64_t c1) {
        for (int64_t co = c0; co < c1; ++co) {
          float *o = dst + co * spatialOut;
          std::fill(o, o + spatialOut, bias ? bias[g * ocg + co] : 0.0f);
          for (int64_t ki = 0; ki < p.kh; ++ki) {
            for (int64_t kj = 0; kj < p.kw; ++kj) {
              const float *c = col.data() + ((co * p.kh + ki) * p.kw + kj) * spatialIn;
              for (int64_t iy = 0; iy < p.ih; ++iy) {
                int64_t y = iy * p.strideH - p.padTop + ki * p.dilationH;
                if (y < 0 || y >= p.oh) continue;
                for (int64_t ix = 0; ix < p.iw; ++ix) {
                  int64_t x = ix * p.strideW - p.padLeft + kj * p.dilationW;
                  if (x >= 0 && x < p.ow) o[y * p.ow + x] += c[iy * p.iw + ix];
                }
              }
            }
          }
        }
      });
    }
  }
}

int64_t poolOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t padBegin, int64_t padEnd,
                       bool ceilMode) {
  int64_t span = in + padBegin + padEnd - ((kernel - 1) * dilation + 1);
  if (span < 0) return 0;
  int64_t out = (ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
  if (ceilMode && (out - 1) * stride >= in + padBegin) --out;
  return out;
}

void pool2d(PoolKind kind, const float *in, float *out, const PoolParams &p) {
  parallelFor(p.n * p.c, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t nc = c0; nc < c1; ++nc) {
      const float *src = in + nc * p.ih * p.iw;
      float *dst = out + nc * p.oh * p.ow;
      for (int64_t oy = 0; oy < p.oh; ++oy) {
        int64_t y0 = oy * p.strideH - p.padTop;
        for (int64_t ox = 0; ox < p.ow; ++ox) {
          int64_t x0 = ox * p.strideW - p.padLeft;
          float acc = kind == PoolKind::Max ? -std::numeric_limits<float>::infinity() : 0.0f;
          int64_t valid = 0, inPadded = 0;
          for (int64_t ki = 0; ki < p.kh; ++ki) {
            int64_t y = y0 + ki * p.dilationH;
            bool yPadded = y < p.ih + p.padBottom;
            bool yIn = y >= 0 && y < p.ih;
            for (int64_t kj = 0; kj < p.kw; ++kj) {
              int64_t x = x0 + kj * p.dilationW;
              if (yPadded && x < p.iw + p.padRight) ++inPadded;
              if (!yIn || x < 0 || x >= p.iw) continue;
              float v = src[y * p.iw + x];
              ++valid;
              if (kind == PoolKind::Max)
                acc = std::max(acc, v);
              else
                acc += v;
            }
          }
          if (kind == PoolKind::Avg) {
            int64_t count = p.countIncludePad ? inPadded : valid;
            acc = count ? acc / static_cast<float>(count) : 0.0f;
          }
          dst[oy * p.ow + ox] = acc;
        }
      }
    }
  });
}

void globalPool(PoolKind kind, const float *in, float *out, int64_t nc, int64_t spatial) {
  parallelFor(nc, 16, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      const float *src = in + c * spatial;
      if (kind == PoolKind::Max) {
        float m = -std::numeric_limits<float>::infinity();
        for (int64_t i = 0; i < spatial; ++i) m = std::max(m, src[i]);
        out[c] = m;
      } else {
        double s = 0;
        for (int64_t i = 0; i < spatial; ++i) s += src[i];
        out[c] = static_cast<float>(s / static_cast<double>(spatial));
      }
    }
  });
}

} // namespace tpu::kernels
