#include "kernels/HostOps.h"

#include "support/Npz.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <sstream>

namespace tpu::kernels {

int64_t HostAttrs::integer(const std::string &name, int64_t fallback) const {
  auto it = ints_.find(name);
  return it == ints_.end() || it->second.size() != 1 ? fallback : it->second[0];
}

double HostAttrs::real(const std::string &name, double fallback) const {
  auto it = reals_.find(name);
  return it == reals_.end() || it->second.size() != 1 ? fallback : it->second[0];
}

std::string HostAttrs::text(const std::string &name, const std::string &fallback) const {
  auto it = texts_.find(name);
  return it == texts_.end() ? fallback : it->second;
}

const std::vector<int64_t> *HostAttrs::ints(const std::string &name) const {
  auto it = ints_.find(name);
  return it == ints_.end() ? nullptr : &it->second;
}

const std::vector<double> *HostAttrs::reals(const std::string &name) const {
  auto it = reals_.find(name);
  return it == reals_.end() ? nullptr : &it->second;
}

std::string HostAttrs::describe() const {
  std::map<std::string, std::string> all;
  auto list = [](const auto &v) {
    std::ostringstream os;
    if (v.size() != 1) os << "[";
    for (size_t i = 0; i < v.size(); ++i) os << (i ? "," : "") << v[i];
    if (v.size() != 1) os << "]";
    return os.str();
  };
  for (const auto &[k, v] : ints_) all[k] = list(v);
  for (const auto &[k, v] : reals_) all[k] = list(v);
  for (const auto &[k, v] : texts_) all[k] = v;
  std::string s;
  for (const auto &[k, v] : all) s += (s.empty() ? "" : " ") + k + "=" + v;
  return s;
}

std::pair<float, float> unaryParams(UnaryKind kind, const HostAttrs &a) {
  switch (kind) {
  case UnaryKind::LeakyRelu:
    return {float(a.real("alpha", 0.01)), 0.0f};
  case UnaryKind::Elu:
    return {float(a.real("alpha", 1.0)), 0.0f};
  case UnaryKind::Clip:
    return {float(a.real("min", 0.0)), float(a.real("max", 0.0))};
  case UnaryKind::HardSigmoid:
    return {float(a.real("alpha", 0.2)), float(a.real("beta", 0.5))};
  default:
    return {0.0f, 0.0f};
  }
}

namespace {

// ---- the ops ----------------------------------------------------------------

// The axis attribute, checked against the input's rank.
Result<size_t> axisOf(const HostAttrs &a, const Shape &shape) {
  const int64_t axis = a.integer("axis", 0), rank = int64_t(shape.size());
  if (axis < -rank || axis >= rank) return makeError("axis ", axis, " out of range for rank ", rank);
  return size_t(axis < 0 ? axis + rank : axis);
}

using Shapes = std::vector<Shape>;

Result<Shapes> argReduceShape(const HostAttrs &a, const Shapes &in) {
  auto axis = axisOf(a, in[0]);
  if (!axis) return axis.status();
  Shape out;
  for (size_t d = 0; d < in[0].size(); ++d)
    if (d != *axis)
      out.push_back(in[0][d]);
    else if (a.integer("keepdims", 1))
      out.push_back(1);
  return Shapes{out};
}

template <bool IsMax>
Status argReduceOp(const HostAttrs &a, const std::vector<ConstView> &in, std::vector<MutableView> &out) {
  auto axis = axisOf(a, in[0].shape);
  if (!axis) return axis.status();
  argReduce(IsMax, in[0].data, in[0].shape, int64_t(*axis), a.integer("select_last_index", 0) != 0, out[0].data);
  return Status::ok();
}

Result<Shapes> sameShape(const HostAttrs &, const Shapes &in) { return Shapes{in[0]}; }

// The types castOp converts to: others (f16, i8, ui8, ...) would need a
// rounding or a wrap it does not do, so a bmodel or module naming one is refused.
Result<Shapes> castShape(const HostAttrs &a, const Shapes &in) {
  const std::string to = a.text("to", "f32");
  if (to != "f32" && to != "i64" && to != "i32" && to != "i1")
    return makeError("to ", to, " is a type the host cast does not convert to (f32, i64, i32, i1)");
  return Shapes{in[0]};
}

// To an integer type: toward zero (onnxruntime's float -> int64); to i1:
// non-zero is 1; to f32: the value.
Status castOp(const HostAttrs &a, const std::vector<ConstView> &in, std::vector<MutableView> &out) {
  const std::string to = a.text("to", "f32");
  const bool toBool = to == "i1", toInt = !toBool && to != "f32";
  const int64_t n = numElements(in[0].shape);
  for (int64_t i = 0; i < n; ++i) {
    const float x = in[0].data[i];
    out[0].data[i] = toBool ? (x != 0.0f ? 1.0f : 0.0f) : toInt ? std::trunc(x) : x;
  }
  return Status::ok();
}

// k is an attribute, or, with a second input, that input's one value at run
// time, the attribute then its bound.
Result<Shapes> topkShape(const HostAttrs &a, const Shapes &in) {
  auto axis = axisOf(a, in[0]);
  if (!axis) return axis.status();
  const int64_t k = a.integer("k", -1);
  if (k < 0 || (in.size() == 1 && k > in[0][*axis])) return makeError("k ", k, " is not in [0, ", in[0][*axis], "]");
  if (in.size() == 2 && numElements(in[1]) != 1) return makeError("k holds ", numElements(in[1]), " values, not one");
  Shape out = in[0];
  out[*axis] = std::min(k, in[0][*axis]);
  return Shapes{out, out};
}

// ONNX TopK: the k largest (or smallest) along the axis, sorted, ties by
// the lower index (onnxruntime's order); results values and indices.
Status topkOp(const HostAttrs &a, const std::vector<ConstView> &in, std::vector<MutableView> &out) {
  auto axis = axisOf(a, in[0].shape);
  if (!axis) return axis.status();
  const auto [outer, len, inner] = splitAtAxis(in[0].shape, *axis);
  const double given = in.size() == 2 ? double(in[1].data[0]) : double(a.integer("k", -1));
  if (!(given >= 0 && given <= double(len)) || given != std::trunc(given))
    return makeError("k ", given, " is not in [0, ", len, "]");
  const int64_t k = int64_t(given);
  for (MutableView &v : out) v.shape[*axis] = k;
  const bool largest = a.integer("largest", 1) != 0;
  std::vector<int64_t> order(static_cast<size_t>(len));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const float *src = in[0].data + o * len * inner + i;
      std::iota(order.begin(), order.end(), 0);
      // (A structured binding is not captured by lambdas before C++20: clang refuses it.)
      std::stable_sort(order.begin(), order.end(), [&, step = inner](int64_t x, int64_t y) {
        const float vx = src[x * step], vy = src[y * step];
        // NaN ranks above every number for largest, below for smallest (numpy).
        if (std::isnan(vx) || std::isnan(vy))
          return largest ? std::isnan(vx) && !std::isnan(vy) : !std::isnan(vx) && std::isnan(vy);
        return largest ? vx > vy : vx < vy;
      });
      for (int64_t j = 0; j < k; ++j) {
        const int64_t at = (o * k + j) * inner + i;
        out[0].data[at] = src[order[size_t(j)] * inner];
        out[1].data[at] = float(order[size_t(j)]);
      }
    }
  return Status::ok();
}

Result<Shapes> gatherShape(const HostAttrs &a, const Shapes &in) {
  auto axis = axisOf(a, in[0]);
  if (!axis) return axis.status();
  Shape out(in[0].begin(), in[0].begin() + int64_t(*axis));
  out.insert(out.end(), in[1].begin(), in[1].end());
  out.insert(out.end(), in[0].begin() + int64_t(*axis) + 1, in[0].end());
  return Shapes{out};
}

// numpy.take(data, indices, axis); a negative index counts from the end.
Status gatherOp(const HostAttrs &a, const std::vector<ConstView> &in, std::vector<MutableView> &out) {
  auto axis = axisOf(a, in[0].shape);
  if (!axis) return axis.status();
  const int64_t dim = in[0].shape[*axis], n = numElements(in[1].shape);
  std::vector<int64_t> indices(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const float f = in[1].data[i];
    const int64_t v = int64_t(f);
    if (float(v) != f || v < -dim || v >= dim)
      return makeError("index ", f, " out of range for dim ", *axis, " of size ", dim);
    indices[size_t(i)] = v < 0 ? v + dim : v;
  }
  gather(in[0].data, in[0].shape, int64_t(*axis), indices, out[0].data);
  return Status::ok();
}

// An index along a dim of `dim` elements, negative counting from the end.
Result<int64_t> indexAlong(float f, int64_t dim) {
  const int64_t v = int64_t(f);
  if (float(v) != f || v < -dim || v >= dim) return makeError("index ", f, " out of range for a dim of size ", dim);
  return v < 0 ? v + dim : v;
}

// GatherElements / ScatterElements: the data offset that element i of the
// indices names, its position with the index replacing it along `axis`.
Result<int64_t> elementOffset(const ConstView &data, const ConstView &indices, size_t axis,
                              const std::vector<int64_t> &strides, int64_t i) {
  auto at = indexAlong(indices.data[i], data.shape[axis]);
  if (!at) return at.status();
  int64_t offset = 0;
  for (size_t d = indices.shape.size(); d-- > 0;) {
    const int64_t pos = i % indices.shape[d];
    i /= indices.shape[d];
    offset += (d == axis ? *at : pos) * strides[d];
  }
  return offset;
}

// ONNX GatherElements: the output has the indices' shape; along `axis` the
// index picks the data element, elsewhere the position is the output's.
Result<Shapes> gatherElementsShape(const HostAttrs &a, const Shapes &in) {
  auto axis = axisOf(a, in[0]);
  if (!axis) return axis.status();
  if (in[1].size() != in[0].size()) return makeError("indices must have the data's rank ", in[0].size());
  for (size_t d = 0; d < in[0].size(); ++d)
    if (d != *axis && in[1][d] > in[0][d]) return makeError("indices dim ", d, " exceeds the data's");
  return Shapes{in[1]};
}

Status gatherElementsOp(const HostAttrs &a, const std::vector<ConstView> &in, std::vector<MutableView> &out) {
  const size_t axis = *axisOf(a, in[0].shape);
  const auto strides = stridesOf(in[0].shape);
  for (int64_t i = 0; i < numElements(in[1].shape); ++i) {
    auto src = elementOffset(in[0], in[1], axis, strides, i);
    if (!src) return src.status();
    out[0].data[i] = in[0].data[*src];
  }
  return Status::ok();
}

// ONNX GatherND with batch_dims b: indices [batch..., k..., m] pick slices
// data[batch..., i_1..i_m, rest...].
Result<Shapes> gatherNdShape(const HostAttrs &a, const Shapes &in) {
  const int64_t b = a.integer("batch_dims", 0), r = int64_t(in[0].size()), q = int64_t(in[1].size());
  if (q < 1 || b < 0 || b >= std::min(r, q)) return makeError("batch_dims ", b, " must be below both ranks");
  const int64_t m = in[1].back();
  if (m < 1 || m > r - b) return makeError("the last indices dim ", m, " must be in [1, ", r - b, "]");
  for (int64_t d = 0; d < b; ++d)
    if (in[0][d] != in[1][d]) return makeError("batch dim ", d, " differs between data and indices");
  Shape out(in[1].begin(), in[1].end() - 1);
  out.insert(out.end(), in[0].begin() + b + m, in[0].end());
  return Shapes{out};
}

Status gatherNdOp(const HostAttrs &a, const std::vector<ConstView> &in, std::vector<MutableView> &out) {
  const Shape &ds = in[0].shape, &is = in[1].shape;
  const int64_t b = a.integer("batch_dims", 0), m = is.back();
  const auto strides = stridesOf(ds);
  int64_t batches = 1, slice = 1;
  for (int64_t d = 0; d < b; ++d) batches *= ds[size_t(d)];
  for (size_t d = size_t(b + m); d < ds.size(); ++d) slice *= ds[d];
  const int64_t tuples = numElements(is) / m / batches, batchStride = b ? strides[size_t(b - 1)] : 0;
  float *dst = out[0].data;
  for (int64_t bi = 0; bi < batches; ++bi)
    for (int64_t t = 0; t < tuples; ++t) {
      const float *tuple = in[1].data + (bi * tuples + t) * m;
      int64_t src = bi * batchStride;
      for (int64_t j = 0; j < m; ++j) {
        auto at = indexAlong(tuple[j], ds[size_t(b + j)]);
        if (!at) return at.status();
        src += *at * strides[size_t(b + j)];
      }
      std::copy(in[0].data + src, in[0].data + src + slice, dst);
      dst += slice;
    }
  return Status::ok();
}

// ONNX ScatterND / ScatterElements reductions: none (replace), add, mul, max, min.
Result<float (*)(float, float)> reductionOf(const HostAttrs &a) {
  const std::string r = a.text("reduction", "none");
  if (r == "none") return +[](float, float u) { return u; };
  if (r == "add") return +[](float x, float u) { return x + u; };
  if (r == "mul") return +[](float x, float u) { return x * u; };
  if (r == "max") return +[](float x, float u) { return std::max(x, u); };
  if (r == "min") return +[](float x, float u) { return std::min(x, u); };
  return makeError("reduction '", r, "' is not none, add, mul, max or min");
}

// ScatterND: a copy of data, then each indices tuple [.., m] updates its
// slice data[i_1..i_m, rest...] with updates[.., rest...], in order.
Result<Shapes> scatterNdShape(const HostAttrs &a, const Shapes &in) {
  TPU_RETURN_IF_ERROR(reductionOf(a).status());
  const int64_t r = int64_t(in[0].size());
  if (in[1].empty() || in[1].back() < 1 || in[1].back() > r)
    return makeError("the last indices dim must be in [1, ", r, "]");
  Shape want(in[1].begin(), in[1].end() - 1);
  want.insert(want.end(), in[0].begin() + in[1].back(), in[0].end());
  if (in[2] != want) return makeError("updates must be ", shapeToString(want));
  return Shapes{in[0]};
}

Status scatterNdOp(const HostAttrs &a, const std::vector<ConstView> &in, std::vector<MutableView> &out) {
  const auto reduce = *reductionOf(a);
  const Shape &ds = in[0].shape;
  const int64_t m = in[1].shape.back(), tuples = numElements(in[1].shape) / m;
  const auto strides = stridesOf(ds);
  int64_t slice = 1;
  for (size_t d = size_t(m); d < ds.size(); ++d) slice *= ds[d];
  std::copy(in[0].data, in[0].data + numElements(ds), out[0].data);
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t dst = 0;
    for (int64_t j = 0; j < m; ++j) {
      auto at = indexAlong(in[1].data[t * m + j], ds[size_t(j)]);
      if (!at) return at.status();
      dst += *at * strides[size_t(j)];
    }
    for (int64_t k = 0; k < slice; ++k) out[0].data[dst + k] = reduce(out[0].data[dst + k], in[2].data[t * slice + k]);
  }
  return Status::ok();
}

