// Test helpers for the code generator: build small graphs with random
// (fixed-seed) data, run a compiled bmodel with the semantics library
// (executeTiu / executeGdma in program order, after a serialize/parse round
// trip of the bmodel) and compare with QuantRef.
#pragma once

#include "compiler/Backend/CodeGen.h"
#include "compiler/Backend/QuantRef.h"
#include "isa/ProgramOrder.h"
#include "isa/bmodel/Bmodel.h"
#include "simulator/semantics/GdmaExec.h"
#include "simulator/semantics/TiuExec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace tpu::backend::test {

inline Bytes randomBytes(const Tensor &t, std::mt19937 &rng, int lo = -128, int hi = 127) {
  Bytes b(t.bytes());
  if (t.dtype == DType::F32) {
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    for (size_t i = 0; i < b.size() / 4; ++i) {
      float v = d(rng);
      std::memcpy(&b[4 * i], &v, 4);
    }
  } else if (isHalf(t.dtype)) { // values in [-1, 1) rounded to the type
    Bytes wide(b.size() * 2);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    for (size_t i = 0; i < wide.size() / 4; ++i) {
      float v = d(rng);
      std::memcpy(&wide[4 * i], &v, 4);
    }
    b = roundToHalf(wide, t.dtype);
  } else if (t.dtype == DType::I16) {
    std::uniform_int_distribution<int> d(-2000, 2000);
    for (size_t i = 0; i < b.size() / 2; ++i) {
      int16_t v = int16_t(d(rng));
      std::memcpy(&b[2 * i], &v, 2);
    }
  } else {
    std::uniform_int_distribution<int> d(t.dtype == DType::U8 ? 0 : lo, t.dtype == DType::U8 ? 255 : hi);
    for (auto &x : b) x = uint8_t(d(rng));
  }
  return b;
}

// Graph building shortcuts.
struct GraphBuilder {
  Graph g;
  std::mt19937 rng{1234};
  int act(const std::string &name, std::vector<int64_t> shape, DType t, float scale = 0.05f) {
    Tensor x;
    x.name = name, x.shape = std::move(shape), x.dtype = t, x.scale = scale;
    return g.addTensor(x);
  }
  int weight(const std::string &name, std::vector<int64_t> shape, DType t) {
    Tensor x;
    x.name = name, x.shape = std::move(shape), x.dtype = t;
    x.data = randomBytes(x, rng);
    return g.addTensor(x);
  }
  Op &op(OpKind k, const std::string &name, std::vector<int> in, int out) {
    Op o;
    o.kind = k, o.name = name, o.inputs = std::move(in), o.output = out;
    g.ops.push_back(o);
    return g.ops.back();
  }
};

// Device layout of an activation: 4N when stored4N, else 1N.
inline Bytes toDevice(const Tensor &t, const Bytes &v) {
  if (!stored4N(t)) return v;
  auto s = t.nchw();
  const int64_t chw = s[1] * s[2] * s[3], groups = (s[0] + 3) / 4;
  Bytes d(size_t(groups * 4 * chw), 0);
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t i = 0; i < chw; ++i) d[size_t((n / 4) * 4 * chw + i * 4 + n % 4)] = v[size_t(n * chw + i)];
  return d;
}
inline Bytes fromDevice(const Tensor &t, const Bytes &d) {
  if (!stored4N(t)) return d;
  auto s = t.nchw();
  const int64_t chw = s[1] * s[2] * s[3];
  Bytes v(size_t(s[0] * chw));
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t i = 0; i < chw; ++i) v[size_t(n * chw + i)] = d[size_t((n / 4) * 4 * chw + i * 4 + n % 4)];
  return v;
}

struct RunResult {
  std::vector<Bytes> outputs; // graph outputs, C order 1N
  uint64_t tiu = 0, gdma = 0;
};

