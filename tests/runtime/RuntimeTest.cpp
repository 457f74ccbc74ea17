// The runtime on the functional backend: loading, running a conv+add net
// against a naive reference, int8 4N IO through a device copy, and every
// bad-input error.
#include "runtime/Runtime.h"

#include "TestNets.h"
#include "isa/bmodel/Bmodel.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace tpu;
using namespace tpu::runtime;
using namespace tpu::runtime::testnets;

namespace {

std::unique_ptr<Runtime> makeRuntime(BackendKind kind = BackendKind::Func,
                                     isa::HwConfig cfg = isa::HwConfig()) {
  auto rt = Runtime::create(cfg, kind);
  EXPECT_TRUE(rt) << rt.message();
  return rt ? rt.take() : nullptr;
}

Status load(Runtime &rt, const bmodel::Model &m, const std::string &origin = "test.bmodel") {
  auto bytes = bmodel::serialize(m);
  if (!bytes) return bytes.status();
  return rt.loadBmodel(bytes->data(), bytes->size(), origin);
}

NpyArray floats(std::vector<int64_t> shape, const std::vector<float> &v) {
  return NpyArray::from(std::move(shape), v);
}

bool contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

} // namespace

TEST(Runtime, LoadsAndDescribesNets) {
  auto rt = makeRuntime();
  ConvAddNet net(1);
  ASSERT_TRUE(load(*rt, net.model()));
  EXPECT_EQ(rt->netNames(), std::vector<std::string>{"conv_add"});
  auto d = rt->net("conv_add");
  ASSERT_TRUE(d);
  ASSERT_EQ((*d)->inputs.size(), 2u);
  EXPECT_EQ((*d)->inputs[0].name, "x");
  EXPECT_EQ((*d)->outputs[0].shape, (std::vector<uint64_t>{1, 4, 8, 8}));
  // The coefficients sit at their address in device memory.
  std::vector<float> w(net.weight.size());
  ASSERT_TRUE(rt->device().gmem().read(net.coeffAddr, w.data(), w.size() * 4));
  EXPECT_EQ(w, net.weight);
}

TEST(Runtime, ConvAddMatchesNaiveReference) {
  auto rt = makeRuntime();
  ConvAddNet net(2);
  ASSERT_TRUE(load(*rt, net.model()));
  auto x = randomFloats(3 * 64, 3), y = randomFloats(4 * 64, 4);
  NpzMap in{{"x", floats({1, 3, 8, 8}, x)}, {"y", floats({1, 4, 8, 8}, y)}};
  RunReport report;
  auto out = rt->run("conv_add", in, RunOptions(), report);
  ASSERT_TRUE(out) << out.message();
  ASSERT_EQ(out->count("z"), 1u);
  const NpyArray &z = out->at("z");
  EXPECT_EQ(z.dtype, "float32");
  EXPECT_EQ(z.shape, (std::vector<int64_t>{1, 4, 8, 8}));
  auto expected = net.reference(x, y);
  auto got = z.values<float>();
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], expected[i], 1e-5f * (1 + std::fabs(expected[i]))) << "element " << i;
  EXPECT_EQ(report.backend, BackendKind::Func);
  EXPECT_EQ(report.groups, 1u);
  EXPECT_EQ(report.tiuCommands, 2u);
  EXPECT_EQ(report.gdmaCommands, 4u);
  EXPECT_FALSE(report.timed);
}

TEST(Runtime, RepeatedLaunchesGiveTheSameBytes) {
  auto rt = makeRuntime();
  ConvAddNet net(5);
  ASSERT_TRUE(load(*rt, net.model()));
  NpzMap in{{"x", floats({1, 3, 8, 8}, randomFloats(192, 6))},
            {"y", floats({1, 4, 8, 8}, randomFloats(256, 7))}};
  RunReport r;
  auto a = rt->run("conv_add", in, RunOptions(), r);
  auto b = rt->run("conv_add", in, RunOptions(), r);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->at("z").data, b->at("z").data);
}

