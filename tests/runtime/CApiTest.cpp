// The BMRuntime / bmlib C API: the example application on func and sim gives
// the bytes of the C++ runtime, 1N user tensors are converted to a 4N net,
// and every bad call fails with its C status and one logged line.
#include "bmruntime_interface.h"

#include "TestNets.h"
#include "isa/Assembler.h"
#include "isa/bmodel/Bmodel.h"
#include "runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>

using namespace tpu;
using namespace tpu::runtime;
using namespace tpu::runtime::testnets;

namespace {

std::string tempPath(const std::string &name) {
  return ::testing::TempDir() + "capi_" + std::to_string(::getpid()) + "_" + name;
}

std::vector<uint8_t> readAll(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

void writeAll(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
}

struct Device {
  bm_handle_t handle = nullptr;
  void *bmrt = nullptr;
  explicit Device(const char *backend = "func") {
    setenv("TPU_BACKEND", backend, 1);
    EXPECT_EQ(bm_dev_request(&handle, 0), BM_SUCCESS);
    bmrt = bmrt_create(handle);
    EXPECT_NE(bmrt, nullptr);
  }
  ~Device() {
    bmrt_destroy(bmrt);
    bm_dev_free(handle);
  }
  bool load(const bmodel::Model &m) {
    auto bytes = bmodel::serialize(m);
    return bytes && bmrt_load_bmodel_data(bmrt, bytes->data(), bytes->size());
  }
};

bm_shape_t shape(std::initializer_list<int> dims) {
  bm_shape_t s{};
  for (int d : dims) s.dims[s.num_dims++] = d;
  return s;
}

} // namespace

// The example application (runtime/examples/bmrt_example.c) runs the sample
// program on func and on sim: both equal the C++ runtime's output bytes.
TEST(CApi, ExampleApplicationMatchesRuntimeOnBothBackends) {
  auto model = isa::assembleFile(std::string(TPU_TEST_DATA_DIR) + "/asm/conv_add.s");
  ASSERT_TRUE(model) << model.message();
  const std::string bmodelPath = tempPath("conv_add.bmodel");
  ASSERT_TRUE(bmodel::writeFile(*model, bmodelPath));
  auto x = randomFloats(8 * 100, 41), y = randomFloats(16 * 64, 42);
  std::vector<uint8_t> in = floatBytes(x), yb = floatBytes(y);
  in.insert(in.end(), yb.begin(), yb.end());
  writeAll(tempPath("in.bin"), in);

  auto rt = Runtime::create(isa::HwConfig(), BackendKind::Func);
  ASSERT_TRUE(rt);
  ASSERT_TRUE((*rt)->loadBmodel(bmodelPath));
  RunReport report;
  auto expected = (*rt)->run("conv_add",
                             {{"x", NpyArray::from({1, 8, 10, 10}, x)}, {"y", NpyArray::from({1, 16, 8, 8}, y)}},
                             RunOptions(), report);
  ASSERT_TRUE(expected) << expected.message();

  std::vector<std::string> backends = {"func"};
  if (backendAvailable(BackendKind::Sim)) backends.push_back("sim");
  for (const std::string &b : backends) {
    const std::string out = tempPath("out_" + b + ".bin");
    std::string cmd = "TPU_BACKEND=" + b + " " BMRT_EXAMPLE " " + bmodelPath + " " +
                      tempPath("in.bin") + " " + out + " > /dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    EXPECT_EQ(readAll(out), expected->at("z").data) << b;
  }
  // A short input file: exit status 2.
  writeAll(tempPath("short.bin"), std::vector<uint8_t>(10));
  std::string cmd = "TPU_BACKEND=func " BMRT_EXAMPLE " " + bmodelPath + " " + tempPath("short.bin") +
                    " " + tempPath("never.bin") + " > /dev/null 2>&1";
  EXPECT_EQ(WEXITSTATUS(std::system(cmd.c_str())), 2);
}

// The same application with TPU_BACKEND=device reaches libsophon (here the
// recording stand-ins) through the device backend.
TEST(CApi, ExampleApplicationOnTheDeviceBackend) {
  const std::string bmodelPath = tempPath("dev.bmodel");
  ASSERT_TRUE(bmodel::writeFile(ConvAddNet(3).model(), bmodelPath));
  writeAll(tempPath("dev_in.bin"), std::vector<uint8_t>((192 + 256) * 4, 1));
  const std::string log = tempPath("dev_calls.log");
  std::remove(log.c_str());
  std::string cmd = "TPU_BACKEND=device TPU_LIBSOPHON_DIR=" STUB_LIBSOPHON_DIR " TPU_STUB_LOG=" + log +
                    " " BMRT_EXAMPLE " " + bmodelPath + " " + tempPath("dev_in.bin") + " " +
                    tempPath("dev_out.bin") + " > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream f(log);
  std::string calls((std::istreambuf_iterator<char>(f)), {});
  EXPECT_NE(calls.find("bmrt_launch_tensor_ex net=conv_add inputs=2 outputs=1"), std::string::npos)
      << calls;
  // The stub writes the input byte sum first: 448 floats of bytes 01 01 01 01.
  auto out = readAll(tempPath("dev_out.bin"));
  ASSERT_EQ(out.size(), 1024u);
  uint32_t sum;
  std::memcpy(&sum, out.data(), 4);
  EXPECT_EQ(sum, 448u * 4);
}

// A 1N int8 user tensor into a 4N net and back out as 1N.
TEST(CApi, OneNUserTensorsAreConvertedToTheNetsFourN) {
  Device dev;
  ASSERT_TRUE(dev.load(copyInt8Model(5, 3, 7, 0.25f)));
  const bm_net_info_t *info = bmrt_get_network_info(dev.bmrt, "copy4n");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->input_dtypes[0], BM_INT8);
  EXPECT_FLOAT_EQ(info->input_scales[0], 0.25f);
  EXPECT_EQ(info->max_input_bytes[0], 2u * 21 * 4); // 4N: ceil(5/4) words per position

