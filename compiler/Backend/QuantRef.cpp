#include "compiler/Backend/QuantRef.h"

#include "compiler/Kernels/Kernels.h"
#include "simulator/semantics/IntArith.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace tpu::backend {

namespace {

using sim::requantize;

isa::Prec precOf(DType t) {
  switch (t) {
  case DType::I8: case DType::U8: return isa::Prec::Int8;
  case DType::I16: return isa::Prec::Int16;
  case DType::I32: return isa::Prec::Int32;
  case DType::F32: return isa::Prec::Fp32;
  }
  return isa::Prec::Int32;
}
bool signedOf(DType t) { return t != DType::U8; }

int64_t rq(int64_t v, const Op &op, bool relu, DType out) {
  return requantize(v, op.rshift, relu, precOf(out), signedOf(out));
}

// Integer values of a tensor, widened to int32.
std::vector<int32_t> toInts(const Bytes &b, DType t) {
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
const float *floats(const Bytes &b) { return reinterpret_cast<const float *>(b.data()); }

// Writes already saturated integers in the output dtype.
Bytes fromInts(const std::vector<int64_t> &v, DType t) {
  Bytes b(v.size() * dtypeBytes(t));
  for (size_t i = 0; i < v.size(); ++i) {
    if (dtypeBytes(t) == 1) b[i] = uint8_t(v[i]);
    else if (dtypeBytes(t) == 2) { int16_t x = int16_t(v[i]); std::memcpy(&b[2 * i], &x, 2); }
    else { int32_t x = int32_t(v[i]); std::memcpy(&b[4 * i], &x, 4); }
  }
  return b;
}
Bytes fromFloats(const std::vector<float> &v) {
  Bytes b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// A window op over (N, C, H, W) int inputs: conv (groups, dilation) or pool.
// `tap(n, oc, oy, ox)` sums/maxes; padding reads 0 (sum) or never wins (max).
void intConv(const std::vector<int32_t> &x, const std::array<int64_t, 4> &xs,
             const std::vector<int32_t> &w, const std::vector<int32_t> *bias, const WindowParams &p,
             const std::array<int64_t, 4> &ys, std::vector<int64_t> &acc) {
  const int64_t icg = xs[1] / p.groups, ocg = ys[1] / p.groups;
  acc.assign(size_t(ys[0] * ys[1] * ys[2] * ys[3]), 0);
  for (int64_t n = 0; n < ys[0]; ++n)
    for (int64_t oc = 0; oc < ys[1]; ++oc) {
      const int64_t g = oc / ocg;
      int64_t *out = &acc[size_t(((n * ys[1] + oc) * ys[2]) * ys[3])];
      for (int64_t i = 0; i < icg; ++i) {
        const int32_t *plane = &x[size_t(((n * xs[1] + g * icg + i) * xs[2]) * xs[3])];
        for (int64_t ky = 0; ky < p.kh; ++ky)
          for (int64_t kx = 0; kx < p.kw; ++kx) {
            const int32_t k = w[size_t(((oc * icg + i) * p.kh + ky) * p.kw + kx)];
            if (k == 0) continue;
            for (int64_t oy = 0; oy < ys[2]; ++oy) {
              int64_t iy = oy * p.strideH - p.padTop + ky * p.dilationH;
              if (iy < 0 || iy >= xs[2]) continue;
              const int32_t *row = plane + iy * xs[3];
              int64_t *orow = out + oy * ys[3];
              for (int64_t ox = 0; ox < ys[3]; ++ox) {
                int64_t ix = ox * p.strideW - p.padLeft + kx * p.dilationW;
                if (ix >= 0 && ix < xs[3]) orow[ox] += int64_t(k) * row[ix];
              }
            }
          }
      }
      if (bias)
        for (int64_t j = 0; j < ys[2] * ys[3]; ++j) out[j] += (*bias)[size_t(oc)];
    }
}

template <class T, class Combine>
void windowPool(const T *x, const std::array<int64_t, 4> &xs, const WindowParams &p,
                const std::array<int64_t, 4> &ys, T init, Combine combine, std::vector<T> &out) {
  out.assign(size_t(ys[0] * ys[1] * ys[2] * ys[3]), init);
  for (int64_t nc = 0; nc < ys[0] * ys[1]; ++nc) {
    const T *plane = x + nc * xs[2] * xs[3];
    T *o = &out[size_t(nc * ys[2] * ys[3])];
    for (int64_t oy = 0; oy < ys[2]; ++oy)
      for (int64_t ox = 0; ox < ys[3]; ++ox) {
        T a = init;
        for (int64_t ky = 0; ky < p.kh; ++ky)
          for (int64_t kx = 0; kx < p.kw; ++kx) {
            int64_t iy = oy * p.strideH - p.padTop + ky, ix = ox * p.strideW - p.padLeft + kx;
            bool inside = iy >= 0 && iy < xs[2] && ix >= 0 && ix < xs[3];
            a = combine(a, inside ? plane[iy * xs[3] + ix] : T(0), inside);
          }
        o[oy * ys[3] + ox] = a;
      }
  }
}

WindowParams globalWindow(const Tensor &x) {
  WindowParams p;
  p.kh = x.nchw()[2], p.kw = x.nchw()[3];
  return p;
}

} // namespace

int64_t int8Binary(OpKind kind, int64_t a, int64_t b, const Op &op, DType out) {
  switch (kind) {
  case OpKind::Add: return rq(a * op.multipliers[0] + b * op.multipliers[1], op, op.relu, out);
  case OpKind::Max: return rq(std::max(a * op.multipliers[0], b * op.multipliers[1]), op, op.relu, out);
  default: return rq(a * b * op.multipliers[0], op, op.relu, out);
  }
}

int64_t int8LeakyRelu(int64_t x, const Op &op, DType out) {
  return std::max(x, rq(x * op.multipliers[0], op, false, out));
}

int64_t quantizeValue(float x, float scale, DType out) {
  float inv = 1.0f / scale;
  return sim::fp32ToInt(x * inv, precOf(out), signedOf(out));
}

const std::array<float, SigmoidRecipe::kExpTerms> &SigmoidRecipe::expCoefficients() {
  static const std::array<float, kExpTerms> c = [] {
    std::array<float, kExpTerms> v{};
    double f = 1.0;
    for (unsigned k = 0; k < kExpTerms; ++k) {
      if (k > 0) f *= double(k);
      v[k] = float(1.0 / f);
    }
    return v;
  }();
  return c;
}

float sigmoidChip(float x) {
  const auto &c = SigmoidRecipe::expCoefficients();
  float t = std::min(std::max(x, -SigmoidRecipe::kClamp), SigmoidRecipe::kClamp);
  t = t * (-1.0f / float(1u << SigmoidRecipe::kSquarings));
  float e = 0.0f;
  for (unsigned k = SigmoidRecipe::kExpTerms; k-- > 0;) {
    float p = e * t;
    e = p + c[k];
  }
  for (unsigned i = 0; i < SigmoidRecipe::kSquarings; ++i) e = e * e;
  e = e + 1.0f;
  return 1.0f / e;
}

Bytes activationTable(kernels::UnaryKind kind, float a, float b, DType in, float inScale, DType out,
                      float outScale, TableAffine before, TableAffine after) {
  std::vector<float> x(256), y(256);
  for (int i = 0; i < 256; ++i) {
    float v = float(in == DType::U8 ? i : int(int8_t(uint8_t(i)))) * inScale;
    x[size_t(i)] = v * before.scale + before.shift;
  }
  kernels::unary(kind, x.data(), y.data(), 256, a, b);
  Bytes t(256);
  for (size_t i = 0; i < 256; ++i) t[i] = uint8_t(quantizeValue(y[i] * after.scale + after.shift, outScale, out));
  return t;
}

Status evalOp(const Graph &g, const Op &op, const std::vector<const Bytes *> &inputs, Bytes &out) {
  if (inputs.size() != op.inputs.size())
    return makeError(opKindName(op.kind), " '", op.name, "': ", inputs.size(), " values for ",
                     op.inputs.size(), " inputs");
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i] || inputs[i]->size() != g.tensors[op.inputs[i]].bytes())
      return makeError(opKindName(op.kind), " '", op.name, "': value of input '",
                       g.tensors[op.inputs[i]].name, "' has the wrong size");
  const Tensor &y = g.tensors[op.output];
  const Tensor &x = g.tensors[op.inputs[0]];
  const auto xs = x.nchw(), ys = y.nchw();
  const bool isInt = y.dtype != DType::F32;
  const size_t count = size_t(y.numel());
  std::vector<int64_t> ri;
  std::vector<float> rf;

