#include "compiler/Import/ConstFold.h"

#include "kernels/Kernels.h"

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <numeric>

namespace tpu::onnx {

namespace {

std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int i = int(shape.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

int64_t numelOf(const std::vector<int64_t> &shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t(1), std::multiplies<int64_t>());
}

// Visits every output index of `shape`, calling f(flat, index).
template <typename F> void forEachIndex(const std::vector<int64_t> &shape, F f) {
  int64_t n = numelOf(shape);
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    f(flat, idx);
    for (int d = int(shape.size()) - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

// Flat offset into an array of `shape` broadcast to an output index of rank `rank`.
int64_t broadcastOffset(const std::vector<int64_t> &shape, const std::vector<int64_t> &strides,
                        const std::vector<int64_t> &outIdx) {
  size_t off = outIdx.size() - shape.size();
  int64_t o = 0;
  for (size_t d = 0; d < shape.size(); ++d) o += (shape[d] == 1 ? 0 : outIdx[d + off]) * strides[d];
  return o;
}

// Copies element `from` of src to element `to` of dst (same dtype).
inline void copyElement(const NpyArray &src, int64_t from, NpyArray &dst, int64_t to) {
  size_t es = src.elementSize();
  std::memcpy(dst.data.data() + to * es, src.data.data() + from * es, es);
}

NpyArray emptyLike(const std::string &dtype, std::vector<int64_t> shape) {
  NpyArray r;
  r.dtype = dtype;
  r.shape = std::move(shape);
  r.data.resize(numelOf(r.shape) * dtypeSize(dtype));
  return r;
}

} // namespace

std::vector<int64_t> flattenShape(const std::vector<int64_t> &in, int64_t axis) {
  int64_t a = 1, b = 1;
  for (size_t i = 0; i < in.size(); ++i) (int64_t(i) < axis ? a : b) *= in[i];
  return {a, b};
}

Result<SliceParams> normalizeSlice(const std::vector<int64_t> &shape, const std::vector<int64_t> &starts,
                                   const std::vector<int64_t> &ends, std::vector<int64_t> axes,
                                   std::vector<int64_t> steps) {
  int64_t rank = shape.size();
  if (starts.size() != ends.size()) return makeError("slice starts and ends differ in length");
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(i);
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size())
    return makeError("slice axes/steps do not match starts");
  SliceParams p;
  p.starts.assign(rank, 0);
  p.ends = shape;
  p.steps.assign(rank, 1);
  for (size_t i = 0; i < axes.size(); ++i) {
    auto ax = normalizeAxis(axes[i], rank, "slice axis");
    if (!ax) return ax.status();
    int64_t d = shape[*ax], st = steps[i];
    if (st == 0) return makeError("slice step is 0");
    auto clampIdx = [&](int64_t v, int64_t lo, int64_t hi) {
      if (v < 0) v += d;
      return std::clamp(v, lo, hi);
    };
    // Large sentinels (INT64_MAX/MIN) survive the +d without overflow only if clamped first.
    int64_t s = std::clamp<int64_t>(starts[i], -(int64_t(1) << 62), int64_t(1) << 62);
    int64_t e = std::clamp<int64_t>(ends[i], -(int64_t(1) << 62), int64_t(1) << 62);
    if (st > 0) {
      p.starts[*ax] = clampIdx(s, 0, d);
      p.ends[*ax] = clampIdx(e, 0, d);
    } else {
      p.starts[*ax] = clampIdx(s, 0, d - 1);
      p.ends[*ax] = clampIdx(e, -1, d - 1);
    }
    p.steps[*ax] = st;
  }
  return p;
}

std::vector<int64_t> toInt64(const NpyArray &a) {
  std::vector<int64_t> v(a.numel());
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = a.is<int64_t>() ? a.as<int64_t>()[i] : a.is<float>() ? int64_t(a.as<float>()[i]) : a.data[i];
  return v;
}

std::vector<double> toDouble(const NpyArray &a) {
  std::vector<double> v(a.numel());
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = a.is<int64_t>() ? double(a.as<int64_t>()[i]) : a.is<float>() ? a.as<float>()[i] : a.data[i];
  return v;
}

NpyArray castArray(const NpyArray &a, const std::string &dtype) {
  if (a.dtype == dtype) return a;
  NpyArray r = emptyLike(dtype, a.shape);
  if (dtype == "int64") {
    auto v = toInt64(a);
    if (!v.empty()) std::memcpy(r.data.data(), v.data(), v.size() * 8);
  } else {
    auto v = toDouble(a);
    for (size_t i = 0; i < v.size(); ++i) {
      if (dtype == "float32") r.as<float>()[i] = float(v[i]);
      else r.data[i] = v[i] != 0;
    }
  }
  return r;
}

NpyArray reshapeArray(NpyArray a, std::vector<int64_t> shape) {
  a.shape = std::move(shape);
  return a;
}

Result<NpyArray> binaryArray(const std::string &op, const NpyArray &a, const NpyArray &b) {
  auto shape = kernels::broadcastShape(a.shape, b.shape);
  if (!shape) return shape.status();
  bool compare = op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" || op == "GreaterOrEqual";
  bool logic = op == "And" || op == "Or" || op == "Xor";
  bool isInt = a.is<int64_t>() && b.is<int64_t>();
  NpyArray r = emptyLike(compare || logic ? "bool" : isInt ? "int64" : "float32", *shape);
  auto av = toDouble(a), bv = toDouble(b);
  auto ai = isInt ? toInt64(a) : std::vector<int64_t>(), bi = isInt ? toInt64(b) : std::vector<int64_t>();
  auto as = stridesOf(a.shape), bs = stridesOf(b.shape);
  Status st;
  forEachIndex(*shape, [&](int64_t flat, const std::vector<int64_t> &idx) {
    int64_t ia = broadcastOffset(a.shape, as, idx), ib = broadcastOffset(b.shape, bs, idx);
    if (compare) {
      double x = av[ia], y = bv[ib];
      r.data[flat] = op == "Equal" ? x == y : op == "Less" ? x < y : op == "Greater" ? x > y
                   : op == "LessOrEqual" ? x <= y : x >= y;
    } else if (logic) {
      bool x = av[ia] != 0, y = bv[ib] != 0;
      r.data[flat] = op == "And" ? x && y : op == "Or" ? x || y : x != y;
    } else if (isInt) {
      int64_t x = ai[ia], y = bi[ib], v = 0;
      if (op == "Add") v = x + y;
      else if (op == "Sub") v = x - y;
      else if (op == "Mul") v = x * y;
      else if (op == "Div") {
        if (y == 0) st = makeError("integer division by zero");
        else v = x / y;
      } else if (op == "Mod" || op == "Fmod") {
        if (y == 0) st = makeError("integer modulo by zero");
        else v = y == -1 ? 0 : x % y; // INT64_MIN % -1 overflows
        if (op == "Mod" && v != 0 && (v < 0) != (y < 0)) v += y;
      } else if (op == "Max") v = std::max(x, y);
      else if (op == "Min") v = std::min(x, y);
      else if (op == "Pow") v = int64_t(std::pow(double(x), double(y)));
      r.as<int64_t>()[flat] = v;
    } else {
      float x = float(av[ia]), y = float(bv[ib]), v = 0;
      if (op == "Add") v = x + y;
      else if (op == "Sub") v = x - y;
      else if (op == "Mul") v = x * y;
      else if (op == "Div") v = x / y;
      else if (op == "Max") v = std::max(x, y);
      else if (op == "Min") v = std::min(x, y);
      else if (op == "Pow") v = std::pow(x, y);
      else if (op == "Fmod") v = std::fmod(x, y);
      else if (op == "Mod") v = x - std::floor(x / y) * y;
      r.as<float>()[flat] = v;
    }
  });
  if (!st) return st;
  return r;
}

Result<NpyArray> unaryArray(const std::string &op, const NpyArray &a) {
  if (a.is<int64_t>() && (op == "Neg" || op == "Abs" || op == "Sign")) {
    NpyArray r = a;
    int64_t *p = r.as<int64_t>();
    for (int64_t i = 0; i < r.numel(); ++i)
      p[i] = op == "Neg" ? -p[i] : op == "Abs" ? std::abs(p[i]) : (p[i] > 0) - (p[i] < 0);
    return r;
  }
  if (op == "Not") {
    NpyArray r = castArray(a, "bool");
    for (uint8_t &v : r.data) v = !v;
    return r;
  }
  NpyArray r = castArray(a, "float32");
  float *p = r.as<float>();
  for (int64_t i = 0; i < r.numel(); ++i) {
    float x = p[i];
    if (op == "Neg") x = -x;
    else if (op == "Abs") x = std::fabs(x);
    else if (op == "Sqrt") x = std::sqrt(x);
    else if (op == "Reciprocal") x = 1.0f / x;
    else if (op == "Floor") x = std::floor(x);
    else if (op == "Ceil") x = std::ceil(x);
    else if (op == "Round") x = std::nearbyint(x); // the default rounding mode: half to even
    else if (op == "Sign") x = float((x > 0) - (x < 0));
    else if (op == "Exp") x = std::exp(x);
    else if (op == "Log") x = std::log(x);
    else if (op == "Relu") x = std::max(x, 0.0f);
    else if (op == "Sigmoid") x = 1.0f / (1.0f + std::exp(-x));
    else if (op == "Tanh") x = std::tanh(x);
    else return makeError("cannot fold ", op);
    p[i] = x;
  }
  return r;
}

Result<NpyArray> whereArray(const NpyArray &cond, const NpyArray &x, const NpyArray &y) {
  auto xy = kernels::broadcastShape(x.shape, y.shape);
  if (!xy) return xy.status();
  auto shape = kernels::broadcastShape(cond.shape, *xy);
  if (!shape) return shape.status();
  NpyArray yc = castArray(y, x.dtype);
  NpyArray r = emptyLike(x.dtype, *shape);
  auto c = toInt64(cond);
  auto cs = stridesOf(cond.shape), xs = stridesOf(x.shape), ys = stridesOf(y.shape);
  forEachIndex(*shape, [&](int64_t flat, const std::vector<int64_t> &idx) {
    if (c[broadcastOffset(cond.shape, cs, idx)]) copyElement(x, broadcastOffset(x.shape, xs, idx), r, flat);
    else copyElement(yc, broadcastOffset(y.shape, ys, idx), r, flat);
  });
  return r;
}

Result<NpyArray> gatherArray(const NpyArray &a, const NpyArray &indices, int64_t axisIn) {
  auto axis = normalizeAxis(axisIn, a.shape.size(), "gather axis");
  if (!axis) return axis.status();
  auto idx = toInt64(indices);
  int64_t d = a.shape[*axis];
  for (int64_t &i : idx) {
    if (i < -d || i >= d) return makeError("gather index ", i, " is out of range for a dim of ", d);
    if (i < 0) i += d;
  }
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < *axis; ++i) outer *= a.shape[i];
  for (size_t i = *axis + 1; i < a.shape.size(); ++i) inner *= a.shape[i];
  std::vector<int64_t> shape(a.shape.begin(), a.shape.begin() + *axis);
  shape.insert(shape.end(), indices.shape.begin(), indices.shape.end());
  shape.insert(shape.end(), a.shape.begin() + *axis + 1, a.shape.end());
  NpyArray r = emptyLike(a.dtype, shape);
  size_t es = a.elementSize(), block = inner * es;
  uint8_t *out = r.data.data();
  for (int64_t o = 0; o < outer && block; ++o) // block 0: empty result, data() may be null
    for (int64_t i : idx) {
      std::memcpy(out, a.data.data() + (o * d + i) * block, block);
      out += block;
    }
  return r;
}

Result<NpyArray> concatArrays(const std::vector<const NpyArray *> &parts, int64_t axisIn) {
  if (parts.empty()) return makeError("concat of nothing");
  const NpyArray &first = *parts[0];
  auto axis = normalizeAxis(axisIn, first.shape.size(), "concat axis");
  if (!axis) return axis.status();
  std::vector<int64_t> shape = first.shape;
  shape[*axis] = 0;
  for (const NpyArray *p : parts) {
    if (p->shape.size() != first.shape.size()) return makeError("concat inputs differ in rank");
    for (size_t i = 0; i < shape.size(); ++i)
      if (int64_t(i) != *axis && p->shape[i] != first.shape[i]) return makeError("concat inputs differ in shape");
    shape[*axis] += p->shape[*axis];
  }
  std::vector<NpyArray> converted;
  for (const NpyArray *p : parts) converted.push_back(castArray(*p, first.dtype));
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < *axis; ++i) outer *= shape[i];
  for (size_t i = *axis + 1; i < shape.size(); ++i) inner *= shape[i];
  NpyArray r = emptyLike(first.dtype, shape);
  size_t es = r.elementSize();
  uint8_t *out = r.data.data();
  for (int64_t o = 0; o < outer; ++o)
    for (const NpyArray &p : converted) {
      size_t block = p.shape[*axis] * inner * es;
      if (!block) continue; // an empty part: its data() may be null
      std::memcpy(out, p.data.data() + o * block, block);
      out += block;
    }
  return r;
}