// ScatterElements: a copy of data, then each update goes where its own
// position points, with the index replacing the position along `axis`.
Result<Shapes> scatterElementsShape(const HostAttrs &a, const Shapes &in) {
  TPU_RETURN_IF_ERROR(reductionOf(a).status());
  auto axis = axisOf(a, in[0]);
  if (!axis) return axis.status();
  if (in[1] != in[2]) return makeError("indices and updates must have one shape");
  if (in[1].size() != in[0].size()) return makeError("indices must have the data's rank ", in[0].size());
  for (size_t d = 0; d < in[0].size(); ++d)
    if (d != *axis && in[1][d] > in[0][d]) return makeError("indices dim ", d, " exceeds the data's");
  return Shapes{in[0]};
}

Status scatterElementsOp(const HostAttrs &a, const std::vector<ConstView> &in, std::vector<MutableView> &out) {
  const auto reduce = *reductionOf(a);
  const size_t axis = *axisOf(a, in[0].shape);
  const auto strides = stridesOf(in[0].shape);
  std::copy(in[0].data, in[0].data + numElements(in[0].shape), out[0].data);
  for (int64_t i = 0; i < numElements(in[1].shape); ++i) {
    auto dst = elementOffset(in[0], in[1], axis, strides, i);
    if (!dst) return dst.status();
    out[0].data[*dst] = reduce(out[0].data[*dst], in[2].data[i]);
  }
  return Status::ok();
}

