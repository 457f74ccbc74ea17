// Small runnable nets built from typed commands, for the runtime tests, and
// the naive references their outputs are checked against.
#pragma once

#include "isa/GdmaCommand.h"
#include "isa/TiuCommand.h"
#include "isa/bmodel/Bmodel.h"

#include <cstring>
#include <random>
#include <vector>

namespace tpu::runtime::testnets {

constexpr uint64_t kDdr = 0x100000000ull;  // global memory base
constexpr uint32_t kLaneBytes = 512 * 1024;

inline std::vector<uint8_t> floatBytes(const std::vector<float> &v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

inline std::vector<float> randomFloats(size_t n, unsigned seed, float lo = -1, float hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float &x : v) x = d(rng);
  return v;
}

inline bmodel::Tensor tensor(const std::string &name, bmodel::DataType dt, bmodel::StoreMode sm,
                             std::vector<uint64_t> shape, uint64_t addr, float scale = 1.0f) {
  bmodel::Tensor t;
  t.name = name;
  t.dtype = dt;
  t.storeMode = sm;
  t.shape = std::move(shape);
  t.deviceAddr = addr;
  t.scale = scale;
  t.size = t.storageBytes();
  return t;
}

inline isa::LocalOperand fp32Operand(uint32_t addr, isa::Shape4 shape) {
  isa::LocalOperand op;
  op.addr = addr;
  op.shape = shape;
  op.prec = isa::Prec::Fp32;
  op.strideMode = isa::StrideMode::Aligned;
  return op;
}

inline isa::GdmaTensor gdmaTensor(uint64_t addr, std::array<uint32_t, 4> shape,
                                  std::array<uint32_t, 4> stride = {0, 0, 0, 1}) {
  isa::GdmaTensor t;
  t.addr = addr;
  t.format = isa::GdmaFormat::Fp32;
  t.shape = shape;
  t.stride = stride;
  return t;
}

// conv_add: z = conv3x3(x, weight, pad 1) + y, all fp32, N=1.
//   x [1, IC, H, W], y and z [1, OC, H, W], weight [OC, IC, 3, 3] (coefficients).
// GDMA: 1 load x, 2 load weight, 3 load y (independent of the conv, so it
// overlaps it on the timed model), 4 store z after TIU 2.
// TIU:  1 conv (waits GDMA 2), 2 add (waits GDMA 3).
struct ConvAddNet {
  uint32_t ic = 3, oc = 4, h = 8, w = 8;
  uint64_t xAddr = kDdr + 0x10000, yAddr = kDdr + 0x20000, zAddr = kDdr + 0x30000;
  uint64_t coeffAddr = kDdr;
  std::vector<float> weight;

  explicit ConvAddNet(unsigned seed) { weight = randomFloats(size_t(oc) * ic * 9, seed); }

