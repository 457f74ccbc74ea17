// Unary activations and binary ops with numpy broadcasting.
#include "kernels/Kernels.h"
#include "support/Npz.h"
#include "support/Parallel.h"

#include <algorithm>
#include <cmath>

namespace tpu::kernels {

int64_t numElements(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<int64_t> stridesOf(const Shape &shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

AxisSplit splitAtAxis(const Shape &shape, size_t axis) {
  AxisSplit s;
  for (size_t d = 0; d < shape.size(); ++d) (d < axis ? s.outer : d == axis ? s.len : s.inner) *= shape[d];
  return s;
}

namespace {

template <typename F> void mapUnary(const float *in, float *out, int64_t n, F f) {
  parallelFor(n, 1 << 15, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) out[i] = f(in[i]);
  });
}

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

} // namespace

void unary(UnaryKind kind, const float *in, float *out, int64_t n, float a, float b) {
  switch (kind) {
  case UnaryKind::Relu:
    return mapUnary(in, out, n, [](float x) { return x > 0 ? x : 0.0f; });
  case UnaryKind::LeakyRelu:
    return mapUnary(in, out, n, [a](float x) { return x >= 0 ? x : x * a; });
  case UnaryKind::Clip:
    return mapUnary(in, out, n, [a, b](float x) { return std::min(std::max(x, a), b); });
  case UnaryKind::Sigmoid:
    return mapUnary(in, out, n, sigmoid);
  case UnaryKind::HardSigmoid:
    return mapUnary(in, out, n, [a, b](float x) { return std::max(0.0f, std::min(1.0f, a * x + b)); });
  case UnaryKind::HardSwish:
    return mapUnary(in, out, n, [](float x) { return x * std::max(0.0f, std::min(1.0f, x / 6.0f + 0.5f)); });
  case UnaryKind::SiLU:
    return mapUnary(in, out, n, [](float x) { return x * sigmoid(x); });
  case UnaryKind::Tanh:
    return mapUnary(in, out, n, [](float x) { return std::tanh(x); });
  case UnaryKind::Gelu:
    return mapUnary(in, out, n, [](float x) { return 0.5f * x * (1.0f + std::erf(x * float(M_SQRT1_2))); });
  case UnaryKind::Exp:
    return mapUnary(in, out, n, [](float x) { return std::exp(x); });
  case UnaryKind::Log:
    return mapUnary(in, out, n, [](float x) { return std::log(x); });
  case UnaryKind::Sqrt:
    return mapUnary(in, out, n, [](float x) { return std::sqrt(x); });
  case UnaryKind::Rsqrt:
    return mapUnary(in, out, n, [](float x) { return 1.0f / std::sqrt(x); });
  case UnaryKind::Abs:
    return mapUnary(in, out, n, [](float x) { return std::fabs(x); });
  case UnaryKind::Neg:
    return mapUnary(in, out, n, [](float x) { return -x; });
  case UnaryKind::Reciprocal:
    return mapUnary(in, out, n, [](float x) { return 1.0f / x; });
  case UnaryKind::Floor:
    return mapUnary(in, out, n, [](float x) { return std::floor(x); });
  case UnaryKind::Ceil:
    return mapUnary(in, out, n, [](float x) { return std::ceil(x); });
  case UnaryKind::Round:
    return mapUnary(in, out, n, [](float x) { return std::nearbyint(x); });
  case UnaryKind::Sign:
    return mapUnary(in, out, n, [](float x) { return float((x > 0) - (x < 0)); });
  case UnaryKind::Erf:
    return mapUnary(in, out, n, [](float x) { return std::erf(x); });
  case UnaryKind::Sin:
    return mapUnary(in, out, n, [](float x) { return std::sin(x); });
  case UnaryKind::Cos:
    return mapUnary(in, out, n, [](float x) { return std::cos(x); });
  case UnaryKind::Softplus:
    return mapUnary(in, out, n, [](float x) { return std::log1p(std::exp(x)); });
  case UnaryKind::Softsign:
    return mapUnary(in, out, n, [](float x) { return x / (1.0f + std::fabs(x)); });
  case UnaryKind::Mish:
    return mapUnary(in, out, n, [](float x) { return x * std::tanh(std::log1p(std::exp(x))); });
  case UnaryKind::Elu:
    return mapUnary(in, out, n, [a](float x) { return x >= 0 ? x : a * (std::exp(x) - 1.0f); });
  case UnaryKind::Selu:
    return mapUnary(in, out, n, [a, b](float x) { return b * (x > 0 ? x : a * (std::exp(x) - 1.0f)); });
  case UnaryKind::Identity:
    return mapUnary(in, out, n, [](float x) { return x; });
  }
}

Result<Shape> broadcastShape(const Shape &a, const Shape &b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return makeError("shapes ", shapeToString(a), " and ", shapeToString(b), " do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

namespace {

// Strides of `shape` aligned to the right of an output of rank `rank`,
// 0 along broadcast dimensions.
std::vector<int64_t> broadcastStrides(const Shape &shape, size_t rank) {
  std::vector<int64_t> st(rank, 0);
  std::vector<int64_t> own = stridesOf(shape);
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] != 1) st[rank - shape.size() + i] = own[i];
  return st;
}

// Calls f(out, a, b, count, strideA, strideB) for every innermost row.
template <typename F> void forEachRow(const Shape &aShape, const Shape &bShape, const Shape &outShape, F f) {
  size_t rank = outShape.size();
  if (rank == 0) {
    f(0, 0, 0, 1, 0, 0);
    return;
  }
  std::vector<int64_t> sa = broadcastStrides(aShape, rank), sb = broadcastStrides(bShape, rank);
  int64_t inner = outShape.back();
  int64_t rows = inner ? numElements(outShape) / inner : 0;
  parallelFor(rows, std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(1, inner)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      int64_t oa = 0, ob = 0, rem = r;
      for (size_t d = rank - 1; d-- > 0;) {
        int64_t i = rem % outShape[d];
        rem /= outShape[d];
        oa += i * sa[d];
        ob += i * sb[d];
      }
      f(r * inner, oa, ob, inner, sa[rank - 1], sb[rank - 1]);
    }
  });
}