// ONNX NonMaxSuppression: per batch and class, the boxes scoring above
// score_threshold in descending score order (ties by the lower index), each
// kept unless its IoU with a box kept before exceeds iou_threshold, at most
// max_output_boxes_per_class of them; rows [batch, class, box]. The row
// count comes from the data: the bound is batches x classes x min(max, boxes).
Result<Shapes> nmsShape(const HostAttrs &a, const Shapes &in) {
  if (in[0].size() != 3 || in[0][2] != 4) return makeError("boxes must be [batches, boxes, 4]");
  if (in[1].size() != 3 || in[1][0] != in[0][0] || in[1][2] != in[0][1])
    return makeError("scores must be [batches, classes, boxes] = [", in[0][0], ", classes, ", in[0][1], "]");
  const int64_t center = a.integer("center_point_box", 0), most = a.integer("max_output_boxes_per_class", 0);
  if (center != 0 && center != 1) return makeError("center_point_box ", center, " is not 0 or 1");
  if (most < 0) return makeError("max_output_boxes_per_class ", most, " is negative");
  return Shapes{{in[1][0] * in[1][1] * std::min(most, in[0][1]), 3}};
}

// A box as x and y extents (min, max) from [y1, x1, y2, x2] corners or
// [x_center, y_center, width, height] (onnxruntime's arithmetic).
struct Extent {
  float x0, x1, y0, y1;
};
Extent extentOf(const float *b, bool center) {
  if (center) return {b[0] - b[2] / 2, b[0] + b[2] / 2, b[1] - b[3] / 2, b[1] + b[3] / 2};
  return {std::min(b[1], b[3]), std::max(b[1], b[3]), std::min(b[0], b[2]), std::max(b[0], b[2])};
}

bool overlapsTooMuch(const Extent &p, const Extent &q, float threshold) {
  const float ix0 = std::max(p.x0, q.x0), ix1 = std::min(p.x1, q.x1);
  const float iy0 = std::max(p.y0, q.y0), iy1 = std::min(p.y1, q.y1);
  if (ix1 <= ix0 || iy1 <= iy0) return false;
  const float inter = (ix1 - ix0) * (iy1 - iy0);
  const float areaP = (p.x1 - p.x0) * (p.y1 - p.y0), areaQ = (q.x1 - q.x0) * (q.y1 - q.y0);
  const float uni = areaP + areaQ - inter;
  if (inter <= 0 || areaP <= 0 || areaQ <= 0 || uni <= 0) return false;
  return inter / uni > threshold;
}

Status nmsOp(const HostAttrs &a, const std::vector<ConstView> &in, std::vector<MutableView> &out) {
  const int64_t batches = in[1].shape[0], classes = in[1].shape[1], boxes = in[1].shape[2];
  const int64_t most = a.integer("max_output_boxes_per_class", 0);
  const bool center = a.integer("center_point_box", 0) != 0;
  const float iou = float(a.real("iou_threshold", 0.0));
  const float minScore = float(a.real("score_threshold", -std::numeric_limits<double>::infinity()));
  const bool filter = a.reals("score_threshold") != nullptr;
  int64_t rows = 0;
  std::vector<int64_t> order;
  std::vector<Extent> kept;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t c = 0; c < classes; ++c) {
      const float *score = in[1].data + (b * classes + c) * boxes;
      order.clear();
      for (int64_t i = 0; i < boxes; ++i)
        if (!filter || score[i] > minScore) order.push_back(i);
      std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return score[x] > score[y]; });
      kept.clear();
      for (int64_t i : order) {
        if (int64_t(kept.size()) == most) break;
        const Extent e = extentOf(in[0].data + (b * boxes + i) * 4, center);
        if (std::any_of(kept.begin(), kept.end(), [&](const Extent &k) { return overlapsTooMuch(e, k, iou); }))
          continue;
        kept.push_back(e);
        float *row = out[0].data + 3 * rows++;
        row[0] = float(b), row[1] = float(c), row[2] = float(i);
      }
    }
  out[0].shape = {rows, 3};
  return Status::ok();
}

// ONNX NonZero: the coordinates of the non-zero elements in C order, one row
// per dimension; the column count comes from the data (bound: every element).
Result<Shapes> nonzeroShape(const HostAttrs &, const Shapes &in) {
  if (in[0].empty()) return makeError("the input must have rank 1 or more");
  return Shapes{{int64_t(in[0].size()), numElements(in[0])}};
}

Status nonzeroOp(const HostAttrs &, const std::vector<ConstView> &in, std::vector<MutableView> &out) {
  const Shape &s = in[0].shape;
  const int64_t n = numElements(s), rank = int64_t(s.size());
  const int64_t count = std::count_if(in[0].data, in[0].data + n, [](float x) { return x != 0.0f; });
  int64_t j = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (in[0].data[i] == 0.0f) continue;
    for (int64_t d = rank, rest = i; d-- > 0; rest /= s[size_t(d)])
      out[0].data[d * count + j] = float(rest % s[size_t(d)]);
    ++j;
  }
  out[0].shape = {rank, count};
  return Status::ok();
}

// ONNX RoiAlign: X [N, C, H, W], rois [R, 4] as (x1, y1, x2, y2), batch
// indices [R]; the result [R, C, output_height, output_width].
Result<Shapes> roiAlignShape(const HostAttrs &a, const Shapes &in) {
  if (in[0].size() != 4) return makeError("X must be [N, C, H, W]");
  if (in[1].size() != 2 || in[1][1] != 4) return makeError("rois must be [rois, 4]");
  if (in[2].size() != 1 || in[2][0] != in[1][0])
    return makeError("batch_indices must be [", in[1][0], "], one per roi");
  const std::string mode = a.text("mode", "avg"), coord = a.text("coordinate_transformation_mode", "half_pixel");
  if (mode != "avg" && mode != "max") return makeError("mode '", mode, "' is not avg or max");
  if (coord != "half_pixel" && coord != "output_half_pixel")
    return makeError("coordinate_transformation_mode '", coord, "' is not half_pixel or output_half_pixel");
  const int64_t oh = a.integer("output_height", 1), ow = a.integer("output_width", 1);
  if (oh < 1 || ow < 1) return makeError("output size ", oh, "x", ow, " is not positive");
  if (a.integer("sampling_ratio", 0) < 0)
    return makeError("sampling_ratio ", a.integer("sampling_ratio", 0), " is negative");
  return Shapes{{in[1][0], in[0][1], oh, ow}};
}

