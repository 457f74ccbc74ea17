#include "compiler/Backend/BM1684X/CodeGen.h"

#include "arith/IntArith.h"
#include "compiler/Backend/FloatKernels.h"
#include "compiler/Backend/Ops/Activation.h"
#include "compiler/Backend/Ops/Affine.h"
#include "compiler/Backend/Ops/Fc.h"
#include "compiler/Backend/Ops/MatMul.h"
#include "compiler/Backend/Ops/Move.h"
#include "compiler/Backend/Ops/Reduce.h"
#include "compiler/Backend/Ops/Resize.h"
#include "compiler/Backend/Ops/Slice.h"
#include "compiler/Backend/Ops/Unary.h"
#include "compiler/Backend/Ops/Upsample.h"
#include "compiler/Backend/Ops/Window.h"
#include "compiler/Backend/QuantRef.h"
#include "isa/bm1684x/Command.h"
#include "isa/bm1684x/MemoryMap.h"
#include "isa/bmodel/Bmodel.h"
#include "isa/chips/Registry.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <numeric>
#include <optional>

namespace tpu::backend::bm1684x {

namespace map = isa::bm1684x;
using isa::bm1684x::Command;
using Dims = std::array<uint64_t, 4>;

namespace {

constexpr uint64_t kF32 = 4;       // bytes of an element: everything here is fp32
constexpr unsigned kPrecF32 = 2;   // the commands' precision code for fp32
constexpr uint64_t kDdrAlign = 64; // tensors in DDR start on 64-byte boundaries
constexpr uint64_t kMaxPad = 15;   // the 4-bit pad fields

uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
uint64_t alignUp(uint64_t a, uint64_t b) { return ceilDiv(a, b) * b; }
using sim::floatBits;

// Channel rows a lane holds for `c` channels starting at lane 0.
uint64_t rows(uint64_t c) { return ceilDiv(c, map::kLanes); }
// Elements one channel of an (h, w) plane takes in a lane, padded to the EU vector (the AlignEU layout).
uint64_t alignedPlane(uint64_t hw) { return alignUp(hw, map::kEuBytes / kF32); }

// Element strides of a compact (C order) tensor of these dims.
Dims compactDims(const Dims &d) { return {d[1] * d[2] * d[3], d[2] * d[3], d[3], 1}; }
std::array<int64_t, 4> compactStrides(const Dims &d) {
  const Dims s = compactDims(d);
  return {int64_t(s[0]), int64_t(s[1]), int64_t(s[2]), int64_t(s[3])};
}

// A tensor region as a DMA sees it: its first byte (a DDR or local-memory address as commands write it),
// its shape and its element strides.
struct Region {
  uint64_t address;
  Dims shape, stride;
};
// An (n, c, h, w) tensor in local memory at `offset` of every lane, channels from lane 0, AlignEU.
Region localAligned(uint64_t offset, Dims shape) {
  uint64_t cs = alignedPlane(shape[2] * shape[3]);
  return {map::kLmemStart + offset, shape, {rows(shape[1]) * cs, cs, shape[3], 1}};
}
// An (n, c, h, w) box of a DDR tensor with these element strides, starting at `at`.
Region ddrBox(uint64_t address, const Dims &stride, const Dims &at, const Dims &shape) {
  uint64_t offset = at[0] * stride[0] + at[1] * stride[1] + at[2] * stride[2] + at[3] * stride[3];
  return {address + offset * kF32, shape, stride};
}

using Fields = std::initializer_list<std::pair<const char *, uint64_t>>;
// Sets the fields of a command; an error names the command and the field.
Status setFields(Command &c, Fields fields) {
  for (auto [name, value] : fields)
    if (Status st = c.set(name, value); !st) return st.prefix(std::string(c.op().mnemonic) + " field " + name);
  return Status::ok();
}

// The two engines' command queues of the one command group, each command waiting for everything the
// other engine issued before it (the engines never overlap: a first compiler, correct before fast).
class Program {
public:
  Status dma(const Region &src, const Region &dst) { return tensorDma(src, dst, std::nullopt); }
  // Every element of a region (DDR or local) set to the fp32 `bits`.
  Status fill(const Region &r, uint32_t bits) { return tensorDma(r, r, bits); }
  Status tiu(Command c) { return add(std::move(c), true); }

  // Ends both queues with their sys commands and returns the group.
  Result<bmodel::CmdGroup> finish() {
    TPU_ASSIGN_OR_RETURN(Command end, Command::make(*isa::bm1684x::findOp("sys.end"), false));
    TPU_RETURN_IF_ERROR(add(std::move(end), true));
    TPU_ASSIGN_OR_RETURN(Command sys, Command::make(*isa::bm1684x::findOp("dma.sys"), true));
    TPU_RETURN_IF_ERROR(add(std::move(sys), false));
    bmodel::CmdGroup g;
    g.tiuStream = isa::bm1684x::encodeBuffer(tiu_);
    g.gdmaStream = isa::bm1684x::encodeBuffer(dma_);
    g.tiuStreamCount = uint32_t(tiu_.size());
    g.gdmaStreamCount = uint32_t(dma_.size());
    return g;
  }

private:
  // A tensor DMA from src to dst, or (fillBits) writing the constant over dst.
  Status tensorDma(const Region &src, const Region &dst, std::optional<uint32_t> fillBits) {
    TPU_ASSIGN_OR_RETURN(Command c, Command::make(*isa::bm1684x::findOp("dma.tensor"), false));
    if (fillBits) {
      TPU_RETURN_IF_ERROR(c.set("fill_constant_en", 1));
      TPU_RETURN_IF_ERROR(c.set("constant_value", *fillBits));
    }
    const char *dims = "nchw";
    for (size_t i = 0; i < 4; ++i) {
      std::string d(1, dims[i]);
      TPU_RETURN_IF_ERROR(c.set("src_" + d + "size", src.shape[i]));
      TPU_RETURN_IF_ERROR(c.set("dst_" + d + "size", dst.shape[i]));
      TPU_RETURN_IF_ERROR(c.set("src_" + d + "stride", src.stride[i]));
      TPU_RETURN_IF_ERROR(c.set("dst_" + d + "stride", dst.stride[i]));
    }
    for (auto [prefix, address] :
         {std::pair{"src_start_addr_", src.address}, std::pair{"dst_start_addr_", dst.address}}) {
      TPU_RETURN_IF_ERROR(c.set(std::string(prefix) + "l32", address & 0xffffffffu));
      TPU_RETURN_IF_ERROR(c.set(std::string(prefix) + "h8", address >> 32));
    }
    TPU_RETURN_IF_ERROR(setFields(c, {{"stride_enable", 1},
                                      {"nchw_copy", 1},
                                      {"src_data_format", kPrecF32},
                                      {"localmem_mask_l32", 0xffffffffu},
                                      {"localmem_mask_h32", 0xffffffffu}}));
    return add(std::move(c), false);
  }

  Status add(Command c, bool isTiu) {
    auto &queue = isTiu ? tiu_ : dma_;
    const auto &other = isTiu ? dma_ : tiu_;
    constexpr uint64_t kMaxId = (1u << 20) - 1;
    if (queue.size() >= kMaxId) return makeError("more than ", kMaxId, " commands on one engine");
    TPU_RETURN_IF_ERROR(c.set("cmd_id", queue.size() + 1));
    TPU_RETURN_IF_ERROR(c.set("cmd_id_dep", other.size()));
    TPU_RETURN_IF_ERROR(c.set("cmd_id_en", 1));
    queue.push_back(std::move(c));
    return Status::ok();
  }
  std::vector<Command> tiu_, dma_;
};

Result<Command> tiuCommand(const char *mnemonic, Fields fields) {
  TPU_ASSIGN_OR_RETURN(Command c, Command::make(*isa::bm1684x::findOp(mnemonic), true));
  TPU_RETURN_IF_ERROR(setFields(c, fields));
  return c;
}

// One fp32 arithmetic command on local tiles of `shape` (all at lane 0, AlignEU): out = a OP b, b a tile
// or a constant.
struct TileOperand {
  int tile = -1; // -1: the constant
  float constant = 0;
};
Result<Command> arithCommand(const char *mnemonic, const Dims &shape, uint64_t out, uint64_t a,
                             std::optional<uint64_t> bTile, float bConstant) {
  TPU_ASSIGN_OR_RETURN(Command c, tiuCommand(mnemonic, {{"tsk_opd_num", 2},
                                                        {"res0_prec", kPrecF32},
                                                        {"opd0_prec", kPrecF32},
                                                        {"opd1_prec", kPrecF32},
                                                        {"res0_n", shape[0]},
                                                        {"res0_c", shape[1]},
                                                        {"res0_h", shape[2]},
                                                        {"res0_w", shape[3]},
                                                        {"res0_addr", out},
                                                        {"opd0_addr", a}}));
  TPU_RETURN_IF_ERROR(c.set("opd1_const", bTile ? 0 : 1));
  TPU_RETURN_IF_ERROR(c.set("opd1_addr", bTile ? *bTile : floatBits(bConstant)));
  return c;
}

// A window command (conv.normal or pord.*) on local tensors at lane 0: output `out` (1, c, oh, ow), input
// `in` rows and width, the window's kernel, strides and dilations, pad rows above and below the input (the
// columns' pads are the window's own), the pad value's fp32 bits.
Result<Command> windowCommand(const char *mnemonic, const Dims &out, const std::array<uint64_t, 2> &in,
                              const WindowParams &p, const std::array<uint64_t, 2> &padRows, uint32_t padValue,
                              uint64_t inOffset, uint64_t outOffset) {
  return tiuCommand(mnemonic, {{"res0_prec", kPrecF32},
                               {"opd0_prec", kPrecF32},
                               {"res0_n", out[0]},
                               {"res0_c", out[1]},
                               {"res0_h", out[2]},
                               {"res0_w", out[3]},
                               {"opd0_h", in[0]},
                               {"opd0_w", in[1]},
                               {"opd1_h", uint64_t(p.kh)},
                               {"opd1_w", uint64_t(p.kw)},
                               {"opd0_up_pad", padRows[0]},
                               {"opd0_dn_pad", padRows[1]},
                               {"opd0_lf_pad", uint64_t(p.padLeft)},
                               {"opd0_rt_pad", uint64_t(p.padRight)},
                               {"res_op_y_str", uint64_t(p.strideH)},
                               {"res_op_x_str", uint64_t(p.strideW)},
                               {"opd1_y_ins0", uint64_t(p.dilationH - 1)},
                               {"opd1_x_ins0", uint64_t(p.dilationW - 1)},
                               {"opd3_const", 1},
                               {"opd3_addr", padValue},
                               {"res0_addr", outOffset},
                               {"opd0_addr", inOffset}});
}
// sfu.rsqrt in place on one value per channel of cs channels at `offset`.
Result<Command> rsqrtCommand(uint64_t offset, uint64_t cs) {
  return tiuCommand("sfu.rsqrt", {{"res0_prec", kPrecF32},
                                  {"opd0_prec", kPrecF32},
                                  {"res0_n", 1},
                                  {"res0_c", cs},
                                  {"res0_h", 1},
                                  {"res0_w", 1},
                                  {"res0_addr", offset},
                                  {"opd0_addr", offset}});
}
// pord.avgpooling's multiplier of the window's sum: an fp32 constant in opd1.
Status setMultiplier(Command &c, float multiplier) {
  TPU_RETURN_IF_ERROR(c.set("opd1_const", 1));
  return c.set("opd1_addr", floatBits(multiplier));
}

// Local memory of one lane, handed out in whole banks so that the operands of a command never share one.
struct LmemPlan {
  std::vector<uint64_t> offsets;
  // Places buffers of `bytes` (per lane) one after the other; false when they do not fit.
  bool place(const std::vector<uint64_t> &bytes) {
    offsets.clear();
    uint64_t at = 0;
    for (uint64_t b : bytes) {
      offsets.push_back(at);
      at += alignUp(std::max<uint64_t>(b, 1), map::kBankBytes);
    }
    return at <= map::kLaneBytes;
  }
};

// The sliced loops of one op: output channels in steps of whole lane rows, output rows in steps.
struct Slicing {
  uint64_t channelStep = 0, rowStep = 0;
};

// Output rows [oh0, oh0 + count) of a window over `inRows` input rows: the input rows they read and the
// pads above and below them.
struct RowWindow {
  uint64_t first = 0, count = 0, padUp = 0, padDown = 0;
};
RowWindow inputRows(uint64_t oh0, uint64_t count, const WindowParams &p, uint64_t inRows) {
  int64_t start = int64_t(oh0) * p.strideH - p.padTop;
  int64_t end = int64_t(oh0 + count - 1) * p.strideH - p.padTop + (p.kh - 1) * p.dilationH; // inclusive
  int64_t first = std::max<int64_t>(start, 0), last = std::min<int64_t>(end, int64_t(inRows) - 1);
  RowWindow r;
  r.first = uint64_t(first);
  r.count = last >= first ? uint64_t(last - first + 1) : 0;
  r.padUp = uint64_t(first - start);
  r.padDown = uint64_t(end - std::max(last, first - 1));
  return r;
}

// A transposed conv's weights [ic, oc, kh, kw] as the stride-1 conv over the zero-inserted input takes
// them: [oc, ic, kh, kw], the kernel rotated by 180 degrees.
std::vector<uint8_t> rotatedConvWeights(const Tensor &w) {
  const auto [ic, oc, kh, kw] = w.nchw();
  std::vector<uint8_t> out(w.data.size());
  for (int64_t i = 0; i < ic; ++i)
    for (int64_t o = 0; o < oc; ++o)
      for (int64_t y = 0; y < kh; ++y)
        for (int64_t x = 0; x < kw; ++x)
          std::memcpy(&out[size_t(((o * ic + i) * kh + (kh - 1 - y)) * kw + (kw - 1 - x)) * kF32],
                      &w.data[size_t(((i * oc + o) * kh + y) * kw + x) * kF32], kF32);
  return out;
}

// Whether an average pool's windows divide by different counts.
bool unevenAverage(const Op &op, const Tensor &x, const Tensor &y) { return !averageTapsOf(op, x, y).uniform(); }

class Compiler {
public:
  explicit Compiler(const Graph &g) : g_(g) {}

