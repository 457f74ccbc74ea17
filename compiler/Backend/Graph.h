// The code generator's input: a plain op graph (no MLIR). The Tpu lowering
// translates a Tpu module into this description; the integer reference
// (QuantRef.h) and the code generator (CodeGen.h) both read it. Semantics
// of every op kind, fp32 and int8, are in docs/codegen.md.
#pragma once

#include "compiler/Kernels/Kernels.h"
#include "support/Status.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace tpu::backend {

enum class DType : uint8_t { F32, I8, U8, I16, I32 };
unsigned dtypeBytes(DType t);
const char *dtypeName(DType t); // numpy names: "float32", "int8", ...
bool isInt8Like(DType t);       // I8 or U8

// A tensor: an activation (produced by an op or a graph input) or a weight
// (`data` non-empty, C order, dtype's bytes). Shapes have 0..kMaxRank dims
// (0: a scalar, one element) and are read as NCHW padded with trailing 1s
// ((N, K) is N x K x 1 x 1, a scalar 1 x 1 x 1 x 1);
// dims past the 4th are part of w (only Move and Reshape take them: the
// lowering refuses other ops of more than 4 dims).
constexpr size_t kMaxRank = 8;
struct Tensor {
  std::string name;
  std::vector<int64_t> shape;
  DType dtype = DType::F32;
  float scale = 1.0f;          // int8: real = q * scale, scale = threshold / 127
  std::vector<uint8_t> data;   // weights only
  bool isWeight() const { return !data.empty(); }
  std::array<int64_t, 4> nchw() const;
  int64_t numel() const;
  uint64_t bytes() const { return uint64_t(numel()) * dtypeBytes(dtype); }
};

// The DDR layout of an activation: an int8/uint8 activation of more than one
// batch item is 4N (four items share each 32-bit word, docs/isa.md); every
// other tensor is 1N, compact C order: fp32, weights, and a one-item int8
// activation (no padding bytes, so batch 1 moves a quarter of the bytes a
// 4N word per element would; docs/codegen.md "Memory").
bool stored4N(const Tensor &t);

// One kind per line of OpKinds.def (its comments say what each takes).
enum class OpKind {
#define TPU_OP_KIND(Name, MinInputs, MaxInputs, TakesWeights, SharesInputBytes) Name,
#include "compiler/Backend/OpKinds.def"
};
const char *opKindName(OpKind k);

// What a Reduce computes over its reduced dims.
enum class ReduceMode : uint8_t { Sum, Mean, Max, Min, Prod, L2 };

struct WindowParams {
  int64_t kh = 1, kw = 1, strideH = 1, strideW = 1, dilationH = 1, dilationW = 1;
  int64_t padTop = 0, padBottom = 0, padLeft = 0, padRight = 0;
  int64_t groups = 1;        // Conv only
  bool isMax = false;        // Pool only
  // Pool avg: each window divides by the taps it covers inside the padded
  // input (count_include_pad), or inside the input alone when false.
  bool countPad = true;
};

// Move: a box of up to 4 dims copied from input `input` to the output.
// Element (i0..i3) of the box goes from the input's element src + sum
// i_k * srcStride[k] to the output's element dst + sum i_k * dstStride[k];
// offsets count elements of the compact C-order tensors, strides may be
// negative or 0 (a broadcast read).
struct MovePiece {
  int input = 0;
  std::array<int64_t, 4> size{1, 1, 1, 1};
  int64_t src = 0, dst = 0;
  std::array<int64_t, 4> srcStride{0, 0, 0, 0}, dstStride{0, 0, 0, 0};
};

