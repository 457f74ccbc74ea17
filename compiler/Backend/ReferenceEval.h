// Internal to compiler/Backend: what the per-kind reference evaluations
// (OpImpl::evaluate, called by evalOp in QuantRef.cpp) share: the op's
// tensors and values, integer/float views of a value, the requantization.
#pragma once

#include "arith/IntArith.h"
#include "compiler/Backend/Graph.h"
#include "compiler/Backend/QuantRef.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

namespace tpu::backend {

inline isa::Prec refPrec(DType t) {
  switch (t) {
  case DType::I8: case DType::U8: return isa::Prec::Int8;
  case DType::I16: return isa::Prec::Int16;
  case DType::I32: return isa::Prec::Int32;
  case DType::F32:
  case DType::F16:
  case DType::BF16:
    return isa::Prec::Fp32; // integer paths only
  }
  return isa::Prec::Int32;
}
inline bool refSigned(DType t) { return t != DType::U8; }

// The chip's integer write-back: rounding right shift by op.rshift, relu,
// saturation to `out`.
inline int64_t requantizeOp(int64_t v, const Op &op, bool relu, DType out) {
  return sim::requantize(v, op.rshift, relu, refPrec(out), refSigned(out));
}
inline int64_t saturateTo(int64_t v, DType out) { return sim::saturate(v, refPrec(out), refSigned(out)); }

// Integer values of a tensor, widened to int32.
inline std::vector<int32_t> toInts(const Bytes &b, DType t) {
  size_t n = b.size() / dtypeBytes(t);
  std::vector<int32_t> v(n);
  for (size_t i = 0; i < n; ++i) {
    switch (t) {
    case DType::I8: v[i] = int8_t(b[i]); break;
    case DType::U8: v[i] = b[i]; break;
    case DType::I16: { int16_t x; std::memcpy(&x, &b[2 * i], 2); v[i] = x; break; }
    default: std::memcpy(&v[i], &b[4 * i], 4); break;
    }
  }
  return v;
}
inline const float *floats(const Bytes &b) { return reinterpret_cast<const float *>(b.data()); }

// Writes already saturated integers in the output dtype.
inline Bytes fromInts(const std::vector<int64_t> &v, DType t) {
  Bytes b(v.size() * dtypeBytes(t));
  for (size_t i = 0; i < v.size(); ++i) {
    if (dtypeBytes(t) == 1) b[i] = uint8_t(v[i]);
    else if (dtypeBytes(t) == 2) { int16_t x = int16_t(v[i]); std::memcpy(&b[2 * i], &x, 2); }
    else { int32_t x = int32_t(v[i]); std::memcpy(&b[4 * i], &x, 4); }
  }
  return b;
}
inline Bytes fromFloats(const std::vector<float> &v) {
  Bytes b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// The matrix commands' fp32 sum (mm, mm2): the products a(q) * b(q) for q
// in [q0, q1) added in ascending q from 0, one rounding each (no fused
// multiply-add).
template <class A, class B> float matrixProductSum(A a, B b, int64_t q0, int64_t q1) {
  float acc = 0.0f;
  for (int64_t q = q0; q < q1; ++q) {
    float t = a(q) * b(q);
    acc += t;
  }
  return acc;
}

// One op's evaluation: its input values (weights included, sizes checked),
// its first input x and its output y.
struct RefArgs {
  RefArgs(const Graph &graph, const Op &o, const std::vector<const Bytes *> &values)
      : g(graph), op(o), in(values), x(graph.tensors[size_t(o.inputs[0])]), y(graph.tensors[size_t(o.output)]),
        xs(x.nchw()), ys(y.nchw()), isInt(y.dtype != DType::F32), count(size_t(y.numel())) {}
  const Graph &g;
  const Op &op;
  const std::vector<const Bytes *> &in;
  const Tensor &x, &y;
  std::array<int64_t, 4> xs, ys;
  bool isInt;   // integer output
  size_t count; // output elements
  // Every tensor's real shape, when the caller tracks shapes that come from
  // the data (evalOp's `shapes`); host ops read and update it.
  std::vector<kernels::Shape> *shapes = nullptr;
  const Tensor &input(size_t i) const { return g.tensors[size_t(op.inputs[i])]; }
  std::vector<int32_t> ints(size_t i) const { return toInts(*in[i], input(i).dtype); }
};

// The element-wise evaluations of one input: int(x) for integer outputs
// (saturated to the output type), flt(x) for fp32.
template <class IntFn> void mapInts(const RefArgs &r, Bytes &out, IntFn fn) {
  auto a = r.ints(0);
  std::vector<int64_t> v(r.count);
  for (size_t i = 0; i < r.count; ++i) v[i] = saturateTo(fn(int64_t(a[i])), r.y.dtype);
  out = fromInts(v, r.y.dtype);
}
template <class FloatFn> void mapFloats(const RefArgs &r, Bytes &out, FloatFn fn) {
  const float *a = floats(*r.in[0]);
  std::vector<float> v(r.count);
  for (size_t i = 0; i < r.count; ++i) v[i] = fn(a[i]);
  out = fromFloats(v);
}
template <class IntFn, class FloatFn> void mapElements(const RefArgs &r, Bytes &out, IntFn i, FloatFn f) {
  if (r.isInt) mapInts(r, out, i);
  else mapFloats(r, out, f);
}

} // namespace tpu::backend
