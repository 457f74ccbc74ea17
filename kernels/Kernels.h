// fp32 reference kernels on plain float buffers (C order) and shapes. They
// back the Top interpreter and are the numerical truth the quantized paths
// are compared against. Callers validate shapes (the Top ops verify them);
// the kernels trust the parameters they are given.
#pragma once

#include "support/Status.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tpu::kernels {

using Shape = std::vector<int64_t>;

int64_t numElements(const Shape &shape);
// Row-major strides of a shape.
std::vector<int64_t> stridesOf(const Shape &shape);
// A row-major tensor seen around one axis: `outer` lines (the dims before
// it) of `len` elements (the axis; 1 past the last dim), `inner` apart (the
// dims after it).
struct AxisSplit {
  int64_t outer = 1, len = 1, inner = 1;
};
AxisSplit splitAtAxis(const Shape &shape, size_t axis);
// ONNX axis rules: an axis in [-rank, rank) -> [0, rank), else an error
// naming `what`; axes sorted, non-negative and unique.
Result<int64_t> normalizeAxis(int64_t axis, int64_t rank, const std::string &what = "axis");
Result<std::vector<int64_t>> normalizeAxes(std::vector<int64_t> axes, int64_t rank);
// ONNX Squeeze (no axes: every dim of 1) and Unsqueeze result shapes.
// ONNX Reshape's target: 0 copies the input's dim (unless allowzero), one -1
// takes what is left; the element count must match.
Result<Shape> reshapeTarget(const Shape &in, const Shape &shape, bool allowzero);
Result<Shape> squeezeShape(const Shape &in, const std::vector<int64_t> &axes);
Result<Shape> unsqueezeShape(const Shape &in, const std::vector<int64_t> &axes);

// ---- GEMM -----------------------------------------------------------------
// C[M,N] = A[M,K] * B[K,N] (row-major, leading dimensions lda/ldb/ldc).
// C is overwritten. Every C element sums over k in ascending order.
void gemm(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b, int64_t ldb, float *c,
          int64_t ldc);

// numpy matmul: 1-D operands are promoted and the added dimension removed,
// batch dimensions broadcast.
Result<Shape> matmulShape(const Shape &a, const Shape &b);
void matmul(const float *a, const Shape &aShape, const float *b, const Shape &bShape, float *out);

// ---- Convolution ----------------------------------------------------------
// 2-D convolution, NCHW; a 1-D convolution is ih = kh = 1.
struct ConvParams {
  int64_t n = 1, ic = 1, ih = 1, iw = 1; // input
  int64_t oc = 1, oh = 1, ow = 1;        // output
  int64_t kh = 1, kw = 1;
  int64_t strideH = 1, strideW = 1, dilationH = 1, dilationW = 1;
  int64_t padTop = 0, padLeft = 0, padBottom = 0, padRight = 0;
  int64_t groups = 1;
};
// Output extent of one spatial dimension.
int64_t convOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t padBegin, int64_t padEnd);
// weight [oc, ic/groups, kh, kw]; bias [oc] or null.
void conv2d(const float *in, const float *weight, const float *bias, float *out, const ConvParams &p);
// Transposed convolution: weight [ic, oc/groups, kh, kw]; p.oh/p.ow include
// output padding. Pads crop the full output.
void convTranspose2d(const float *in, const float *weight, const float *bias, float *out, const ConvParams &p);

// ---- Pooling --------------------------------------------------------------
enum class PoolKind { Max, Avg };
struct PoolParams {
  int64_t n = 1, c = 1, ih = 1, iw = 1, oh = 1, ow = 1;
  int64_t kh = 1, kw = 1, strideH = 1, strideW = 1, dilationH = 1, dilationW = 1;
  int64_t padTop = 0, padLeft = 0, padBottom = 0, padRight = 0;
  bool countIncludePad = false; // Avg: divide by the window clipped to the padded input
};
// Output extent with floor or ceil rounding; with ceil a window that would
// start in the end padding is dropped (PyTorch/ONNX rule).
int64_t poolOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t padBegin, int64_t padEnd,
                       bool ceilMode);
void pool2d(PoolKind kind, const float *in, float *out, const PoolParams &p);
// Over all spatial positions: in [n*c, spatial] -> out [n*c].
void globalPool(PoolKind kind, const float *in, float *out, int64_t nc, int64_t spatial);

// ---- Elementwise ----------------------------------------------------------
enum class UnaryKind {
  Relu,
  LeakyRelu,
  Clip,
  Sigmoid,
  HardSigmoid,
  HardSwish,
  SiLU,
  Tanh,
  Gelu,
  Exp,
  Log,
  Sqrt,
  Abs,
  Neg,
  Reciprocal,
  Floor,
  Ceil,
  Erf,
  Softplus,
  Elu,
  Identity,
  Sin,
  Cos,
  Rsqrt,
  Mish,
  Sign,
  Round,
  Softsign,
  Selu,
};
// a, b: LeakyRelu/Elu alpha (a); Clip min/max (a, b); HardSigmoid alpha/beta
// (a, b); Selu alpha/gamma (a, b).
void unary(UnaryKind kind, const float *in, float *out, int64_t n, float a = 0, float b = 0);