NpyArray sliceArray(const NpyArray &a, const SliceParams &p) {
  std::vector<int64_t> shape;
  for (size_t i = 0; i < a.shape.size(); ++i) {
    int64_t st = p.steps[i];
    int64_t n = st > 0 ? (p.ends[i] - p.starts[i] + st - 1) / st : (p.starts[i] - p.ends[i] - st - 1) / -st;
    shape.push_back(std::max<int64_t>(0, n));
  }
  NpyArray r = emptyLike(a.dtype, shape);
  auto strides = stridesOf(a.shape);
  forEachIndex(shape, [&](int64_t flat, const std::vector<int64_t> &idx) {
    int64_t src = 0;
    for (size_t d = 0; d < idx.size(); ++d) src += (p.starts[d] + idx[d] * p.steps[d]) * strides[d];
    copyElement(a, src, r, flat);
  });
  return r;
}

NpyArray transposeArray(const NpyArray &a, const std::vector<int64_t> &perm) {
  std::vector<int64_t> shape;
  for (int64_t p : perm) shape.push_back(a.shape[p]);
  NpyArray r = emptyLike(a.dtype, shape);
  auto strides = stridesOf(a.shape);
  forEachIndex(shape, [&](int64_t flat, const std::vector<int64_t> &idx) {
    int64_t src = 0;
    for (size_t d = 0; d < idx.size(); ++d) src += idx[d] * strides[perm[d]];
    copyElement(a, src, r, flat);
  });
  return r;
}