// int8 4N in and out with an odd batch: the output is the input quantized
// with the tensor's scale (half a step at most), laid out 4N on the device.
TEST(Runtime, Int8FourNInputsAndOutputsRoundTrip) {
  for (uint64_t n : {1u, 3u, 5u}) {
    auto rt = makeRuntime();
    const float scale = 2.0f / 127;
    ASSERT_TRUE(load(*rt, copyInt8Model(n, 3, 7, scale)));
    auto x = randomFloats(n * 21, unsigned(10 + n), -2, 2);
    RunReport r;
    auto out = rt->run("copy4n", {{"in", floats({int64_t(n), 3, 7}, x)}}, RunOptions(), r);
    ASSERT_TRUE(out) << out.message();
    auto got = out->at("out").values<float>();
    ASSERT_EQ(got.size(), x.size());
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_LE(std::fabs(got[i] - x[i]), scale / 2 + 1e-6f) << "n=" << n << " i=" << i;
    // Device bytes: item b of position i is byte ((b/4)*21 + i)*4 + b%4.
    const auto &in = (*rt->net("copy4n"))->inputs[0];
    std::vector<int8_t> dev(in.storageBytes());
    ASSERT_TRUE(rt->device().gmem().read(in.deviceAddr, dev.data(), dev.size()));
    EXPECT_EQ(dev.size(), (n + 3) / 4 * 21 * 4);
    for (uint64_t b = 0; b < n; ++b)
      for (uint64_t i = 0; i < 21; ++i)
        ASSERT_EQ(dev[((b / 4) * 21 + i) * 4 + b % 4],
                  int8_t(std::nearbyint(x[b * 21 + i] / scale)))
            << "b=" << b << " i=" << i;
  }
}

TEST(Runtime, RawInt8InputIsLaidOutFourN) {
  auto rt = makeRuntime();
  ASSERT_TRUE(load(*rt, copyInt8Model(5, 1, 8, 0.5f)));
  std::vector<int8_t> q(40);
  for (size_t i = 0; i < q.size(); ++i) q[i] = int8_t(i * 5 - 100);
  RunReport r;
  auto out = rt->run("copy4n", {{"in", NpyArray::from({5, 1, 8}, q)}}, RunOptions(), r);
  ASSERT_TRUE(out) << out.message();
  auto got = out->at("out").values<float>();
  for (size_t i = 0; i < q.size(); ++i) EXPECT_EQ(got[i], q[i] * 0.5f);
  // Item 4 of position 3 is in the second group of four: byte (21*0+8+3)*4.
  int8_t b;
  const auto &in = (*rt->net("copy4n"))->inputs[0];
  ASSERT_TRUE(rt->device().gmem().read(in.deviceAddr + (8 + 3) * 4, &b, 1));
  EXPECT_EQ(b, q[4 * 8 + 3]);
  auto wrong = rt->run("copy4n", {{"in", NpyArray::from({5, 1, 8}, std::vector<uint8_t>(40))}},
                       RunOptions(), r);
  ASSERT_FALSE(wrong);
  EXPECT_TRUE(contains(wrong.message(), "dtype uint8 given, expected float32 or int8"))
      << wrong.message();
}

TEST(Runtime, RawInt8InputIsTakenAsIs) {
  auto rt = makeRuntime();
  // A 1N int8 copy: the same net with store mode 1N on both sides.
  bmodel::Model m = copyInt8Model(4, 1, 8, 0.5f);
  for (auto *list : {&m.nets[0].inputs, &m.nets[0].outputs})
    for (auto &t : *list) t.storeMode = bmodel::StoreMode::N1;
  ASSERT_TRUE(load(*rt, m));
  std::vector<int8_t> q(32);
  for (size_t i = 0; i < q.size(); ++i) q[i] = int8_t(i * 7 - 100);
  RunReport r;
  auto out = rt->run("copy4n", {{"in", NpyArray::from({4, 1, 8}, q)}}, RunOptions(), r);
  ASSERT_TRUE(out) << out.message();
  auto got = out->at("out").values<float>();
  for (size_t i = 0; i < q.size(); ++i) EXPECT_EQ(got[i], q[i] * 0.5f);
}

