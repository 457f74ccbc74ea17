// The element-wise kinds on the BM1684X, and the fp32 function programs (FloatKernels.h) as commands.
#include "compiler/Backend/BM1684X/Compiler.h"

#include "compiler/Backend/Ops/Activation.h"
#include "compiler/Backend/Ops/Affine.h"
#include "compiler/Backend/Ops/Unary.h"
#include "compiler/Backend/QuantRef.h"
#include "compiler/Backend/ReferenceEval.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace tpu::backend::bm1684x {

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

namespace {

// The element-wise kinds as steps on local tiles: tiles 0..loads-1 hold the inputs named in `loads` (NumPy-
// broadcast to the output tile; a per-channel weight along channels), further tiles are scratch; each step
// writes `out` = `a` OP `b`; the result is tile 0.
struct ElementwisePlan {
  struct Step {
    const char *mnemonic;
    int out, a;
    TileOperand b;
    std::optional<int64_t> integer{}; // b: an integer constant (of the tile a's type) instead of b
    int32_t multiplier = 1;           // quant.rq1
    uint32_t rshift = 0;              // quant.rq1
  };
  std::vector<std::pair<int, int>> loads; // (tensor, tile)
  int tiles = 1;
  std::vector<DType> types; // each tile's type, when the plan sets them (integer plans)
  bool integer = false;     // planInteger's: int32 steps, checked by intBound
  // Lut: out = table[uint8(x)], x in tile 1, by sg.pe_s_gather_d1coor from the 256-entry table (the op's
  // second input) each channel finds at the same place of its lane row after the tiles, the tile read as one
  // row per channel.
  bool lookup = false;
  std::optional<KernelProgram> program; // run first when present: register r is tile r
  std::vector<Step> steps;
  // In fp32 tiles though the result is 16-bit (a program, or steps whose intermediate values an fp32 form
  // keeps in fp32): 16-bit inputs are widened into their tiles and the result rounded once at the end.
  bool wide = false;
};

// The int8 kinds (the BM1684's integer semantics, Graph.h's Op): each input widened to int32, the op's
// integer expression in int32 (multipliers, add/sub/max/min/mul, a per-channel scale and bias, clip
// bounds, relu), then quant.rq1's rounding shift (half up) saturated to the result: what the reference
// computes in int64, exact when no int32 step can overflow (intBound). Tiles: 0 the result, 1..k the
// inputs, then each input not int32 already widened into a tile of its own.
ElementwisePlan planInteger(const Graph &g, const Op &op) {
  ElementwisePlan plan;
  plan.integer = true;
  const size_t k = op.inputs.size();
  plan.types = {g.tensors[size_t(op.output)].dtype};
  for (size_t i = 0; i < k; ++i) {
    plan.loads.push_back({op.inputs[i], int(i) + 1});
    plan.types.push_back(g.tensors[size_t(op.inputs[i])].dtype);
  }
  auto step = [&](const char *mnemonic, int out, int a, TileOperand b, std::optional<int64_t> integer = {}) {
    plan.steps.push_back({mnemonic, out, a, b, integer});
  };
  std::vector<int> wideTile; // input i as int32: its own tile when it is int32 already
  for (size_t i = 0; i < k; ++i) {
    if (plan.types[i + 1] == DType::I32) {
      wideTile.push_back(int(i) + 1);
      continue;
    }
    wideTile.push_back(int(plan.types.size()));
    plan.types.push_back(DType::I32);
    step("arith.cast", wideTile.back(), int(i) + 1, {});
  }
  plan.tiles = int(plan.types.size());
  auto wide = [&](size_t i) { return wideTile[i]; };
  const std::vector<int32_t> &m = op.multipliers;
  auto scaled = [&](size_t i) {
    if (m.size() > i && m[i] != 1) step("arith.mul", wide(i), wide(i), {}, m[i]);
  };
  const int acc = wide(0);
  switch (op.kind) {
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Max:
  case OpKind::Min:
    scaled(0), scaled(1);
    step(op.kind == OpKind::Add   ? "arith.add"
         : op.kind == OpKind::Sub ? "arith.sub"
         : op.kind == OpKind::Max ? "arith.max"
                                  : "arith.min",
         acc, acc, {wide(1), 0});
    break;
  case OpKind::Mul:
    step("arith.mul", acc, acc, {wide(1), 0});
    scaled(0);
    break;
  case OpKind::Requant:
    scaled(0);
    break;
  case OpKind::Affine:
    if (k == 3) { // x * scale[c] + bias[c]
      step("arith.mul", acc, acc, {wide(1), 0});
      step("arith.add", acc, acc, {wide(2), 0});
    } else {
      scaled(0);
      if (m.size() > 1 && m[1]) step("arith.add", acc, acc, {}, m[1]);
    }
    break;
  case OpKind::Clip: {
    const auto &p = op.params<ClipParams>();
    step("arith.max", acc, acc, {}, int64_t(p.min));
    step("arith.min", acc, acc, {}, int64_t(p.max));
    break;
  }
  case OpKind::LeakyRelu: { // max(x, x * m0 >> rshift): the second term rounded in int32
    plan.types.push_back(DType::I32);
    const int t = plan.tiles++;
    step("arith.mul", t, acc, {}, m[0]);
    plan.steps.push_back({"quant.rq1", t, t, {}, {}, 1, op.rshift});
    step("arith.max", acc, acc, {t, 0});
    break;
  }
  default:
    break;
  }
  if (op.kind == OpKind::Relu || op.relu) step("arith.max", acc, acc, {}, 0);
  plan.steps.push_back({"quant.rq1", 0, acc, {}, {}, 1, op.kind == OpKind::LeakyRelu ? 0u : op.rshift});
  return plan;
}

// The largest |value| an int8 kind's int32 steps (planInteger) can reach, from its inputs' ranges and
// multipliers; beyond int32 they would wrap where the reference does not.
int64_t intBound(const Graph &g, const Op &op) {
  std::vector<int64_t> in;
  for (int t : op.inputs) { // an int32 weight (a per-channel bias) by its values, the rest by their types
    const Tensor &x = g.tensors[size_t(t)];
    int64_t b = 0;
    if (x.isWeight() && x.dtype == DType::I32)
      for (int32_t v : toInts(x.data, x.dtype)) b = std::max(b, std::abs(int64_t(v)));
    else
      b = largestMagnitude(x.dtype);
    in.push_back(b);
  }
  auto mul = [&](size_t i) { return op.multipliers.size() > i ? std::abs(int64_t(op.multipliers[i])) : 1; };
  switch (op.kind) {
  case OpKind::Add:
  case OpKind::Sub:
    return in[0] * mul(0) + in[1] * mul(1);
  case OpKind::Max:
  case OpKind::Min:
    return std::max(in[0] * mul(0), in[1] * mul(1));
  case OpKind::Mul:
    return in[0] * in[1] * mul(0);
  case OpKind::Affine:
    return in.size() == 3 ? in[0] * in[1] + in[2] : in[0] * mul(0) + mul(1);
  default:
    return in[0] * mul(0);
  }
}

ElementwisePlan planElementwise(const Graph &g, const Op &op) {
  if (op.kind == OpKind::Lut) {
    ElementwisePlan plan;
    plan.loads = {{op.inputs[0], 1}};
    plan.types = {g.tensors[size_t(op.output)].dtype, g.tensors[size_t(op.inputs[0])].dtype};
    plan.tiles = 2;
    plan.lookup = true;
    return plan;
  }
  if (isInteger(g.tensors[size_t(op.output)].dtype) && isInteger(g.tensors[size_t(op.inputs[0])].dtype))
    return planInteger(g, op);
  ElementwisePlan plan;
  auto step = [&](const char *mnemonic, int out, int a, TileOperand b) { plan.steps.push_back({mnemonic, out, a, b}); };
  plan.program = programOf(op);
  if (plan.program) { // the inputs in registers 1.., the result in 0, then the temps
    for (size_t k = 0; k < op.inputs.size(); ++k) plan.loads.push_back({op.inputs[k], int(k) + 1});
    plan.tiles = 1 + int(plan.program->inputs + plan.program->temps);
  } else if (op.kind == OpKind::Cast) {
    plan.loads = {{op.inputs[0], 1}};
    plan.tiles = 2;
    const Tensor &x = g.tensors[size_t(op.inputs[0])], &y = g.tensors[size_t(op.output)];
    if (isInteger(y.dtype)) { // fp32 -> int8: x * (1 / scale), rounded half to even and saturated
      plan.types = {y.dtype, DType::F32};
      plan.steps.push_back({"arith.mul", 1, 1, {-1, 1.0f / y.scale}});
      plan.steps.push_back({"arith.cast", 0, 1, {}});
    } else if (isInteger(x.dtype)) { // int8 -> fp32: q * scale
      plan.types = {DType::F32, x.dtype};
      plan.steps.push_back({"arith.cast", 0, 1, {}});
      plan.steps.push_back({"arith.mul", 0, 0, {-1, x.scale}});
    } else { // fp32 <-> a 16-bit float: one copy into the result's type
      plan.steps.push_back({"arith.copy", 0, 1, {}});
    }
    return plan;
  } else {
    plan.loads = {{op.inputs[0], 0}};
  }
  // The second operand: a one-value weight as a constant (its value widened), anything else loaded into
  // the next tile.
  auto operand = [&](int tensor) {
    const Tensor &t = g.tensors[size_t(tensor)];
    if (t.isWeight() && t.numel() == 1) {
      std::vector<uint8_t> wide = isHalf(t.dtype) ? widenHalf(t.data, t.dtype) : t.data;
      float v;
      std::memcpy(&v, wide.data(), sizeof v);
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
  plan.wide = isHalf(g.tensors[size_t(op.output)].dtype) && (plan.program || op.kind == OpKind::Affine);
  return plan;
}

} // namespace

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
  if (plan.integer) {
    if (op.kind == OpKind::Affine && op.inputs.size() != 3 && op.multipliers.size() < 2)
      return unsupported(op, "an int8 affine without its two multipliers");
    if (const int64_t b = intBound(g_, op); b > INT32_MAX)
      return unsupported(op, "int8 steps that can reach " + std::to_string(b) + ", beyond int32");
  }
  // Each tile's element type: the plan's, or the tensor's loaded into it, else the result's (a 16-bit float
  // step computes in fp32 and rounds once, so a single step is the fp32 form; the multi-step kinds compiled
  // in 16 bits only select between their steps' values).
  std::vector<DType> tileType(size_t(plan.tiles), plan.wide ? DType::F32 : y.dtype);
  if (!plan.types.empty())
    tileType = plan.types;
  else if (!plan.wide)
    for (const auto &[tensor, t] : plan.loads) tileType[size_t(t)] = g_.tensors[size_t(tensor)].dtype;
  // Wide: a 16-bit tile per 16-bit input (loaded, then widened into its fp32 tile) and one for the result.
  std::vector<int> staged(plan.loads.size(), -1);
  int resultStage = -1;
  if (plan.wide) {
    for (size_t i = 0; i < plan.loads.size(); ++i)
      if (const DType t = g_.tensors[size_t(plan.loads[i].first)].dtype; isHalf(t)) {
        staged[i] = int(tileType.size());
        tileType.push_back(t);
      }
    resultStage = int(tileType.size());
    tileType.push_back(y.dtype);
  }
  // The program's polynomial tables, or the Lut's table: one copy per lane, after the tiles.
  constexpr uint64_t kLutEntries = 256;
  const uint64_t tableBytes = plan.program ? uint64_t(plan.program->coefficientCount()) * kF32 : 0;
  LmemPlan lmem;
  auto fits = [&](uint64_t cRows, uint64_t hRows) {
    if (plan.lookup && hRows * yd[3] > uint64_t(kMaxDim)) return false; // one row per channel: res0_w
    std::vector<uint64_t> bytes;
    for (DType t : tileType) bytes.push_back(cRows * alignedPlane(hRows * yd[3], t) * bytesOf(t));
    if (tableBytes) bytes.push_back(tableBytes);
    if (plan.lookup) bytes.push_back(cRows * kLutEntries * bytesOf(y.dtype)); // a table per lane row
    return lmem.place(bytes);
  };
  const Slicing s = largestSlicing(yd[1], yd[2], 1, fits);
  if (!s.rowStep) return unsupported(op, "one row of " + std::to_string(yd[3]) + " elements does not fit a lane");
  fits(s.channelStep / map::kLanes, s.rowStep);
  const std::vector<uint64_t> tile = lmem.offsets;
  if (plan.lookup) { // the table for every channel of a slice (a DMA source with a channel stride of 0)
    const Dims shape{1, std::min(s.channelStep, yd[1]), 1, kLutEntries};
    TPU_RETURN_IF_ERROR(program_.dma({addressOf(op.inputs[1]), shape, {0, 0, 0, 1}, y.dtype},
                                     localAligned(tile.back(), shape, y.dtype)));
  } else if (tableBytes) {
    TPU_RETURN_IF_ERROR(loadTables(op, tableBytes, tile.back()));
  }
  for (uint64_t c0 = 0; c0 < yd[1]; c0 += s.channelStep)
    for (uint64_t n = 0; n < yd[0]; ++n)
      for (uint64_t h0 = 0; h0 < yd[2]; h0 += s.rowStep) {
        const Dims shape{1, std::min(s.channelStep, yd[1] - c0), std::min(s.rowStep, yd[2] - h0), yd[3]};
        const Dims at{n, c0, h0, 0};
        for (size_t i = 0; i < plan.loads.size(); ++i) {
          const auto &[extent, stride] = sources[i];
          uint64_t offset = 0;
          for (size_t d = 0; d < 4; ++d) offset += at[d] * stride[d];
          const int into = staged[i] >= 0 ? staged[i] : plan.loads[i].second;
          const DType t = tileType[size_t(into)];
          Region src{addressOf(plan.loads[i].first) + offset * bytesOf(t), shape, stride, t};
          TPU_RETURN_IF_ERROR(program_.dma(src, localAligned(tile[size_t(into)], shape, t)));
          if (staged[i] >= 0)
            TPU_RETURN_IF_ERROR(convert(shape, tile[size_t(plan.loads[i].second)], DType::F32, tile[size_t(into)], t));
        }
        if (plan.program)
          TPU_RETURN_IF_ERROR(emitProgram(op, *plan.program, tile, tableBytes ? tile.back() : 0, shape));
        if (plan.lookup) {
          TPU_ASSIGN_OR_RETURN(Command c, lookupCommand({1, shape[1], 1, shape[2] * shape[3]}, tile[0], tile.back(),
                                                        kLutEntries, tile[1], y.dtype));
          TPU_RETURN_IF_ERROR(program_.tiu(std::move(c)));
        }
        for (const ElementwisePlan::Step &st : plan.steps) {
          std::optional<uint64_t> b;
          if (st.b.tile >= 0) b = tile[size_t(st.b.tile)];
          const DType outType = tileType[size_t(st.out)], aType = tileType[size_t(st.a)];
          const TileTypes types{outType, aType, st.b.tile >= 0 ? tileType[size_t(st.b.tile)] : DType::F32};
          const std::string_view mnemonic(st.mnemonic);
          Result<Command> c =
              mnemonic == "quant.rq1" ? requantCommand(shape, tile[size_t(st.out)], outType, tile[size_t(st.a)], aType,
                                                       st.multiplier, st.rshift)
              : mnemonic == "arith.cast" ? castCommand(shape, tile[size_t(st.out)], outType, tile[size_t(st.a)], aType)
              : st.integer
                  ? intArithCommand(st.mnemonic, shape, tile[size_t(st.out)], tile[size_t(st.a)], b, *st.integer,
                                    {outType, aType, aType})
                  : arithCommand(st.mnemonic, shape, tile[size_t(st.out)], tile[size_t(st.a)], b, st.b.constant, types);
          if (!c) return c.status();
          TPU_RETURN_IF_ERROR(program_.tiu(c.take()));
        }
        const int result = plan.wide ? resultStage : 0;
        if (plan.wide) TPU_RETURN_IF_ERROR(convert(shape, tile[size_t(result)], y.dtype, tile[0], DType::F32));
        TPU_RETURN_IF_ERROR(program_.dma(localAligned(tile[size_t(result)], shape, y.dtype),
                                         ddrBox(addressOf(op.output), compactDims(yd), at, shape, y.dtype)));
      }
  return Status::ok();
}

// The tile `from` of type `fromType` copied into `to` of type `toType` (widened exactly, or rounded once).
Status Compiler::convert(const Dims &shape, uint64_t to, DType toType, uint64_t from, DType fromType) {
  TPU_ASSIGN_OR_RETURN(Command c,
                       arithCommand("arith.copy", shape, to, from, std::nullopt, 0.0f, {toType, fromType, DType::F32}));
  return program_.tiu(std::move(c));
}

// A DDR region loaded into the fp32 tile at `tile` (AlignEU, the region's shape); a 16-bit region through
// the 16-bit tile at `stage`, widened exactly.
Status Compiler::loadWide(const Region &src, uint64_t tile, uint64_t stage) {
  if (!isHalf(src.dtype)) return program_.dma(src, localAligned(tile, src.shape));
  TPU_RETURN_IF_ERROR(program_.dma(src, localAligned(stage, src.shape, src.dtype)));
  return convert(src.shape, tile, DType::F32, stage, src.dtype);
}

// The fp32 tile at `tile` (AlignEU, `tileShape`) stored to `dst`, whose shape takes the elements from the
// start of each of the tile's dims; to a 16-bit region rounded once into the 16-bit tile at `stage` first.
Status Compiler::storeNarrow(uint64_t tile, const Dims &tileShape, const Region &dst, uint64_t stage) {
  const bool narrow = isHalf(dst.dtype);
  if (narrow) TPU_RETURN_IF_ERROR(convert(tileShape, stage, dst.dtype, tile, DType::F32));
  const Region from = localAligned(narrow ? stage : tile, tileShape, dst.dtype);
  return program_.dma({from.address, dst.shape, from.stride, dst.dtype}, dst);
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

// An op's polynomial tables from DDR into `offset` of every lane (a DMA source with a channel stride of 0).
Status Compiler::loadTables(const Op &op, uint64_t bytes, uint64_t offset) {
  const uint64_t count = bytes / kF32;
  return program_.dma({tables_.at(&op), {1, map::kLanes, 1, count}, {0, 0, 0, 1}},
                      {map::kLmemStart + offset, {1, map::kLanes, 1, count}, {count, count, count, 1}});
}

} // namespace tpu::backend::bm1684x