// onnxruntime's arithmetic (its CPU kernel), in fp32: per output cell a grid
// of sample points (sampling_ratio per side, or ceil(roi size / output size)
// when 0), each a bilinear interpolation whose four positions and weights
// are computed once per roi for all channels; a sample beyond a pixel
// outside the map counts zero. avg: the mean of the samples; max: the
// largest weighted corner term of any sample (onnxruntime's rule, not the
// largest interpolated value).
Status roiAlignOp(const HostAttrs &a, const std::vector<ConstView> &in, std::vector<MutableView> &out) {
  const int64_t batches = in[0].shape[0], channels = in[0].shape[1], height = in[0].shape[2], width = in[0].shape[3];
  const int64_t rois = in[1].shape[0], oh = out[0].shape[2], ow = out[0].shape[3];
  const int64_t ratio = a.integer("sampling_ratio", 0);
  const float scale = float(a.real("spatial_scale", 1.0));
  const bool halfPixel = a.text("coordinate_transformation_mode", "half_pixel") == "half_pixel";
  const bool avg = a.text("mode", "avg") == "avg";
  struct Sample {
    int64_t pos[4];
    float w[4];
  };
  std::vector<Sample> samples;
  for (int64_t r = 0; r < rois; ++r) {
    const float f = in[2].data[r];
    const int64_t b = int64_t(f);
    if (float(b) != f || b < 0 || b >= batches)
      return makeError("batch index ", f, " of roi ", r, " out of range for a batch of ", batches);
    const float *roi = in[1].data + r * 4;
    const float offset = halfPixel ? 0.5f : 0.0f;
    const float x0 = roi[0] * scale - offset, y0 = roi[1] * scale - offset;
    const float x1 = roi[2] * scale - offset, y1 = roi[3] * scale - offset;
    float roiW = x1 - x0, roiH = y1 - y0;
    if (!halfPixel) roiW = std::max(roiW, 1.0f), roiH = std::max(roiH, 1.0f);
    const float binH = roiH / float(oh), binW = roiW / float(ow);
    // A roi that is not finite or needs more samples than a map of 4096 x
    // 4096 pixels has (a box of run-time data) is refused, not allocated.
    if (!std::isfinite(roiW) || !std::isfinite(roiH) || std::fabs(roiW) > 1e7f || std::fabs(roiH) > 1e7f)
      return makeError("roi ", r, " (", roi[0], ", ", roi[1], ", ", roi[2], ", ", roi[3],
                       ") is not finite or too large");
    const int64_t gridH = ratio > 0 ? ratio : int64_t(std::ceil(roiH / float(oh)));
    const int64_t gridW = ratio > 0 ? ratio : int64_t(std::ceil(roiW / float(ow)));
    if (gridH > 0 && gridW > 0 && gridH * gridW * oh * ow > (int64_t(1) << 24))
      return makeError("roi ", r, " needs ", gridH * gridW * oh * ow, " samples, more than 2^24");
    samples.clear();
    for (int64_t ph = 0; ph < oh; ++ph)
      for (int64_t pw = 0; pw < ow; ++pw)
        for (int64_t iy = 0; iy < gridH; ++iy) {
          const float yy = y0 + float(ph) * binH + float(iy + 0.5f) * binH / float(gridH);
          for (int64_t ix = 0; ix < gridW; ++ix) {
            float x = x0 + float(pw) * binW + float(ix + 0.5f) * binW / float(gridW), y = yy;
            if (y < -1.0f || y > float(height) || x < -1.0f || x > float(width)) {
              samples.push_back({{0, 0, 0, 0}, {0, 0, 0, 0}});
              continue;
            }
            y = std::max(y, 0.0f), x = std::max(x, 0.0f);
            int64_t yLow = int64_t(y), xLow = int64_t(x), yHigh = yLow + 1, xHigh = xLow + 1;
            if (yLow >= height - 1) yHigh = yLow = height - 1, y = float(yLow);
            if (xLow >= width - 1) xHigh = xLow = width - 1, x = float(xLow);
            const float ly = y - float(yLow), lx = x - float(xLow), hy = 1.0f - ly, hx = 1.0f - lx;
            samples.push_back({{yLow * width + xLow, yLow * width + xHigh, yHigh * width + xLow, yHigh * width + xHigh},
                               {hy * hx, hy * lx, ly * hx, ly * lx}});
          }
        }
    for (int64_t c = 0; c < channels; ++c) {
      const float *plane = in[0].data + (b * channels + c) * height * width;
      float *dst = out[0].data + (r * channels + c) * oh * ow;
      const Sample *s = samples.data();
      for (int64_t cell = 0; cell < oh * ow; ++cell) {
        float value = 0.0f;
        bool first = true;
        for (int64_t iy = 0; iy < gridH; ++iy)
          for (int64_t ix = 0; ix < gridW; ++ix, ++s) {
            const float t0 = s->w[0] * plane[s->pos[0]], t1 = s->w[1] * plane[s->pos[1]];
            const float t2 = s->w[2] * plane[s->pos[2]], t3 = s->w[3] * plane[s->pos[3]];
            if (avg) {
              value += t0 + t1 + t2 + t3;
            } else {
              const float m = std::max(std::max(std::max(t0, t1), t2), t3);
              value = first ? m : std::max(value, m);
              first = false;
            }
          }
        // An empty grid (a roi of no size, half_pixel, sampling_ratio 0)
        // gives 0: onnxruntime divides by at least 1.
        dst[cell] = avg ? value / float(std::max<int64_t>(gridH * gridW, 1)) : value;
      }
    }
  }
  return Status::ok();
}

// ONNX Squeeze / Unsqueeze of a tensor whose shape comes from the data (the
// chip's reshape has a static shape): the same values in the shape the axes
// give for the real input shape.
// top.flatten: [product of the dims before axis, product of the rest].
Result<Shapes> flattenShape(const HostAttrs &a, const Shapes &in) {
  const int64_t axis = a.integer("axis", 1);
  if (axis < 0 || axis > int64_t(in[0].size()))
    return makeError("axis ", axis, " out of range for rank ", in[0].size());
  const Shape before(in[0].begin(), in[0].begin() + axis), after(in[0].begin() + axis, in[0].end());
  return Shapes{{numElements(before), numElements(after)}};
}

template <bool Squeeze> Result<Shapes> squeezeLikeShape(const HostAttrs &a, const Shapes &in) {
  const std::vector<int64_t> *axes = a.ints("axes");
  auto out = Squeeze ? squeezeShape(in[0], axes ? *axes : std::vector<int64_t>{})
                     : unsqueezeShape(in[0], axes ? *axes : std::vector<int64_t>{});
  if (!out) return out.status();
  return Shapes{*out};
}

Status copyOp(const HostAttrs &, const std::vector<ConstView> &in, std::vector<MutableView> &out) {
  std::copy(in[0].data, in[0].data + numElements(in[0].shape), out[0].data);
  return Status::ok();
}

// top.reshape to its static `shape` (where the chip refuses it: a scalar).
Result<Shapes> reshapeShape(const HostAttrs &a, const Shapes &in) {
  const std::vector<int64_t> *shape = a.ints("shape");
  if (!shape) return makeError("needs its shape");
  auto out = reshapeTarget(in[0], *shape, /*allowzero=*/true);
  if (!out) return out.status();
  return Shapes{*out};
}

// An op whose result shape is read from operand I at run time (one value
// per dim): `bound` is its result at the bounds (the compiler's), the room
// it has.
template <size_t I> Result<Shapes> boundedShape(const HostAttrs &a, const Shapes &in) {
  const std::vector<int64_t> *bound = a.ints("bound");
  if (!bound) return makeError("needs its bound");
  if (in[I].size() != 1 || in[I][0] != int64_t(bound->size()))
    return makeError("the shape input has shape ", shapeToString(in[I]), ", not ", bound->size());
  return Shapes{*bound};
}

