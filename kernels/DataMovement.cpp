// Transpose, concat, split, slice and pad: index arithmetic, no math; the
// ONNX axis, squeeze and unsqueeze shape rules.
#include "kernels/Kernels.h"
#include "support/Npz.h"
#include "support/Parallel.h"

#include <algorithm>
#include <cstring>

namespace tpu::kernels {
namespace {

// out[idx] = in[base + sum(idx[d] * strides[d])] over every index of outShape.
void stridedCopy(const float *in, int64_t base, const std::vector<int64_t> &strides, float *out,
                 const Shape &outShape) {
  size_t rank = outShape.size();
  if (rank == 0) {
    out[0] = in[base];
    return;
  }
  int64_t inner = outShape.back(), innerStride = strides.back();
  int64_t rows = inner ? numElements(outShape) / inner : 0;
  parallelFor(rows, std::max<int64_t>(1, 8192 / std::max<int64_t>(1, inner)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      int64_t off = base, rem = r;
      for (size_t d = rank - 1; d-- > 0;) {
        off += (rem % outShape[d]) * strides[d];
        rem /= outShape[d];
      }
      float *dst = out + r * inner;
      if (innerStride == 1)
        std::memcpy(dst, in + off, inner * sizeof(float));
      else
        for (int64_t i = 0; i < inner; ++i) dst[i] = in[off + i * innerStride];
    }
  });
}

} // namespace

void transpose(const float *in, const Shape &shape, const std::vector<int64_t> &perm, float *out) {
  std::vector<int64_t> inStrides = stridesOf(shape), strides(perm.size());
  Shape outShape(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    outShape[i] = shape[perm[i]];
    strides[i] = inStrides[perm[i]];
  }
  stridedCopy(in, 0, strides, out, outShape);
}

void slice(const float *in, const Shape &shape, const std::vector<int64_t> &starts, const std::vector<int64_t> &steps,
           float *out, const Shape &outShape) {
  std::vector<int64_t> inStrides = stridesOf(shape), strides(shape.size());
  int64_t base = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    base += starts[d] * inStrides[d];
    strides[d] = steps[d] * inStrides[d];
  }
  if (numElements(outShape) == 0) return;
  stridedCopy(in, base, strides, out, outShape);
}

void concat(const std::vector<const float *> &inputs, const std::vector<Shape> &shapes, int64_t axis, float *out) {
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shapes[0][d];
  std::vector<int64_t> chunk(inputs.size());
  int64_t row = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    chunk[i] = 1;
    for (size_t d = axis; d < shapes[i].size(); ++d) chunk[i] *= shapes[i][d];
    row += chunk[i];
  }
  for (int64_t o = 0; o < outer; ++o) {
    float *dst = out + o * row;
    for (size_t i = 0; i < inputs.size(); ++i) {
      std::memcpy(dst, inputs[i] + o * chunk[i], chunk[i] * sizeof(float));
      dst += chunk[i];
    }
  }
}

void split(const float *in, const Shape &shape, int64_t axis, const std::vector<int64_t> &sizes,
           const std::vector<float *> &outs) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  int64_t row = shape[axis] * inner;
  for (int64_t o = 0; o < outer; ++o) {
    const float *src = in + o * row;
    for (size_t i = 0; i < sizes.size(); ++i) {
      int64_t chunk = sizes[i] * inner;
      std::memcpy(outs[i] + o * chunk, src, chunk * sizeof(float));
      src += chunk;
    }
  }
}

void pad(const float *in, const Shape &shape, const std::vector<int64_t> &padsBegin,
         const std::vector<int64_t> &padsEnd, PadMode mode, float value, float *out) {
  size_t rank = shape.size();
  Shape outShape(rank);
  for (size_t d = 0; d < rank; ++d) outShape[d] = shape[d] + padsBegin[d] + padsEnd[d];
  std::vector<int64_t> inStrides = stridesOf(shape);
  // Maps an output coordinate to an input coordinate, -1 for constant fill.
  auto source = [&](size_t d, int64_t o) -> int64_t {
    int64_t i = o - padsBegin[d], n = shape[d];
    if (i >= 0 && i < n) return i;
    if (mode == PadMode::Constant || n == 0) return -1;
    if (mode == PadMode::Edge) return std::clamp<int64_t>(i, 0, n - 1);
    if (n == 1) return 0;
    int64_t period = 2 * (n - 1);
    i %= period;
    if (i < 0) i += period;
    return i < n ? i : period - i;
  };
  int64_t total = numElements(outShape);
  if (rank == 0) {
    if (total) out[0] = in[0];
    return;
  }
  int64_t inner = outShape.back();
  int64_t rows = inner ? total / inner : 0;
  parallelFor(rows, 64, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      int64_t off = 0, rem = r;
      bool fill = false;
      for (size_t d = rank - 1; d-- > 0;) {
        int64_t s = source(d, rem % outShape[d]);
        rem /= outShape[d];
        if (s < 0)
          fill = true;
        else
          off += s * inStrides[d];
      }
      float *dst = out + r * inner;
      for (int64_t i = 0; i < inner; ++i) {
        int64_t s = fill ? -1 : source(rank - 1, i);
        dst[i] = s < 0 ? value : in[off + s];
      }
    }
  });
}

