// Real BM1684 commands through the SystemC model: loads, element-wise
// compute and stores give the same bytes as the functional semantics run in
// program order; DMA overlaps compute; faults name the command.
#include "isa/ProgramOrder.h"
#include "simulator/semantics/GdmaExec.h"
#include "simulator/semantics/TiuExec.h"
#include "simulator/systemc/SimBuilder.h"
#include "simulator/systemc/Simulator.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <random>

using namespace tpu;
using namespace tpu::isa;
using namespace tpu::sysc;

namespace {

constexpr uint32_t kC = 64, kH = 16, kW = 16;
constexpr uint64_t kTensorBytes = uint64_t(kC) * kH * kW * 4;

GdmaCommand move(GdmaDirection dir, uint64_t src, uint64_t dst, uint16_t id, uint16_t waitTiu) {
  GdmaCommand g;
  g.direction = dir;
  g.strideEnable = false; // compact NCHW in DDR, aligned layout in LMEM
  g.src.addr = src;
  g.dst.addr = dst;
  g.src.shape = g.dst.shape = {1, kC, kH, kW};
  g.cmdId = id;
  g.eng0SyncId = waitTiu;
  return g;
}

LocalOperand local(uint32_t offset) {
  LocalOperand o;
  o.addr = offset;
  o.shape = {1, kC, kH, kW};
  o.prec = Prec::Fp32;
  return o;
}

TiuCommand arith(EuOp eu, uint32_t res, uint32_t a, uint32_t b, uint16_t id, uint16_t waitGdma) {
  Arith ar;
  ar.eu = eu;
  ar.res0 = local(res);
  ar.opd0 = local(a);
  ar.opd1 = local(b);
  TiuCommand t;
  t.cmdIdTpu = id;
  t.cmdIdGdma = waitGdma;
  t.op = ar;
  return t;
}

struct Net {
  std::vector<TiuCommand> tiu;
  std::vector<GdmaCommand> gdma;
  std::vector<std::string> tiuLayer, gdmaLayer;
};

// load A, load B; add = A + B; mul = add * A; store add; store mul.
Net addMulNet(uint64_t ddr) {
  Net n;
  n.gdma.push_back(move(GdmaDirection::S2L, ddr, 0x0000, 1, 0));
  n.gdma.push_back(move(GdmaDirection::S2L, ddr + kTensorBytes, 0x4000, 2, 0));
  n.tiu.push_back(arith(EuOp::Add, 0x8000, 0x0000, 0x4000, 1, 2));
  n.tiu.push_back(arith(EuOp::Mul, 0xC000, 0x8000, 0x0000, 2, 2));
  n.gdma.push_back(move(GdmaDirection::L2S, 0x8000, ddr + 2 * kTensorBytes, 3, 1));
  n.gdma.push_back(move(GdmaDirection::L2S, 0xC000, ddr + 3 * kTensorBytes, 4, 2));
  n.tiuLayer = {"add1", "mul1"};
  n.gdmaLayer = {"add1", "add1", "add1", "mul1"};
  return n;
}

bmodel::CmdGroup toBmodel(const Net &n) {
  bmodel::CmdGroup g;
  for (const TiuCommand &t : n.tiu) g.tiu.push_back(*encodeBytes(t));
  for (const GdmaCommand &d : n.gdma) g.gdma.push_back(*encode(d).encode());
  g.tiuLayer = n.tiuLayer;
  g.gdmaLayer = n.gdmaLayer;
  return g;
}

struct SimCommands : ::testing::Test {
  HwConfig hw;
  sim::LocalMemory lmem{hw};
  sim::GlobalMemory gmem{hw};
  std::vector<float> a, b;

  void SetUp() override {
    std::mt19937 rng(1684);
    std::uniform_real_distribution<float> u(-4, 4);
    for (uint64_t i = 0; i < kC * kH * kW; ++i) a.push_back(u(rng)), b.push_back(u(rng));
    writeInputs(gmem);
  }
  void writeInputs(sim::GlobalMemory &m) {
    ASSERT_TRUE(m.write(m.base(), a.data(), kTensorBytes));
    ASSERT_TRUE(m.write(m.base() + kTensorBytes, b.data(), kTensorBytes));
  }
  std::vector<float> readTensor(const sim::GlobalMemory &m, unsigned index) {
    std::vector<float> out(kC * kH * kW);
    EXPECT_TRUE(m.read(m.base() + index * kTensorBytes, out.data(), kTensorBytes));
    return out;
  }
};

const TraceEvent *find(const SimReport &r, Engine e, uint16_t id) {
  for (const TraceEvent &t : r.events)
    if (t.engine == e && t.id == id) return &t;
  return nullptr;
}

} // namespace

