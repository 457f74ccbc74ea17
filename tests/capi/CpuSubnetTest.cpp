// A net that ends in a CPU sub-net (docs/bmodel.md, "Sub-nets"), loaded and
// launched through the C API the way an application does: the runtime runs
// the host op between launches' TPU work, the int32 output the net info
// announces arrives as int32 in device memory, and an output whose shape
// comes from the data has it in its tensor when the launch returns.
#include "CApiSession.h"

#include "kernels/HostOps.h"

using namespace capitest;
using namespace tpu;

namespace {

constexpr uint64_t kDdr = 0x100000000ull;

bmodel::Tensor tensor(const std::string &name, bmodel::DataType dtype, std::vector<uint64_t> shape, uint64_t addr) {
  bmodel::Tensor t;
  t.name = name, t.dtype = dtype, t.shape = std::move(shape), t.deviceAddr = addr;
  t.size = t.storageBytes();
  return t;
}

// A net of one CPU sub-net and no command group: `call` from x [2, 5] to an
// int32 y of `yShape`.
std::vector<uint8_t> hostBmodel(const std::string &name, const kernels::HostCall &call, std::vector<uint64_t> yShape) {
  bmodel::Net net;
  net.name = name;
  net.inputs = {tensor("x", bmodel::DataType::Float32, {2, 5}, kDdr + 0x1000)};
  net.outputs = {tensor("y", bmodel::DataType::Int32, std::move(yShape), kDdr + 0x2000)};
  net.ctxAddr = kDdr, net.ctxSize = 0x10000;
  bmodel::Subnet cpu;
  cpu.mode = bmodel::Subnet::Mode::Cpu;
  cpu.cpuOpType = call.code, cpu.cpuParam = call.serialize();
  cpu.inputs = net.inputs, cpu.outputs = net.outputs;
  net.subnets = {cpu};
  bmodel::Model m;
  m.nets = {net};
  auto bytes = bmodel::serialize(m);
  EXPECT_TRUE(bytes) << bytes.message();
  return bytes ? bytes.take() : std::vector<uint8_t>{};
}

// y[i] = argmax_j x[i, j].
std::vector<uint8_t> argMaxBmodel() {
  kernels::HostCall call;
  call.code = kernels::findHostOp("top.arg_max")->code;
  call.attrs.setInts("axis", {1});
  call.attrs.setInts("keepdims", {0});
  call.resultShapes = {{2}};
  return hostBmodel("argmax", call, {2});
}

} // namespace

TEST(CApiCpuSubnet, LaunchRunsTheHostOp) {
  const std::vector<uint8_t> image = argMaxBmodel();
  for (const char *backend : {"func", "sim"}) {
    SCOPED_TRACE(backend);
    Session s(backend);
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE(bmrt_load_bmodel_data(s.bmrt, image.data(), image.size()));
    const bm_net_info_t *info = bmrt_get_network_info(s.bmrt, "argmax");
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->output_dtypes[0], BM_INT32);
    std::vector<float> x = {0.1f, 0.9f, -1, 0.3f, 0.2f, 5, 4, 3, 7, -2};
    bm_tensor_t in{}, out{};
    ASSERT_TRUE(bmrt_tensor(&in, s.bmrt, BM_FLOAT32, shape({2, 5})));
    ASSERT_EQ(bm_memcpy_s2d(s.handle, in.device_mem, x.data()), BM_SUCCESS);
    ASSERT_TRUE(bmrt_launch_tensor(s.bmrt, "argmax", &in, 1, &out, 1));
    ASSERT_EQ(bm_thread_sync(s.handle), BM_SUCCESS);
    ASSERT_EQ(bmrt_tensor_bytesize(&out), 8u);
    int32_t y[2] = {-1, -1};
    ASSERT_EQ(bm_memcpy_d2s(s.handle, y, out.device_mem), BM_SUCCESS);
    EXPECT_EQ(y[0], 1);
    EXPECT_EQ(y[1], 3);
    bm_free_device(s.handle, out.device_mem);
    bm_free_device(s.handle, in.device_mem);
  }
}

// NonZero's column count comes from the data: the output tensor room for all
// 10 elements, the launch gives it the real shape, values first.
TEST(CApiCpuSubnet, OutputShapeFromTheData) {
  kernels::HostCall call;
  call.code = kernels::findHostOp("top.nonzero")->code;
  call.resultShapes = {{2, 10}};
  const std::vector<uint8_t> image = hostBmodel("nonzero", call, {2, 10});
  for (const char *backend : {"func", "sim"}) {
    SCOPED_TRACE(backend);
    Session s(backend);
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE(bmrt_load_bmodel_data(s.bmrt, image.data(), image.size()));
    std::vector<float> x = {0, 2, 0, 0, 0, /* row 1 */ 0, 0, 0, -1, 3};
    bm_tensor_t in{}, out{};
    ASSERT_TRUE(bmrt_tensor(&in, s.bmrt, BM_FLOAT32, shape({2, 5})));
    ASSERT_EQ(bm_memcpy_s2d(s.handle, in.device_mem, x.data()), BM_SUCCESS);
    ASSERT_TRUE(bmrt_launch_tensor(s.bmrt, "nonzero", &in, 1, &out, 1));
    ASSERT_EQ(bm_thread_sync(s.handle), BM_SUCCESS);
    ASSERT_EQ(out.shape.num_dims, 2);
    EXPECT_EQ(out.shape.dims[0], 2);
    EXPECT_EQ(out.shape.dims[1], 3);
    std::vector<int32_t> y(20, -1);
    ASSERT_EQ(bm_memcpy_d2s(s.handle, y.data(), out.device_mem), BM_SUCCESS);
    EXPECT_EQ(std::vector<int32_t>(y.begin(), y.begin() + 6), (std::vector<int32_t>{0, 1, 1, 1, 3, 4}));
    bm_free_device(s.handle, out.device_mem);
    bm_free_device(s.handle, in.device_mem);
  }
}