void gather(const float *in, const Shape &shape, int64_t axis, const std::vector<int64_t> &indices, float *out) {
  int64_t outer = 1, inner = 1, len = shape[axis];
  for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  int64_t n = static_cast<int64_t>(indices.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < n; ++j)
      std::memcpy(out + (o * n + j) * inner, in + (o * len + indices[j]) * inner, inner * sizeof(float));
}

void tile(const float *in, const Shape &shape, const std::vector<int64_t> &repeats, float *out) {
  size_t rank = shape.size();
  Shape outShape(rank);
  for (size_t d = 0; d < rank; ++d) outShape[d] = shape[d] * repeats[d];
  std::vector<int64_t> inStrides = stridesOf(shape);
  int64_t total = numElements(outShape);
  std::vector<int64_t> idx(rank, 0);
  for (int64_t i = 0; i < total; ++i) {
    int64_t off = 0;
    for (size_t d = 0; d < rank; ++d) off += (idx[d] % shape[d]) * inStrides[d];
    out[i] = in[off];
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < outShape[d]) break;
      idx[d] = 0;
    }
  }
}

Result<int64_t> normalizeAxis(int64_t axis, int64_t rank, const std::string &what) {
  if (axis < -rank || axis >= rank) return makeError(what, " ", axis, " is out of range for rank ", rank);
  return axis < 0 ? axis + rank : axis;
}

Result<std::vector<int64_t>> normalizeAxes(std::vector<int64_t> axes, int64_t rank) {
  for (int64_t &a : axes) {
    auto n = normalizeAxis(a, rank);
    if (!n) return n.status();
    a = *n;
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) return makeError("repeated axis");
  return axes;
}

Result<Shape> reshapeTarget(const Shape &in, const Shape &shape, bool allowzero) {
  Shape out(shape);
  int inferred = -1;
  int64_t known = 1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 0 && !allowzero) {
      if (i >= in.size()) return makeError("reshape dim ", i, " copies a dim the input does not have");
      out[i] = in[i];
    }
    if (out[i] == -1) {
      if (inferred >= 0) return makeError("reshape target ", shapeToString(shape), " has more than one -1");
      inferred = int(i);
    } else if (out[i] < 0) {
      return makeError("reshape target ", shapeToString(shape), " has a negative dim");
    } else {
      known *= out[i];
    }
  }
  int64_t total = numElements(in);
  if (inferred >= 0) {
    if (known == 0 || total % known)
      return makeError("cannot reshape ", shapeToString(in), " to ", shapeToString(shape));
    out[inferred] = total / known;
  } else if (known != total) {
    return makeError("cannot reshape ", shapeToString(in), " to ", shapeToString(shape));
  }
  return out;
}

Result<Shape> squeezeShape(const Shape &in, const std::vector<int64_t> &axesIn) {
  Shape out;
  if (axesIn.empty()) {
    for (int64_t d : in)
      if (d != 1) out.push_back(d);
    return out;
  }
  auto axes = normalizeAxes(axesIn, int64_t(in.size()));
  if (!axes) return axes.status();
  for (size_t i = 0; i < in.size(); ++i) {
    bool squeezed = std::binary_search(axes->begin(), axes->end(), int64_t(i));
    if (squeezed && in[i] != 1) return makeError("cannot squeeze dim ", i, " of size ", in[i]);
    if (!squeezed) out.push_back(in[i]);
  }
  return out;
}

Result<Shape> unsqueezeShape(const Shape &in, const std::vector<int64_t> &axesIn) {
  int64_t rank = int64_t(in.size() + axesIn.size());
  auto axes = normalizeAxes(axesIn, rank);
  if (!axes) return axes.status();
  Shape out;
  size_t next = 0;
  for (int64_t i = 0; i < rank; ++i) {
    if (std::binary_search(axes->begin(), axes->end(), i))
      out.push_back(1);
    else
      out.push_back(in[next++]);
  }
  return out;
}

} // namespace tpu::kernels