TEST_F(SimCommands, SameBytesAsTheFunctionalSemantics) {
  Net net = addMulNet(gmem.base());
  auto program = buildProgram(hw, {toBmodel(net)});
  ASSERT_TRUE(program) << program.message();
  auto report = simulate(hw, lmem, gmem, *program);
  ASSERT_TRUE(report) << report.message();

  // Reference: the semantics alone, in the merged program order.
  sim::LocalMemory refL(hw);
  sim::GlobalMemory refG(hw);
  writeInputs(refG);
  bmodel::CmdGroup g = toBmodel(net);
  auto order = programOrder(g.tiu, g.gdma);
  ASSERT_TRUE(order) << order.message();
  for (const OrderedCommand &oc : *order) {
    Status st = oc.engine == isa::Engine::Tiu ? sim::executeTiu(hw, refL, net.tiu[oc.index])
                                              : sim::executeGdma(hw, refL, refG, net.gdma[oc.index]);
    ASSERT_TRUE(st) << st.message();
  }
  for (unsigned t = 2; t < 4; ++t) {
    std::vector<float> got = readTensor(gmem, t), want = readTensor(refG, t);
    EXPECT_EQ(std::memcmp(got.data(), want.data(), kTensorBytes), 0) << "tensor " << t;
  }
  std::vector<float> sum = readTensor(gmem, 2), prod = readTensor(gmem, 3);
  for (size_t i = 0; i < a.size(); i += 97) {
    EXPECT_EQ(sum[i], a[i] + b[i]);
    EXPECT_EQ(prod[i], (a[i] + b[i]) * a[i]);
  }
}

TEST_F(SimCommands, StoreOverlapsTheNextComputeAndDependenciesHold) {
  auto program = buildProgram(hw, {toBmodel(addMulNet(gmem.base()))});
  ASSERT_TRUE(program) << program.message();
  auto r = simulate(hw, lmem, gmem, *program);
  ASSERT_TRUE(r) << r.message();
  const TraceEvent *add = find(*r, Engine::Tiu, 1), *mul = find(*r, Engine::Tiu, 2);
  const TraceEvent *loadB = find(*r, Engine::Gdma, 2), *storeAdd = find(*r, Engine::Gdma, 3);
  ASSERT_TRUE(add && mul && loadB && storeAdd);
  EXPECT_GE(add->startCycle, loadB->endCycle);
  EXPECT_GE(storeAdd->startCycle, add->endCycle);
  // The store of add runs while the TIU computes mul.
  EXPECT_LT(storeAdd->startCycle, mul->endCycle);
  EXPECT_LT(mul->startCycle, storeAdd->endCycle);
  // Costs come from the timing model (add names its first dependency: the sync cost too).
  EXPECT_DOUBLE_EQ(add->endCycle - add->startCycle,
                   hw.syncCycles + double(hw.tiuStartupCycles + kC / hw.npuLanes * kH * kW / (hw.euBytes / 4)));
  EXPECT_EQ(r->payloadBytes, 4 * kTensorBytes);
  EXPECT_GE(r->ddrBytes, r->payloadBytes);
  // Per-layer statistics carry the bmodel's names.
  ASSERT_EQ(r->layers.size(), 2u);
  EXPECT_EQ(r->layers[0].name, "add1");
  EXPECT_EQ(r->layers[0].commands[1], 3u);
  EXPECT_EQ(r->layers[1].name, "mul1");
  auto trace = nlohmann::json::parse(r->chromeTraceJson());
  bool named = false;
  for (const auto &e : trace["traceEvents"])
    if (e["ph"] == "X" && e["name"] == "ar.mul mul1") named = true;
  EXPECT_TRUE(named);
}