  bmodel::Model model(const std::string &name = "conv_add") const {
    using namespace isa;
    const uint32_t lx = 0, lw = 0x1000, lconv = 0x2000, ly = 0x3000, lz = 0x4000;
    std::vector<CommandBytes> gdma, tiu;
    auto addG = [&](GdmaCommand c) { gdma.push_back(*encode(c).encode()); };
    auto addT = [&](TiuCommand c) { tiu.push_back(*encodeBytes(c)); };

    GdmaCommand loadX;
    loadX.direction = GdmaDirection::S2L;
    loadX.strideEnable = false;
    loadX.src = gdmaTensor(xAddr, {1, ic, h, w});
    loadX.dst = gdmaTensor(lx, {1, ic, h, w});
    loadX.cmdId = 1;
    addG(loadX);

    // Weight (oc, ic, kh, kw) in DDR -> operand (n = ic, c = oc, 3, 3), aligned.
    GdmaCommand loadW;
    loadW.direction = GdmaDirection::S2L;
    loadW.src = gdmaTensor(coeffAddr, {ic, oc, 3, 3}, {9, ic * 9, 3, 1});
    const uint32_t wcs = 32; // align(3*3, 32 fp32 EUs)
    loadW.dst = gdmaTensor(lw, {ic, oc, 3, 3}, {(oc + 63) / 64 * wcs, wcs, 3, 1});
    loadW.cmdId = 2;
    addG(loadW);

    GdmaCommand loadY = loadX;
    loadY.src = gdmaTensor(yAddr, {1, oc, h, w});
    loadY.dst = gdmaTensor(ly, {1, oc, h, w});
    loadY.cmdId = 3;
    addG(loadY);

    Conv conv;
    conv.input = fp32Operand(lx, {1, ic, h, w});
    conv.weight = fp32Operand(lw, {ic, oc, 3, 3});
    conv.output = fp32Operand(lconv, {1, oc, h, w});
    conv.bias = fp32Operand(0, {1, oc, 1, 1});
    conv.padTop = conv.padBottom = conv.padLeft = conv.padRight = 1;
    TiuCommand tconv;
    tconv.op = conv;
    tconv.cmdIdTpu = 1;
    tconv.cmdIdGdma = 2;
    addT(tconv);

    Arith add;
    add.eu = EuOp::Add;
    add.res0 = fp32Operand(lz, {1, oc, h, w});
    add.opd0 = fp32Operand(lconv, {1, oc, h, w});
    add.opd1 = fp32Operand(ly, {1, oc, h, w});
    add.opd2 = fp32Operand(0, {1, oc, h, w});
    add.opdCount = 2;
    TiuCommand tadd;
    tadd.op = add;
    tadd.cmdIdTpu = 2;
    tadd.cmdIdGdma = 3;
    tadd.cmdEnd = true;
    addT(tadd);

    GdmaCommand store = loadX;
    store.direction = GdmaDirection::L2S;
    store.src = gdmaTensor(lz, {1, oc, h, w});
    store.dst = gdmaTensor(zAddr, {1, oc, h, w});
    store.cmdId = 4;
    store.eng0SyncId = 2;
    addG(store);

    bmodel::Net net;
    net.name = name;
    net.inputs = {tensor("x", bmodel::DataType::Float32, bmodel::StoreMode::N1, {1, ic, h, w}, xAddr),
                  tensor("y", bmodel::DataType::Float32, bmodel::StoreMode::N1, {1, oc, h, w}, yAddr)};
    net.outputs = {tensor("z", bmodel::DataType::Float32, bmodel::StoreMode::N1, {1, oc, h, w}, zAddr)};
    net.ctxAddr = xAddr;
    net.ctxSize = zAddr + 0x10000 - xAddr;
    net.coeffAddr = coeffAddr;
    net.coeff = floatBytes(weight);
    bmodel::CmdGroup g;
    g.tiu = tiu;
    g.gdma = gdma;
    g.tiuLayer = {"conv1", "add1"};
    g.gdmaLayer = {"conv1", "conv1", "add1", "add1"};
    net.groups.push_back(g);
    bmodel::Model m;
    m.type = "runtime test";
    m.nets.push_back(net);
    return m;
  }

  // Naive reference: z = conv3x3(x, weight, pad 1) + y.
  std::vector<float> reference(const std::vector<float> &x, const std::vector<float> &y) const {
    std::vector<float> z(size_t(oc) * h * w);
    for (uint32_t o = 0; o < oc; ++o)
      for (uint32_t r = 0; r < h; ++r)
        for (uint32_t c = 0; c < w; ++c) {
          float acc = 0;
          for (uint32_t i = 0; i < ic; ++i)
            for (int kh = 0; kh < 3; ++kh)
              for (int kw = 0; kw < 3; ++kw) {
                int ir = int(r) + kh - 1, icol = int(c) + kw - 1;
                if (ir < 0 || icol < 0 || ir >= int(h) || icol >= int(w)) continue;
                acc += x[(size_t(i) * h + ir) * w + icol] * weight[((size_t(o) * ic + i) * 3 + kh) * 3 + kw];
              }
          size_t k = (size_t(o) * h + r) * w + c;
          z[k] = acc + y[k];
        }
    return z;
  }
};

// copy4n: an int8 4N tensor copied DDR to DDR as 32-bit words (S2S): the
// output equals the input quantized with the shared scale.
inline bmodel::Model copyInt8Model(uint64_t n, uint64_t c, uint64_t hw, float scale) {
  using namespace isa;
  const uint64_t in = kDdr + 0x1000, out = kDdr + 0x100000;
  const uint32_t words = uint32_t((n + 3) / 4 * c * hw);
  GdmaCommand copy;
  copy.direction = GdmaDirection::S2S;
  copy.strideEnable = false;
  copy.src = gdmaTensor(in, {1, 1, 1, words});
  copy.dst = gdmaTensor(out, {1, 1, 1, words});
  copy.cmdId = 1;
  bmodel::CmdGroup g;
  g.gdma.push_back(*encode(copy).encode());
  g.gdmaLayer = {"copy"};
  bmodel::Net net;
  net.name = "copy4n";
  net.inputs = {tensor("in", bmodel::DataType::Int8, bmodel::StoreMode::N4, {n, c, hw}, in, scale)};
  net.outputs = {tensor("out", bmodel::DataType::Int8, bmodel::StoreMode::N4, {n, c, hw}, out, scale)};
  net.ctxAddr = in;
  net.ctxSize = out + words * 4 - in;
  net.groups.push_back(g);
  bmodel::Model m;
  m.nets.push_back(net);
  return m;
}

} // namespace tpu::runtime::testnets