  switch (op.kind) {
  case OpKind::Conv: {
    WindowParams p = effectiveWindow(op, x, y);
    if (isInt) {
      auto xi = toInts(*inputs[0], x.dtype), wi = toInts(*inputs[1], g.tensors[op.inputs[1]].dtype);
      std::vector<int32_t> bi;
      if (inputs.size() == 3) bi = toInts(*inputs[2], DType::I16);
      intConv(xi, xs, wi, inputs.size() == 3 ? &bi : nullptr, p, ys, ri);
      for (auto &v : ri) v = rq(v, op, op.relu, y.dtype);
    } else {
      kernels::ConvParams c;
      c.n = xs[0], c.ic = xs[1], c.ih = xs[2], c.iw = xs[3];
      c.oc = ys[1], c.oh = ys[2], c.ow = ys[3], c.kh = p.kh, c.kw = p.kw;
      c.strideH = p.strideH, c.strideW = p.strideW, c.dilationH = p.dilationH, c.dilationW = p.dilationW;
      c.padTop = p.padTop, c.padBottom = p.padBottom, c.padLeft = p.padLeft, c.padRight = p.padRight;
      c.groups = p.groups;
      rf.resize(count);
      kernels::conv2d(floats(*inputs[0]), floats(*inputs[1]),
                      inputs.size() == 3 ? floats(*inputs[2]) : nullptr, rf.data(), c);
      if (op.relu) for (auto &v : rf) v = sim::relu(v);
    }
    break;
  }
  case OpKind::ConvTranspose: {
    const WindowParams &p = op.window;
    const TransposedPads tp = transposedPads(op, x, y);
    if (isInt) {
      auto xi = toInts(*inputs[0], x.dtype), wi = toInts(*inputs[1], g.tensors[op.inputs[1]].dtype);
      std::vector<int32_t> bi;
      if (inputs.size() == 3) bi = toInts(*inputs[2], DType::I16);
      // out[y] += in[i] * w[k] for y = i*s - (keH - top) + k*d.
      const int64_t offH = (p.kh - 1) * p.dilationH - tp.top, offW = (p.kw - 1) * p.dilationW - tp.left;
      ri.assign(count, 0);
      for (int64_t n = 0; n < ys[0]; ++n)
        for (int64_t o = 0; o < ys[1]; ++o) {
          int64_t *out = &ri[size_t((n * ys[1] + o) * ys[2] * ys[3])];
          for (int64_t i = 0; i < xs[1]; ++i)
            for (int64_t ky = 0; ky < p.kh; ++ky)
              for (int64_t kx = 0; kx < p.kw; ++kx) {
                const int64_t k = wi[size_t(((i * ys[1] + o) * p.kh + ky) * p.kw + kx)];
                for (int64_t iy = 0; iy < xs[2]; ++iy) {
                  int64_t oy = iy * p.strideH - offH + ky * p.dilationH;
                  if (oy < 0 || oy >= ys[2]) continue;
                  for (int64_t ix = 0; ix < xs[3]; ++ix) {
                    int64_t ox = ix * p.strideW - offW + kx * p.dilationW;
                    if (ox >= 0 && ox < ys[3])
                      out[oy * ys[3] + ox] += k * xi[size_t(((n * xs[1] + i) * xs[2] + iy) * xs[3] + ix)];
                  }
                }
              }
          for (int64_t j = 0; j < ys[2] * ys[3]; ++j)
            out[j] = rq(out[j] + (bi.empty() ? 0 : bi[size_t(o)]), op, op.relu, y.dtype);
        }
    } else {
      kernels::ConvParams c;
      c.n = xs[0], c.ic = xs[1], c.ih = xs[2], c.iw = xs[3];
      c.oc = ys[1], c.oh = ys[2], c.ow = ys[3], c.kh = p.kh, c.kw = p.kw;
      c.strideH = p.strideH, c.strideW = p.strideW, c.dilationH = p.dilationH, c.dilationW = p.dilationW;
      c.padTop = p.padTop, c.padLeft = p.padLeft;
      c.padBottom = (p.kh - 1) * p.dilationH - tp.bottom, c.padRight = (p.kw - 1) * p.dilationW - tp.right;
      rf.resize(count);
      kernels::convTranspose2d(floats(*inputs[0]), floats(*inputs[1]),
                               inputs.size() == 3 ? floats(*inputs[2]) : nullptr, rf.data(), c);
      if (op.relu) for (auto &v : rf) v = sim::relu(v);
    }
    break;
  }
  case OpKind::Pool: case OpKind::GlobalAvgPool: {
    WindowParams p = op.kind == OpKind::Pool ? effectiveWindow(op, x, y) : globalWindow(x);
    bool isMax = op.kind == OpKind::Pool && op.window.isMax;
    if (isInt) {
      auto xi = toInts(*inputs[0], x.dtype);
      std::vector<int32_t> acc;
      if (isMax)
        windowPool<int32_t>(xi.data(), xs, p, ys, std::numeric_limits<int32_t>::lowest(),
                            [](int32_t a, int32_t v, bool in) { return in ? std::max(a, v) : a; }, acc);
      else
        windowPool<int32_t>(xi.data(), xs, p, ys, 0, [](int32_t a, int32_t v, bool) { return a + v; }, acc);
      ri.resize(count);
      for (size_t i = 0; i < count; ++i)
        ri[i] = isMax ? sim::saturate(acc[i], precOf(y.dtype), signedOf(y.dtype))
                      : rq(int64_t(acc[i]) * op.multipliers[0], op, false, y.dtype);
    } else {
      // The chip multiplies every tap by the constant 1/(kh*kw) and sums (no FMA).
      const float k = 1.0f / float(p.kh * p.kw);
      if (isMax)
        windowPool<float>(floats(*inputs[0]), xs, p, ys, std::numeric_limits<float>::lowest(),
                          [](float a, float v, bool in) { return in ? std::max(a, v) : a; }, rf);
      else
        windowPool<float>(floats(*inputs[0]), xs, p, ys, 0.0f,
                          [k](float a, float v, bool) { float t = k * v; return a + t; }, rf);
    }
    break;
  }
  case OpKind::Add: case OpKind::Mul: case OpKind::Max: {
    // Element i of the second input: the same, its (n, c) when broadcast,
    // or its channel for a per-channel weight.
    const Tensor &second = g.tensors[op.inputs[1]];
    const int64_t plane = second.numel() == y.numel() ? 1 : ys[2] * ys[3];
    const int64_t wrap = second.isWeight() ? ys[1] : INT64_MAX;
    if (isInt) {
      auto a = toInts(*inputs[0], x.dtype), b = toInts(*inputs[1], g.tensors[op.inputs[1]].dtype);
      ri.resize(count);
      for (size_t i = 0; i < count; ++i) ri[i] = int8Binary(op.kind, a[i], b[size_t(int64_t(i) / plane % wrap)], op, y.dtype);
    } else {
      const float *a = floats(*inputs[0]), *b = floats(*inputs[1]);
      rf.resize(count);
      for (size_t i = 0; i < count; ++i) {
        const float bv = b[int64_t(i) / plane % wrap];
        float v = op.kind == OpKind::Add ? a[i] + bv : op.kind == OpKind::Mul ? a[i] * bv : std::max(a[i], bv);
        rf[i] = op.relu ? sim::relu(v) : v;
      }
    }
    break;
  }
  case OpKind::Affine:
    if (inputs.size() == 3) { // per channel: x * scale[c] + bias[c]
      const int64_t plane = ys[2] * ys[3];
      if (isInt) {
        auto a = toInts(*inputs[0], x.dtype), sc = toInts(*inputs[1], DType::I16), bi = toInts(*inputs[2], DType::I32);
        ri.resize(count);
        for (size_t i = 0; i < count; ++i) {
          const size_t c = size_t(int64_t(i) / plane % ys[1]);
          ri[i] = rq(int64_t(a[i]) * sc[c] + bi[c], op, op.relu, y.dtype);
        }
      } else {
        const float *a = floats(*inputs[0]), *sc = floats(*inputs[1]), *bi = floats(*inputs[2]);
        rf.resize(count);
        for (size_t i = 0; i < count; ++i) {
          const size_t c = size_t(int64_t(i) / plane % ys[1]);
          float t = a[i] * sc[c];
          float v = t + bi[c];
          rf[i] = op.relu ? sim::relu(v) : v;
        }
      }
      break;
    }
    [[fallthrough]];
  case OpKind::Relu: case OpKind::LeakyRelu: case OpKind::Clip: case OpKind::Requant:
  case OpKind::Sigmoid: {
    if (isInt) {
      auto a = toInts(*inputs[0], x.dtype);
      ri.resize(count);
      int64_t lo = int64_t(op.clipMin), hi = int64_t(op.clipMax);
      for (size_t i = 0; i < count; ++i) {
        int64_t v = a[i];
        switch (op.kind) {
        case OpKind::Relu: v = std::max<int64_t>(v, 0); break;
        case OpKind::LeakyRelu: v = int8LeakyRelu(v, op, y.dtype); break;
        case OpKind::Clip: v = std::min(std::max(v, lo), hi); break;
        case OpKind::Affine: v = rq(v * op.multipliers[0] + op.multipliers[1], op, op.relu, y.dtype); break;
        default: v = rq(v * op.multipliers[0], op, op.relu, y.dtype); break;
        }
        ri[i] = sim::saturate(v, precOf(y.dtype), signedOf(y.dtype));
      }
    } else {
      const float *a = floats(*inputs[0]);
      rf.resize(count);
      for (size_t i = 0; i < count; ++i) {
        float v = a[i];
        if (op.kind == OpKind::Relu) v = std::max(v, 0.0f);
        else if (op.kind == OpKind::LeakyRelu) v = std::max(v, v * op.alpha);
        else if (op.kind == OpKind::Affine) { float t = v * op.alpha; v = t + op.beta; if (op.relu) v = sim::relu(v); }
        else if (op.kind == OpKind::Sigmoid) v = sigmoidChip(v);
        else v = std::min(std::max(v, op.clipMin), op.clipMax);
        rf[i] = v;
      }
    }
    break;
  }
  case OpKind::Lut: {
    const Bytes &t = *inputs[1];
    out.resize(count);
    for (size_t i = 0; i < count; ++i) out[i] = t[(*inputs[0])[i]];
    return Status::ok();
  }
  case OpKind::Fc: {
    const int64_t m = xs[0], n = ys[1], k = x.numel() / m;
    if (isInt) {
      auto a = toInts(*inputs[0], x.dtype), w = toInts(*inputs[1], g.tensors[op.inputs[1]].dtype);
      std::vector<int32_t> b;
      if (inputs.size() == 3) b = toInts(*inputs[2], DType::I16);
      ri.resize(count);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          int64_t acc = 0;
          for (int64_t q = 0; q < k; ++q) acc += int64_t(a[size_t(i * k + q)]) * w[size_t(j * k + q)];
          if (!b.empty()) acc += b[size_t(j)];
          ri[size_t(i * n + j)] = rq(acc, op, op.relu, y.dtype);
        }
    } else {
      const float *a = floats(*inputs[0]), *w = floats(*inputs[1]);
      const float *b = inputs.size() == 3 ? floats(*inputs[2]) : nullptr;
      rf.resize(count);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          float acc = 0.0f;
          for (int64_t q = 0; q < k; ++q) { float t = a[i * k + q] * w[j * k + q]; acc += t; }
          if (b) acc += b[j];
          rf[size_t(i * n + j)] = op.relu ? sim::relu(acc) : acc;
        }
    }
    break;
  }
  case OpKind::Concat: {
    const size_t e = dtypeBytes(y.dtype);
    const int64_t plane = ys[2] * ys[3];
    out.resize(count * e);
    int64_t c0 = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const int64_t ci = g.tensors[op.inputs[i]].nchw()[1];
      for (int64_t n = 0; n < ys[0]; ++n)
        std::memcpy(&out[size_t((n * ys[1] + c0) * plane) * e], &(*inputs[i])[size_t(n * ci * plane) * e],
                    size_t(ci * plane) * e);
      c0 += ci;
    }
    return Status::ok();
  }
  case OpKind::Upsample: {
    const size_t e = dtypeBytes(y.dtype);
    out.resize(count * e);
    for (int64_t nc = 0; nc < ys[0] * ys[1]; ++nc)
      for (int64_t oy = 0; oy < ys[2]; ++oy)
        for (int64_t ox = 0; ox < ys[3]; ++ox)
          std::memcpy(&out[size_t((nc * ys[2] + oy) * ys[3] + ox) * e],
                      &(*inputs[0])[size_t((nc * xs[2] + oy / op.scaleH) * xs[3] + ox / op.scaleW) * e], e);
    return Status::ok();
  }
  case OpKind::Reshape:
    out = *inputs[0];
    return Status::ok();
  case OpKind::Cast: {
    if (isInt) {
      const float *a = floats(*inputs[0]);
      ri.resize(count);
      for (size_t i = 0; i < count; ++i) ri[i] = quantizeValue(a[i], y.scale, y.dtype);
    } else {
      auto a = toInts(*inputs[0], x.dtype);
      rf.resize(count);
      for (size_t i = 0; i < count; ++i) rf[i] = float(a[i]) * x.scale;
    }
    break;
  }
  }
  out = isInt ? fromInts(ri, y.dtype) : fromFloats(rf);
  return Status::ok();
}

Result<std::vector<Bytes>> evalGraph(const Graph &g, const std::vector<Bytes> &inputs) {
  TPU_RETURN_IF_ERROR(g.validate());
  if (inputs.size() != g.inputs.size())
    return makeError("graph '", g.name, "' has ", g.inputs.size(), " inputs, ", inputs.size(), " values given");
  std::vector<Bytes> values(g.tensors.size());
  for (size_t t = 0; t < g.tensors.size(); ++t)
    if (g.tensors[t].isWeight()) values[t] = g.tensors[t].data;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor &t = g.tensors[g.inputs[i]];
    if (inputs[i].size() != t.bytes())
      return makeError("input '", t.name, "': ", inputs[i].size(), " bytes, ", t.bytes(), " expected");
    values[g.inputs[i]] = inputs[i];
  }
  for (const Op &op : g.ops) {
    std::vector<const Bytes *> in;
    for (int t : op.inputs) in.push_back(&values[t]);
    TPU_RETURN_IF_ERROR(evalOp(g, op, in, values[op.output]));
  }
  return values;
}

} // namespace tpu::backend