  bm_tensor_t in{};
  ASSERT_TRUE(bmrt_tensor(&in, dev.bmrt, BM_INT8, shape({5, 3, 7})));
  EXPECT_EQ(bmrt_tensor_bytesize(&in), 105u);
  std::vector<int8_t> q(105);
  for (size_t i = 0; i < q.size(); ++i) q[i] = int8_t(int(i) - 50);
  ASSERT_EQ(bm_memcpy_s2d(dev.handle, in.device_mem, q.data()), BM_SUCCESS);
  bm_tensor_t out{};
  ASSERT_TRUE(bmrt_launch_tensor(dev.bmrt, "copy4n", &in, 1, &out, 1));
  EXPECT_EQ(bm_thread_sync(dev.handle), BM_SUCCESS);
  EXPECT_EQ(out.st_mode, BM_STORE_1N);
  EXPECT_EQ(out.dtype, BM_INT8);
  EXPECT_EQ(bmrt_shape_count(&out.shape), 105u);
  std::vector<int8_t> back(105);
  ASSERT_EQ(bm_memcpy_d2s(dev.handle, back.data(), out.device_mem), BM_SUCCESS);
  EXPECT_EQ(back, q);
  bm_free_device(dev.handle, out.device_mem);
  bm_free_device(dev.handle, in.device_mem);
}

TEST(CApi, BadCallsFailWithTheirStatusAndOneLoggedLine) {
  Device dev;
  ASSERT_TRUE(dev.load(ConvAddNet(1).model()));
  bm_tensor_t x{}, y{}, out{};
  ASSERT_TRUE(bmrt_tensor(&x, dev.bmrt, BM_FLOAT32, shape({1, 3, 8, 8})));
  ASSERT_TRUE(bmrt_tensor(&y, dev.bmrt, BM_FLOAT32, shape({1, 4, 8, 8})));
  bm_tensor_t inputs[2] = {x, y};

  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(bmrt_launch_tensor(dev.bmrt, "nope", inputs, 2, &out, 1));
  std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(log, "bmrt_launch_tensor: error: no net named 'nope' (loaded: 'conv_add')\n");
  EXPECT_EQ(bm_thread_sync(dev.handle), BM_ERR_FAILURE);
  EXPECT_EQ(bm_thread_sync(dev.handle), BM_SUCCESS);

  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(bmrt_launch_tensor(dev.bmrt, "conv_add", inputs, 1, &out, 1));
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("1 input tensors given, it has 2"),
            std::string::npos);

  bm_tensor_t wrongShape[2] = {y, y};
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(bmrt_launch_tensor(dev.bmrt, "conv_add", wrongShape, 2, &out, 1));
  EXPECT_NE(::testing::internal::GetCapturedStderr().find(
                "input 0 'x': shape 1x4x8x8 given, the net expects 1x3x8x8"),
            std::string::npos);

  bm_tensor_t wrongType[2] = {x, y};
  wrongType[0].dtype = BM_INT8;
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(bmrt_launch_tensor(dev.bmrt, "conv_add", wrongType, 2, &out, 1));
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("dtype int8 given, the net expects float32"),
            std::string::npos);

  ::testing::internal::CaptureStderr();
  EXPECT_EQ(bmrt_get_network_info(dev.bmrt, "nope"), nullptr);
  bm_device_mem_t huge;
  EXPECT_EQ(bm_malloc_device_byte(dev.handle, &huge, 0xFFFFFFFFu), BM_ERR_NOMEM);
  bmodel::Model other = ConvAddNet(1).model("other");
  other.chip = "BM1688";
  EXPECT_FALSE(dev.load(other));
  std::string errors = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(errors.find("bm_malloc_device_byte: error: out of simulated device memory"), std::string::npos);
  EXPECT_NE(errors.find("bmrt_load_bmodel_data: error: <bmodel data>: bmodel is for chip 'BM1688'"),
            std::string::npos)
      << errors;
  EXPECT_EQ(bmrt_get_network_number(dev.bmrt), 1);

  // After all that the net still runs.
  ASSERT_TRUE(bmrt_launch_tensor(dev.bmrt, "conv_add", inputs, 2, &out, 1));
  EXPECT_EQ(out.device_mem.size, 4u * 256);
}

TEST(CApi, DeviceRequestErrors) {
  bm_handle_t h = nullptr;
  ::testing::internal::CaptureStderr();
  setenv("TPU_BACKEND", "func", 1);
  EXPECT_EQ(bm_dev_request(&h, 1), BM_ERR_PARAM);
  setenv("TPU_BACKEND", "device", 1);
  EXPECT_EQ(bm_dev_request(&h, 0), BM_ERR_DEVNOTREADY);
  setenv("TPU_BACKEND", "gpu", 1);
  EXPECT_EQ(bm_dev_request(&h, 0), BM_ERR_DEVNOTREADY);
  setenv("TPU_BACKEND", "func", 1);
  setenv("TPU_HW_CONFIG", "/nonexistent/hw.json", 1);
  EXPECT_EQ(bm_dev_request(&h, 0), BM_ERR_PARAM);
  unsetenv("TPU_HW_CONFIG");
  std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("no device 1"), std::string::npos) << log;
  EXPECT_NE(log.find("no BM1684 device or libsophon found"), std::string::npos) << log;
  EXPECT_NE(log.find("unknown backend 'gpu'"), std::string::npos) << log;
  EXPECT_NE(log.find("/nonexistent/hw.json"), std::string::npos) << log;
  EXPECT_EQ(h, nullptr);
}
