// The BM1684X compiler's state and its emitters, one file per op family: Window.cpp (Conv, ConvTranspose,
// Fc, MatMul, Pool, GlobalAvgPool), Elementwise.cpp (element-wise kinds and the fp32 function programs),
// Reduce.cpp (Reduce, Softmax, LogSoftmax, LayerNorm), Resize.cpp, Copy.cpp (Concat, Move, Slice,
// Upsample); CodeGen.cpp places the tensors and dispatches.
#pragma once

#include "compiler/Backend/BM1684X/CodeGen.h"
#include "compiler/Backend/BM1684X/Commands.h"
#include "compiler/Backend/BM1684X/Program.h"
#include "compiler/Backend/FloatKernels.h"
#include "compiler/Backend/Graph.h"
#include "compiler/Backend/Ops/Resize.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tpu::backend::bm1684x {

struct ReduceRows; // Reduce.cpp

// A window op as its commands run it (Window.cpp): the window, the input and output as DDR views (their
// first element, dims and element strides), and how the op maps onto conv.normal and pord.*.
struct WindowJob {
  WindowParams p;
  Dims xd{}, xStride{}, yd{}, yStride{};
  uint64_t xBase = 0, yBase = 0;          // element offsets of the views' first elements
  std::array<uint64_t, 2> inserted{1, 1}; // zeros inserted between input rows, columns (transposed conv), +1
  bool isConv = false, depthwise = false, isAverage = false, uneven = false;
  uint64_t groups = 1;                              // convs, one per group
  bool patches = false;                             // a kernel equal to its stride beyond the fields
  std::array<uint64_t, 2> patch{1, 1};              // the patches' kernel
  Dims xOrig{};                                     // the input's own dims (patches)
  uint64_t wOcStride = 0, wIcStride = 1, wItem = 0; // weights' element strides (0: their own rows), per item
};

class Compiler {
public:
  explicit Compiler(const Graph &g) : g_(g) {}

  Result<bmodel::Model> run(CompileReport *report);

private:
  // What compiles a kind, and whether its int8 form is compiled too (CodeGen.cpp's table).
  struct KindEmitter {
    OpKind kind;
    Status (Compiler::*emit)(const Op &);
    bool integer;
  };
  static const KindEmitter *emitterOf(OpKind kind);
  Status emit(const Op &op);
  Status emitWindow(const Op &op); // Conv, Fc, Pool, GlobalAvgPool
  Status emitWindowJob(const Op &op, const WindowJob &job);
  Status emitPhases(const Op &op, const WindowJob &job);
  Status emitElementwise(const Op &op);
  Status emitConcat(const Op &op);
  Status emitCopies(const Op &op); // Move, Slice, Upsample
  Status emitReduce(const Op &op);
  Status emitIntegerReduce(const Op &op, const ReduceRows &r);
  Status emitProgram(const Op &op, const KernelProgram &p, const std::vector<uint64_t> &tile, uint64_t tables,
                     const Dims &shape);
  Status emitSoftmax(const Op &op);
  Status emitResize(const Op &op);
  Status productTree(const Dims &shape, uint64_t offset);
  Status resizeAxis(const Op &op, size_t axis, const kernels::ResizeTaps &t, uint64_t weights, uint64_t from,
                    const Dims &in, uint64_t to);
  Status loadPatches(const Op &op, const Dims &x, const std::array<uint64_t, 2> &kernel, uint64_t n, uint64_t oh0,
                     const Dims &shape, uint64_t offset);
  Status emitLayerNorm(const Op &op);
  Status emitReshape(const Op &op);
  Status loadTables(const Op &op, uint64_t bytes, uint64_t offset);
  Status perChannel(const char *mnemonic, const Dims &shape, uint64_t out, uint64_t a, uint64_t v);
  Status convert(const Dims &shape, uint64_t to, DType toType, uint64_t from, DType fromType);
  Status loadWide(const Region &src, uint64_t tile, uint64_t stage);
  Status storeNarrow(uint64_t tile, const Dims &tileShape, const Region &dst, uint64_t stage);
  Status convertInDdr(uint64_t from, DType fromType, uint64_t to, DType toType, uint64_t count);
  Status copy(const Op &op, int from, int64_t src, const std::array<int64_t, 4> &srcStride, int64_t dst,
              const std::array<int64_t, 4> &dstStride, const std::array<int64_t, 4> &size);

  uint64_t addressOf(int tensor) const { return address_[size_t(tensor)]; }
  Dims dims(int tensor) const {
    auto s = g_.tensors[size_t(tensor)].nchw();
    return {uint64_t(s[0]), uint64_t(s[1]), uint64_t(s[2]), uint64_t(s[3])};
  }

  const Graph &g_;
  std::vector<uint64_t> address_;         // DDR address of every tensor as commands write it
  std::vector<DType> stored_;             // every tensor's type as stored (an int8 op's weights widened; run)
  std::map<const Op *, uint64_t> tables_; // DDR address of an op's constant tables (constantsOf)
  // DDR addresses of a Resize's fp32 intermediates: resized along w only; and for a 16-bit Resize its input
  // widened and its result before rounding (it runs as its fp32 form).
  struct ResizeScratch {
    uint64_t mid = 0, wideIn = 0, wideOut = 0;
  };
  std::map<const Op *, ResizeScratch> scratch_;
  Program program_;
};

// An op the compiler does not compile: one line naming it and why.
Status unsupported(const Op &op, const std::string &why);

// The fp32 program of a function kind (FloatKernels.h, the BM1684's recipes), or nullopt.
std::optional<KernelProgram> programOf(const Op &op);
// Every program an op runs, in the order its polynomial tables are stored (the tables of program k after
// those of programs 0..k-1), and the bytes of those tables.
std::vector<KernelProgram> programsOf(const Op &op);
uint64_t tableBytesOf(const std::vector<KernelProgram> &programs);

// A transposed conv's weights [ic, oc / groups, kh, kw] as the stride-1 conv of `groups` groups over the
// zero-inserted input takes them: [oc, ic / groups, kh, kw], the kernel rotated by 180 degrees.
std::vector<uint8_t> rotatedConvWeights(const Tensor &w, int64_t groups);
// Whether an op is an int8 conv, transposed conv or fc (int8 weights, an int16 bias stored as int32).
bool int8Weighted(const Graph &g, const Op &op);
// An integer tensor's values in a wider integer type.
std::vector<uint8_t> widenedInteger(const Tensor &t, DType to);
// The largest |sum| an int8 conv, transposed conv or fc can reach in int32 (its weights and bias as they are,
// its input's range): beyond INT32_MAX the chip's int32 sums would saturate where the reference's do not.
int64_t int8SumBound(const Graph &g, const Op &op);
// Whether an average pool's windows divide by different counts.
bool unevenAverage(const Op &op, const Tensor &x, const Tensor &y);
// A Resize's per-index weights along one axis, (1 - w) then w, as the reference's blend takes them.
std::vector<float> blendWeights(const kernels::ResizeTaps &t);

} // namespace tpu::backend::bm1684x