// Serializes and parses the model (the container round trip), then runs
// every group in program order with the semantics library.
inline Result<RunResult> runModel(const Graph &g, const bmodel::Model &model, const isa::HwConfig &hw,
                                  const std::vector<Bytes> &inputs) {
  auto bytes = bmodel::serialize(model);
  if (!bytes) return bytes.status();
  auto parsed = bmodel::parse(bytes->data(), bytes->size());
  if (!parsed) return parsed.status();
  const bmodel::Net &net = parsed->nets.at(0);
  sim::LocalMemory lmem(hw);
  sim::GlobalMemory gmem(hw);
  TPU_RETURN_IF_ERROR(gmem.write(net.coeffAddr, net.coeff.data(), net.coeff.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    Bytes d = toDevice(g.tensors[g.inputs[i]], inputs[i]);
    TPU_RETURN_IF_ERROR(gmem.write(net.inputs[i].deviceAddr, d.data(), d.size()));
  }
  RunResult r;
  for (size_t gi = 0; gi < net.groups.size(); ++gi) {
    const bmodel::CmdGroup &grp = net.groups[gi];
    std::vector<isa::TiuCommand> tiu;
    std::vector<isa::GdmaCommand> gdma;
    for (const auto &c : grp.tiu) {
      auto d = isa::decodeTiu(c.data());
      if (!d) return d.status();
      tiu.push_back(*d);
    }
    for (const auto &c : grp.gdma) {
      auto dr = isa::GdmaRaw::decode(c.data());
      auto d = isa::decodeGdma(dr);
      if (!d) return d.status();
      gdma.push_back(*d);
    }
    auto order = isa::programOrder(grp.tiu, grp.gdma);
    if (!order) return order.status();
    for (const auto &oc : *order) {
      Status st = oc.engine == isa::Engine::Tiu ? sim::executeTiu(hw, lmem, tiu[oc.index])
                                                : sim::executeGdma(hw, lmem, gmem, gdma[oc.index]);
      if (!st)
        return st.prefix("group " + std::to_string(gi) + " " +
                         (oc.engine == isa::Engine::Tiu ? "TIU " + grp.tiuLayer[oc.index]
                                                        : "GDMA " + grp.gdmaLayer[oc.index]) +
                         " #" + std::to_string(oc.index));
    }
    r.tiu += tiu.size(), r.gdma += gdma.size();
  }
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const Tensor &t = g.tensors[g.outputs[i]];
    Bytes d(net.outputs[i].size);
    TPU_RETURN_IF_ERROR(gmem.read(net.outputs[i].deviceAddr, d.data(), d.size()));
    r.outputs.push_back(fromDevice(t, d));
  }
  return r;
}

inline std::vector<Bytes> randomInputs(const Graph &g, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Bytes> v;
  for (int t : g.inputs) v.push_back(randomBytes(g.tensors[t], rng));
  return v;
}

// Compiles, runs and compares every output with QuantRef: int8 bit-exact,
// fp32 within 1e-5 (relative to max(1, |ref|)), or bit-exact too when
// `fp32BitExact` (data movement). Returns the compile report.
inline CompileReport expectMatchesReference(const Graph &g, const Options &opt, uint32_t seed = 7,
                                            bool fp32BitExact = false) {
  CompileReport rep;
  auto inputs = randomInputs(g, seed);
  auto ref = evalGraph(g, inputs);
  EXPECT_TRUE(ref.isOk()) << ref.message();
  if (!ref) return rep;
  auto model = compileToBmodel(g, opt, &rep);
  EXPECT_TRUE(model.isOk()) << model.message();
  if (!model) return rep;
  auto run = runModel(g, *model, opt.hw, inputs);
  EXPECT_TRUE(run.isOk()) << run.message();
  if (!run) return rep;
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const Tensor &t = g.tensors[g.outputs[i]];
    const Bytes &want = (*ref)[g.outputs[i]], &got = run->outputs[i];
    EXPECT_EQ(want.size(), got.size()) << t.name;
    if (want.size() != got.size()) continue;
    if (t.dtype == DType::F32 && !fp32BitExact) {
      const float *a = reinterpret_cast<const float *>(want.data());
      const float *b = reinterpret_cast<const float *>(got.data());
      size_t bad = 0;
      for (size_t k = 0; k < want.size() / 4; ++k)
        if (!(std::fabs(a[k] - b[k]) <= 1e-5f * std::max(1.0f, std::fabs(a[k]))) && bad++ < 5)
          ADD_FAILURE() << t.name << "[" << k << "]: want " << a[k] << " got " << b[k];
    } else {
      size_t bad = 0;
      for (size_t k = 0; k < want.size(); ++k)
        if (want[k] != got[k] && bad++ < 5)
          ADD_FAILURE() << t.name << "[" << k << "]: want " << int(int8_t(want[k])) << " got "
                        << int(int8_t(got[k]));
    }
  }
  return rep;
}

// A small-LMEM configuration that forces slicing (N, C and H with halos).
inline isa::HwConfig smallLmem(uint32_t laneBytes = 4 * 1024) {
  isa::HwConfig hw;
  hw.lmemBytesPerLane = laneBytes;
  return hw;
}

} // namespace tpu::backend::test