// top.dynamic_reshape: ONNX Reshape to a shape tensor computed at run time.
Status dynamicReshapeOp(const HostAttrs &a, const std::vector<ConstView> &in, std::vector<MutableView> &out) {
  Shape target;
  for (int64_t i = 0; i < numElements(in[1].shape); ++i) target.push_back(int64_t(in[1].data[i]));
  auto shape = reshapeTarget(in[0].shape, target, a.integer("allowzero", 0) != 0);
  if (!shape) return shape.status();
  out[0].shape = *shape;
  return copyOp(a, in, out);
}

// top.constant_of_shape: the shape read from the input at run time.
Status constantOfShapeOp(const HostAttrs &a, const std::vector<ConstView> &in, std::vector<MutableView> &out) {
  const std::vector<int64_t> &bound = *a.ints("bound");
  Shape shape;
  for (int64_t i = 0; i < numElements(in[0].shape); ++i) {
    const int64_t d = int64_t(in[0].data[i]);
    if (d < 0 || d > bound[size_t(i)])
      return makeError("dim ", i, " of the shape is ", d, ", outside [0, ", bound[size_t(i)], "] (its bound)");
    shape.push_back(d);
  }
  out[0].shape = shape;
  std::fill_n(out[0].data, numElements(shape), float(a.real("value", 0.0)));
  return Status::ok();
}

// ---- ops the chip also runs, on the host when a shape comes from the data ----
// The Top interpreter evaluates these ops with the same code, so a tensor
// whose shape is known only at run time (NMS rows) flows through the same
// arithmetic; the shape rules work on the real shapes of the inputs.

Result<Shapes> permuteShape(const HostAttrs &a, const Shapes &in) {
  const std::vector<int64_t> *order = a.ints("order");
  const size_t rank = in[0].size();
  if (!order || order->size() != rank) return makeError("order must list the ", rank, " dims");
  std::vector<bool> seen(rank, false);
  Shape out;
  for (int64_t d : *order) {
    if (d < 0 || size_t(d) >= rank || seen[size_t(d)]) return makeError("order is not a permutation of 0..", rank - 1);
    seen[size_t(d)] = true;
    out.push_back(in[0][size_t(d)]);
  }
  return Shapes{out};
}

Status permuteOp(const HostAttrs &a, const std::vector<ConstView> &in, std::vector<MutableView> &out) {
  transpose(in[0].data, in[0].shape, *a.ints("order"), out[0].data);
  return Status::ok();
}

// top.slice's starts, ends and steps (one per dim, clamped to the dims the
// compiler saw) clamped again to the real dims: a dim that came out smaller
// keeps what lies within it. A negative step needs the compiler's dims
// (its start counts from their end), so it must find them unchanged.
struct ClampedSlice {
  Shape starts, steps, out;
};
Result<ClampedSlice> clampSlice(const HostAttrs &a, const Shape &in) {
  const std::vector<int64_t> *starts = a.ints("starts"), *ends = a.ints("ends"), *steps = a.ints("steps");
  const size_t rank = in.size();
  if (!starts || !ends || !steps || starts->size() != rank || ends->size() != rank || steps->size() != rank)
    return makeError("starts, ends and steps need one value per dim (", rank, ")");
  ClampedSlice c;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t dim = in[d], step = (*steps)[d];
    int64_t start = (*starts)[d], end = (*ends)[d];
    if (step == 0) return makeError("step 0 along dim ", d);
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, start, dim);
      c.out.push_back((end - start + step - 1) / step);
    } else {
      if (start < -1 || start >= std::max<int64_t>(dim, 1) || end < -1 || end > start)
        return makeError("a negative step along dim ", d, " of ", dim, " reads from ", start, " to ", end);
      c.out.push_back(dim ? (start - end + (-step) - 1) / (-step) : 0);
    }
    c.starts.push_back(start);
    c.steps.push_back(step);
  }
  return c;
}

Result<Shapes> sliceShape(const HostAttrs &a, const Shapes &in) {
  auto c = clampSlice(a, in[0]);
  if (!c) return c.status();
  return Shapes{c->out};
}

Status sliceOp(const HostAttrs &a, const std::vector<ConstView> &in, std::vector<MutableView> &out) {
  auto c = clampSlice(a, in[0].shape);
  if (!c) return c.status();
  slice(in[0].data, in[0].shape, c->starts, c->steps, out[0].data, out[0].shape);
  return Status::ok();
}

// top.concat's axis is non-negative (the importers normalize it).
Result<Shapes> concatShape(const HostAttrs &a, const Shapes &in) {
  if (a.integer("axis", 0) < 0) return makeError("axis ", a.integer("axis", 0), " is negative");
  auto axis = axisOf(a, in[0]);
  if (!axis) return axis.status();
  Shape out = in[0];
  for (size_t i = 1; i < in.size(); ++i) {
    if (in[i].size() != out.size()) return makeError("input ", i, " has rank ", in[i].size(), ", not ", out.size());
    for (size_t d = 0; d < out.size(); ++d)
      if (d != *axis && in[i][d] != out[d])
        return makeError("input ", i, " is ", shapeToString(in[i]), ", input 0 ", shapeToString(in[0]),
                         ": they differ beyond axis ", *axis);
    out[*axis] += in[i][*axis];
  }
  return Shapes{out};
}

Status concatOp(const HostAttrs &a, const std::vector<ConstView> &in, std::vector<MutableView> &out) {
  std::vector<const float *> data;
  std::vector<Shape> shapes;
  for (const ConstView &v : in) {
    data.push_back(v.data);
    shapes.push_back(v.shape);
  }
  concat(data, shapes, int64_t(*axisOf(a, in[0].shape)), out[0].data);
  return Status::ok();
}

// top.split's pieces along a non-negative axis, consecutive, each clamped to
// the real dim: a dim that came out smaller leaves the last pieces short.
Result<Shapes> splitShape(const HostAttrs &a, const Shapes &in) {
  if (a.integer("axis", 0) < 0) return makeError("axis ", a.integer("axis", 0), " is negative");
  auto axis = axisOf(a, in[0]);
  if (!axis) return axis.status();
  const std::vector<int64_t> *sizes = a.ints("split");
  if (!sizes || sizes->empty()) return makeError("split needs at least one size");
  Shapes out;
  int64_t start = 0;
  for (int64_t size : *sizes) {
    if (size < 0) return makeError("split size ", size, " is negative");
    Shape piece = in[0];
    piece[*axis] = std::clamp<int64_t>(in[0][*axis] - start, 0, size);
    start += size;
    out.push_back(std::move(piece));
  }
  if (start < in[0][*axis])
    return makeError("split sizes sum to ", start, ", less than dim ", *axis, " (", in[0][*axis], ")");
  return out;
}

Status splitOp(const HostAttrs &a, const std::vector<ConstView> &in, std::vector<MutableView> &out) {
  const size_t axis = *axisOf(a, in[0].shape);
  std::vector<int64_t> sizes;
  std::vector<float *> data;
  for (const MutableView &v : out) sizes.push_back(v.shape[axis]), data.push_back(v.data);
  split(in[0].data, in[0].shape, int64_t(axis), sizes, data);
  return Status::ok();
}

Result<Shapes> broadcastShapes(const HostAttrs &, const Shapes &in) {
  auto out = broadcastShape(in[0], in[1]);
  for (size_t i = 2; i < in.size() && out; ++i) out = broadcastShape(*out, in[i]);
  if (!out) return out.status();
  return Shapes{*out};
}