TEST(Runtime, BadInputsAreNamed) {
  auto rt = makeRuntime();
  ConvAddNet net(1);
  ASSERT_TRUE(load(*rt, net.model()));
  auto x = floats({1, 3, 8, 8}, randomFloats(192, 1));
  auto y = floats({1, 4, 8, 8}, randomFloats(256, 2));
  RunReport r;

  auto wrongName = rt->run("conv_add", {{"x", x}, {"why", y}}, RunOptions(), r);
  ASSERT_FALSE(wrongName);
  EXPECT_TRUE(contains(wrongName.message(), "no input 'why'")) << wrongName.message();
  EXPECT_TRUE(contains(wrongName.message(), "'x', 'y'")) << wrongName.message();

  auto missing = rt->run("conv_add", {{"x", x}}, RunOptions(), r);
  ASSERT_FALSE(missing);
  EXPECT_TRUE(contains(missing.message(), "input 'y' of net 'conv_add' is missing"))
      << missing.message();

  auto wrongShape = rt->run("conv_add", {{"x", x}, {"y", floats({1, 4, 8, 7}, randomFloats(224, 2))}},
                            RunOptions(), r);
  ASSERT_FALSE(wrongShape);
  EXPECT_TRUE(contains(wrongShape.message(), "shape 1x4x8x7 given, the net expects 1x4x8x8"))
      << wrongShape.message();

  NpyArray dbl = NpyArray::from({1, 4, 8, 8}, std::vector<double>(256, 0.0));
  auto wrongDtype = rt->run("conv_add", {{"x", x}, {"y", dbl}}, RunOptions(), r);
  ASSERT_FALSE(wrongDtype);
  EXPECT_TRUE(contains(wrongDtype.message(), "dtype float64 given, expected float32"))
      << wrongDtype.message();

  auto noNet = rt->run("resnet", {{"x", x}, {"y", y}}, RunOptions(), r);
  ASSERT_FALSE(noNet);
  EXPECT_TRUE(contains(noNet.message(), "no net named 'resnet' (loaded: 'conv_add')"))
      << noNet.message();
  EXPECT_FALSE(rt->getOutput("conv_add", "nope"));
}

TEST(Runtime, AnotherChipsBmodelIsRejected) {
  auto rt = makeRuntime();
  bmodel::Model m = ConvAddNet(1).model();
  m.chip = "BM1688";
  auto st = load(*rt, m, "other.bmodel");
  ASSERT_FALSE(st);
  EXPECT_TRUE(contains(st.message(), "other.bmodel")) << st.message();
  EXPECT_TRUE(contains(st.message(), "BM1688")) << st.message();
  EXPECT_TRUE(rt->netNames().empty());
  // A chip whose own runner runs it (ChipRunners.h) loads: a BM1684X bmodel TPU-MLIR made (tests/data/bm1684x),
  // described by its IO at staging buffers on this device; its commands stay with the runner
  // (tests/runtime/CApiBm1684xTest.cpp runs such nets).
  const std::string x = std::string(TPU_TEST_DATA_DIR) + "/bm1684x/yolov5s_bm1684x_int8_sym.bmodel";
  auto device = std::make_shared<SimDevice>(isa::HwConfig());
  auto shared = Runtime::create(device, BackendKind::Func);
  ASSERT_TRUE(shared);
  ASSERT_TRUE((*shared)->loadBmodel(x));
  EXPECT_EQ((*shared)->netNames(), std::vector<std::string>{"yolov5s"});
  auto yolo = (*shared)->net("yolov5s");
  ASSERT_TRUE(yolo);
  EXPECT_TRUE((*yolo)->groups.empty());
  EXPECT_EQ((*yolo)->outputs.size(), 3u);
  EXPECT_GT(device->usedBytes(), 0u);
  shared->reset(); // the staging buffers leave with the runtime
  EXPECT_EQ(device->usedBytes(), 0u);
}