TEST_F(SimCommands, DoublingDdrBandwidthNeverSlowsTheNet) {
  Net net = addMulNet(gmem.base());
  double previous = 0;
  for (double gbs : {8.0, 16.0, 32.0, 64.0}) {
    HwConfig cfg = hw;
    cfg.ddrBandwidthGBs = gbs;
    auto program = buildProgram(cfg, {toBmodel(net)});
    ASSERT_TRUE(program) << program.message();
    auto r = simulate(cfg, lmem, gmem, *program);
    ASSERT_TRUE(r) << r.message();
    if (previous > 0) EXPECT_LE(r->totalCycles, previous) << gbs;
    previous = r->totalCycles;
  }
}

TEST_F(SimCommands, OutOfRangeTiuAccessNamesTheCommand) {
  Net net = addMulNet(gmem.base());
  net.tiu[1] = arith(EuOp::Mul, 512 * 1024 - 64, 0x8000, 0x0000, 2, 2); // res0 runs past its lane
  auto program = buildProgram(hw, {toBmodel(net)});
  ASSERT_TRUE(program) << program.message();
  auto r = simulate(hw, lmem, gmem, *program);
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("group 0: TIU command #1 (ar.mul, id 2): "), std::string::npos) << r.message();
  // The store waiting for that command never ran.
  std::vector<float> out = readTensor(gmem, 3);
  EXPECT_EQ(out[0], 0.0f);
}

TEST_F(SimCommands, OutOfRangeGdmaAccessNamesTheCommand) {
  Net net = addMulNet(gmem.base());
  net.gdma[3].dst.addr = gmem.base() + hw.globalMemBytes - 16; // store runs past DDR
  auto program = buildProgram(hw, {toBmodel(net)});
  ASSERT_TRUE(program) << program.message();
  auto r = simulate(hw, lmem, gmem, *program);
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("group 0: GDMA command #3 (gdma.l2s."), std::string::npos) << r.message();
  EXPECT_NE(r.message().find("dst"), std::string::npos) << r.message();
}

TEST_F(SimCommands, DeadlockInRealCommandsNamesBoth) {
  Net net = addMulNet(gmem.base());
  net.gdma[1].eng0SyncId = 1; // load B waits for add, which waits for load B
  auto program = buildProgram(hw, {toBmodel(net)});
  ASSERT_TRUE(program) << program.message();
  auto r = simulate(hw, lmem, gmem, *program);
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("TIU command #0 (ar.add, id 1) waits for GDMA id 2"), std::string::npos)
      << r.message();
  EXPECT_NE(r.message().find("GDMA command #1 (gdma.s2l."), std::string::npos) << r.message();
}

TEST_F(SimCommands, UndecodableCommandIsAnError) {
  bmodel::CmdGroup g = toBmodel(addMulNet(gmem.base()));
  g.tiu[1][0] = 0xff; // garbage in the first byte: task/eu or precision fields
  TiuRaw raw = TiuRaw::decode(g.tiu[1].data());
  raw.set(TiuField::tsk_typ, 15);
  g.tiu[1] = *raw.encode();
  auto program = buildProgram(hw, {g});
  ASSERT_FALSE(program);
  EXPECT_NE(program.message().find("command group 0: TIU command #1: "), std::string::npos) << program.message();
}