// top.where: x where the condition is non-zero, else y (all broadcast).
Status whereOp(const HostAttrs &, const std::vector<ConstView> &in, std::vector<MutableView> &out) {
  const int64_t n = numElements(out[0].shape);
  std::vector<float> c(static_cast<size_t>(n)), a(c), b(c);
  broadcastTo(in[0].data, in[0].shape, c.data(), out[0].shape);
  broadcastTo(in[1].data, in[1].shape, a.data(), out[0].shape);
  broadcastTo(in[2].data, in[2].shape, b.data(), out[0].shape);
  for (int64_t i = 0; i < n; ++i) out[0].data[i] = c[size_t(i)] != 0.0f ? a[size_t(i)] : b[size_t(i)];
  return Status::ok();
}

template <BinaryKind Kind>
Status binaryOp(const HostAttrs &, const std::vector<ConstView> &in, std::vector<MutableView> &out) {
  binary(Kind, in[0].data, in[0].shape, in[1].data, in[1].shape, out[0].data, out[0].shape);
  return Status::ok();
}

template <UnaryKind Kind>
Status unaryOp(const HostAttrs &a, const std::vector<ConstView> &in, std::vector<MutableView> &out) {
  const auto [p, q] = unaryParams(Kind, a);
  unary(Kind, in[0].data, out[0].data, numElements(in[0].shape), p, q);
  return Status::ok();
}

// top.reduce_*: axes sorted, unique and in range; no axes is the identity.
Result<Shapes> reduceShape(const HostAttrs &a, const Shapes &in) {
  const std::vector<int64_t> *axes = a.ints("axes");
  const int64_t rank = int64_t(in[0].size());
  Shape out;
  for (int64_t d = 0; d < rank; ++d) {
    const bool reduced = axes && std::find(axes->begin(), axes->end(), d) != axes->end();
    if (!reduced)
      out.push_back(in[0][size_t(d)]);
    else if (a.integer("keepdims", 1))
      out.push_back(1);
  }
  if (axes)
    for (size_t i = 0; i < axes->size(); ++i)
      if ((*axes)[i] < 0 || (*axes)[i] >= rank || (i && (*axes)[i] <= (*axes)[i - 1]))
        return makeError("axes must be sorted, unique and in [0, ", rank, ")");
  return Shapes{out};
}

template <ReduceKind Kind>
Status reduceOp(const HostAttrs &a, const std::vector<ConstView> &in, std::vector<MutableView> &out) {
  const std::vector<int64_t> *axes = a.ints("axes");
  reduce(Kind, in[0].data, in[0].shape, axes ? *axes : std::vector<int64_t>{}, out[0].data);
  return Status::ok();
}

// ONNX Shape of a tensor whose shape comes from the data: its dims
// [start, end) (normalized by the compiler: the rank is static) as values.
Result<Shapes> shapeOfShape(const HostAttrs &a, const Shapes &in) {
  const int64_t rank = int64_t(in[0].size()), start = a.integer("start", 0), end = a.integer("end", rank);
  if (start < 0 || end < start || end > rank)
    return makeError("dims [", start, ", ", end, ") of a rank-", rank, " tensor");
  return Shapes{{end - start}};
}

Status shapeOfOp(const HostAttrs &a, const std::vector<ConstView> &in, std::vector<MutableView> &out) {
  const int64_t start = a.integer("start", 0);
  for (int64_t i = 0; i < out[0].shape[0]; ++i) out[0].data[i] = float(in[0].shape[size_t(start + i)]);
  return Status::ok();
}

// ONNX If with both branches computed: the value of the branch `cond`
// (one value) takes. Inputs: cond, then the then and else values, except a
// branch whose value is an empty constant, whose shape is the attribute
// then_empty or else_empty. The result's shape is the branch's, so it comes
// from the data; the bound holds either (one rank, the larger of each dim).
struct IfBranches {
  Shape thenShape, elseShape;
  int thenInput = -1, elseInput = -1; // -1: the empty constant
};
Result<IfBranches> ifBranches(const HostAttrs &a, const Shapes &in) {
  IfBranches b;
  const std::vector<int64_t> *thenEmpty = a.ints("then_empty"), *elseEmpty = a.ints("else_empty");
  size_t next = 1;
  auto take = [&](const std::vector<int64_t> *empty, Shape &shape, int &input) -> Status {
    if (empty) {
      if (numElements(*empty) != 0)
        return makeError("an empty branch of shape ", shapeToString(*empty), " has elements");
      shape = *empty;
      return Status::ok();
    }
    if (next >= in.size()) return makeError("a branch value is missing");
    input = int(next);
    shape = in[next++];
    return Status::ok();
  };
  TPU_RETURN_IF_ERROR(take(thenEmpty, b.thenShape, b.thenInput));
  TPU_RETURN_IF_ERROR(take(elseEmpty, b.elseShape, b.elseInput));
  if (next != in.size()) return makeError(in.size() - next, " inputs beyond the branch values");
  return b;
}

Result<Shapes> ifShape(const HostAttrs &a, const Shapes &in) {
  if (numElements(in[0]) != 1) return makeError("the condition must hold one value, it is ", shapeToString(in[0]));
  auto b = ifBranches(a, in);
  if (!b) return b.status();
  if (b->thenShape.size() != b->elseShape.size())
    return makeError("the branches give ranks ", b->thenShape.size(), " and ", b->elseShape.size(),
                     "; they must agree");
  Shape out = b->thenShape;
  for (size_t d = 0; d < out.size(); ++d) out[d] = std::max(out[d], b->elseShape[d]);
  return Shapes{out};
}

Status ifOp(const HostAttrs &a, const std::vector<ConstView> &in, std::vector<MutableView> &out) {
  Shapes shapes;
  for (const ConstView &v : in) shapes.push_back(v.shape);
  const IfBranches b = *ifBranches(a, shapes);
  const bool takeThen = in[0].data[0] != 0.0f;
  const int input = takeThen ? b.thenInput : b.elseInput;
  out[0].shape = takeThen ? b.thenShape : b.elseShape;
  if (input >= 0) std::copy(in[input].data, in[input].data + numElements(in[input].shape), out[0].data);
  return Status::ok();
}

// ---- serialization ---------------------------------------------------------

constexpr uint32_t kMaxRankOnHost = 8, kMaxListLength = 1u << 20, kMaxNameLength = 256;

class Writer {
public:
  void u32(uint32_t v) { raw(&v, 4); }
  void i64(int64_t v) { raw(&v, 8); }
  void f64(double v) { raw(&v, 8); }
  void str(const std::string &s) {
    u32(uint32_t(s.size()));
    raw(s.data(), s.size());
  }
  std::vector<uint8_t> bytes;

private:
  void raw(const void *p, size_t n) {
    const auto *b = static_cast<const uint8_t *>(p);
    bytes.insert(bytes.end(), b, b + n);
  }
};

class Reader {
public:
  Reader(const uint8_t *p, size_t n) : p_(p), end_(p + n) {}
  bool u32(uint32_t &v) { return raw(&v, 4); }
  bool i64(int64_t &v) { return raw(&v, 8); }
  bool f64(double &v) { return raw(&v, 8); }
  bool str(std::string &s, uint32_t limit) {
    uint32_t n;
    if (!u32(n) || n > limit || size_t(end_ - p_) < n) return false;
    s.assign(reinterpret_cast<const char *>(p_), n);
    p_ += n;
    return true;
  }
  bool count(uint32_t &n) { return u32(n) && n <= kMaxListLength; }
  bool atEnd() const { return p_ == end_; }

private:
  bool raw(void *v, size_t n) {
    if (size_t(end_ - p_) < n) return false;
    std::memcpy(v, p_, n);
    p_ += n;
    return true;
  }
  const uint8_t *p_, *end_;
};

} // namespace

