#include "compiler/Kernels/Compare.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tpu::kernels {

CompareStats compareTensors(const float *a, const float *b, int64_t n) {
  CompareStats s;
  double dot = 0, na = 0, nb = 0, diff2 = 0, mid2 = 0;
  double sumA = 0, sumA2 = 0, sumD = 0, sumD2 = 0;
  int64_t counted = 0;
  for (int64_t i = 0; i < n; ++i) {
    double x = a[i], y = b[i];
    bool nx = std::isnan(x), ny = std::isnan(y);
    if (nx || ny) {
      // NaN in the same place on both sides agrees; anything else differs.
      if (nx != ny) ++s.nanMismatch;
      continue;
    }
    double d = x - y, m = (x + y) / 2;
    dot += x * y;
    na += x * x;
    nb += y * y;
    diff2 += d * d;
    mid2 += m * m;
    sumA += x;
    sumA2 += x * x;
    sumD += d;
    sumD2 += d * d;
    s.maxAbsDiff = std::max(s.maxAbsDiff, std::fabs(d));
    ++counted;
  }
  const double inf = std::numeric_limits<double>::infinity();
  if (na == 0 && nb == 0) s.cosine = 1;
  else if (na == 0 || nb == 0) s.cosine = 0;
  else s.cosine = dot / (std::sqrt(na) * std::sqrt(nb));
  if (diff2 == 0) s.euclidean = 1;
  else if (mid2 == 0) s.euclidean = 0;
  else s.euclidean = 1 - std::sqrt(diff2) / std::sqrt(mid2);
  if (counted == 0) {
    s.sqnrDb = inf;
  } else {
    double varA = sumA2 / counted - (sumA / counted) * (sumA / counted);
    double varD = sumD2 / counted - (sumD / counted) * (sumD / counted);
    if (varD <= 0) s.sqnrDb = diff2 == 0 ? inf : 10 * std::log10(varA / (diff2 / counted));
    else s.sqnrDb = 10 * std::log10(std::max(varA, 0.0) / varD);
  }
  if (s.nanMismatch) {
    s.cosine = std::min(s.cosine, 0.0);
    s.euclidean = std::min(s.euclidean, 0.0);
  }
  return s;
}

} // namespace tpu::kernels
