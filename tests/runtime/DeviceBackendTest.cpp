// The device backend against libsophon stand-ins that record their calls
// (tests/runtime/stub): the call sequence and the marshalled tensors of a
// launch, the data travelling both ways, and the clear error without
// libsophon.
#include "runtime/Runtime.h"

#include "TestNets.h"
#include "isa/bmodel/Bmodel.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <numeric>
#include <sstream>

using namespace tpu;
using namespace tpu::runtime;
using namespace tpu::runtime::testnets;

namespace {

std::string tempPath(const std::string &name) {
  return ::testing::TempDir() + "devbackend_" + std::to_string(::getpid()) + "_" + name;
}

std::vector<std::string> readLines(const std::string &path) {
  std::ifstream f(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(f, l);) lines.push_back(l);
  return lines;
}

// Points the backend at the stubs and starts a fresh call log.
std::string useStubs(const std::string &logName) {
  std::string log = tempPath(logName);
  std::remove(log.c_str());
  setenv("TPU_LIBSOPHON_DIR", STUB_LIBSOPHON_DIR, 1);
  setenv("TPU_STUB_LOG", log.c_str(), 1);
  return log;
}

} // namespace

TEST(DeviceBackend, WithoutLibsophonTheErrorIsClear) {
  setenv("TPU_LIBSOPHON_DIR", "/nonexistent", 1);
  auto rt = Runtime::create(isa::HwConfig(), BackendKind::Device);
  ASSERT_FALSE(rt);
  EXPECT_NE(rt.message().find("no BM1684 device or libsophon found: /nonexistent/libbmlib.so"),
            std::string::npos)
      << rt.message();
}

TEST(DeviceBackend, LaunchIssuesTheExpectedCalls) {
  const std::string log = useStubs("calls.log");
  ConvAddNet net(1);
  const std::string bmodelPath = tempPath("conv_add.bmodel");
  ASSERT_TRUE(bmodel::writeFile(net.model(), bmodelPath));
  const size_t fileSize = std::ifstream(bmodelPath, std::ios::binary | std::ios::ate).tellg();
  {
    auto rt = Runtime::create(isa::HwConfig(), BackendKind::Device);
    ASSERT_TRUE(rt) << rt.message();
    ASSERT_TRUE((*rt)->loadBmodel(bmodelPath));
    auto x = randomFloats(192, 1), y = randomFloats(256, 2);
    NpzMap in{{"x", NpyArray::from({1, 3, 8, 8}, x)}, {"y", NpyArray::from({1, 4, 8, 8}, y)}};
    for (int launch = 0; launch < 2; ++launch) {
      RunReport report;
      auto out = (*rt)->run("conv_add", in, RunOptions(), report);
      ASSERT_TRUE(out) << out.message();
      EXPECT_EQ(report.backend, BackendKind::Device);
      // The stub's output: the byte sum of both inputs, then bytes k & 0xff.
      auto xb = floatBytes(x), yb = floatBytes(y);
      uint32_t sum = std::accumulate(xb.begin(), xb.end(), 0u) + std::accumulate(yb.begin(), yb.end(), 0u);
      const auto &z = out->at("z").data;
      ASSERT_EQ(z.size(), 1024u);
      uint32_t got;
      std::memcpy(&got, z.data(), 4);
      EXPECT_EQ(got, sum);
      for (size_t k = 4; k < z.size(); ++k) ASSERT_EQ(z[k], uint8_t(k)) << k;
    }
  }
  std::vector<std::string> launch = {
      "bm_malloc_device_byte size=768",
      "bm_memcpy_s2d size=768",
      "bm_malloc_device_byte size=1024",
      "bm_memcpy_s2d size=1024",
      "bm_malloc_device_byte size=1024",
      "bmrt_launch_tensor_ex net=conv_add inputs=2 outputs=1 user_mem=1 user_stmode=1",
      "  in 0 f32 1x3x8x8 1N 768 bytes",
      "  in 1 f32 1x4x8x8 1N 1024 bytes",
      "  out 0 f32 1x4x8x8 1N 1024 bytes",
      "bm_thread_sync",
      "bm_memcpy_d2s size=1024",
      "bm_free_device size=768",
      "bm_free_device size=1024",
      "bm_free_device size=1024",
  };
  std::vector<std::string> expected = {
      "bm_dev_request devid=0", "bmrt_create",
      "bmrt_load_bmodel_data size=" + std::to_string(fileSize) + " magic=ff55aaee"};
  expected.insert(expected.end(), launch.begin(), launch.end()); // the bmodel is loaded once
  expected.insert(expected.end(), launch.begin(), launch.end());
  expected.push_back("bmrt_destroy");
  expected.push_back("bm_dev_free");
  EXPECT_EQ(readLines(log), expected);
}

TEST(DeviceBackend, FourNTensorsAreMarshalledInTheirStoreMode) {
  const std::string log = useStubs("int8.log");
  auto rt = Runtime::create(isa::HwConfig(), BackendKind::Device);
  ASSERT_TRUE(rt) << rt.message();
  auto bytes = bmodel::serialize(copyInt8Model(5, 3, 7, 0.5f));
  ASSERT_TRUE(bytes);
  ASSERT_TRUE((*rt)->loadBmodel(bytes->data(), bytes->size()));
  RunReport report;
  auto out = (*rt)->run("copy4n", {{"in", NpyArray::from({5, 3, 7}, randomFloats(105, 3))}},
                        RunOptions(), report);
  ASSERT_TRUE(out) << out.message();
  auto lines = readLines(log);
  auto has = [&](const std::string &l) { return std::find(lines.begin(), lines.end(), l) != lines.end(); };
  EXPECT_TRUE(has("  in 0 i8 5x3x7 4N 168 bytes"));
  EXPECT_TRUE(has("  out 0 i8 5x3x7 4N 168 bytes"));
  EXPECT_TRUE(has("bmrt_load_bmodel_data size=" + std::to_string(bytes->size()) + " magic=ff55aaee"));
}

// A bmodel tpuc's code generator wrote carries the toolkit's own operand conventions (docs/isa.md): the device
// backend refuses it before the chip sees it, and says where it can run.
TEST(DeviceBackend, RefusesBmodelsOfTheToolkitsOwnConventions) {
  const std::string log = useStubs("refused.log");
  auto rt = Runtime::create(isa::HwConfig(), BackendKind::Device);
  ASSERT_TRUE(rt) << rt.message();
  ConvAddNet net(1);
  bmodel::Model model = net.model();
  model.type = bmodel::kToolkitModelType;
  auto bytes = bmodel::serialize(model);
  ASSERT_TRUE(bytes);
  Status st = (*rt)->loadBmodel(bytes->data(), bytes->size(), "tpuc.bmodel");
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.message(), "tpuc.bmodel: built by tpuc, whose BM1684 commands follow this toolkit's own operand "
                          "conventions, not yet the chip's (docs/isa.md): a BM1684 would compute something else; "
                          "run it on the sim or func backend");
  for (const std::string &line : readLines(log)) EXPECT_EQ(line.find("bmrt_load_bmodel_data"), std::string::npos);
  // The other backends run it.
  auto sim = Runtime::create(isa::HwConfig(), BackendKind::Func);
  ASSERT_TRUE(sim) << sim.message();
  EXPECT_TRUE((*sim)->loadBmodel(bytes->data(), bytes->size(), "tpuc.bmodel").isOk());
}