  Result<bmodel::Model> run(CompileReport *report);

private:
  Status emit(const Op &op);
  Status emitWindow(const Op &op); // Conv, Fc, Pool, GlobalAvgPool
  Status emitElementwise(const Op &op);
  Status emitConcat(const Op &op);
  Status emitCopies(const Op &op); // Move, Slice, Upsample
  Status emitReduce(const Op &op);
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
  Status loadTables(const Op &op, uint64_t bytes, uint64_t offset);
  Status perChannel(const char *mnemonic, const Dims &shape, uint64_t out, uint64_t a, uint64_t v);
  Status copy(const Op &op, int from, int64_t src, const std::array<int64_t, 4> &srcStride, int64_t dst,
              const std::array<int64_t, 4> &dstStride, const std::array<int64_t, 4> &size);

  uint64_t addressOf(int tensor) const { return address_[size_t(tensor)]; }
  Dims dims(int tensor) const {
    auto s = g_.tensors[size_t(tensor)].nchw();
    return {uint64_t(s[0]), uint64_t(s[1]), uint64_t(s[2]), uint64_t(s[3])};
  }

  const Graph &g_;
  std::vector<uint64_t> address_;          // DDR address of every tensor as commands write it
  std::map<const Op *, uint64_t> tables_;  // DDR address of an op's constant tables (constantsOf)
  std::map<const Op *, uint64_t> scratch_; // DDR address of a Resize's intermediate (resized along w only)
  Program program_;
};

Status unsupported(const Op &op, const std::string &why) {
  return makeError(opKindName(op.kind), " '", op.name, "': ", why, " (the BM1684X compiler is fp32 only so far)");
}

// The window op as one: Conv and Fc (as a 1x1 conv) with weights, Pool and GlobalAvgPool without.
Status Compiler::emitWindow(const Op &op) {
  const Tensor &x = g_.tensors[size_t(op.inputs[0])], &y = g_.tensors[size_t(op.output)];
  const bool transposed = op.kind == OpKind::ConvTranspose;
  const bool isMatMul = op.kind == OpKind::MatMul;
  const bool isConv = op.kind == OpKind::Conv || op.kind == OpKind::Fc || transposed || isMatMul;
  WindowParams p;
  if (op.kind == OpKind::Conv || op.kind == OpKind::Pool) p = effectiveWindow(op, x, y);
  // A conv whose kernel is its stride, unpadded (ViT's patches), beyond the 4-bit stride fields: the 1x1 conv
  // over the patches' elements as channels (q = (ic * kh + ky) * kw + kx, the weights' own order), its
  // input gathered by DMA (one per input channel and kernel row).
  const bool patches = op.kind == OpKind::Conv && p.groups == 1 && p.kh == p.strideH && p.kw == p.strideW &&
                       (p.strideH > 15 || p.strideW > 15) && p.dilationH == 1 && p.dilationW == 1 &&
                       !(p.padTop || p.padBottom || p.padLeft || p.padRight) && uint64_t(p.kw) <= map::kLanes;
  const uint64_t patchH = patches ? uint64_t(p.kh) : 1, patchW = patches ? uint64_t(p.kw) : 1;
  // A transposed conv runs as the stride-1 conv over its input with stride - 1 zeros inserted between
  // elements (opd0_*_ins0), the kernel rotated (rotatedConvWeights), the pads of transposedPads.
  std::array<uint64_t, 2> inserted{1, 1};
  if (transposed) {
    p = op.params<WindowParams>();
    if (p.groups != 1) return unsupported(op, "a grouped transposed conv");
    if (p.strideH > 16 || p.strideW > 16) return unsupported(op, "a stride above 16 (the 4-bit insertion fields)");
    const TransposedPads t = transposedPads(op, x, y);
    inserted = {uint64_t(p.strideH), uint64_t(p.strideW)};
    p.strideH = p.strideW = 1;
    p.padTop = t.top, p.padBottom = t.bottom, p.padLeft = t.left, p.padRight = t.right;
  }
  if (op.kind == OpKind::GlobalAvgPool) p.kh = x.nchw()[2], p.kw = x.nchw()[3];
  Dims xd = dims(op.inputs[0]), yd = dims(op.output);
  // The tensors as the window sees them: dims and DDR element strides (compact NCHW but for Fc and MatMul);
  // the weights' element strides along output and input channels; per item (n) address steps of the
  // input, the weights (MatMul: the right matrix of each item) and the output.
  Dims xStride = compactDims(xd), yStride = compactDims(yd);
  uint64_t wOcStride = 0, wIcStride = 1, wItem = 0; // wOcStride 0: the weights' own rows
  if (isMatMul) { // item i: a 1x1 conv over M rows of K, its weights [n][k] the rhs read transposed
    const MatMulDims d = *matMulDims(x, g_.tensors[size_t(op.inputs[1])], y);
    const uint64_t m = uint64_t(d.m), k = uint64_t(d.k), n = uint64_t(d.n);
    xd = {uint64_t(d.b), k, m, 1}, xStride = {m * k, 1, k, 1};
    yd = {uint64_t(d.b), n, m, 1}, yStride = {m * n, 1, n, 1};
    wOcStride = 1, wIcStride = n, wItem = k * n;
  }
  const Dims xOrig = xd;
  if (patches) { // the window: 1x1 over (n, ic * kh * kw, oh, ow)
    xd = {xd[0], xd[1] * patchH * patchW, yd[2], yd[3]};
    p = WindowParams{};
  }
  if (op.kind == OpKind::Fc) { // a 1x1 conv over M rows of K: x (M, K) (or (K, M) transposed), y (M, n)
    const uint64_t k = uint64_t(g_.tensors[size_t(op.inputs[1])].shape[1]), n = uint64_t(y.shape.back());
    const uint64_t m = uint64_t(y.numel()) / n;
    const bool t = op.params<FcParams>().transposedInput;
    xd = {1, k, m, 1}, xStride = {m * k, t ? m : 1, t ? 1 : k, 1};
    yd = {1, n, m, 1}, yStride = {m * n, 1, n, 1};
  }
  // One channel per group runs as a depthwise pooling command; other groups as one conv each.
  const bool depthwise = op.kind == OpKind::Conv && p.groups > 1 && uint64_t(p.groups) == xd[1] && xd[1] == yd[1];
  const uint64_t groups = op.kind == OpKind::Conv && !depthwise ? uint64_t(p.groups) : 1;
  const bool isAverage = op.kind == OpKind::GlobalAvgPool || (op.kind == OpKind::Pool && !p.isMax);
  // An average whose windows divide by different counts (pads left out of the count, ceil mode) sums
  // (multiplier 1) and multiplies each position by its own 1 / count (unevenDivisors) after.
  const bool uneven = isAverage && op.kind == OpKind::Pool && unevenAverage(op, x, y);
  for (int64_t v : {p.padTop, p.padBottom, p.padLeft, p.padRight})
    if (v < 0) return unsupported(op, "a negative pad");
  // Pads beyond the 4-bit fields are written into local memory around the input: the tile is filled with
  // the pad value, the input rows loaded inside it, and the command pads nothing.
  const bool padInMemory = std::max({p.padTop, p.padBottom, p.padLeft, p.padRight}) > int64_t(kMaxPad);
  if (padInMemory && inserted[0] * inserted[1] > 1) return unsupported(op, "a transposed conv with a pad above 15");
  const uint64_t padLeft = padInMemory ? uint64_t(p.padLeft) : 0, padRight = padInMemory ? uint64_t(p.padRight) : 0;
  const uint64_t tileWidth = xd[3] + padLeft + padRight; // of the input tile
  for (int64_t v : {p.strideH, p.strideW})               // res_op_*_str: 4 bits
    if (v < 1 || v > 15) return unsupported(op, "a stride of " + std::to_string(v) + " (1 to 15)");
  for (int64_t v : {p.dilationH, p.dilationW}) // opd1_*_ins0 = dilation - 1: 4 bits
    if (v < 1 || v > 16) return unsupported(op, "a dilation of " + std::to_string(v) + " (1 to 16)");

  const uint64_t kk = uint64_t(p.kh * p.kw);
  const bool hasWeights = isConv;
  const bool hasBias = isConv && op.inputs.size() > 2;
  const uint64_t ic = xd[1] / groups, oc = yd[1] / groups; // per group
  // Per lane, for a channel step of `cRows` lane rows and `oRows` output rows.
  auto weightBytes = [&](uint64_t cRows) {
    return !hasWeights ? 0 : depthwise ? cRows * kk * kF32 : cRows * ic * kk * kF32;
  };
  // Input rows as the window sees them: with zeros inserted, (h - 1) * step + 1.
  const uint64_t windowRows = (xd[2] - 1) * inserted[0] + 1;
  // The most input rows a slice of oRows output rows reads: its whole window span (the first slice's pads
  // take some of it, a later slice's do not).
  auto inputBytes = [&](uint64_t cRows, uint64_t oRows) {
    const uint64_t span = (oRows - 1) * uint64_t(p.strideH) + uint64_t((p.kh - 1) * p.dilationH) + 1;
    const uint64_t inChannels = isConv && !depthwise ? rows(ic) : cRows;
    return inChannels * alignedPlane((padInMemory ? span : std::min(span, windowRows)) * tileWidth) * kF32;
  };
  auto outputBytes = [&](uint64_t cRows, uint64_t oRows) { return cRows * alignedPlane(oRows * yd[3]) * kF32; };
  // Input, weights, bias, output and (uneven) the divisors' reciprocals.
  auto buffers = [&](uint64_t cRows, uint64_t oRows) {
    std::vector<uint64_t> b{inputBytes(cRows, oRows), weightBytes(cRows), hasBias ? cRows * kF32 : 0,
                            outputBytes(cRows, oRows)};
    if (uneven) b.push_back(outputBytes(cRows, oRows));
    return b;
  };
  LmemPlan plan;
  Slicing s;
  for (uint64_t cRows = rows(oc); cRows >= 1 && !s.rowStep; --cRows) {
    // With inserted zeros the rows are not sliced (a slice could start on an inserted row).
    for (uint64_t oRows = yd[2]; oRows >= (inserted[0] > 1 ? yd[2] : 1); --oRows)
      if (plan.place(buffers(cRows, oRows))) {
        s = {cRows * map::kLanes, oRows};
        break;
      }
  }
  if (!s.rowStep) {
    const std::vector<uint64_t> one = buffers(1, 1);
    return unsupported(op, "one output row of 64 channels needs " +
                               std::to_string(std::accumulate(one.begin(), one.end(), uint64_t(0))) +
                               " bytes of a lane's " + std::to_string(map::kLaneBytes));
  }
  plan.place(buffers(s.channelStep / map::kLanes, s.rowStep));
  const uint64_t inOff = plan.offsets[0], wOff = plan.offsets[1], bOff = plan.offsets[2], yOff = plan.offsets[3];

  const uint32_t padValue = p.isMax && !isConv ? floatBits(-std::numeric_limits<float>::infinity()) : 0;
  for (uint64_t g = 0; g < groups; ++g)
    for (uint64_t c0 = 0; c0 < oc; c0 += s.channelStep) {
      const uint64_t cs = std::min(s.channelStep, oc - c0), oc0 = g * oc + c0; // output channels from oc0
      // The weights of item n (the same for every item but MatMul's) into the Ic1 layout, and the bias.
      auto loadWeights = [&](uint64_t n) -> Status {
        const uint64_t perChannel = depthwise ? kk : ic * kk, ocStride = wOcStride ? wOcStride : perChannel;
        Region src{addressOf(op.inputs[1]) + (n * wItem + oc0 * ocStride) * kF32,
                   {1, cs, 1, perChannel},
                   {0, ocStride, 0, wIcStride}};
        Region dst{map::kLmemStart + wOff, src.shape, {rows(cs) * perChannel, perChannel, perChannel, 1}};
        TPU_RETURN_IF_ERROR(program_.dma(src, dst));
        if (!hasBias) return Status::ok();
        Region bsrc{addressOf(op.inputs[2]) + oc0 * kF32, {1, cs, 1, 1}, {cs, 1, 1, 1}};
        return program_.dma(bsrc, {map::kLmemStart + bOff, bsrc.shape, {rows(cs), 1, 1, 1}});
      };
      if (hasWeights && !wItem) TPU_RETURN_IF_ERROR(loadWeights(0));
      for (uint64_t n = 0; n < yd[0]; ++n) {
        if (hasWeights && wItem) TPU_RETURN_IF_ERROR(loadWeights(n));
        for (uint64_t oh0 = 0; oh0 < yd[2]; oh0 += s.rowStep) {
          const uint64_t ohs = std::min(s.rowStep, yd[2] - oh0);
          RowWindow r = inputRows(oh0, ohs, p, windowRows);
          if (inserted[0] > 1) r.count = xd[2]; // the whole input: its rows, not the window's
          if ((!padInMemory && (r.padUp > kMaxPad || r.padDown > kMaxPad)) || r.count == 0)
            return unsupported(op, "a slice whose rows lie wholly in the padding");
          const uint64_t inC = isConv && !depthwise ? ic : cs, inC0 = isConv && !depthwise ? g * ic : c0;
          const Dims tileShape{1, inC, r.count + (padInMemory ? r.padUp + r.padDown : 0), tileWidth};
          if (rows(inC) * alignedPlane(tileShape[2] * tileShape[3]) * kF32 > wOff - inOff)
            return makeError("internal: ", op.name, ": an input slice overruns its local buffer");
          Dims inShape{1, inC, r.count, xd[3]};
          if (padInMemory) { // the pad value around, the rows inside
            const Region tile = localAligned(inOff, tileShape);
            TPU_RETURN_IF_ERROR(program_.fill(tile, padValue));
            Region inside = tile;
            inside.address += (r.padUp * tileWidth + padLeft) * kF32, inside.shape = inShape;
            TPU_RETURN_IF_ERROR(
                program_.dma(ddrBox(addressOf(op.inputs[0]), xStride, {n, inC0, r.first, 0}, inShape), inside));
            r.padUp = r.padDown = 0;
          } else if (patches) {
            TPU_RETURN_IF_ERROR(loadPatches(op, xOrig, {patchH, patchW}, n, oh0, inShape, inOff));
          } else {
            TPU_RETURN_IF_ERROR(program_.dma(ddrBox(addressOf(op.inputs[0]), xStride, {n, inC0, r.first, 0}, inShape),
                                             localAligned(inOff, inShape)));
          }
          Dims outShape{1, cs, ohs, yd[3]};
          const char *mnemonic = isConv && !depthwise ? "conv.normal"
                                 : depthwise          ? (op.relu ? "pord.depthwiserelu" : "pord.depthwise")
                                 : isAverage          ? "pord.avgpooling"
                                                      : "pord.maxpooling";
          WindowParams commandWindow = p;
          if (padInMemory) commandWindow.padLeft = commandWindow.padRight = 0;
          TPU_ASSIGN_OR_RETURN(Command c, windowCommand(mnemonic, outShape, {tileShape[2], tileWidth}, commandWindow,
                                                        {r.padUp, r.padDown}, padValue, inOff, yOff));
          if (isConv && !depthwise) TPU_RETURN_IF_ERROR(c.set("opd0_c", ic));
          TPU_RETURN_IF_ERROR(c.set("opd0_y_ins0", inserted[0] - 1));
          TPU_RETURN_IF_ERROR(c.set("opd0_x_ins0", inserted[1] - 1));
          if (hasWeights) TPU_RETURN_IF_ERROR(c.set("opd1_addr", wOff));
          if (isAverage) TPU_RETURN_IF_ERROR(setMultiplier(c, uneven ? 1.0f : 1.0f / float(kk)));
          if (isConv) {
            TPU_RETURN_IF_ERROR(c.set("opd2_const", hasBias ? 0 : 1));
            TPU_RETURN_IF_ERROR(c.set("opd2_addr", hasBias ? bOff : 0));
          }
          TPU_RETURN_IF_ERROR(program_.tiu(std::move(c)));
          Region out = localAligned(yOff, outShape);
          if (uneven) { // the rows' reciprocals, the same for every channel, then sum * reciprocal
            const uint64_t rOff = plan.offsets[4];
            TPU_RETURN_IF_ERROR(program_.dma({tables_.at(&op) + oh0 * yd[3] * kF32, outShape, {0, 0, yd[3], 1}},
                                             localAligned(rOff, outShape)));
            TPU_ASSIGN_OR_RETURN(Command m, arithCommand("arith.mul", outShape, yOff, yOff, rOff, 0.0f));
            TPU_RETURN_IF_ERROR(program_.tiu(std::move(m)));
          }
          if (op.relu && !depthwise) {
            TPU_ASSIGN_OR_RETURN(Command r, arithCommand("arith.max", outShape, yOff, yOff, std::nullopt, 0.0f));
            TPU_RETURN_IF_ERROR(program_.tiu(std::move(r)));
          }
          TPU_RETURN_IF_ERROR(program_.dma(out, ddrBox(addressOf(op.output), yStride, {n, oc0, oh0, 0}, outShape)));
        }
      }
    }
  return Status::ok();
}

// The patches of output rows [oh0, oh0 + shape[2]) of item n, as the channels of local `shape` at `offset`:
// channel (ic * kh + ky) * kw + kx, row oh, column ow holds x[n][ic][oh * kh + ky][ow * kw + kx]; one DMA
// per input channel and kernel row (its kw channels).
Status Compiler::loadPatches(const Op &op, const Dims &x, const std::array<uint64_t, 2> &kernel, uint64_t n,
                             uint64_t oh0, const Dims &shape, uint64_t offset) {
  const auto [kh, kw] = kernel;
  const Region tile = localAligned(offset, shape);
  for (uint64_t ic = 0; ic < x[1]; ++ic)
    for (uint64_t ky = 0; ky < kh; ++ky) {
      const uint64_t q = (ic * kh + ky) * kw; // the first of these kw channels
      const uint64_t from = ((n * x[1] + ic) * x[2] + oh0 * kh + ky) * x[3];
      const Region src{addressOf(op.inputs[0]) + from * kF32, {1, kw, shape[2], shape[3]}, {0, 1, kh * x[3], kw}};
      const Region dst{tile.address + (q % map::kLanes) * map::kLaneBytes + q / map::kLanes * tile.stride[1] * kF32,
                       src.shape, tile.stride};
      TPU_RETURN_IF_ERROR(program_.dma(src, dst));
    }
  return Status::ok();
}

// The element-wise kinds as steps on local tiles: tiles 0..loads-1 hold the inputs named in `loads` (NumPy-
// broadcast to the output tile; a per-channel weight along channels), further tiles are scratch; each step
// writes `out` = `a` OP `b`; the result is tile 0.
struct ElementwisePlan {
  struct Step {
    const char *mnemonic;
    int out, a;
    TileOperand b;
  };
  std::vector<std::pair<int, int>> loads; // (tensor, tile)
  int tiles = 1;
  std::optional<KernelProgram> program; // run first when present: register r is tile r
  std::vector<Step> steps;
};

// The fp32 program of a function kind (FloatKernels.h, the BM1684's recipes), or nullopt.
std::optional<KernelProgram> programOf(const Op &op) {
  switch (op.kind) {
  case OpKind::Sigmoid:
    return sigmoidKernel();
  case OpKind::Unary: {
    const auto &p = op.params<UnaryParams>();
    return unaryKernel(p.function, p.alpha, p.beta);
  }
  case OpKind::Pow:
    return powKernel();
  case OpKind::PRelu:
    return preluKernel();
  case OpKind::Greater:
    return compareKernel(true, false);
  case OpKind::Less:
    return compareKernel(false, true);
  case OpKind::Equal:
    return compareKernel(false, false);
  case OpKind::Where:
    return whereKernel();
  default:
    return std::nullopt;
  }
}

// Every program an op runs, in the order its polynomial tables are stored (the tables of program k after
// those of programs 0..k-1).
std::vector<KernelProgram> programsOf(const Op &op) {
  if (op.kind == OpKind::Softmax || op.kind == OpKind::LogSoftmax) {
    std::vector<KernelProgram> p{*unaryKernel(kernels::UnaryKind::Exp)};
    if (op.kind == OpKind::LogSoftmax) p.push_back(*unaryKernel(kernels::UnaryKind::Log));
    return p;
  }
  if (auto p = programOf(op)) return {*p};
  return {};
}
uint64_t tableBytesOf(const std::vector<KernelProgram> &programs) {
  uint64_t n = 0;
  for (const KernelProgram &p : programs) n += p.coefficientCount();
  return n * kF32;
}

// A Resize's per-index weights along one axis, (1 - w) then w, as the reference's blend takes them.
std::vector<float> blendWeights(const kernels::ResizeTaps &t) {
  std::vector<float> v;
  for (float w : t.w) v.push_back(1.0f - w);
  v.insert(v.end(), t.w.begin(), t.w.end());
  return v;
}
// Whether a Resize leaves an axis as it is.
bool identity(const kernels::ResizeTaps &t, uint64_t in) {
  if (t.i0.size() != in) return false;
  for (size_t x = 0; x < t.i0.size(); ++x)
    if (t.i0[x] != int64_t(x) || t.w[x] != 0.0f) return false;
  return true;
}

// The constants an op reads from DDR: its programs' polynomial tables (lowest term first, one table after
// another), a Resize's blend weights along w and then h, an uneven average's 1 / count per output position.
std::vector<float> constantsOf(const Graph &g, const Op &op) {
  std::vector<float> v;
  for (const KernelProgram &program : programsOf(op))
    for (const std::vector<float> &poly : program.polys) v.insert(v.end(), poly.begin(), poly.end());
  if (op.kind == OpKind::Resize) {
    const auto &p = op.params<ResizeParams>();
    for (const auto *t : {&p.w, &p.h}) {
      const std::vector<float> w = blendWeights(*t);
      v.insert(v.end(), w.begin(), w.end());
    }
  }
  if (op.kind != OpKind::Pool || op.params<WindowParams>().isMax) return v;
  const Tensor &x = g.tensors[size_t(op.inputs[0])], &y = g.tensors[size_t(op.output)];
  if (unevenAverage(op, x, y)) {
    const AverageTaps taps = averageTapsOf(op, x, y);
    for (int64_t oy = 0; oy < y.nchw()[2]; ++oy)
      for (int64_t ox = 0; ox < y.nchw()[3]; ++ox) v.push_back(1.0f / float(taps.at(oy, ox)));
  }
  return v;
}

ElementwisePlan planElementwise(const Graph &g, const Op &op) {
  ElementwisePlan plan;
  auto step = [&](const char *mnemonic, int out, int a, TileOperand b) { plan.steps.push_back({mnemonic, out, a, b}); };
  plan.program = programOf(op);
  if (plan.program) { // the inputs in registers 1.., the result in 0, then the temps
    for (size_t k = 0; k < op.inputs.size(); ++k) plan.loads.push_back({op.inputs[k], int(k) + 1});
    plan.tiles = 1 + int(plan.program->inputs + plan.program->temps);
  } else {
    plan.loads = {{op.inputs[0], 0}};
  }
  // The second operand: a one-value weight as a constant, anything else loaded into the next tile.
  auto operand = [&](int tensor) {
    const Tensor &t = g.tensors[size_t(tensor)];
    if (t.isWeight() && t.numel() == 1) {
      float v;
      std::memcpy(&v, t.data.data(), sizeof v);
      return TileOperand{-1, v};
    }
    plan.loads.push_back({tensor, int(plan.loads.size())});
    return TileOperand{plan.loads.back().second, 0};
  };
  const char *binary = op.kind == OpKind::Add   ? "arith.add"
                       : op.kind == OpKind::Sub ? "arith.sub"
                       : op.kind == OpKind::Mul ? "arith.mul"
                       : op.kind == OpKind::Div ? "arith.div"
                       : op.kind == OpKind::Max ? "arith.max"
                       : op.kind == OpKind::Min ? "arith.min"
                                                : nullptr;
  if (binary) {
    step(binary, 0, 0, operand(op.inputs[1]));
  } else if (op.kind == OpKind::LeakyRelu) { // max(x, x * alpha), alpha in [0, 1] (validated)
    step("arith.mul", 1, 0, {-1, op.params<LeakyReluParams>().alpha});
    step("arith.max", 0, 0, {1, 0});
    plan.tiles = 2;
  } else if (op.kind == OpKind::Affine) { // x * scale + bias, scalars or per channel
    if (op.inputs.size() == 3) {
      step("arith.mul", 0, 0, operand(op.inputs[1]));
      step("arith.add", 0, 0, operand(op.inputs[2]));
    } else {
      step("arith.mul", 0, 0, {-1, op.params<AffineParams>().alpha});
      step("arith.add", 0, 0, {-1, op.params<AffineParams>().beta});
    }
  }
  if (op.kind == OpKind::Clip) {
    step("arith.max", 0, 0, {-1, op.params<ClipParams>().min});
    step("arith.min", 0, 0, {-1, op.params<ClipParams>().max});
  } else if (op.kind == OpKind::Relu || op.relu) {
    step("arith.max", 0, 0, {-1, 0.0f});
  }
  plan.tiles = std::max(plan.tiles, int(plan.loads.size()));
  return plan;
}

// Element-wise kinds: output channels and rows sliced over local memory; each input loaded broadcast to the
// slice (DMA strides of 0 along its dims of extent 1), the steps run, the result stored.
Status Compiler::emitElementwise(const Op &op) {
  const Tensor &y = g_.tensors[size_t(op.output)];
  const Dims yd = dims(op.output);
  const ElementwisePlan plan = planElementwise(g_, op);
  // Each load's dims (1 where it is broadcast) and its compact DDR strides, 0 along broadcast dims.
  std::vector<std::pair<Dims, Dims>> sources;
  for (const auto &load : plan.loads) {
    const Tensor &in = g_.tensors[size_t(load.first)];
    std::array<int64_t, 4> d =
        isChannelWeight(in, y) ? std::array<int64_t, 4>{1, int64_t(yd[1]), 1, 1} : broadcastNchw(in, y);
    Dims extent{}, stride{};
    uint64_t step = 1;
    for (int i = 3; i >= 0; --i) {
      extent[size_t(i)] = uint64_t(d[size_t(i)]);
      if (extent[size_t(i)] != yd[size_t(i)] && extent[size_t(i)] != 1)
        return unsupported(op, "an input '" + in.name + "' that does not broadcast to the output along NCHW");
      stride[size_t(i)] = extent[size_t(i)] == 1 && yd[size_t(i)] > 1 ? 0 : step;
      step *= extent[size_t(i)];
    }
    sources.push_back({extent, stride});
  }
  // The program's polynomial tables: one copy per lane, after the tiles.
  const uint64_t tableBytes = plan.program ? uint64_t(plan.program->coefficientCount()) * kF32 : 0;
  LmemPlan lmem;
  Slicing s;
  auto fits = [&](uint64_t cRows, uint64_t hRows) {
    const uint64_t plane = cRows * alignedPlane(hRows * yd[3]) * kF32;
    std::vector<uint64_t> bytes(size_t(plan.tiles), plane);
    if (tableBytes) bytes.push_back(tableBytes);
    return lmem.place(bytes);
  };
  for (uint64_t cRows = rows(yd[1]); cRows >= 1 && !s.rowStep; --cRows)
    for (uint64_t hRows = yd[2]; hRows >= 1; --hRows)
      if (fits(cRows, hRows)) {
        s = {cRows * map::kLanes, hRows};
        break;
      }
  if (!s.rowStep) return unsupported(op, "one row of " + std::to_string(yd[3]) + " elements does not fit a lane");
  fits(s.channelStep / map::kLanes, s.rowStep);
  const std::vector<uint64_t> tile = lmem.offsets;
  if (tableBytes) TPU_RETURN_IF_ERROR(loadTables(op, tableBytes, tile.back()));
  for (uint64_t c0 = 0; c0 < yd[1]; c0 += s.channelStep)
    for (uint64_t n = 0; n < yd[0]; ++n)
      for (uint64_t h0 = 0; h0 < yd[2]; h0 += s.rowStep) {
        const Dims shape{1, std::min(s.channelStep, yd[1] - c0), std::min(s.rowStep, yd[2] - h0), yd[3]};
        const Dims at{n, c0, h0, 0};
        for (size_t i = 0; i < plan.loads.size(); ++i) {
          const auto &[extent, stride] = sources[i];
          uint64_t offset = 0;
          for (size_t d = 0; d < 4; ++d) offset += at[d] * stride[d];
          Region src{addressOf(plan.loads[i].first) + offset * kF32, shape, stride};
          TPU_RETURN_IF_ERROR(program_.dma(src, localAligned(tile[size_t(plan.loads[i].second)], shape)));
        }
        if (plan.program)
          TPU_RETURN_IF_ERROR(emitProgram(op, *plan.program, tile, tableBytes ? tile.back() : 0, shape));
        for (const ElementwisePlan::Step &st : plan.steps) {
          std::optional<uint64_t> b;
          if (st.b.tile >= 0) b = tile[size_t(st.b.tile)];
          TPU_ASSIGN_OR_RETURN(
              Command c, arithCommand(st.mnemonic, shape, tile[size_t(st.out)], tile[size_t(st.a)], b, st.b.constant));
          TPU_RETURN_IF_ERROR(program_.tiu(std::move(c)));
        }
        TPU_RETURN_IF_ERROR(
            program_.dma(localAligned(tile[0], shape), ddrBox(addressOf(op.output), compactDims(yd), at, shape)));
      }
  return Status::ok();
}

// Sum, mean, max and min over the reduced dims: the kept dims (merged onto two, planReduce) on n and on
// the lanes, the reduced ones (merged onto two) as the window of one average or max pooling; min is
// -max(-x), the mean's multiplier 1 / count.
Status Compiler::emitReduce(const Op &op) {
  const Tensor &x = g_.tensors[size_t(op.inputs[0])], &y = g_.tensors[size_t(op.output)];
  const ReduceMode mode = op.params<ReduceParams>().mode;
  auto planned = planReduce(x, y, op.params<ReduceParams>().axes);
  if (!planned) return unsupported(op, planned.message());
  const ReducePlan &plan = *planned;
  const uint64_t k0 = uint64_t(plan.size[0]), k1 = uint64_t(plan.size[1]);
  const uint64_t r0 = uint64_t(plan.size[2]), r1 = uint64_t(plan.size[3]);
  LmemPlan lmem;
  uint64_t cRows = rows(k1);
  while (cRows >= 1 && !lmem.place({cRows * alignedPlane(r0 * r1) * kF32, cRows * alignedPlane(1) * kF32})) --cRows;
  if (!cRows) return unsupported(op, "a reduction of " + std::to_string(r0 * r1) + " elements does not fit a lane");
  const uint64_t inOff = lmem.offsets[0], outOff = lmem.offsets[1], step = cRows * map::kLanes;
  const bool isMax = mode == ReduceMode::Max || mode == ReduceMode::Min, negate = mode == ReduceMode::Min;
  WindowParams window;
  window.kh = int64_t(r0), window.kw = int64_t(r1);
  const Dims xs{uint64_t(plan.xStride[0]), uint64_t(plan.xStride[1]), uint64_t(plan.xStride[2]),
                uint64_t(plan.xStride[3])};
  for (uint64_t n = 0; n < k0; ++n)
    for (uint64_t c0 = 0; c0 < k1; c0 += step) {
      const uint64_t cs = std::min(step, k1 - c0);
      const Dims inShape{1, cs, r0, r1}, outShape{1, cs, 1, 1};
      TPU_RETURN_IF_ERROR(program_.dma({addressOf(op.inputs[0]) + (n * xs[0] + c0 * xs[1]) * kF32, inShape, xs},
                                       localAligned(inOff, inShape)));
      auto negateTile = [&](uint64_t offset, const Dims &shape) -> Status {
        TPU_ASSIGN_OR_RETURN(Command c, arithCommand("arith.mul", shape, offset, offset, std::nullopt, -1.0f));
        return program_.tiu(std::move(c));
      };
      if (negate) TPU_RETURN_IF_ERROR(negateTile(inOff, inShape));
      if (mode == ReduceMode::Prod) { // the reference's tree: each row halved, then column 0
        TPU_RETURN_IF_ERROR(productTree(inShape, inOff));
        const Region tile = localAligned(inOff, inShape);
        const Dims ys{uint64_t(plan.yStride[0]), uint64_t(plan.yStride[1]), 1, 1};
        TPU_RETURN_IF_ERROR(program_.dma({tile.address, outShape, tile.stride},
                                         {addressOf(op.output) + (n * ys[0] + c0 * ys[1]) * kF32, outShape, ys}));
        continue;
      }
      if (mode == ReduceMode::L2) {
        TPU_ASSIGN_OR_RETURN(Command sq, arithCommand("arith.mul", inShape, inOff, inOff, inOff, 0.0f));
        TPU_RETURN_IF_ERROR(program_.tiu(std::move(sq)));
      }
      // Sums as the reference adds them: k * x term by term (a depthwise window of the constant k).
      TPU_ASSIGN_OR_RETURN(Command c, windowCommand(isMax ? "pord.maxpooling" : "pord.depthwise", outShape, {r0, r1},
                                                    window, {0, 0}, 0, inOff, outOff));
      if (!isMax)
        TPU_RETURN_IF_ERROR(
            setFields(c, {{"opd1_const", 1},
                          {"opd1_addr", floatBits(mode == ReduceMode::Mean ? 1.0f / float(r0 * r1) : 1.0f)},
                          {"opd2_const", 1},
                          {"opd2_addr", 0}}));
      TPU_RETURN_IF_ERROR(program_.tiu(std::move(c)));
      if (negate) TPU_RETURN_IF_ERROR(negateTile(outOff, outShape));
      if (mode == ReduceMode::L2) { // 1 / (1 / sqrt(sum)), as the reference
        TPU_ASSIGN_OR_RETURN(Command r, rsqrtCommand(outOff, cs));
        TPU_RETURN_IF_ERROR(program_.tiu(std::move(r)));
        TPU_ASSIGN_OR_RETURN(Command inv, arithCommand("arith.div", outShape, outOff, outOff, outOff, 0.0f));
        TPU_RETURN_IF_ERROR(inv.set("opd0_const", 1));
        TPU_RETURN_IF_ERROR(inv.set("opd0_addr", floatBits(1.0f)));
        TPU_RETURN_IF_ERROR(program_.tiu(std::move(inv)));
      }
      const Dims ys{uint64_t(plan.yStride[0]), uint64_t(plan.yStride[1]), 1, 1};
      TPU_RETURN_IF_ERROR(program_.dma(localAligned(outOff, outShape),
                                       {addressOf(op.output) + (n * ys[0] + c0 * ys[1]) * kF32, outShape, ys}));
    }
  return Status::ok();
}

// An op's polynomial tables from DDR into `offset` of every lane (a DMA source with a channel stride of 0).
Status Compiler::loadTables(const Op &op, uint64_t bytes, uint64_t offset) {
  const uint64_t count = bytes / kF32;
  return program_.dma({tables_.at(&op), {1, map::kLanes, 1, count}, {0, 0, 0, 1}},
                      {map::kLmemStart + offset, {1, map::kLanes, 1, count}, {count, count, count, 1}});
}

// Softmax and LogSoftmax over the dims of `axes`, step for step as the reference: the max, d = x - max,
// e = exp(d) (the Exp program), the sum of e, then e / sum, or d - log(sum) (the Log program on the sums).
// The kept dims on n and the lanes, the softmax dims as the window of the max and the sum (planReduce).
Status Compiler::emitSoftmax(const Op &op) {
  const Tensor &x = g_.tensors[size_t(op.inputs[0])];
  const ReduceAxes &axes = op.params<SoftmaxParams>().axes;
  const auto xn = x.nchw();
  Tensor kept;
  kept.shape = {1};
  for (size_t d = 0; d < 4; ++d)
    if (!axes[d]) kept.shape[0] *= xn[d];
  auto planned = planReduce(x, kept, axes);
  if (!planned) return unsupported(op, planned.message());
  const ReducePlan &plan = *planned;
  const uint64_t k0 = uint64_t(plan.size[0]), k1 = uint64_t(plan.size[1]);
  const uint64_t r0 = uint64_t(plan.size[2]), r1 = uint64_t(plan.size[3]);
  const Dims xs{uint64_t(plan.xStride[0]), uint64_t(plan.xStride[1]), uint64_t(plan.xStride[2]),
                uint64_t(plan.xStride[3])};
  const bool isLog = op.kind == OpKind::LogSoftmax;
  const std::vector<KernelProgram> programs = programsOf(op);
  const KernelProgram &exp = programs[0];
  const uint64_t tableBytes = tableBytesOf(programs);
  // Per lane: d, e and exp's temps as planes of r0 x r1; the max, the sum, log's result and its temps as
  // one value per channel; the tables.
  const size_t planes = 2 + exp.temps, values = isLog ? 3 + programs[1].temps : 2;
  LmemPlan lmem;
  auto fits = [&](uint64_t cRows) {
    std::vector<uint64_t> bytes(planes, cRows * alignedPlane(r0 * r1) * kF32);
    bytes.resize(planes + values, cRows * alignedPlane(1) * kF32);
    if (tableBytes) bytes.push_back(tableBytes);
    return lmem.place(bytes);
  };
  uint64_t cRows = rows(k1);
  while (cRows >= 1 && !fits(cRows)) --cRows;
  if (!cRows) return unsupported(op, "a softmax over " + std::to_string(r0 * r1) + " elements does not fit a lane");
  const std::vector<uint64_t> tile = lmem.offsets;
  const uint64_t d = tile[0], e = tile[1], m = tile[planes], sum = tile[planes + 1];
  if (tableBytes) TPU_RETURN_IF_ERROR(loadTables(op, tableBytes, tile.back()));
  // exp's registers: the result e, the input d, its temps; log's: its result, the sums, its temps.
  std::vector<uint64_t> expTiles{e, d};
  expTiles.insert(expTiles.end(), tile.begin() + 2, tile.begin() + long(planes));
  std::vector<uint64_t> logTiles;
  if (isLog) {
    logTiles = {tile[planes + 2], sum};
    logTiles.insert(logTiles.end(), tile.begin() + long(planes) + 3, tile.begin() + long(planes + values));
  }
  const uint64_t step = cRows * map::kLanes;
  WindowParams window;
  window.kh = int64_t(r0), window.kw = int64_t(r1);
  for (uint64_t n = 0; n < k0; ++n)
    for (uint64_t c0 = 0; c0 < k1; c0 += step) {
      const uint64_t cs = std::min(step, k1 - c0);
      const Dims shape{1, cs, r0, r1}, one{1, cs, 1, 1};
      const uint64_t at = (n * xs[0] + c0 * xs[1]) * kF32;
      TPU_RETURN_IF_ERROR(program_.dma({addressOf(op.inputs[0]) + at, shape, xs}, localAligned(d, shape)));
      TPU_ASSIGN_OR_RETURN(Command max, windowCommand("pord.maxpooling", one, {r0, r1}, window, {0, 0}, 0, d, m));
      TPU_RETURN_IF_ERROR(program_.tiu(std::move(max)));
      TPU_RETURN_IF_ERROR(perChannel("arith.sub", shape, d, d, m));
      TPU_RETURN_IF_ERROR(emitProgram(op, exp, expTiles, tile.back(), shape));
      TPU_ASSIGN_OR_RETURN(Command total, windowCommand("pord.avgpooling", one, {r0, r1}, window, {0, 0}, 0, e, sum));
      TPU_RETURN_IF_ERROR(setMultiplier(total, 1.0f));
      TPU_RETURN_IF_ERROR(program_.tiu(std::move(total)));
      if (isLog) {
        TPU_RETURN_IF_ERROR(
            emitProgram(op, programs[1], logTiles, tile.back() + uint64_t(exp.coefficientCount()) * kF32, one));
        TPU_RETURN_IF_ERROR(perChannel("arith.sub", shape, d, d, logTiles[0]));
      } else {
        TPU_RETURN_IF_ERROR(perChannel("arith.div", shape, e, e, sum));
      }
      TPU_RETURN_IF_ERROR(program_.dma(localAligned(isLog ? d : e, shape), {addressOf(op.output) + at, shape, xs}));
    }
  return Status::ok();
}

// LayerNorm over the dims of `axes`, as the reference: mean = the sum of x / n (a depthwise window of the
// constant 1/n, products then sums), d = x - mean, var = the sum of d * d / n, d * rsqrt(var + epsilon),
// then * scale and + bias (weights of the normalized elements, one copy in every lane).
Status Compiler::emitLayerNorm(const Op &op) {
  const Tensor &x = g_.tensors[size_t(op.inputs[0])];
  const LayerNormParams &params = op.params<LayerNormParams>();
  const auto xn = x.nchw();
  Tensor kept;
  kept.shape = {1};
  for (size_t d = 0; d < 4; ++d)
    if (!params.axes[d]) kept.shape[0] *= xn[d];
  auto planned = planReduce(x, kept, params.axes);
  if (!planned) return unsupported(op, planned.message());
  const ReducePlan &plan = *planned;
  const uint64_t k0 = uint64_t(plan.size[0]), k1 = uint64_t(plan.size[1]);
  const uint64_t r0 = uint64_t(plan.size[2]), r1 = uint64_t(plan.size[3]);
  const Dims xs{uint64_t(plan.xStride[0]), uint64_t(plan.xStride[1]), uint64_t(plan.xStride[2]),
                uint64_t(plan.xStride[3])};
  const size_t weights = op.inputs.size() - 1; // scale, then bias
  const uint64_t weightPlane = alignedPlane(r0 * r1) * kF32;
  LmemPlan lmem;
  auto fits = [&](uint64_t cRows) {
    std::vector<uint64_t> bytes(2, cRows * alignedPlane(r0 * r1) * kF32);
    bytes.resize(4, cRows * alignedPlane(1) * kF32);
    bytes.resize(4 + weights, weightPlane);
    return lmem.place(bytes);
  };
  uint64_t cRows = rows(k1);
  while (cRows >= 1 && !fits(cRows)) --cRows;
  if (!cRows) return unsupported(op, "a norm over " + std::to_string(r0 * r1) + " elements does not fit a lane");
  const std::vector<uint64_t> tile = lmem.offsets;
  const uint64_t d = tile[0], square = tile[1], mean = tile[2], var = tile[3];
  for (size_t w = 0; w < weights; ++w) // every lane gets the weights
    TPU_RETURN_IF_ERROR(program_.dma({addressOf(op.inputs[1 + w]), {1, map::kLanes, r0, r1}, {0, 0, r1, 1}},
                                     localAligned(tile[4 + w], {1, map::kLanes, r0, r1})));
  const float k = 1.0f / float(r0 * r1);
  WindowParams window;
  window.kh = int64_t(r0), window.kw = int64_t(r1);
  const uint64_t step = cRows * map::kLanes;
  for (uint64_t n = 0; n < k0; ++n)
    for (uint64_t c0 = 0; c0 < k1; c0 += step) {
      const uint64_t cs = std::min(step, k1 - c0);
      const Dims shape{1, cs, r0, r1}, one{1, cs, 1, 1};
      const uint64_t at = (n * xs[0] + c0 * xs[1]) * kF32;
      TPU_RETURN_IF_ERROR(program_.dma({addressOf(op.inputs[0]) + at, shape, xs}, localAligned(d, shape)));
      auto meanOf = [&](uint64_t from, uint64_t to) -> Status { // sum of k * from over the window
        TPU_ASSIGN_OR_RETURN(Command c, windowCommand("pord.depthwise", one, {r0, r1}, window, {0, 0}, 0, from, to));
        TPU_RETURN_IF_ERROR(
            setFields(c, {{"opd1_const", 1}, {"opd1_addr", floatBits(k)}, {"opd2_const", 1}, {"opd2_addr", 0}}));
        return program_.tiu(std::move(c));
      };
      TPU_RETURN_IF_ERROR(meanOf(d, mean));
      TPU_RETURN_IF_ERROR(perChannel("arith.sub", shape, d, d, mean));
      TPU_ASSIGN_OR_RETURN(Command sq, arithCommand("arith.mul", shape, square, d, d, 0.0f));
      TPU_RETURN_IF_ERROR(program_.tiu(std::move(sq)));
      TPU_RETURN_IF_ERROR(meanOf(square, var));
      TPU_ASSIGN_OR_RETURN(Command eps, arithCommand("arith.add", one, var, var, std::nullopt, params.epsilon));
      TPU_RETURN_IF_ERROR(program_.tiu(std::move(eps)));
      TPU_ASSIGN_OR_RETURN(Command inv, rsqrtCommand(var, cs));
      TPU_RETURN_IF_ERROR(program_.tiu(std::move(inv)));
      TPU_RETURN_IF_ERROR(perChannel("arith.mul", shape, d, d, var));
      for (size_t w = 0; w < weights; ++w) { // the same plane in every lane and row: c stride 0
        TPU_ASSIGN_OR_RETURN(Command c, arithCommand(w ? "arith.add" : "arith.mul", shape, d, d, tile[4 + w], 0.0f));
        TPU_RETURN_IF_ERROR(setFields(c, {{"opd1_str", 3}, {"opd1_h_str", r1}, {"opd1_w_str", 1}}));
        TPU_RETURN_IF_ERROR(program_.tiu(std::move(c)));
      }
      TPU_RETURN_IF_ERROR(program_.dma(localAligned(d, shape), {addressOf(op.output) + at, shape, xs}));
    }
  return Status::ok();
}

// out = a OP v on local tiles of `shape`, v one value per channel (AlignEU, read with strides 0 along h, w).
Status Compiler::perChannel(const char *mnemonic, const Dims &shape, uint64_t out, uint64_t a, uint64_t v) {
  TPU_ASSIGN_OR_RETURN(Command c, arithCommand(mnemonic, shape, out, a, v, 0.0f));
  TPU_RETURN_IF_ERROR(setFields(c, {{"opd1_str", 3}, {"opd1_c_str", alignedPlane(1)}}));
  return program_.tiu(std::move(c));
}

// A program (FloatKernels.h: the fp32 functions as straight-line steps over 32-bit registers) as BM1684X
// commands: register r is local tile r of `shape`, read as fp32 or int32 as each step says; fp32 steps run
// on fp32 arithmetic, integer steps on int32 arithmetic (add and sub saturating, as the program's
// reference), conversions as casts (half to even), selects as cmp.sel_*, Taylor series as sfu.taylor over
// the per-lane tables at `tables`.
Status Compiler::emitProgram(const Op &op, const KernelProgram &p, const std::vector<uint64_t> &tile, uint64_t tables,
                             const Dims &shape) {
  using O = KernelProgram::Operand;
  constexpr unsigned kPrecI32 = 4;
  auto isInt = [](const O &o) { return o.kind == O::Reg ? o.asInt : o.kind == O::I32; };
  auto prec = [&](const O &o) { return uint64_t(isInt(o) ? kPrecI32 : kPrecF32); };
  // Sets operand k's fields ("opd<k>_addr", "opd<k>_const") from a register or a constant.
  auto operand = [&](Command &c, int k, const O &o) -> Status {
    const std::string name = "opd" + std::to_string(k);
    if (o.kind == O::None) return Status::ok();
    TPU_RETURN_IF_ERROR(c.set(name + "_const", o.kind == O::Reg ? 0 : 1));
    return c.set(name + "_addr", o.kind == O::Reg ? tile[o.reg] : o.bits);
  };
  auto fields = [&](const char *mnemonic) {
    return tiuCommand(mnemonic,
                      {{"res0_n", shape[0]}, {"res0_c", shape[1]}, {"res0_h", shape[2]}, {"res0_w", shape[3]}});
  };
  for (const KernelProgram::Step &st : p.steps) {
    const bool intOp = isInt(st.a);
    const uint64_t out = tile[st.dst];
    Command c;
    switch (st.eu) {
    case isa::EuOp::Taylor: {
      TPU_ASSIGN_OR_RETURN(c, fields("sfu.taylor"));
      TPU_RETURN_IF_ERROR(setFields(c, {{"res0_prec", kPrecF32},
                                        {"opd0_prec", kPrecF32},
                                        {"res0_addr", out},
                                        {"opd0_addr", tile[st.a.reg]},
                                        {"opd1_addr", tables + uint64_t(p.polyOffset(st.poly)) * kF32},
                                        {"opd1_n", p.polys[st.poly].size()}}));
      break;
    }
    case isa::EuOp::Rsqrt: {
      TPU_ASSIGN_OR_RETURN(c, fields("sfu.rsqrt"));
      TPU_RETURN_IF_ERROR(setFields(
          c, {{"res0_prec", kPrecF32}, {"opd0_prec", kPrecF32}, {"res0_addr", out}, {"opd0_addr", tile[st.a.reg]}}));
      break;
    }
    case isa::EuOp::Select:     // a != 0 ? b : c, as (a == 0) ? c : b
    case isa::EuOp::SelectEq:   // a == b ? c : d
    case isa::EuOp::SelectGt: { // a > b ? c : d
      const bool gt = st.eu == isa::EuOp::SelectGt, isSelect = st.eu == isa::EuOp::Select;
      const O zero{isInt(st.a) ? O::I32 : O::F32, 0, false, 0};
      const O ops[4] = {st.a, isSelect ? zero : st.b, st.c, isSelect ? st.b : st.d};
      TPU_ASSIGN_OR_RETURN(c, fields(gt ? "cmp.sel_gt" : "cmp.sel_eq"));
      for (int k = 0; k < 4; ++k) TPU_RETURN_IF_ERROR(operand(c, k, ops[k]));
      TPU_RETURN_IF_ERROR(setFields(c, {{"opd0_prec", prec(ops[0])},
                                        {"opd0_sign", isInt(ops[0])},
                                        {"opd2_prec", prec(ops[2])},
                                        {"res0_addr", out}}));
      break;
    }
    case isa::EuOp::Copy:
    case isa::EuOp::Fp32ToInt: {
      const bool cast = intOp != st.dstInt;
      TPU_ASSIGN_OR_RETURN(c, fields(cast ? "arith.cast" : "arith.copy"));
      TPU_RETURN_IF_ERROR(operand(c, 0, st.a));
      TPU_RETURN_IF_ERROR(setFields(c, {{"tsk_opd_num", 1},
                                        {"res0_prec", st.dstInt ? kPrecI32 : kPrecF32},
                                        {"opd0_prec", prec(st.a)},
                                        {"opd0_sign", intOp},
                                        {"opd2_sign", st.dstInt},
                                        {"res0_addr", out}}));
      break;
    }
    default: {
      if (intOp != st.dstInt) return unsupported(op, "a program step whose result changes type");
      const char *mnemonic = nullptr;
      switch (st.eu) {
      case isa::EuOp::Add:
        mnemonic = intOp ? "arith.adds" : "arith.add";
        break;
      case isa::EuOp::Sub:
        mnemonic = intOp ? "arith.subs" : "arith.sub";
        break;
      case isa::EuOp::Mul:
        mnemonic = intOp ? nullptr : "arith.mul";
        break;
      case isa::EuOp::Divide:
        mnemonic = intOp ? nullptr : "arith.div";
        break;
      case isa::EuOp::Max:
        mnemonic = "arith.max";
        break;
      case isa::EuOp::Min:
        mnemonic = "arith.min";
        break;
      case isa::EuOp::And:
        mnemonic = intOp ? "arith.and" : nullptr;
        break;
      case isa::EuOp::Or:
        mnemonic = intOp ? "arith.or" : nullptr;
        break;
      case isa::EuOp::Xor:
        mnemonic = intOp ? "arith.xor" : nullptr;
        break;
      case isa::EuOp::Shift:
        mnemonic = !intOp ? nullptr : st.logical ? "arith.logicShift" : "arith.ashift";
        break;
      default:
        break;
      }
      if (!mnemonic) return unsupported(op, "a program step with no BM1684X command");
      TPU_ASSIGN_OR_RETURN(c, fields(mnemonic));
      TPU_RETURN_IF_ERROR(operand(c, 0, st.a));
      TPU_RETURN_IF_ERROR(operand(c, 1, st.b));
      TPU_RETURN_IF_ERROR(setFields(c, {{"tsk_opd_num", 2},
                                        {"res0_prec", prec(st.a)},
                                        {"opd0_prec", prec(st.a)},
                                        {"opd1_prec", prec(st.b)},
                                        {"opd0_sign", intOp},
                                        {"opd1_sign", intOp},
                                        {"res0_addr", out}}));
      break;
    }
    }
    TPU_RETURN_IF_ERROR(program_.tiu(std::move(c)));
  }
  return Status::ok();
}

// Resize, as the reference: along w, then along h (through a DDR intermediate when both change).
Status Compiler::emitResize(const Op &op) {
  const auto &p = op.params<ResizeParams>();
  const Dims xd = dims(op.inputs[0]), yd = dims(op.output);
  const bool alongW = !identity(p.w, xd[3]), alongH = !identity(p.h, xd[2]);
  const uint64_t weights = tables_.at(&op), hWeights = weights + 2 * p.w.w.size() * kF32;
  const Dims mid{xd[0], xd[1], xd[2], yd[3]};
  const uint64_t from = addressOf(op.inputs[0]), to = addressOf(op.output);
  if (!alongW && !alongH)
    return copy(op, op.inputs[0], 0, compactStrides(xd), 0, compactStrides(yd),
                {int64_t(xd[0]), int64_t(xd[1]), int64_t(xd[2]), int64_t(xd[3])});
  if (alongW) TPU_RETURN_IF_ERROR(resizeAxis(op, 3, p.w, weights, from, xd, alongH ? scratch_.at(&op) : to));
  if (alongH) TPU_RETURN_IF_ERROR(resizeAxis(op, 2, p.h, hWeights, alongW ? scratch_.at(&op) : from, mid, to));
  return Status::ok();
}

// One axis (2: h, 3: w) of a resize from the compact DDR tensor `from` of dims `in` to `to`: channels and the
// other axis sliced; per slice, output index x gathers source lines i0[x] into tile a and i1[x] into tile b
// (one DMA each), then b * w, a * (1 - w), their sum (the weights one copy per lane, from `weights`), and
// the indices whose w is 0 copied again over the blend (the reference returns the source there).
Status Compiler::resizeAxis(const Op &op, size_t axis, const kernels::ResizeTaps &t, uint64_t weights, uint64_t from,
                            const Dims &in, uint64_t to) {
  const uint64_t count = t.i0.size(), other = axis == 3 ? in[2] : in[3];
  Dims out = in;
  out[axis] = count;
  LmemPlan lmem;
  Slicing s;
  auto fits = [&](uint64_t cRows, uint64_t otherStep) {
    const uint64_t plane = cRows * alignedPlane(otherStep * count) * kF32, vector = alignedPlane(count) * kF32;
    return lmem.place({plane, plane, vector, vector});
  };
  for (uint64_t cRows = rows(in[1]); cRows >= 1 && !s.rowStep; --cRows)
    for (uint64_t step = other; step >= 1; --step)
      if (fits(cRows, step)) {
        s = {cRows * map::kLanes, step};
        break;
      }
  if (!s.rowStep) return unsupported(op, "one line of " + std::to_string(count) + " elements does not fit a lane");
  fits(s.channelStep / map::kLanes, s.rowStep);
  const uint64_t a = lmem.offsets[0], b = lmem.offsets[1], w0 = lmem.offsets[2], w1 = lmem.offsets[3];
  for (auto [offset, tile] : {std::pair{uint64_t(0), w0}, std::pair{count, w1}})
    TPU_RETURN_IF_ERROR(program_.dma({weights + offset * kF32, {1, map::kLanes, 1, count}, {0, 0, 0, 1}},
                                     localAligned(tile, {1, map::kLanes, 1, count})));
  const Dims inStride = compactDims(in), outStride = compactDims(out);
  for (uint64_t n = 0; n < in[0]; ++n)
    for (uint64_t c0 = 0; c0 < in[1]; c0 += s.channelStep)
      for (uint64_t o0 = 0; o0 < other; o0 += s.rowStep) {
        const uint64_t cs = std::min(s.channelStep, in[1] - c0), os = std::min(s.rowStep, other - o0);
        const Dims shape = axis == 3 ? Dims{1, cs, os, count} : Dims{1, cs, count, os};
        Dims line = shape; // one index of the axis
        line[axis] = 1;
        const Dims at = axis == 3 ? Dims{n, c0, o0, 0} : Dims{n, c0, 0, o0};
        const Region ta = localAligned(a, shape), tb = localAligned(b, shape);
        auto gather = [&](const Region &tile, int64_t source, uint64_t x) {
          Dims src = at;
          src[axis] = uint64_t(source);
          Region dst = tile;
          dst.address += x * tile.stride[axis] * kF32, dst.shape = line;
          return program_.dma(ddrBox(from, inStride, src, line), dst);
        };
        for (uint64_t x = 0; x < count; ++x) {
          TPU_RETURN_IF_ERROR(gather(ta, t.i0[x], x));
          TPU_RETURN_IF_ERROR(gather(tb, t.i1[x], x));
        }
        for (auto [mnemonic, dst, lhs, weight] :
             {std::tuple{"arith.mul", b, b, w1}, std::tuple{"arith.mul", a, a, w0}, std::tuple{"arith.add", a, a, b}}) {
          TPU_ASSIGN_OR_RETURN(Command c, arithCommand(mnemonic, shape, dst, lhs, weight, 0.0f));
          if (weight != b) // the weights: index x along the axis, the same in every lane, row and line
            TPU_RETURN_IF_ERROR(setFields(c, {{"opd1_str", 3}, {axis == 3 ? "opd1_w_str" : "opd1_h_str", 1}}));
          TPU_RETURN_IF_ERROR(program_.tiu(std::move(c)));
        }
        for (uint64_t x = 0; x < count; ++x)
          if (t.w[x] == 0.0f) TPU_RETURN_IF_ERROR(gather(ta, t.i0[x], x));
        TPU_RETURN_IF_ERROR(program_.dma(ta, ddrBox(to, outStride, at, shape)));
      }
  return Status::ok();
}

// The product of each channel's r0 x r1 plane of the local tile (AlignEU at `offset`) into its element
// (0, 0), as the reference's productTree: every row folded in halves (a[e] * a[e + half], an odd count's
// last value into a[0]), then column 0 the same way; each fold one mul over strided views of the tile.
Status Compiler::productTree(const Dims &shape, uint64_t offset) {
  const Region tile = localAligned(offset, shape);
  // out = view(at) * view(at + distance), both `extent`, in place.
  auto mul = [&](const Dims &extent, uint64_t at, uint64_t distance) -> Status {
    TPU_ASSIGN_OR_RETURN(Command c, arithCommand("arith.mul", extent, offset + at * kF32, offset + at * kF32,
                                                 offset + (at + distance) * kF32, 0.0f));
    for (const char *v : {"res0", "opd0", "opd1"}) {
      const std::string name(v);
      TPU_RETURN_IF_ERROR(c.set(name + "_str", 3));
      const char *dims[4] = {"_n_str", "_c_str", "_h_str", "_w_str"};
      for (size_t d = 0; d < 4; ++d) TPU_RETURN_IF_ERROR(c.set(name + dims[d], tile.stride[d]));
    }
    return program_.tiu(std::move(c));
  };
  const uint64_t cs = shape[1], rowsOf = shape[2], cols = shape[3];
  // Along w in every row (step 1), then along h in column 0 (step cols).
  for (auto [count, lines, step] : {std::tuple{cols, rowsOf, uint64_t(1)}, std::tuple{rowsOf, uint64_t(1), cols}})
    for (uint64_t len = count; len > 1; len /= 2) {
      const uint64_t half = len / 2;
      const bool alongW = step == 1;
      TPU_RETURN_IF_ERROR(mul(alongW ? Dims{1, cs, lines, half} : Dims{1, cs, half, 1}, 0, half * step));
      if (len % 2) TPU_RETURN_IF_ERROR(mul(alongW ? Dims{1, cs, lines, 1} : Dims{1, cs, 1, 1}, 0, 2 * half * step));
    }
  return Status::ok();
}

// DDR-to-DDR copies: one DMA per box, a box longer than the 16-bit size fields along a dim cut into
// pieces along it. A DMA's stride fields are unsigned: a dim both sides step backwards along is walked
// forwards from its last element; a dim only one side steps backwards along is cut into single elements.
Status Compiler::copy(const Op &op, int from, int64_t src, const std::array<int64_t, 4> &srcStride, int64_t dst,
                      const std::array<int64_t, 4> &dstStride, const std::array<int64_t, 4> &size) {
  for (size_t d = 0; d < 4; ++d) {
    const bool backwards = size[d] > 1 && (srcStride[d] < 0 || dstStride[d] < 0);
    if (backwards && srcStride[d] < 0 && dstStride[d] < 0) {
      std::array<int64_t, 4> ss = srcStride, ds = dstStride;
      ss[d] = -ss[d], ds[d] = -ds[d];
      return copy(op, from, src + (size[d] - 1) * srcStride[d], ss, dst + (size[d] - 1) * dstStride[d], ds, size);
    }
    const int64_t piece = backwards ? 1 : kMaxDim;
    if (size[d] > piece) {
      for (int64_t at = 0; at < size[d]; at += piece) {
        std::array<int64_t, 4> part = size;
        part[d] = std::min<int64_t>(piece, size[d] - at);
        TPU_RETURN_IF_ERROR(
            copy(op, from, src + at * srcStride[d], srcStride, dst + at * dstStride[d], dstStride, part));
      }
      return Status::ok();
    }
  }
  Dims shape{}, ss{}, ds{};
  for (size_t d = 0; d < 4; ++d) // a backward stride is left only on dims of one element, which never step
    shape[d] = uint64_t(size[d]), ss[d] = uint64_t(std::max<int64_t>(srcStride[d], 0)),
    ds[d] = uint64_t(std::max<int64_t>(dstStride[d], 0));
  if (src < 0 || dst < 0) return unsupported(op, "a copy from before a tensor's start");
  return program_.dma({addressOf(from) + uint64_t(src) * kF32, shape, ss},
                      {addressOf(op.output) + uint64_t(dst) * kF32, shape, ds});
}

// Move (its pieces after an optional fill), Slice and Upsample as DDR-to-DDR copies.
Status Compiler::emitCopies(const Op &op) {
  const Tensor &y = g_.tensors[size_t(op.output)];
  const Dims yd = dims(op.output), xd = dims(op.inputs[0]);
  const std::array<int64_t, 4> ys = compactStrides(yd), xs = compactStrides(xd);
  const std::array<int64_t, 4> ye{int64_t(yd[0]), int64_t(yd[1]), int64_t(yd[2]), int64_t(yd[3])};
  if (op.kind == OpKind::Slice) {
    const auto &[start, step] = op.params<SliceParams>();
    int64_t src = 0;
    std::array<int64_t, 4> stride{};
    for (size_t d = 0; d < 4; ++d) src += start[d] * xs[d], stride[d] = step[d] * xs[d];
    return copy(op, op.inputs[0], src, stride, 0, ys, ye);
  }
  if (op.kind == OpKind::Upsample) { // one copy per (dy, dx) of the factors: every row and column replicated
    const auto &p = op.params<UpsampleParams>();
    const std::array<int64_t, 4> size{int64_t(xd[0]), int64_t(xd[1]), int64_t(xd[2]), int64_t(xd[3])};
    for (int64_t dy = 0; dy < p.scaleH; ++dy)
      for (int64_t dx = 0; dx < p.scaleW; ++dx)
        TPU_RETURN_IF_ERROR(
            copy(op, op.inputs[0], 0, xs, dy * ys[2] + dx, {ys[0], ys[1], ys[2] * p.scaleH, p.scaleW}, size));
    return Status::ok();
  }
  const MoveParams &m = op.params<MoveParams>();
  if (m.fills) {
    if (y.numel() > kMaxDim * kMaxDim) return unsupported(op, "a fill of more than 65535 x 65535 elements");
    // The output as rows of up to 65535 elements, and the rest.
    const uint64_t count = uint64_t(y.numel()), width = std::min<uint64_t>(count, uint64_t(kMaxDim));
    const uint64_t full = count / width, rest = count % width;
    const uint64_t at = addressOf(op.output);
    TPU_RETURN_IF_ERROR(program_.fill({at, {1, 1, full, width}, {0, 0, width, 1}}, floatBits(m.fillValue)));
    if (rest)
      TPU_RETURN_IF_ERROR(
          program_.fill({at + full * width * kF32, {1, 1, 1, rest}, {0, 0, 0, 1}}, floatBits(m.fillValue)));
  }
  for (const MovePiece &piece : m.pieces)
    TPU_RETURN_IF_ERROR(
        copy(op, op.inputs[size_t(piece.input)], piece.src, piece.srcStride, piece.dst, piece.dstStride, piece.size));
  return Status::ok();
}

// Along channels: each input copied DDR to DDR into its channels of the output.
Status Compiler::emitConcat(const Op &op) {
  const Dims yd = dims(op.output);
  const std::array<int64_t, 4> ys = compactStrides(yd);
  int64_t c0 = 0;
  for (int in : op.inputs) {
    const Dims xd = dims(in);
    if (xd[0] != yd[0] || xd[2] != yd[2] || xd[3] != yd[3]) return unsupported(op, "inputs of other n, h or w");
    TPU_RETURN_IF_ERROR(copy(op, in, 0, compactStrides(xd), c0 * ys[1], ys,
                             {int64_t(xd[0]), int64_t(xd[1]), int64_t(xd[2]), int64_t(xd[3])}));
    c0 += int64_t(xd[1]);
  }
  return Status::ok();
}

Status Compiler::emit(const Op &op) {
  for (int t : op.inputs)
    if (g_.tensors[size_t(t)].dtype != DType::F32) return unsupported(op, "a non-fp32 input");
  switch (op.kind) {
  case OpKind::Conv:
  case OpKind::ConvTranspose:
  case OpKind::Fc:
  case OpKind::MatMul:
  case OpKind::Pool:
  case OpKind::GlobalAvgPool:
    return emitWindow(op);
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::Max:
  case OpKind::Min:
  case OpKind::Relu:
  case OpKind::Clip:
  case OpKind::LeakyRelu:
  case OpKind::PRelu:
  case OpKind::Affine:
  case OpKind::Div:
  case OpKind::Sigmoid:
  case OpKind::Pow:
  case OpKind::Greater:
  case OpKind::Less:
  case OpKind::Equal:
  case OpKind::Where:
    return emitElementwise(op);
  case OpKind::Unary:
    if (!programOf(op))
      return unsupported(op, std::string("no fp32 recipe for ") + unaryName(op.params<UnaryParams>().function));
    return emitElementwise(op);
  case OpKind::Move:
  case OpKind::Slice:
  case OpKind::Upsample:
    return emitCopies(op);
  case OpKind::Concat:
    return emitConcat(op);
  case OpKind::Reduce:
    return emitReduce(op);
  case OpKind::Softmax:
  case OpKind::LogSoftmax:
    return emitSoftmax(op);
  case OpKind::LayerNorm:
    return emitLayerNorm(op);
  case OpKind::Resize:
    return emitResize(op);
  case OpKind::Reshape:
    return Status::ok(); // shares its input's bytes (address_ says so)
  default:
    return unsupported(op, "this kind is not compiled for the BM1684X yet");
  }
}

Result<bmodel::Model> Compiler::run(CompileReport *report) {
  TPU_RETURN_IF_ERROR(g_.validate());
  // DDR: the coefficients first, then every activation in its own range (no reuse yet).
  bmodel::Net net;
  net.name = g_.name;
  net.coeffAddr = map::kGlobalStart;
  address_.assign(g_.tensors.size(), 0);
  // A transposed conv's weights are stored as the conv the chip runs takes them.
  std::vector<const Op *> transposedBy(g_.tensors.size(), nullptr);
  for (const Op &op : g_.ops)
    if (op.kind == OpKind::ConvTranspose) transposedBy[size_t(op.inputs[1])] = &op;
  for (const Op &op : g_.ops)
    for (size_t k = 0; k < op.inputs.size(); ++k)
      if (const Op *t = transposedBy[size_t(op.inputs[k])]; t && (t != &op || k != 1))
        return unsupported(*t, "weights another op reads too");
  for (size_t i = 0; i < g_.tensors.size(); ++i) {
    const Tensor &t = g_.tensors[i];
    if (!t.isWeight()) continue;
    if (t.dtype != DType::F32)
      return makeError("weight '", t.name, "' is ", dtypeName(t.dtype), " (the BM1684X compiler is fp32 only so far)");
    net.coeff.resize(alignUp(net.coeff.size(), kDdrAlign));
    address_[i] = net.coeffAddr + net.coeff.size();
    const std::vector<uint8_t> bytes = transposedBy[i] ? rotatedConvWeights(t) : t.data;
    net.coeff.insert(net.coeff.end(), bytes.begin(), bytes.end());
  }
  // The ops' constant tables (constantsOf) after the weights.
  for (const Op &op : g_.ops)
    if (const std::vector<float> values = constantsOf(g_, op); !values.empty()) {
      net.coeff.resize(alignUp(net.coeff.size(), kDdrAlign));
      tables_[&op] = net.coeffAddr + net.coeff.size();
      const uint8_t *b = reinterpret_cast<const uint8_t *>(values.data());
      net.coeff.insert(net.coeff.end(), b, b + values.size() * sizeof(float));
    }
  net.ctxAddr = alignUp(net.coeffAddr + net.coeff.size(), 4096);
  uint64_t neurons = 0;
  std::vector<bool> placed(g_.tensors.size(), false);
  for (size_t i = 0; i < g_.tensors.size(); ++i) placed[i] = g_.tensors[i].isWeight();
  auto placeTensor = [&](int t) -> Status {
    const Tensor &tensor = g_.tensors[size_t(t)];
    if (tensor.dtype != DType::F32)
      return makeError("tensor '", tensor.name, "' is ", dtypeName(tensor.dtype),
                       " (the BM1684X compiler is fp32 only so far)");
    address_[size_t(t)] = net.ctxAddr + neurons;
    neurons = alignUp(neurons + tensor.bytes(), kDdrAlign);
    placed[size_t(t)] = true;
    return Status::ok();
  };
  for (int t : g_.inputs) TPU_RETURN_IF_ERROR(placeTensor(t));
  for (const Op &op : g_.ops) {
    if (op.kind == OpKind::Reshape) {
      address_[size_t(op.output)] = address_[size_t(op.inputs[0])];
      placed[size_t(op.output)] = true;
    } else if (!placed[size_t(op.output)]) {
      TPU_RETURN_IF_ERROR(placeTensor(op.output));
    }
    if (op.kind == OpKind::Resize) { // the intermediate (n, c, h, out w), whether used or not
      const Tensor &x = g_.tensors[size_t(op.inputs[0])];
      scratch_[&op] = net.ctxAddr + neurons;
      neurons = alignUp(neurons + uint64_t(x.numel() / x.nchw()[3]) * op.params<ResizeParams>().w.i0.size() * kF32,
                        kDdrAlign);
    }
  }
  net.ctxSize = std::max<uint64_t>(neurons, kDdrAlign);
  for (const Op &op : g_.ops) TPU_RETURN_IF_ERROR(emit(op));
  TPU_ASSIGN_OR_RETURN(bmodel::CmdGroup group, program_.finish());
  auto io = [&](int t) {
    const Tensor &tensor = g_.tensors[size_t(t)];
    bmodel::Tensor b;
    b.name = tensor.name;
    b.dtype = bmodel::DataType::Float32;
    b.deviceAddr = address_[size_t(t)];
    for (int64_t d : tensor.shape) b.shape.push_back(uint64_t(d));
    b.size = tensor.bytes();
    return b;
  };
  for (int t : g_.inputs) net.inputs.push_back(io(t));
  for (int t : g_.outputs) net.outputs.push_back(io(t));
  if (report) {
    report->tiuCommands = group.tiuStreamCount;
    report->dmaCommands = group.gdmaStreamCount;
    report->coeffBytes = net.coeff.size();
    report->neuronBytes = neurons;
  }
  net.groups.push_back(std::move(group));
  bmodel::Model model;
  model.chip = std::string(isa::chipInfo(isa::Chip::BM1684X).bmodelName);
  model.type = bmodel::kToolkitModelType;
  model.neuronSize = net.ctxSize;
  model.nets.push_back(std::move(net));
  return model;
}

} // namespace

Result<bmodel::Model> compileToBmodel(const Graph &g, CompileReport *report) { return Compiler(g).run(report); }

Status writeBmodel(const Graph &g, const std::string &path, CompileReport *report) {
  TPU_ASSIGN_OR_RETURN(bmodel::Model model, compileToBmodel(g, report));
  return bmodel::writeFile(model, path);
}

} // namespace tpu::backend::bm1684x