TEST(Runtime, DuplicateNetNamesAreRejected) {
  auto rt = makeRuntime();
  ASSERT_TRUE(load(*rt, ConvAddNet(1).model(), "a.bmodel"));
  // Same net name again (its memory would also overlap the coefficients).
  auto st = load(*rt, ConvAddNet(1).model(), "b.bmodel");
  ASSERT_FALSE(st);
  EXPECT_TRUE(contains(st.message(), "already loaded from a.bmodel")) << st.message();
}

TEST(Runtime, OverlappingCoefficientsOfAnotherModelAreRejected) {
  auto rt = makeRuntime();
  ASSERT_TRUE(load(*rt, ConvAddNet(1).model("first"), "a.bmodel"));
  auto st = load(*rt, ConvAddNet(1).model("second"), "b.bmodel");
  ASSERT_FALSE(st);
  EXPECT_TRUE(contains(st.message(), "net 'second' coefficients")) << st.message();
  EXPECT_TRUE(contains(st.message(), "overlaps net 'first' coefficients")) << st.message();
  EXPECT_EQ(rt->netNames(), std::vector<std::string>{"first"});
  // Nothing of the failed load stays claimed: a model elsewhere still fits.
  EXPECT_GT(rt->device().usedBytes(), 0u);
}

TEST(Runtime, OutOfSimulatedDeviceMemory) {
  isa::HwConfig small;
  small.globalMemBytes = 0x20000; // 128 KiB of DDR: the net's context does not fit
  auto rt = makeRuntime(BackendKind::Func, small);
  auto st = load(*rt, ConvAddNet(1).model());
  ASSERT_FALSE(st);
  EXPECT_TRUE(contains(st.message(), "out of simulated device memory")) << st.message();
  EXPECT_TRUE(contains(st.message(), "net 'conv_add' neuron memory")) << st.message();
  EXPECT_EQ(rt->device().usedBytes(), 0u); // the coefficients were released again
}

TEST(Runtime, FaultingCommandIsNamed) {
  auto rt = makeRuntime();
  ConvAddNet net(1);
  bmodel::Model m = net.model();
  // Point the store beyond the end of DDR.
  auto store = *isa::decodeGdma(isa::GdmaRaw::decode(m.nets[0].groups[0].gdma[3].data()));
  store.dst.addr = kDdr + (4ull << 30) - 64;
  m.nets[0].groups[0].gdma[3] = *isa::encode(store).encode();
  ASSERT_TRUE(load(*rt, m));
  RunReport r;
  auto out = rt->run("conv_add",
                     {{"x", floats({1, 3, 8, 8}, randomFloats(192, 1))},
                      {"y", floats({1, 4, 8, 8}, randomFloats(256, 2))}},
                     RunOptions(), r);
  ASSERT_FALSE(out);
  EXPECT_TRUE(contains(out.message(), "net 'conv_add': group 0: GDMA command 3 (id 4)"))
      << out.message();
}

TEST(Runtime, SimBackendAvailabilityIsReported) {
  auto rt = Runtime::create(isa::HwConfig(), BackendKind::Sim);
  if (backendAvailable(BackendKind::Sim)) {
    EXPECT_TRUE(rt) << rt.message();
  } else {
    ASSERT_FALSE(rt);
    EXPECT_TRUE(contains(rt.message(), "backend 'sim' is not available")) << rt.message();
  }
  EXPECT_FALSE(parseBackendKind("gpu"));
  EXPECT_EQ(*parseBackendKind("device"), BackendKind::Device);
  EXPECT_EQ(*parseBackendKind("func"), BackendKind::Func);
}