Result<NpyArray> expandArray(const NpyArray &a, const std::vector<int64_t> &target) {
  auto shape = kernels::broadcastShape(a.shape, target);
  if (!shape) return shape.status();
  NpyArray r = emptyLike(a.dtype, *shape);
  auto strides = stridesOf(a.shape);
  forEachIndex(*shape, [&](int64_t flat, const std::vector<int64_t> &idx) {
    copyElement(a, broadcastOffset(a.shape, strides, idx), r, flat);
  });
  return r;
}

Result<NpyArray> reduceArray(const std::string &op, const NpyArray &a, const std::vector<int64_t> &axes,
                             bool keepdims) {
  bool isInt = a.is<int64_t>();
  if (!isInt && !a.is<float>()) return makeError("cannot fold Reduce", op, " of ", a.dtype);
  if (op != "Sum" && op != "Prod" && op != "Min" && op != "Max" && op != "Mean")
    return makeError("cannot fold Reduce", op);
  std::vector<int64_t> kept = a.shape; // the result with every reduced dim 1
  for (int64_t ax : axes) kept[ax] = 1;
  std::vector<int64_t> outShape;
  for (size_t d = 0; d < a.shape.size(); ++d)
    if (keepdims || !std::binary_search(axes.begin(), axes.end(), int64_t(d))) outShape.push_back(kept[d]);
  int64_t outCount = numelOf(kept), count = numelOf(a.shape) / std::max<int64_t>(outCount, 1);
  double init = op == "Prod" ? 1 : op == "Min" ? INFINITY : op == "Max" ? -INFINITY : 0;
  std::vector<double> accD(outCount, init);
  std::vector<int64_t> accI(outCount, op == "Prod" ? 1 : op == "Min" ? INT64_MAX : op == "Max" ? INT64_MIN : 0);
  auto keptStrides = stridesOf(kept);
  auto ai = isInt ? toInt64(a) : std::vector<int64_t>();
  auto ad = isInt ? std::vector<double>() : toDouble(a);
  forEachIndex(a.shape, [&](int64_t flat, const std::vector<int64_t> &idx) {
    int64_t o = broadcastOffset(kept, keptStrides, idx);
    if (isInt) {
      int64_t &acc = accI[o], x = ai[flat];
      acc = op == "Prod" ? acc * x : op == "Min" ? std::min(acc, x) : op == "Max" ? std::max(acc, x) : acc + x;
    } else {
      double &acc = accD[o], x = ad[flat];
      acc = op == "Prod" ? acc * x : op == "Min" ? std::min(acc, x) : op == "Max" ? std::max(acc, x) : acc + x;
    }
  });
  NpyArray r = emptyLike(a.dtype, outShape);
  for (int64_t i = 0; i < outCount; ++i) {
    if (isInt) r.as<int64_t>()[i] = op == "Mean" ? accI[i] / std::max<int64_t>(count, 1) : accI[i];
    else r.as<float>()[i] = float(op == "Mean" ? accD[i] / double(count) : accD[i]);
  }
  return r;
}

Result<NpyArray> tileArray(const NpyArray &a, const std::vector<int64_t> &repeats) {
  if (repeats.size() != a.shape.size())
    return makeError("tile repeats ", shapeToString(repeats), " do not match rank ", a.shape.size());
  std::vector<int64_t> shape;
  for (size_t d = 0; d < repeats.size(); ++d) {
    if (repeats[d] < 0) return makeError("tile repeats ", shapeToString(repeats), " has a negative count");
    shape.push_back(a.shape[d] * repeats[d]);
  }
  NpyArray r = emptyLike(a.dtype, shape);
  auto strides = stridesOf(a.shape);
  forEachIndex(shape, [&](int64_t flat, const std::vector<int64_t> &idx) {
    int64_t src = 0;
    for (size_t d = 0; d < idx.size(); ++d) src += idx[d] % a.shape[d] * strides[d];
    copyElement(a, src, r, flat);
  });
  return r;
}

} // namespace tpu::onnx
