// A net that ends in a CPU sub-net (docs/bmodel.md, "Sub-nets"), loaded and
// launched through the C API the way an application does: the runtime runs
// the host op between launches' TPU work, and the int32 output the net info
// announces arrives as int32 in device memory.
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

// y[i] = argmax_j x[i, j]: one CPU sub-net, no command group.
std::vector<uint8_t> argMaxBmodel() {
  kernels::HostCall call;
  call.code = kernels::findHostOp("top.arg_max")->code;
  call.attrs.setInts("axis", {1});
  call.attrs.setInts("keepdims", {0});
  call.resultShapes = {{2}};
  bmodel::Net net;
  net.name = "argmax";
  net.inputs = {tensor("x", bmodel::DataType::Float32, {2, 5}, kDdr + 0x1000)};
  net.outputs = {tensor("y", bmodel::DataType::Int32, {2}, kDdr + 0x2000)};
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
