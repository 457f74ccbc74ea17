// The code generator's input: a plain op graph (no MLIR). The Tpu lowering
// translates a Tpu module into this description; the integer reference
// (QuantRef.h) and the code generator (CodeGen.h) both read it. Semantics
// of every op kind, fp32 and int8, are in docs/codegen.md.
#pragma once

#include "support/Status.h"

#include <any>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace tpu::backend {

// F16 (IEEE binary16) and BF16 (bfloat16): the 16-bit floats of the BM1684X. A 16-bit float op computes
// what its fp32 form computes on its inputs widened exactly, the result rounded once to its type
// (support/Float16.h); the BM1684 has no 16-bit float arithmetic.
enum class DType : uint8_t { F32, I8, U8, I16, I32, F16, BF16 };
unsigned dtypeBytes(DType t);
const char *dtypeName(DType t); // numpy names: "float32", "int8", ..., "float16", "bfloat16"
bool isInt8Like(DType t);       // I8 or U8
bool isHalf(DType t);           // F16 or BF16

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
// Kinds whose output element i is a function of element i of each input
// when every input has the output's element count or one element: on
// such inputs they compute the same on any shape of that count.
bool pointwiseKind(OpKind k);

// The largest dim a command field holds (16 bits): every tensor a chip
// command reads or writes has its NCHW dims within it. A TIU command's
// second operand has 12 bits for n (opd1_n): more batch items than that
// need more than one slice.
constexpr int64_t kMaxDim = 65535, kMaxOperandItems = 4095;
// Whether a tensor of `shape` fits those fields as its NCHW (Tensor::nchw).
bool fitsCommandFields(const std::vector<int64_t> &shape);

// One op. Integer (int8) requantization follows BM1684: exact int32/int64
// accumulation, + int16 bias, a per-tensor rounding right shift (half up,
// arith/IntArith.h), relu, saturation. See docs/codegen.md.
struct Op {
  OpKind kind = OpKind::Relu;
  std::string name;          // layer name carried into the bmodel
  std::vector<int> inputs;   // tensor indices
  int output = -1;
  bool relu = false;         // fused relu: Conv, Fc, Add, Mul, Max, Requant
  // int8 parameters.
  uint32_t rshift = 0;                // Conv, Pool avg, GlobalAvgPool, Fc, Add, Mul, Max, LeakyRelu, Requant
  std::vector<int32_t> multipliers;   // Add/Max: one per input; Mul/Pool avg/GlobalAvgPool/LeakyRelu/Requant: one

  // The parameters of the op's own kind: a struct of the kind's header
  // (Ops/<Kind>.h: WindowParams of Conv and Pool, SliceParams of Slice, ...).
  // params<P>() gives them to set (created on first use); the const
  // params<P>() reads them (P's defaults when none were set). An op holds the
  // parameters of one type: asking for another is a programming error.
  template <class P> P &params() {
    if (!params_.has_value()) params_.emplace<P>();
    if (P *p = std::any_cast<P>(&params_)) return *p;
    wrongParams();
  }
  template <class P> const P &params() const {
    static const P kDefaults{};
    if (!params_.has_value()) return kDefaults;
    if (const P *p = std::any_cast<P>(&params_)) return *p;
    wrongParams();
  }

private:
  [[noreturn]] void wrongParams() const; // names the op and aborts
  std::any params_;
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
  // The checks of one op of the graph alone (validate's per-op part: a graph of constants only has no
  // inputs, which validate refuses).
  Status validateOp(const Op &op) const;
};

// 16-bit float values: widened exactly to fp32, and fp32 rounded to the 16-bit type (support/Float16.h).
std::vector<uint8_t> widenHalf(const std::vector<uint8_t> &values, DType from);
std::vector<uint8_t> roundToHalf(const std::vector<uint8_t> &values, DType to);
// Whether an op other than a Cast reads or writes a 16-bit float tensor: it is checked and evaluated as
// its fp32 form (widenedOp).
bool isHalfOp(const Graph &g, const Op &op);
// A 16-bit float op's fp32 form: the op alone on copies of its tensors (its inputs, then its output),
// every 16-bit float tensor fp32 and its weight data widened.
Graph widenedOp(const Graph &g, const Op &op);

// NumPy broadcasting of an element-wise input against the output: the
// input's dims right-aligned with the output's, as NCHW (1 = broadcast).
std::array<int64_t, 4> broadcastNchw(const Tensor &in, const Tensor &out);
// A weight read as one value per channel by the element-wise kinds (an
// input after the first): [C] or [1, C, 1, 1] against an output of C channels.
bool isChannelWeight(const Tensor &w, const Tensor &out);

} // namespace tpu::backend