TEST_F(SimCommands, LoadConvolveAddStoreMatchesTheFunctionalRun) {
  // x (1,64,16,16) and w (ic 64, oc 64, 3, 3) loaded; y = conv(x, w, pad 1);
  // z = y + x; z stored after the add.
  uint64_t ddr = gmem.base();
  uint64_t wBytes = 64ull * 64 * 9 * 4;
  std::vector<float> w(64 * 64 * 9);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-0.1f, 0.1f);
  for (float &v : w) v = u(rng);
  uint64_t wAddr = ddr + 4 * kTensorBytes;
  ASSERT_TRUE(gmem.write(wAddr, w.data(), wBytes));

  Net net;
  net.gdma.push_back(move(GdmaDirection::S2L, ddr, 0x0000, 1, 0));
  GdmaCommand loadW = move(GdmaDirection::S2L, wAddr, 0x10000, 2, 0);
  loadW.src.shape = loadW.dst.shape = {64, 64, 3, 3};
  net.gdma.push_back(loadW);
  Conv conv;
  conv.eu = EuOp::Mac;
  conv.input = local(0x0000);
  conv.weight = local(0x10000);
  conv.weight.shape = {64, 64, 3, 3};
  conv.output = local(0x8000);
  conv.padTop = conv.padBottom = conv.padLeft = conv.padRight = 1;
  TiuCommand tconv;
  tconv.cmdIdTpu = 1;
  tconv.cmdIdGdma = 2;
  tconv.op = conv;
  net.tiu.push_back(tconv);
  net.tiu.push_back(arith(EuOp::Add, 0xC000, 0x8000, 0x0000, 2, 2));
  net.gdma.push_back(move(GdmaDirection::L2S, 0xC000, ddr + 2 * kTensorBytes, 3, 2));
  net.tiuLayer = {"conv1", "add1"};
  net.gdmaLayer = {"conv1", "conv1", "add1"};
  bmodel::CmdGroup g = toBmodel(net);

  auto program = buildProgram(hw, {g});
  ASSERT_TRUE(program) << program.message();
  auto r = simulate(hw, lmem, gmem, *program);
  ASSERT_TRUE(r) << r.message();

  sim::LocalMemory refL(hw);
  sim::GlobalMemory refG(hw);
  writeInputs(refG);
  ASSERT_TRUE(refG.write(wAddr, w.data(), wBytes));
  auto order = programOrder(g.tiu, g.gdma);
  ASSERT_TRUE(order) << order.message();
  for (const OrderedCommand &oc : *order) {
    Status st = oc.engine == isa::Engine::Tiu ? sim::executeTiu(hw, refL, net.tiu[oc.index])
                                              : sim::executeGdma(hw, refL, refG, net.gdma[oc.index]);
    ASSERT_TRUE(st) << st.message();
  }
  std::vector<float> got = readTensor(gmem, 2), want = readTensor(refG, 2);
  EXPECT_EQ(std::memcmp(got.data(), want.data(), kTensorBytes), 0);
  // Not trivially zero: z = conv + x differs from x.
  EXPECT_NE(got[100], a[100]);

  // The conv's cost is the timing model's: 1 lane round x 8 pixel passes x 9 taps x 64 ic, after the
  // sync cost of its first dependency.
  const TraceEvent *c = find(*r, Engine::Tiu, 1);
  ASSERT_TRUE(c);
  EXPECT_DOUBLE_EQ(c->endCycle - c->startCycle,
                   hw.syncCycles + double(hw.tiuStartupCycles) + 1.0 * (kH * kW / 32) * 9 * 64);
  // The TIU waits for the weights (its dependency) before the conv starts.
  EXPECT_GT(r->tiu().waitingCycles, 0.0);
  EXPECT_EQ(r->layers.size(), 2u);
}

// LMEM use per command group: one past the highest in-lane byte any local
// operand of the group spans (fp32 64 x 16 x 16 aligned: 1024 bytes per lane).
TEST_F(SimCommands, StatsReportTheLocalMemoryPeakPerGroup) {
  Net loadsOnly;
  loadsOnly.gdma.push_back(move(GdmaDirection::S2L, gmem.base(), 0x0000, 1, 0));
  auto program = buildProgram(hw, {toBmodel(addMulNet(gmem.base())), toBmodel(loadsOnly)});
  ASSERT_TRUE(program) << program.message();
  auto r = simulate(hw, lmem, gmem, *program);
  ASSERT_TRUE(r) << r.message();
  ASSERT_EQ(r->groups.size(), 2u);
  EXPECT_EQ(r->groups[0].lmemPeakBytes, 0xC000u + 1024); // the mul result at 0xC000
  EXPECT_EQ(r->groups[1].lmemPeakBytes, 1024u);
  EXPECT_EQ(r->lmemPeakBytes, 0xC000u + 1024);
  auto j = nlohmann::json::parse(r->statsJson());
  EXPECT_EQ(j["lmem_peak_bytes"], 0xC000 + 1024);
  EXPECT_EQ(j["groups"][0]["lmem_peak_bytes"], 0xC000 + 1024);
  EXPECT_EQ(j["groups"][1]["lmem_peak_bytes"], 1024);
}
