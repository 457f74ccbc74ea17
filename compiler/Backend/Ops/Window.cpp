#include "compiler/Backend/Ops/Window.h"

#include <algorithm>

namespace tpu::backend {

int64_t windowOutput(int64_t in, int64_t k, int64_t stride, int64_t dilation, int64_t padA, int64_t padB) {
  int64_t ke = (k - 1) * dilation + 1;
  int64_t padded = in + padA + padB;
  if (padded < ke || stride < 1) return 0;
  return (padded - ke) / stride + 1;
}

TransposedPads transposedPads(const Op &op, const Tensor &x, const Tensor &y) {
  return transposedPads(op.params<WindowParams>(), x.nchw(), y.nchw());
}

TransposedPads transposedPads(const WindowParams &p, const std::array<int64_t, 4> &xs,
                              const std::array<int64_t, 4> &ys) {
  int64_t keH = (p.kh - 1) * p.dilationH, keW = (p.kw - 1) * p.dilationW;
  TransposedPads t;
  t.top = keH - p.padTop, t.left = keW - p.padLeft;
  // Output rows = (ih-1)*s + 1 + top + bottom - keH.
  t.bottom = ys[2] - 1 + keH - (xs[2] - 1) * p.strideH - t.top;
  t.right = ys[3] - 1 + keW - (xs[3] - 1) * p.strideW - t.left;
  return t;
}

WindowParams effectiveWindow(const Op &op, const Tensor &x, const Tensor &y) {
  WindowParams w = op.params<WindowParams>();
  auto xs = x.nchw(), ys = y.nchw();
  int64_t needH = (ys[2] - 1) * w.strideH + (w.kh - 1) * w.dilationH + 1;
  int64_t needW = (ys[3] - 1) * w.strideW + (w.kw - 1) * w.dilationW + 1;
  w.padBottom = std::max(w.padBottom, needH - xs[2] - w.padTop);
  w.padRight = std::max(w.padRight, needW - xs[3] - w.padLeft);
  return w;
}

std::vector<int64_t> averageTaps(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t dilation, int64_t padA,
                                 int64_t padB, bool countPad) {
  const int64_t lo = countPad ? -padA : 0, hi = countPad ? in + padB : in;
  std::vector<int64_t> taps(size_t(std::max<int64_t>(out, 0)), 0);
  for (int64_t o = 0; o < out; ++o)
    for (int64_t t = 0; t < k; ++t) {
      int64_t i = o * stride - padA + t * dilation;
      taps[size_t(o)] += i >= lo && i < hi;
    }
  return taps;
}

bool AverageTaps::uniform() const {
  auto constant = [](const std::vector<int64_t> &v) {
    return std::all_of(v.begin(), v.end(), [&](int64_t t) { return t == v.front(); });
  };
  return constant(rows) && constant(cols);
}

AverageTaps averageTapsOf(const Op &op, const Tensor &x, const Tensor &y) {
  const WindowParams &w = op.params<WindowParams>();
  auto xs = x.nchw(), ys = y.nchw();
  return {averageTaps(xs[2], ys[2], w.kh, w.strideH, w.dilationH, w.padTop, w.padBottom, w.countPad),
          averageTaps(xs[3], ys[3], w.kw, w.strideW, w.dilationW, w.padLeft, w.padRight, w.countPad)};
}

} // namespace tpu::backend