const std::vector<HostOp> &hostOps() {
  // Codes are the bmodel's op_type: append, never renumber.
  static const std::vector<HostOp> ops = {
      {1, "top.arg_max", 1, 1, 1, argReduceShape, argReduceOp<true>},
      {2, "top.arg_min", 1, 1, 1, argReduceShape, argReduceOp<false>},
      {3, "top.cast", 1, 1, 1, castShape, castOp},
      {4, "top.topk", 1, 2, 2, topkShape, topkOp, HostOp::DataShape::WithLastInput},
      {5, "top.gather", 2, 2, 1, gatherShape, gatherOp},
      {6, "top.gather_elements", 2, 2, 1, gatherElementsShape, gatherElementsOp},
      {7, "top.gather_nd", 2, 2, 1, gatherNdShape, gatherNdOp},
      {8, "top.scatter_nd", 3, 3, 1, scatterNdShape, scatterNdOp},
      {9, "top.scatter_elements", 3, 3, 1, scatterElementsShape, scatterElementsOp},
      {10, "top.nms", 2, 2, 1, nmsShape, nmsOp, HostOp::DataShape::Always},
      {11, "top.nonzero", 1, 1, 1, nonzeroShape, nonzeroOp, HostOp::DataShape::Always},
      {12, "top.roi_align", 3, 3, 1, roiAlignShape, roiAlignOp},
      {13, "top.squeeze", 1, 1, 1, squeezeLikeShape<true>, copyOp},
      {14, "top.unsqueeze", 1, 1, 1, squeezeLikeShape<false>, copyOp},
      {15, "top.permute", 1, 1, 1, permuteShape, permuteOp},
      {16, "top.slice", 1, 1, 1, sliceShape, sliceOp},
      {17, "top.concat", 1, 1u << 16, 1, concatShape, concatOp},
      {18, "top.add", 2, 2, 1, broadcastShapes, binaryOp<BinaryKind::Add>},
      {19, "top.sub", 2, 2, 1, broadcastShapes, binaryOp<BinaryKind::Sub>},
      {20, "top.mul", 2, 2, 1, broadcastShapes, binaryOp<BinaryKind::Mul>},
      {21, "top.div", 2, 2, 1, broadcastShapes, binaryOp<BinaryKind::Div>},
      {22, "top.max", 2, 2, 1, broadcastShapes, binaryOp<BinaryKind::Max>},
      {23, "top.min", 2, 2, 1, broadcastShapes, binaryOp<BinaryKind::Min>},
      {24, "top.pow", 2, 2, 1, broadcastShapes, binaryOp<BinaryKind::Pow>},
      {25, "top.prelu", 2, 2, 1, broadcastShapes, binaryOp<BinaryKind::PRelu>},
      {26, "top.equal", 2, 2, 1, broadcastShapes, binaryOp<BinaryKind::Equal>},
      {27, "top.less", 2, 2, 1, broadcastShapes, binaryOp<BinaryKind::Less>},
      {28, "top.greater", 2, 2, 1, broadcastShapes, binaryOp<BinaryKind::Greater>},
      {29, "top.reduce_mean", 1, 1, 1, reduceShape, reduceOp<ReduceKind::Mean>},
      {30, "top.reduce_sum", 1, 1, 1, reduceShape, reduceOp<ReduceKind::Sum>},
      {31, "top.reduce_max", 1, 1, 1, reduceShape, reduceOp<ReduceKind::Max>},
      {32, "top.reduce_min", 1, 1, 1, reduceShape, reduceOp<ReduceKind::Min>},
      {33, "top.reduce_prod", 1, 1, 1, reduceShape, reduceOp<ReduceKind::Prod>},
      {34, "top.reduce_l2", 1, 1, 1, reduceShape, reduceOp<ReduceKind::L2>},
      {35, "top.shape", 1, 1, 1, shapeOfShape, shapeOfOp},
      {36, "top.if", 2, 3, 1, ifShape, ifOp, HostOp::DataShape::Always},
      {37, "top.relu", 1, 1, 1, sameShape, unaryOp<UnaryKind::Relu>},
      {38, "top.sigmoid", 1, 1, 1, sameShape, unaryOp<UnaryKind::Sigmoid>},
      {39, "top.silu", 1, 1, 1, sameShape, unaryOp<UnaryKind::SiLU>},
      {40, "top.tanh", 1, 1, 1, sameShape, unaryOp<UnaryKind::Tanh>},
      {41, "top.gelu", 1, 1, 1, sameShape, unaryOp<UnaryKind::Gelu>},
      {42, "top.exp", 1, 1, 1, sameShape, unaryOp<UnaryKind::Exp>},
      {43, "top.log", 1, 1, 1, sameShape, unaryOp<UnaryKind::Log>},
      {44, "top.sqrt", 1, 1, 1, sameShape, unaryOp<UnaryKind::Sqrt>},
      {45, "top.neg", 1, 1, 1, sameShape, unaryOp<UnaryKind::Neg>},
      {46, "top.abs", 1, 1, 1, sameShape, unaryOp<UnaryKind::Abs>},
      {47, "top.reciprocal", 1, 1, 1, sameShape, unaryOp<UnaryKind::Reciprocal>},
      {48, "top.erf", 1, 1, 1, sameShape, unaryOp<UnaryKind::Erf>},
      {49, "top.floor", 1, 1, 1, sameShape, unaryOp<UnaryKind::Floor>},
      {50, "top.ceil", 1, 1, 1, sameShape, unaryOp<UnaryKind::Ceil>},
      {51, "top.round", 1, 1, 1, sameShape, unaryOp<UnaryKind::Round>},
      {52, "top.sign", 1, 1, 1, sameShape, unaryOp<UnaryKind::Sign>},
      {53, "top.softplus", 1, 1, 1, sameShape, unaryOp<UnaryKind::Softplus>},
      {54, "top.softsign", 1, 1, 1, sameShape, unaryOp<UnaryKind::Softsign>},
      {55, "top.mish", 1, 1, 1, sameShape, unaryOp<UnaryKind::Mish>},
      {56, "top.sin", 1, 1, 1, sameShape, unaryOp<UnaryKind::Sin>},
      {57, "top.cos", 1, 1, 1, sameShape, unaryOp<UnaryKind::Cos>},
      {58, "top.hard_swish", 1, 1, 1, sameShape, unaryOp<UnaryKind::HardSwish>},
      {59, "top.leaky_relu", 1, 1, 1, sameShape, unaryOp<UnaryKind::LeakyRelu>},
      {60, "top.elu", 1, 1, 1, sameShape, unaryOp<UnaryKind::Elu>},
      {61, "top.clip", 1, 1, 1, sameShape, unaryOp<UnaryKind::Clip>},
      {62, "top.hard_sigmoid", 1, 1, 1, sameShape, unaryOp<UnaryKind::HardSigmoid>},
      {63, "top.split", 1, 1, 0, splitShape, splitOp},
      {64, "top.where", 3, 3, 1, broadcastShapes, whereOp},
      {65, "top.flatten", 1, 1, 1, flattenShape, copyOp},
      {66, "top.dynamic_reshape", 2, 2, 1, boundedShape<1>, dynamicReshapeOp, HostOp::DataShape::Always},
      {67, "top.reshape", 1, 1, 1, reshapeShape, copyOp},
      {68, "top.constant_of_shape", 1, 1, 1, boundedShape<0>, constantOfShapeOp, HostOp::DataShape::Always},
  };
  return ops;
}

const HostOp *findHostOp(std::string_view name) {
  for (const HostOp &op : hostOps())
    if (op.name == name) return &op;
  return nullptr;
}

const HostOp *findHostOp(uint32_t code) {
  for (const HostOp &op : hostOps())
    if (op.code == code) return &op;
  return nullptr;
}

