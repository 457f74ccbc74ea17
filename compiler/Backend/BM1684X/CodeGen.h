// Code generation for the BM1684X: a validated Graph -> a bmodel of BM1684X commands (isa/bm1684x). The
// first step of the second chip's compiler: fp32, float16 and bfloat16 (Graph.h's 16-bit rule), every op
// compiled globally (its inputs loaded from DDR into local memory slice by slice, computed, stored back), no
// layer groups; the engines overlap within an op's ping-pong slices (Program.h, Window.cpp).
// The commands follow the operand conventions of memory/bm1684x/Operands.h, which are checked against
// TPU-MLIR's own reading of BM1684X command buffers. What is compiled, and how: docs/bm1684x.md.
//
// Kinds: Conv (any groups; a kernel equal to its stride beyond 15 as patches, a dilation beyond 16 as
// phases), ConvTranspose (groups 1), Fc, MatMul, Pool (max, average), GlobalAvgPool, Reduce (sum, mean, L2,
// max, min, product), Resize, Softmax, LogSoftmax, LayerNorm, the fp32 functions (Sigmoid, Unary, Div,
// Pow, comparisons, Where) as FloatKernels.h programs, the binary element-wise kinds with NumPy
// broadcasting, Relu, LeakyRelu, PRelu, Clip, Affine, Cast (fp32 <-> a 16-bit float), and the copy kinds
// Concat, Slice, Move and Upsample.
// Anything else is an error naming the op and its kind.
#pragma once

#include "compiler/Backend/Graph.h"
#include "isa/bmodel/Model.h"
#include "support/Status.h"

namespace tpu::backend::bm1684x {

// Counts of what the compile emitted, for the report deploy prints.
struct CompileReport {
  uint64_t tiuCommands = 0, dmaCommands = 0, coeffBytes = 0, neuronBytes = 0;
};

Result<bmodel::Model> compileToBmodel(const Graph &g, CompileReport *report = nullptr);
Status writeBmodel(const Graph &g, const std::string &path, CompileReport *report = nullptr);

} // namespace tpu::backend::bm1684x
