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
bool isInt8Like(DType t);       // I8 or U8: stored 4N in DDR

// A tensor: an activation (produced by an op or a graph input) or a weight
// (`data` non-empty, C order, dtype's bytes). Shapes have 1..4 dims and are
// read as NCHW padded with trailing 1s ((N, K) is N x K x 1 x 1).
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

// One kind per line of OpKinds.def (its comments say what each takes).
enum class OpKind {
#define TPU_OP_KIND(Name, MinInputs, MaxInputs, TakesWeights, SharesInputBytes) Name,
#include "compiler/Backend/OpKinds.def"
};
const char *opKindName(OpKind k);

struct WindowParams {
  int64_t kh = 1, kw = 1, strideH = 1, strideW = 1, dilationH = 1, dilationW = 1;
  int64_t padTop = 0, padBottom = 0, padLeft = 0, padRight = 0;
  int64_t groups = 1;        // Conv only
  bool isMax = false;        // Pool only
  // Pool avg: each window divides by the taps it covers inside the padded
  // input (count_include_pad), or inside the input alone when false.
  bool countPad = true;
};

// One op. Integer (int8) requantization follows BM1684: exact int32/int64
// accumulation, + int16 bias, a per-tensor rounding right shift (half up,
// simulator/semantics/IntArith.h), relu, saturation. See docs/codegen.md.
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

// Output spatial size of a window op for an input extent (floor division;
// the output tensor may be larger by one for ceil mode: extra end padding).
int64_t windowOutput(int64_t in, int64_t k, int64_t stride, int64_t dilation, int64_t padA,
                     int64_t padB);

} // namespace tpu::backend

namespace tpu::backend {
// The window of a Conv/Pool with the end pads grown so that the output
// tensor's size is produced (ceil mode adds at most one row/column).
WindowParams effectiveWindow(const Op &op, const Tensor &x, const Tensor &y);

// Pool avg along one dim: per output index, the taps its divisor counts
// (those inside the input, and inside its declared padding with countPad).
// The window's divisor is the product of its row's and its column's counts.
std::vector<int64_t> averageTaps(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t dilation,
                                 int64_t padA, int64_t padB, bool countPad);
} // namespace tpu::backend