// One op. Integer (int8) requantization follows BM1684: exact int32/int64
// accumulation, + int16 bias, a per-tensor rounding right shift (half up,
// arith/IntArith.h), relu, saturation. See docs/codegen.md.
struct Op {
  OpKind kind = OpKind::Relu;
  std::string name;          // layer name carried into the bmodel
  std::vector<int> inputs;   // tensor indices
  int output = -1;
  WindowParams window;       // Conv, Pool
  bool relu = false;         // fused relu: Conv, Fc, Add, Mul, Max, Requant
  // int8 parameters.
  uint32_t rshift = 0;                // Conv, Pool avg, GlobalAvgPool, Fc, Add, Mul, Max, LeakyRelu, Requant
  std::vector<int32_t> multipliers;   // Add/Max: one per input; Mul/Pool avg/GlobalAvgPool/LeakyRelu/Requant: one
  // Activation parameters.
  float alpha = 0.0f;                 // LeakyRelu fp32 slope, 0 <= alpha <= 1; Affine fp32 scale
  float beta = 0.0f;                  // Affine fp32 offset
  float clipMin = 0.0f, clipMax = 0.0f; // Clip (int8: the integer bounds)
  int64_t scaleH = 1, scaleW = 1;     // Upsample
  // Slice, per NCHW dim: output element i reads input element start + i * step.
  std::array<int64_t, 4> sliceStart{0, 0, 0, 0}, sliceStep{1, 1, 1, 1};
  // Move: the output is first filled with fillValue (int8: the integer) when
  // `fills`, then every piece is copied in order.
  std::vector<MovePiece> pieces;
  bool fills = false;
  float fillValue = 0.0f;
  // Reduce: the mode, and which NCHW dims of the input it reduces (LayerNorm: normalizes).
  ReduceMode reduceMode = ReduceMode::Sum;
  std::array<bool, 4> reduceAxes{false, false, false, false};
  float epsilon = 0.0f;               // LayerNorm: added to the variance
  // Unary: the fp32 function (its parameters in alpha, beta).
  kernels::UnaryKind unary = kernels::UnaryKind::Identity;
  // Resize: the source rows (H) and columns (W) of each output row/column.
  kernels::ResizeTaps resizeH, resizeW;
  // Fc: x is (K, M), the left matrix transposed (gemm transA).
  bool transposedInput = false;
};

struct Graph {
  std::string name = "net";
  std::vector<Tensor> tensors;
  std::vector<Op> ops;        // topological order
  std::vector<int> inputs, outputs;

  int addTensor(Tensor t) {
    tensors.push_back(std::move(t));
    return int(tensors.size()) - 1;
  }
  // Checks indices, topological order, shapes and dtypes of every op
  // against its kind; an error names the op (or tensor) and what is wrong.
  Status validate() const;
};

// The transposed conv as the chip runs it: a stride-1 conv over the input
// with stride-1 zeros inserted, the kernel rotated, these pads.
struct TransposedPads {
  int64_t top, bottom, left, right;
};
TransposedPads transposedPads(const Op &op, const Tensor &x, const Tensor &y);
TransposedPads transposedPads(const WindowParams &p, const std::array<int64_t, 4> &xs,
                              const std::array<int64_t, 4> &ys);

// NumPy broadcasting of an element-wise input against the output: the
// input's dims right-aligned with the output's, as NCHW (1 = broadcast).
std::array<int64_t, 4> broadcastNchw(const Tensor &in, const Tensor &out);
// A weight read as one value per channel by the element-wise kinds (an
// input after the first): [C] or [1, C, 1, 1] against an output of C channels.
bool isChannelWeight(const Tensor &w, const Tensor &out);

// Output spatial size of a window op for an input extent (floor division;
// the output tensor may be larger by one for ceil mode: extra end padding).
int64_t windowOutput(int64_t in, int64_t k, int64_t stride, int64_t dilation, int64_t padA,
                     int64_t padB);

} // namespace tpu::backend

namespace tpu::backend {
// Whether the Reduce emitter can move input x and output y (their shapes
// and dtypes) for these reduced NCHW dims: the kept and the reduced dims
// must each merge into at most two (int8 4N layouts restrict the merging
// and the output's batch); the error says why not (Ops/Reduce.cpp).
Status reduceLayout(const Tensor &x, const Tensor &y, const std::array<bool, 4> &axes);

// The window of a Conv/Pool with the end pads grown so that the output
// tensor's size is produced (ceil mode adds at most one row/column).
WindowParams effectiveWindow(const Op &op, const Tensor &x, const Tensor &y);

// Pool avg along one dim: per output index, the taps its divisor counts
// (those inside the input, and inside its declared padding with countPad).
// The window's divisor is the product of its row's and its column's counts.
std::vector<int64_t> averageTaps(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t dilation,
                                 int64_t padA, int64_t padB, bool countPad);
} // namespace tpu::backend