template <typename Op>
void binaryLoop(const float *a, const Shape &aShape, const float *b, const Shape &bShape, float *out,
                const Shape &outShape, Op op) {
  forEachRow(aShape, bShape, outShape, [&](int64_t o, int64_t oa, int64_t ob, int64_t n, int64_t sa, int64_t sb) {
    float *dst = out + o;
    const float *pa = a + oa, *pb = b + ob;
    if (sa == 1 && sb == 1) {
      for (int64_t i = 0; i < n; ++i) dst[i] = op(pa[i], pb[i]);
    } else if (sa == 1 && sb == 0) {
      float vb = *pb;
      for (int64_t i = 0; i < n; ++i) dst[i] = op(pa[i], vb);
    } else if (sa == 0 && sb == 1) {
      float va = *pa;
      for (int64_t i = 0; i < n; ++i) dst[i] = op(va, pb[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) dst[i] = op(pa[i * sa], pb[i * sb]);
    }
  });
}

} // namespace

void binary(BinaryKind kind, const float *a, const Shape &aShape, const float *b, const Shape &bShape, float *out,
            const Shape &outShape) {
  switch (kind) {
  case BinaryKind::Add:
    return binaryLoop(a, aShape, b, bShape, out, outShape, [](float x, float y) { return x + y; });
  case BinaryKind::Sub:
    return binaryLoop(a, aShape, b, bShape, out, outShape, [](float x, float y) { return x - y; });
  case BinaryKind::Mul:
    return binaryLoop(a, aShape, b, bShape, out, outShape, [](float x, float y) { return x * y; });
  case BinaryKind::Div:
    return binaryLoop(a, aShape, b, bShape, out, outShape, [](float x, float y) { return x / y; });
  case BinaryKind::Max:
    return binaryLoop(a, aShape, b, bShape, out, outShape, [](float x, float y) { return std::max(x, y); });
  case BinaryKind::Min:
    return binaryLoop(a, aShape, b, bShape, out, outShape, [](float x, float y) { return std::min(x, y); });
  case BinaryKind::Pow:
    return binaryLoop(a, aShape, b, bShape, out, outShape, [](float x, float y) { return std::pow(x, y); });
  case BinaryKind::PRelu:
    return binaryLoop(a, aShape, b, bShape, out, outShape, [](float x, float s) { return x >= 0 ? x : x * s; });
  case BinaryKind::Equal:
    return binaryLoop(a, aShape, b, bShape, out, outShape, [](float x, float y) { return float(x == y); });
  case BinaryKind::Less:
    return binaryLoop(a, aShape, b, bShape, out, outShape, [](float x, float y) { return float(x < y); });
  case BinaryKind::Greater:
    return binaryLoop(a, aShape, b, bShape, out, outShape, [](float x, float y) { return float(x > y); });
  }
}

void broadcastTo(const float *in, const Shape &inShape, float *out, const Shape &outShape) {
  forEachRow(inShape, inShape, outShape, [&](int64_t o, int64_t oa, int64_t, int64_t n, int64_t sa, int64_t) {
    for (int64_t i = 0; i < n; ++i) out[o + i] = in[oa + i * sa];
  });
}

} // namespace tpu::kernels
