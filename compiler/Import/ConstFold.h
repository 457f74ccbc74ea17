// Plain-C++ evaluation of ONNX ops on constant tensors (float32/int64/bool
// NpyArrays): the importer folds shape arithmetic (Shape -> Gather -> Concat
// -> Reshape ...) and other all-constant subgraphs with these, and the ONNX
// attribute/input normalisation rules shared by folding and op building.
#pragma once

#include "kernels/Kernels.h"
#include "support/Npz.h"
#include "support/Status.h"

#include <string>
#include <vector>

namespace tpu::onnx {

// The axis rules and squeeze/unsqueeze shapes are the kernels' (host ops use them too).
using kernels::normalizeAxes;
using kernels::normalizeAxis;
using kernels::squeezeShape;
using kernels::unsqueezeShape;

using kernels::reshapeTarget;
std::vector<int64_t> flattenShape(const std::vector<int64_t> &in, int64_t axis);

// ONNX Slice inputs -> one clamped (start, end, step) per dim, the Top
// dialect's top.slice convention.
struct SliceParams {
  std::vector<int64_t> starts, ends, steps;
};
Result<SliceParams> normalizeSlice(const std::vector<int64_t> &shape, const std::vector<int64_t> &starts,
                                   const std::vector<int64_t> &ends, std::vector<int64_t> axes,
                                   std::vector<int64_t> steps);

// Integer/float values of a constant as int64 or double, any dtype.
std::vector<int64_t> toInt64(const NpyArray &a);
std::vector<double> toDouble(const NpyArray &a);

NpyArray castArray(const NpyArray &a, const std::string &dtype);
NpyArray reshapeArray(NpyArray a, std::vector<int64_t> shape);
// op: Add Sub Mul Div Max Min Pow, Mod (the remainder has the divisor's sign)
// and Fmod (the dividend's, C fmod); Equal Less Greater LessOrEqual
// GreaterOrEqual, And Or Xor (bool results). Numpy broadcasting.
Result<NpyArray> binaryArray(const std::string &op, const NpyArray &a, const NpyArray &b);
// op: Neg Abs Sign (int64 stays int64), Not (bool), Sqrt Reciprocal Floor Ceil
// Round (half to even) Exp Log Relu Sigmoid Tanh.
Result<NpyArray> unaryArray(const std::string &op, const NpyArray &a);
// op: Sum Prod Min Max Mean over `axes` (normalized); the dtype is kept.
Result<NpyArray> reduceArray(const std::string &op, const NpyArray &a, const std::vector<int64_t> &axes,
                             bool keepdims);
Result<NpyArray> whereArray(const NpyArray &cond, const NpyArray &x, const NpyArray &y);
Result<NpyArray> gatherArray(const NpyArray &a, const NpyArray &indices, int64_t axis);
Result<NpyArray> concatArrays(const std::vector<const NpyArray *> &parts, int64_t axis);
NpyArray sliceArray(const NpyArray &a, const SliceParams &p);
NpyArray transposeArray(const NpyArray &a, const std::vector<int64_t> &perm);
Result<NpyArray> expandArray(const NpyArray &a, const std::vector<int64_t> &shape);
// ONNX Tile: dim i repeated repeats[i] times.
Result<NpyArray> tileArray(const NpyArray &a, const std::vector<int64_t> &repeats);

} // namespace tpu::onnx