// Equal/Less/Greater give 1.0 or 0.0.
enum class BinaryKind { Add, Sub, Mul, Div, Max, Min, Pow, PRelu, Equal, Less, Greater };
// numpy broadcasting of two shapes; an error names both shapes.
Result<Shape> broadcastShape(const Shape &a, const Shape &b);
void binary(BinaryKind kind, const float *a, const Shape &aShape, const float *b, const Shape &bShape, float *out,
            const Shape &outShape);
// Copies `in` broadcast to outShape.
void broadcastTo(const float *in, const Shape &inShape, float *out, const Shape &outShape);

// ---- Normalization, softmax, reductions -----------------------------------
void softmax(const float *in, float *out, const Shape &shape, int64_t axis, bool log = false);
// Inference batch norm over channel axis 1: in [n, c, spatial...].
void batchNorm(const float *in, float *out, const Shape &shape, const float *scale, const float *bias,
               const float *mean, const float *var, float eps);
// Normalizes over dims [axis, rank); scale/bias cover those dims, or null.
void layerNorm(const float *in, float *out, const Shape &shape, int64_t axis, const float *scale, const float *bias,
               float eps);

enum class ReduceKind { Sum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSumExp };
// Reduces `axes` (non-negative, any order); out has the kept dims' elements
// (keepdims only changes the shape, not the data order).
void reduce(ReduceKind kind, const float *in, const Shape &shape, const std::vector<int64_t> &axes, float *out);

// Index (as float) of the max/min along axis; ties pick the first index, or
// the last with selectLast. out has the other dims' elements.
void argReduce(bool isMax, const float *in, const Shape &shape, int64_t axis, bool selectLast, float *out);

// ---- Data movement --------------------------------------------------------
// out shape = shape permuted by perm.
void transpose(const float *in, const Shape &shape, const std::vector<int64_t> &perm, float *out);
void concat(const std::vector<const float *> &inputs, const std::vector<Shape> &shapes, int64_t axis, float *out);
// Splits along axis into pieces of sizes[i]; outs[i] receives each.
void split(const float *in, const Shape &shape, int64_t axis, const std::vector<int64_t> &sizes,
           const std::vector<float *> &outs);
// starts already normalized into range, steps non-zero, outShape computed.
void slice(const float *in, const Shape &shape, const std::vector<int64_t> &starts, const std::vector<int64_t> &steps,
           float *out, const Shape &outShape);
// numpy.take(in, indices, axis): indices already normalized to [0, dim).
void gather(const float *in, const Shape &shape, int64_t axis, const std::vector<int64_t> &indices, float *out);
// Repeats dim i repeats[i] times.
void tile(const float *in, const Shape &shape, const std::vector<int64_t> &repeats, float *out);
enum class PadMode { Constant, Reflect, Edge };
// Pads may be negative (crop).
void pad(const float *in, const Shape &shape, const std::vector<int64_t> &padsBegin,
         const std::vector<int64_t> &padsEnd, PadMode mode, float value, float *out);

// ---- Resize ---------------------------------------------------------------
enum class ResizeMode { Nearest, Linear };
enum class CoordMode { HalfPixel, PytorchHalfPixel, AlignCorners, Asymmetric, TfHalfPixelForNN };
enum class NearestMode { RoundPreferFloor, RoundPreferCeil, Floor, Ceil };
struct ResizeParams {
  ResizeMode mode = ResizeMode::Nearest;
  CoordMode coord = CoordMode::HalfPixel;
  NearestMode nearest = NearestMode::RoundPreferFloor;
};
// The ONNX attribute strings (mode "nearest"/"linear", coordinate_transformation_mode,
// nearest_mode); an unknown coordinate mode reads as half_pixel, an unknown
// nearest mode as round_prefer_floor (the importer rejects the rest).
ResizeParams resizeParams(std::string_view mode, std::string_view coord, std::string_view nearest);
// One dimension resized from inLen to outLen: output index x reads
// in[i0[x]] * (1 - w[x]) + in[i1[x]] * w[x] (nearest: i0 = i1, w = 0).
struct ResizeTaps {
  std::vector<int64_t> i0, i1;
  std::vector<float> w;
};
ResizeTaps resizeTaps(int64_t inLen, int64_t outLen, double scale, const ResizeParams &p);
// Resizes every dimension of an N-D tensor; scales[d] = output/input factor
// used by the coordinate transform (from the op's scales, else out/in).
// Linear is applied separably over the dimensions whose size changes.
void resize(const float *in, const Shape &inShape, float *out, const Shape &outShape, const std::vector<double> &scales,
            const ResizeParams &p);

} // namespace tpu::kernels