bool resultShapeFromData(const HostOp &op, const HostAttrs &attrs, std::vector<Shape> inputs,
                         const std::vector<bool> &fromData) {
  if (op.shapeFromData(inputs.size())) return true;
  if (std::find(fromData.begin(), fromData.end(), true) == fromData.end()) return false;
  auto compiled = op.inferShapes(attrs, inputs);
  for (size_t i = 0; i < inputs.size(); ++i)
    if (fromData[i]) std::fill(inputs[i].begin(), inputs[i].end(), 1);
  auto smaller = op.inferShapes(attrs, inputs);
  return !compiled || !smaller || *compiled != *smaller;
}

namespace {
// Whether `shape` fits in `room`: the same rank, no dim beyond room's.
bool fitsWithin(const Shape &shape, const Shape &room) {
  if (shape.size() != room.size()) return false;
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] < 0 || shape[d] > room[d]) return false;
  return true;
}
} // namespace

Result<std::vector<HostTensor>> runHostOp(std::string_view name, const HostAttrs &attrs,
                                          const std::vector<ConstView> &inputs) {
  const HostOp *op = findHostOp(name);
  if (!op) return makeError(std::string(name), " is not a host op");
  if (inputs.size() < op->minInputs || inputs.size() > op->maxInputs)
    return makeError(op->name, " takes ", op->minInputs, "..", op->maxInputs, " inputs, has ", inputs.size());
  std::vector<Shape> inShapes;
  for (const ConstView &v : inputs) inShapes.push_back(v.shape);
  auto shapes = op->inferShapes(attrs, inShapes);
  if (!shapes) return Status(shapes.status()).prefix(std::string(op->name));
  std::vector<HostTensor> results;
  std::vector<MutableView> outputs;
  for (const Shape &s : *shapes) results.push_back({s, std::vector<float>(size_t(numElements(s)), 0.0f)});
  for (HostTensor &r : results) outputs.push_back({r.shape, r.values.data()});
  TPU_RETURN_IF_ERROR(op->run(attrs, inputs, outputs));
  for (size_t i = 0; i < results.size(); ++i) {
    if (outputs[i].shape == results[i].shape) continue;
    // Only an op whose shape comes from the data may shrink a result, within its bound.
    const Shape &bound = results[i].shape, &real = outputs[i].shape;
    if (!op->shapeFromData(inputs.size()) || !fitsWithin(real, bound))
      return makeError(op->name, ": result ", i, " came out ", shapeToString(real), ", beyond ", shapeToString(bound));
    results[i].shape = real;
    results[i].values.resize(size_t(numElements(real)));
  }
  return results;
}

std::vector<uint8_t> HostCall::serialize() const {
  Writer w;
  w.u32(code);
  w.u32(result);
  w.u32(uint32_t(resultShapes.size()));
  for (const Shape &s : resultShapes) {
    w.u32(uint32_t(s.size()));
    for (int64_t d : s) w.i64(d);
  }
  w.u32(uint32_t(attrs.ints_.size()));
  for (const auto &[name, v] : attrs.ints_) {
    w.str(name);
    w.u32(uint32_t(v.size()));
    for (int64_t x : v) w.i64(x);
  }
  w.u32(uint32_t(attrs.reals_.size()));
  for (const auto &[name, v] : attrs.reals_) {
    w.str(name);
    w.u32(uint32_t(v.size()));
    for (double x : v) w.f64(x);
  }
  w.u32(uint32_t(attrs.texts_.size()));
  for (const auto &[name, v] : attrs.texts_) w.str(name), w.str(v);
  return std::move(w.bytes);
}

Result<HostCall> HostCall::parse(const uint8_t *data, size_t size) {
  Reader r(data, size);
  HostCall c;
  const Status truncated = makeError("host op parameters are truncated or oversized (", size, " bytes)");
  uint32_t results;
  if (!r.u32(c.code) || !r.u32(c.result) || !r.count(results)) return truncated;
  const HostOp *op = findHostOp(c.code);
  if (!op) return makeError("unknown host op code ", c.code);
  if ((op->results ? results != op->results : results == 0) || c.result >= results)
    return makeError(op->name, ": result ", c.result, " of ", results, " (the op has ",
                     op->results ? std::to_string(op->results) : std::string("one per split"), ")");
  for (uint32_t i = 0; i < results; ++i) {
    uint32_t rank;
    if (!r.u32(rank) || rank > kMaxRankOnHost) return truncated;
    Shape s(rank);
    for (int64_t &d : s)
      if (!r.i64(d) || d < 0 || d > (int64_t(1) << 40)) return makeError(op->name, ": a result dimension out of range");
    c.resultShapes.push_back(std::move(s));
  }
  uint32_t n;
  if (!r.count(n)) return truncated;
  for (uint32_t i = 0; i < n; ++i) {
    std::string name;
    uint32_t len;
    if (!r.str(name, kMaxNameLength) || !r.count(len)) return truncated;
    std::vector<int64_t> v(len);
    for (int64_t &x : v)
      if (!r.i64(x)) return truncated;
    c.attrs.setInts(name, std::move(v));
  }
  if (!r.count(n)) return truncated;
  for (uint32_t i = 0; i < n; ++i) {
    std::string name;
    uint32_t len;
    if (!r.str(name, kMaxNameLength) || !r.count(len)) return truncated;
    std::vector<double> v(len);
    for (double &x : v)
      if (!r.f64(x)) return truncated;
    c.attrs.setReals(name, std::move(v));
  }
  if (!r.count(n)) return truncated;
  for (uint32_t i = 0; i < n; ++i) {
    std::string name, text;
    if (!r.str(name, kMaxNameLength) || !r.str(text, kMaxListLength)) return truncated;
    c.attrs.setText(name, std::move(text));
  }
  if (!r.atEnd()) return makeError(op->name, ": bytes after the host op parameters");
  return c;
}

Status HostCall::check(const std::vector<Shape> &inputs) const {
  const HostOp *op = findHostOp(code);
  if (!op) return makeError("unknown host op code ", code);
  const std::string name(op->name);
  if (inputs.size() < op->minInputs || inputs.size() > op->maxInputs)
    return makeError(name, " takes ", op->minInputs, "..", op->maxInputs, " inputs, has ", inputs.size());
  auto shapes = op->inferShapes(attrs, inputs);
  if (!shapes) return Status(shapes.status()).prefix(name);
  if (shapes->size() != resultShapes.size() || result >= resultShapes.size())
    return makeError(name, ": ", shapes->size(), " results, the parameters describe ", resultShapes.size(),
                     " and write result ", result);
  for (size_t r = 0; r < shapes->size(); ++r)
    if ((*shapes)[r] != resultShapes[r])
      return makeError(name, ": the inputs give result ", r, " the shape ", shapeToString((*shapes)[r]),
                       ", the parameters ", shapeToString(resultShapes[r]));
  return Status::ok();
}

std::string HostCall::describe() const {
  const HostOp *op = findHostOp(code);
  std::ostringstream os;
  os << (op ? std::string(op->name) : "op " + std::to_string(code)) << " result " << result << " of "
     << resultShapes.size();
  const std::string a = attrs.describe();
  if (!a.empty()) os << " (" << a << ")";
  return os.str();
}

Result<HostTensor> HostCall::run(const std::vector<ConstView> &inputs) const {
  const HostOp *op = findHostOp(code);
  if (!op) return makeError("unknown host op code ", code);
  auto results = runHostOp(op->name, attrs, inputs);
  if (!results) return results.status();
  HostTensor &r = (*results)[result];
  const Shape &room = resultShapes[result];
  if (!fitsWithin(r.shape, room))
    return makeError(op->name, ": result ", result, " is ", shapeToString(r.shape), ", larger than the ",
                     shapeToString(room), " the model has room for");
  return std::move(r);
}

} // namespace tpu::kernels
