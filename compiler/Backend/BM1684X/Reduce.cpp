// Reductions on the BM1684X: Reduce, Softmax, LogSoftmax and LayerNorm.
#include "compiler/Backend/BM1684X/Compiler.h"

#include "compiler/Backend/Ops/Reduce.h"

#include <algorithm>

namespace tpu::backend::bm1684x {

// A reduction as the commands see it (planReduce): the kept dims merged onto k0 (items, n) and k1 (the
// lanes), the reduced ones onto one r0 x r1 window; the input's DDR element strides, the output's along
// k0 and k1.
struct ReduceRows {
  uint64_t k0 = 1, k1 = 1, r0 = 1, r1 = 1;
  Dims xStride{}, yStride{};
  WindowParams window; // r0 x r1, stride 1, no pads

  Dims plane(uint64_t cs) const { return {1, cs, r0, r1}; }
  // The DDR element offsets of slice (n, c0) in the input and in the output.
};

namespace {

// The 16-bit tile a 16-bit tensor's planes of cRows lane rows pass through (loadWide, storeNarrow): the
// reductions compute in fp32 as their fp32 forms, rounding the result once.
uint64_t stageBytes(const ReduceRows &r, uint64_t cRows, DType t) {
  return cRows * alignedPlane(r.r0 * r.r1, t) * bytesOf(t);
}

// The rows of a reduction of x over `axes` into y; without y (Softmax, LayerNorm) into one value per
// element of the kept dims.
Result<ReduceRows> reduceRows(const Tensor &x, const Tensor *y, const ReduceAxes &axes) {
  Tensor kept;
  if (!y) {
    const auto xn = x.nchw();
    kept.shape = {1};
    for (size_t d = 0; d < 4; ++d)
      if (!axes[d]) kept.shape[0] *= xn[d];
  }
  TPU_ASSIGN_OR_RETURN(ReducePlan plan, planReduce(x, y ? *y : kept, axes));
  ReduceRows r;
  r.k0 = uint64_t(plan.size[0]), r.k1 = uint64_t(plan.size[1]), r.r0 = uint64_t(plan.size[2]),
  r.r1 = uint64_t(plan.size[3]);
  for (size_t d = 0; d < 4; ++d) r.xStride[d] = uint64_t(plan.xStride[d]);
  r.yStride = {uint64_t(plan.yStride[0]), uint64_t(plan.yStride[1]), 1, 1};
  r.window.kh = int64_t(r.r0), r.window.kw = int64_t(r.r1);
  return r;
}

// The most lane rows (from all that k1 channels take down to 1) for which `fits` holds; 0 when none.
template <class Fits> uint64_t fittingRows(uint64_t k1, Fits &&fits) {
  uint64_t cRows = rows(k1);
  while (cRows >= 1 && !fits(cRows)) --cRows;
  return cRows;
}

// fn(n, c0, cs) for every slice of cRows lane rows of channels, item by item.
template <class Fn> Status forEachSlice(const ReduceRows &r, uint64_t cRows, Fn &&fn) {
  const uint64_t step = cRows * map::kLanes;
  for (uint64_t n = 0; n < r.k0; ++n)
    for (uint64_t c0 = 0; c0 < r.k1; c0 += step) TPU_RETURN_IF_ERROR(fn(n, c0, std::min(step, r.k1 - c0)));
  return Status::ok();
}

// The sum of k * x over the window of cs channels at `from` into `to`, term by term as the reference adds
// them: a depthwise window of the constant k, no bias.
Result<Command> weightedSum(const ReduceRows &r, uint64_t cs, float k, uint64_t from, uint64_t to) {
  TPU_ASSIGN_OR_RETURN(Command c,
                       windowCommand("pord.depthwise", {1, cs, 1, 1}, {r.r0, r.r1}, r.window, {0, 0}, 0, from, to));
  TPU_RETURN_IF_ERROR(
      setFields(c, {{"opd1_const", 1}, {"opd1_addr", floatBits(k)}, {"opd2_const", 1}, {"opd2_addr", 0}}));
  return c;
}

} // namespace

// int8 sum and mean (the reference's sum of x * multiplier, requantised) as the window's exact int32 sum
// (pord.avgpooling, multiplier 1, no shift), then quant.rq1 by the multiplier and the rounding shift; max
// as max pooling in the input's type. min (-max(-x) would overflow int8's -128) and the float-only modes
// are refused.
Status Compiler::emitIntegerReduce(const Op &op, const ReduceRows &r) {
  const Tensor &x = g_.tensors[size_t(op.inputs[0])], &y = g_.tensors[size_t(op.output)];
  const ReduceMode mode = op.params<ReduceParams>().mode;
  const bool isMax = mode == ReduceMode::Max, sums = mode == ReduceMode::Sum || mode == ReduceMode::Mean;
  if (!isMax && !sums) return unsupported(op, "an int8 reduction other than sum, mean or max");
  if (isMax && x.dtype != y.dtype) return unsupported(op, "an int8 max that changes the type");
  if (!isInt8Like(x.dtype)) return unsupported(op, std::string("a ") + dtypeName(x.dtype) + " reduction");
  LmemPlan lmem;
  const uint64_t cRows = fittingRows(r.k1, [&](uint64_t cRows) {
    return lmem.place({cRows * alignedPlane(r.r0 * r.r1, x.dtype) * bytesOf(x.dtype),
                       cRows * alignedPlane(1, DType::I32) * kF32,
                       cRows * alignedPlane(1, y.dtype) * bytesOf(y.dtype)});
  });
  if (!cRows) return unsupported(op, "a reduction of " + std::to_string(r.r0 * r.r1) + " elements does not fit a lane");
  const uint64_t inOff = lmem.offsets[0], sumOff = lmem.offsets[1], outOff = lmem.offsets[2];
  return forEachSlice(r, cRows, [&](uint64_t n, uint64_t c0, uint64_t cs) -> Status {
    const Dims inShape = r.plane(cs), outShape{1, cs, 1, 1};
    TPU_RETURN_IF_ERROR(program_.dma(ddrBox(addressOf(op.inputs[0]), r.xStride, {n, c0, 0, 0}, inShape, x.dtype),
                                     localAligned(inOff, inShape, x.dtype)));
    const uint32_t pad = integerBits(x.dtype == DType::U8 ? 0 : -128, x.dtype); // no pads: never read
    TPU_ASSIGN_OR_RETURN(Command c, windowCommand(isMax ? "pord.maxpooling" : "pord.avgpooling", outShape, {r.r0, r.r1},
                                                  r.window, {0, 0}, pad, inOff, isMax ? outOff : sumOff, x.dtype,
                                                  isMax ? y.dtype : DType::I32));
    if (sums) TPU_RETURN_IF_ERROR(setFields(c, {{"opd1_const", 1}, {"opd1_addr", 1}}));
    TPU_RETURN_IF_ERROR(program_.tiu(std::move(c)));
    if (sums) {
      TPU_ASSIGN_OR_RETURN(
          Command rq, requantCommand(outShape, outOff, y.dtype, sumOff, DType::I32, op.multipliers.at(0), op.rshift));
      TPU_RETURN_IF_ERROR(program_.tiu(std::move(rq)));
    }
    const Region out = ddrBox(addressOf(op.output), r.yStride, {n, c0, 0, 0}, outShape, y.dtype);
    return program_.dma(localAligned(outOff, outShape, y.dtype), out);
  });
}

// Sum, mean, max and min over the reduced dims (the window of one pooling; min is -max(-x), the mean's
// weight 1 / count), L2 (the sum of squares, then 1 / rsqrt), product (productTree).
Status Compiler::emitReduce(const Op &op) {
  const Tensor &x = g_.tensors[size_t(op.inputs[0])], &y = g_.tensors[size_t(op.output)];
  const ReduceMode mode = op.params<ReduceParams>().mode;
  auto arranged = reduceRows(x, &y, op.params<ReduceParams>().axes);
  if (!arranged) return unsupported(op, arranged.message());
  const ReduceRows &r = *arranged;
  if (isInteger(x.dtype)) return emitIntegerReduce(op, r);
  LmemPlan lmem;
  const uint64_t cRows = fittingRows(r.k1, [&](uint64_t cRows) {
    std::vector<uint64_t> bytes{cRows * alignedPlane(r.r0 * r.r1) * kF32, cRows * alignedPlane(1) * kF32};
    if (isHalf(x.dtype)) bytes.push_back(stageBytes(r, cRows, x.dtype));
    return lmem.place(bytes);
  });
  if (!cRows) return unsupported(op, "a reduction of " + std::to_string(r.r0 * r.r1) + " elements does not fit a lane");
  const uint64_t inOff = lmem.offsets[0], outOff = lmem.offsets[1], stage = lmem.offsets.back();
  const bool isMax = mode == ReduceMode::Max || mode == ReduceMode::Min, negate = mode == ReduceMode::Min;
  return forEachSlice(r, cRows, [&](uint64_t n, uint64_t c0, uint64_t cs) -> Status {
    const Dims inShape = r.plane(cs), outShape{1, cs, 1, 1};
    TPU_RETURN_IF_ERROR(
        loadWide(ddrBox(addressOf(op.inputs[0]), r.xStride, {n, c0, 0, 0}, inShape, x.dtype), inOff, stage));
    const Region out = ddrBox(addressOf(op.output), r.yStride, {n, c0, 0, 0}, outShape, y.dtype);
    auto negateTile = [&](uint64_t offset, const Dims &shape) -> Status {
      TPU_ASSIGN_OR_RETURN(Command c, arithCommand("arith.mul", shape, offset, offset, std::nullopt, -1.0f));
      return program_.tiu(std::move(c));
    };
    if (negate) TPU_RETURN_IF_ERROR(negateTile(inOff, inShape));
    if (mode == ReduceMode::Prod) { // the reference's tree: each row halved, then column 0
      TPU_RETURN_IF_ERROR(productTree(inShape, inOff));
      return storeNarrow(inOff, inShape, out, stage);
    }
    if (mode == ReduceMode::L2) {
      TPU_ASSIGN_OR_RETURN(Command sq, arithCommand("arith.mul", inShape, inOff, inOff, inOff, 0.0f));
      TPU_RETURN_IF_ERROR(program_.tiu(std::move(sq)));
    }
    Command c;
    if (isMax) {
      TPU_ASSIGN_OR_RETURN(
          c, windowCommand("pord.maxpooling", outShape, {r.r0, r.r1}, r.window, {0, 0}, 0, inOff, outOff));
    } else {
      TPU_ASSIGN_OR_RETURN(
          c, weightedSum(r, cs, mode == ReduceMode::Mean ? 1.0f / float(r.r0 * r.r1) : 1.0f, inOff, outOff));
    }
    TPU_RETURN_IF_ERROR(program_.tiu(std::move(c)));
    if (negate) TPU_RETURN_IF_ERROR(negateTile(outOff, outShape));
    if (mode == ReduceMode::L2) { // 1 / (1 / sqrt(sum)), as the reference
      TPU_ASSIGN_OR_RETURN(Command rs, rsqrtCommand(outOff, cs));
      TPU_RETURN_IF_ERROR(program_.tiu(std::move(rs)));
      TPU_ASSIGN_OR_RETURN(Command inv, arithCommand("arith.div", outShape, outOff, outOff, outOff, 0.0f));
      TPU_RETURN_IF_ERROR(inv.set("opd0_const", 1));
      TPU_RETURN_IF_ERROR(inv.set("opd0_addr", floatBits(1.0f)));
      TPU_RETURN_IF_ERROR(program_.tiu(std::move(inv)));
    }
    return storeNarrow(outOff, outShape, out, stage);
  });
}

// Softmax and LogSoftmax over the dims of `axes`, step for step as the reference: the max, d = x - max,
// e = exp(d) (the Exp program), the sum of e, then e / sum, or d - log(sum) (the Log program on the sums).
// The kept dims on n and the lanes, the softmax dims as the window of the max and the sum.
Status Compiler::emitSoftmax(const Op &op) {
  const DType xt = g_.tensors[size_t(op.inputs[0])].dtype;
  auto arranged = reduceRows(g_.tensors[size_t(op.inputs[0])], nullptr, op.params<SoftmaxParams>().axes);
  if (!arranged) return unsupported(op, arranged.message());
  const ReduceRows &r = *arranged;
  const bool isLog = op.kind == OpKind::LogSoftmax;
  const std::vector<KernelProgram> programs = programsOf(op);
  const KernelProgram &exp = programs[0];
  const uint64_t tableBytes = tableBytesOf(programs);
  // Per lane: d, e and exp's temps as planes of r0 x r1; the max, the sum, log's result and its temps as
  // one value per channel; the tables.
  const size_t planes = 2 + exp.temps, values = isLog ? 3 + programs[1].temps : 2;
  LmemPlan lmem;
  auto fits = [&](uint64_t cRows) {
    std::vector<uint64_t> bytes(planes, cRows * alignedPlane(r.r0 * r.r1) * kF32);
    bytes.resize(planes + values, cRows * alignedPlane(1) * kF32);
    if (tableBytes) bytes.push_back(tableBytes);
    if (isHalf(xt)) bytes.push_back(stageBytes(r, cRows, xt));
    return lmem.place(bytes);
  };
  const uint64_t cRows = fittingRows(r.k1, fits);
  if (!cRows) return unsupported(op, "a softmax over " + std::to_string(r.r0 * r.r1) + " elements does not fit a lane");
  const uint64_t stage = lmem.offsets.back(), tables = lmem.offsets[planes + values];
  const std::vector<uint64_t> tile = lmem.offsets;
  const uint64_t d = tile[0], e = tile[1], m = tile[planes], sum = tile[planes + 1];
  if (tableBytes) TPU_RETURN_IF_ERROR(loadTables(op, tableBytes, tables));
  // exp's registers: the result e, the input d, its temps; log's: its result, the sums, its temps.
  std::vector<uint64_t> expTiles{e, d};
  expTiles.insert(expTiles.end(), tile.begin() + 2, tile.begin() + long(planes));
  std::vector<uint64_t> logTiles;
  if (isLog) {
    logTiles = {tile[planes + 2], sum};
    logTiles.insert(logTiles.end(), tile.begin() + long(planes) + 3, tile.begin() + long(planes + values));
  }
  return forEachSlice(r, cRows, [&](uint64_t n, uint64_t c0, uint64_t cs) -> Status {
    const Dims shape = r.plane(cs), one{1, cs, 1, 1};
    TPU_RETURN_IF_ERROR(loadWide(ddrBox(addressOf(op.inputs[0]), r.xStride, {n, c0, 0, 0}, shape, xt), d, stage));
    TPU_ASSIGN_OR_RETURN(Command max, windowCommand("pord.maxpooling", one, {r.r0, r.r1}, r.window, {0, 0}, 0, d, m));
    TPU_RETURN_IF_ERROR(program_.tiu(std::move(max)));
    TPU_RETURN_IF_ERROR(perChannel("arith.sub", shape, d, d, m));
    TPU_RETURN_IF_ERROR(emitProgram(op, exp, expTiles, tables, shape));
    TPU_ASSIGN_OR_RETURN(Command total,
                         windowCommand("pord.avgpooling", one, {r.r0, r.r1}, r.window, {0, 0}, 0, e, sum));
    TPU_RETURN_IF_ERROR(setMultiplier(total, 1.0f));
    TPU_RETURN_IF_ERROR(program_.tiu(std::move(total)));
    if (isLog) {
      TPU_RETURN_IF_ERROR(
          emitProgram(op, programs[1], logTiles, tables + uint64_t(exp.coefficientCount()) * kF32, one));
      TPU_RETURN_IF_ERROR(perChannel("arith.sub", shape, d, d, logTiles[0]));
    } else {
      TPU_RETURN_IF_ERROR(perChannel("arith.div", shape, e, e, sum));
    }
    return storeNarrow(isLog ? d : e, shape, ddrBox(addressOf(op.output), r.xStride, {n, c0, 0, 0}, shape, xt), stage);
  });
}

// LayerNorm over the dims of `axes`, as the reference: mean = the sum of x / n (weightedSum of 1/n),
// d = x - mean, var = the sum of d * d / n, d * rsqrt(var + epsilon), then * scale and + bias (weights of
// the normalized elements, one copy in every lane).
Status Compiler::emitLayerNorm(const Op &op) {
  const LayerNormParams &params = op.params<LayerNormParams>();
  const DType xt = g_.tensors[size_t(op.inputs[0])].dtype;
  auto arranged = reduceRows(g_.tensors[size_t(op.inputs[0])], nullptr, params.axes);
  if (!arranged) return unsupported(op, arranged.message());
  const ReduceRows &r = *arranged;
  const size_t weights = op.inputs.size() - 1; // scale, then bias
  const uint64_t weightPlane = alignedPlane(r.r0 * r.r1) * kF32;
  LmemPlan lmem;
  auto fits = [&](uint64_t cRows) {
    std::vector<uint64_t> bytes(2, cRows * alignedPlane(r.r0 * r.r1) * kF32);
    bytes.resize(4, cRows * alignedPlane(1) * kF32);
    bytes.resize(4 + weights, weightPlane);
    if (isHalf(xt)) bytes.push_back(stageBytes(r, std::max<uint64_t>(cRows, 1), xt));
    return lmem.place(bytes);
  };
  const uint64_t cRows = fittingRows(r.k1, fits);
  if (!cRows) return unsupported(op, "a norm over " + std::to_string(r.r0 * r.r1) + " elements does not fit a lane");
  const std::vector<uint64_t> tile = lmem.offsets;
  const uint64_t d = tile[0], square = tile[1], mean = tile[2], var = tile[3], stage = tile.back();
  const Dims lanes = r.plane(map::kLanes);
  for (size_t w = 0; w < weights; ++w) // every lane gets the weights
    TPU_RETURN_IF_ERROR(
        loadWide({addressOf(op.inputs[1 + w]), lanes, {0, 0, r.r1, 1}, g_.tensors[size_t(op.inputs[1 + w])].dtype},
                 tile[4 + w], stage));
  const float k = 1.0f / float(r.r0 * r.r1);
  return forEachSlice(r, cRows, [&](uint64_t n, uint64_t c0, uint64_t cs) -> Status {
    const Dims shape = r.plane(cs), one{1, cs, 1, 1};
    TPU_RETURN_IF_ERROR(loadWide(ddrBox(addressOf(op.inputs[0]), r.xStride, {n, c0, 0, 0}, shape, xt), d, stage));
    TPU_ASSIGN_OR_RETURN(Command sumX, weightedSum(r, cs, k, d, mean));
    TPU_RETURN_IF_ERROR(program_.tiu(std::move(sumX)));
    TPU_RETURN_IF_ERROR(perChannel("arith.sub", shape, d, d, mean));
    TPU_ASSIGN_OR_RETURN(Command sq, arithCommand("arith.mul", shape, square, d, d, 0.0f));
    TPU_RETURN_IF_ERROR(program_.tiu(std::move(sq)));
    TPU_ASSIGN_OR_RETURN(Command sumSq, weightedSum(r, cs, k, square, var));
    TPU_RETURN_IF_ERROR(program_.tiu(std::move(sumSq)));
    TPU_ASSIGN_OR_RETURN(Command eps, arithCommand("arith.add", one, var, var, std::nullopt, params.epsilon));
    TPU_RETURN_IF_ERROR(program_.tiu(std::move(eps)));
    TPU_ASSIGN_OR_RETURN(Command inv, rsqrtCommand(var, cs));
    TPU_RETURN_IF_ERROR(program_.tiu(std::move(inv)));
    TPU_RETURN_IF_ERROR(perChannel("arith.mul", shape, d, d, var));
    for (size_t w = 0; w < weights; ++w) { // the same plane in every lane and row: c stride 0
      TPU_ASSIGN_OR_RETURN(Command c, arithCommand(w ? "arith.add" : "arith.mul", shape, d, d, tile[4 + w], 0.0f));
      TPU_RETURN_IF_ERROR(setFields(c, {{"opd1_str", 3}, {"opd1_h_str", r.r1}, {"opd1_w_str", 1}}));
      TPU_RETURN_IF_ERROR(program_.tiu(std::move(c)));
    }
    return storeNarrow(d, shape, ddrBox(addressOf(op.output), r.xStride, {n, c0, 0, 0}, shape, xt), stage);
  });
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

} // namespace tpu::backend::bm1684x
