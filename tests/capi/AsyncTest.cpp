// bmrt_launch_tensor is asynchronous, as BMRuntime documents it: it checks
// its arguments, places the inputs and sets up the outputs, queues the run and
// returns; bm_thread_sync waits for every queued run and reports a failure.
#include "CApiSession.h"

#include <algorithm>

using namespace capitest;

namespace {

size_t countLines(const std::string &s) { return size_t(std::count(s.begin(), s.end(), '\n')); }

// conv_add with the conv writing past the end of a 512 KiB LMEM lane: the
// image loads, the run fails in the simulator.
std::vector<uint8_t> failingConvAddBmodel() {
  const std::string path = std::string(TPU_TEST_DATA_DIR) + "/asm/conv_add.s";
  std::string text;
  for (uint8_t c : readAll(path)) text += char(c);
  const std::string from = "res0_addr=0x40000 opd1_addr=0x10000", to = "res0_addr=0x7ffc0 opd1_addr=0x10000";
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos);
  if (at == std::string::npos) return {};
  text.replace(at, from.size(), to);
  auto model = tpu::isa::assemble(text, path, std::string(TPU_TEST_DATA_DIR) + "/asm");
  EXPECT_TRUE(model) << model.message();
  if (!model) return {};
  auto bytes = tpu::bmodel::serialize(*model);
  return bytes ? bytes.take() : std::vector<uint8_t>{};
}

} // namespace

TEST(CApiAsync, QueuedLaunchesRunInOrderAndOneSyncWaitsForAll) {
  for (const char *backend : {"func", "sim"}) {
    Session s(backend);
    const auto bmodel = convAddBmodel();
    ASSERT_TRUE(bmrt_load_bmodel_data(s.bmrt, bmodel.data(), bmodel.size()));
    constexpr int kLaunches = 4;
    std::vector<std::vector<float>> want(kLaunches);
    std::vector<std::vector<float>> xs, ys;
    for (int i = 0; i < kLaunches; ++i) {
      xs.push_back(randomFloats(kXFloats, unsigned(10 + i)));
      ys.push_back(randomFloats(kYFloats, unsigned(20 + i)));
      ASSERT_TRUE(runConvAdd(s, xs[i], ys[i], want[i])) << backend;
    }
    // All launches first, each with its own buffers, then one sync.
    bm_tensor_t in[kLaunches][2]{}, out[kLaunches]{};
    for (int i = 0; i < kLaunches; ++i) {
      ASSERT_TRUE(bmrt_tensor(&in[i][0], s.bmrt, BM_FLOAT32, shape({1, 8, 10, 10})));
      ASSERT_TRUE(bmrt_tensor(&in[i][1], s.bmrt, BM_FLOAT32, shape({1, 16, 8, 8})));
      ASSERT_EQ(bm_memcpy_s2d(s.handle, in[i][0].device_mem, xs[i].data()), BM_SUCCESS);
      ASSERT_EQ(bm_memcpy_s2d(s.handle, in[i][1].device_mem, ys[i].data()), BM_SUCCESS);
      ASSERT_TRUE(bmrt_launch_tensor(s.bmrt, "conv_add", in[i], 2, &out[i], 1)) << backend;
      // The output is described when the launch returns, before the run ends.
      EXPECT_EQ(out[i].device_mem.size, kZFloats * 4);
      EXPECT_EQ(bmrt_shape_count(&out[i].shape), kZFloats);
      EXPECT_EQ(out[i].dtype, BM_FLOAT32);
    }
    ASSERT_EQ(bm_thread_sync(s.handle), BM_SUCCESS) << backend;
    for (int i = 0; i < kLaunches; ++i) {
      std::vector<float> z(kZFloats);
      ASSERT_EQ(bm_memcpy_d2s(s.handle, z.data(), out[i].device_mem), BM_SUCCESS);
      EXPECT_EQ(std::memcmp(z.data(), want[i].data(), kZFloats * 4), 0) << backend << " launch " << i;
      bm_free_device(s.handle, out[i].device_mem);
      for (auto &t : in[i]) bm_free_device(s.handle, t.device_mem);
    }
    EXPECT_EQ(bm_thread_sync(s.handle), BM_SUCCESS); // nothing queued: still fine
  }
}

// A run that fails on the (simulated) chip: the launch was accepted, the
// failure is one logged line and bm_thread_sync's status, reported once.
TEST(CApiAsync, RunFailureIsReportedBySync) {
  Session s("func");
  const auto bad = failingConvAddBmodel();
  ASSERT_FALSE(bad.empty());
  ASSERT_TRUE(bmrt_load_bmodel_data(s.bmrt, bad.data(), bad.size()));
  bm_tensor_t in[2]{}, out{};
  ASSERT_TRUE(bmrt_tensor(&in[0], s.bmrt, BM_FLOAT32, shape({1, 8, 10, 10})));
  ASSERT_TRUE(bmrt_tensor(&in[1], s.bmrt, BM_FLOAT32, shape({1, 16, 8, 8})));
  ::testing::internal::CaptureStderr();
  EXPECT_TRUE(bmrt_launch_tensor(s.bmrt, "conv_add", in, 2, &out, 1));
  EXPECT_EQ(bm_thread_sync(s.handle), BM_ERR_FAILURE);
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(countLines(log), 1u) << log;
  EXPECT_EQ(log.rfind("bmrt_launch_tensor: error: ", 0), 0u) << log;
  EXPECT_EQ(bm_thread_sync(s.handle), BM_SUCCESS); // reported once
  bm_free_device(s.handle, out.device_mem);
  for (auto &t : in) bm_free_device(s.handle, t.device_mem);
}

// Destroying the runtime and the device with launches still queued waits
// for them; nothing is used after it is freed (the sanitizer build checks).
TEST(CApiAsync, TeardownWithQueuedLaunchesWaits) {
  auto s = std::make_unique<Session>("func");
  const auto bmodel = convAddBmodel();
  ASSERT_TRUE(bmrt_load_bmodel_data(s->bmrt, bmodel.data(), bmodel.size()));
  bm_tensor_t in[2]{}, out[3]{};
  ASSERT_TRUE(bmrt_tensor(&in[0], s->bmrt, BM_FLOAT32, shape({1, 8, 10, 10})));
  ASSERT_TRUE(bmrt_tensor(&in[1], s->bmrt, BM_FLOAT32, shape({1, 16, 8, 8})));
  for (auto &o : out) ASSERT_TRUE(bmrt_launch_tensor(s->bmrt, "conv_add", in, 2, &o, 1));
  s.reset();
}
