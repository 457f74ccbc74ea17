// A BM1684X bmodel through the BMRuntime C API: loaded by bmrt_load_bmodel(_data) from its chip field,
// described by bmrt_get_network_info (fp32 IO), launched on func and sim with the outputs of the chip's
// runner (runtime/ChipRunners.h) byte for byte, beside a BM1684 bmodel in the same bmrt, and every bad call
// one logged line and a false return: the device backend, input count, size, shape, net name, chip.
#include "bmruntime_interface.h"

#include "TestNets.h"
#include "compiler/Backend/BM1684X/CodeGen.h"
#include "compiler/Backend/Ops/Window.h"
#include "isa/bmodel/Bmodel.h"
#include "runtime/ChipRunners.h"
#include "runtime/Runtime.h"
#include "tests/backend/BackendHarness.h"
#include "tests/capi/CApiSession.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>

using namespace tpu;
using namespace tpu::runtime;

namespace {

std::string tempPath(const std::string &name) {
  return ::testing::TempDir() + "capi_x_" + std::to_string(::getpid()) + "_" + name;
}

bm_shape_t shape(std::initializer_list<int> dims) {
  bm_shape_t s{};
  for (int d : dims) s.dims[s.num_dims++] = d;
  return s;
}

// conv 3x3 + relu, 2x2 max pool, + y: two inputs, both engines, more than one slice.
backend::Graph smallNet() {
  backend::test::GraphBuilder b;
  using backend::DType;
  int x = b.act("x", {1, 16, 16, 16}, DType::F32);
  int w = b.weight("w", {16, 16, 3, 3}, DType::F32), bias = b.weight("bias", {16}, DType::F32);
  int c = b.act("conv", {1, 16, 16, 16}, DType::F32);
  backend::Op &conv = b.op(backend::OpKind::Conv, "conv", {x, w, bias}, c);
  backend::WindowParams p;
  p.kh = p.kw = 3;
  p.padTop = p.padBottom = p.padLeft = p.padRight = 1;
  conv.params<backend::WindowParams>() = p;
  conv.relu = true;
  int pooled = b.act("pool", {1, 16, 8, 8}, DType::F32);
  backend::WindowParams q;
  q.kh = q.kw = q.strideH = q.strideW = 2;
  q.isMax = true;
  b.op(backend::OpKind::Pool, "pool", {c}, pooled).params<backend::WindowParams>() = q;
  int y = b.act("y", {1, 16, 8, 8}, DType::F32);
  int z = b.act("z", {1, 16, 8, 8}, DType::F32);
  b.op(backend::OpKind::Add, "z", {pooled, y}, z);
  b.g.inputs = {x, y};
  b.g.outputs = {z};
  return b.g;
}

struct Bm1684xNet {
  bmodel::Model model;
  std::vector<uint8_t> bytes;
  std::string path;
  std::string name;
  NpzMap inputs;
};

const Bm1684xNet &net() {
  static const Bm1684xNet n = [] {
    Bm1684xNet n;
    auto m = backend::bm1684x::compileToBmodel(smallNet());
    EXPECT_TRUE(m) << m.message();
    n.model = m.take();
    auto bytes = bmodel::serialize(n.model);
    EXPECT_TRUE(bytes) << bytes.message();
    n.bytes = bytes.take();
    n.path = tempPath("net.bmodel");
    std::ofstream(n.path, std::ios::binary)
        .write(reinterpret_cast<const char *>(n.bytes.data()), std::streamsize(n.bytes.size()));
    n.name = n.model.nets.at(0).name;
    n.inputs["x"] = NpyArray::from({1, 16, 16, 16}, testnets::randomFloats(16 * 16 * 16, 11));
    n.inputs["y"] = NpyArray::from({1, 16, 8, 8}, testnets::randomFloats(16 * 8 * 8, 12));
    return n;
  }();
  return n;
}

// What `tpuc run|sim` computes: the chip's runner on the chip's preset.
NpyArray expected(BackendKind backend) {
  const Bm1684xNet &n = net();
  auto hw = chipConfig(n.model, "", "");
  EXPECT_TRUE(hw) << hw.message();
  RunReport report;
  auto out = runOutsideRuntime(n.model, "", n.inputs, backend, *hw, false, report);
  EXPECT_TRUE(out) << out.message();
  return out->at("z");
}

std::vector<std::string> backends() {
  std::vector<std::string> b = {"func"};
  if (backendAvailable(BackendKind::Sim)) b.push_back("sim");
  return b;
}

// A bm_handle_t and bmrt on the backend named (the C API tests' session), with the tensors of these tests.
struct Device : capitest::Session {
  using Session::Session;
  // A device tensor holding `a` (float32, 1N).
  bm_tensor_t tensor(const NpyArray &a) {
    bm_shape_t s{};
    for (int64_t d : a.shape) s.dims[s.num_dims++] = int(d);
    bm_tensor_t t{};
    EXPECT_TRUE(bmrt_tensor(&t, bmrt, BM_FLOAT32, s));
    EXPECT_EQ(bm_memcpy_s2d(handle, t.device_mem, const_cast<uint8_t *>(a.data.data())), BM_SUCCESS);
    return t;
  }
  std::vector<uint8_t> read(const bm_tensor_t &t) {
    std::vector<uint8_t> out(bmrt_tensor_bytesize(&t));
    EXPECT_EQ(bm_memcpy_d2s_partial(handle, out.data(), t.device_mem, unsigned(out.size())), BM_SUCCESS);
    return out;
  }
};

} // namespace

// bmrt_load_bmodel on the file, the network info, and bmrt_launch_tensor(_ex): the runner's bytes on func
// and on sim.
TEST(CApiBm1684x, LaunchEqualsTheChipRunnerOnFuncAndSim) {
  const Bm1684xNet &n = net();
  for (const std::string &b : backends()) {
    SCOPED_TRACE(b);
    const NpyArray want = expected(*parseBackendKind(b));
    Device dev(b.c_str());
    ASSERT_TRUE(bmrt_load_bmodel(dev.bmrt, n.path.c_str()));
    ASSERT_EQ(bmrt_get_network_number(dev.bmrt), 1);
    const char **names = nullptr;
    bmrt_get_network_names(dev.bmrt, &names);
    ASSERT_NE(names, nullptr);
    EXPECT_EQ(std::string(names[0]), n.name);
    std::free(names);
    const bm_net_info_t *info = bmrt_get_network_info(dev.bmrt, n.name.c_str());
    ASSERT_NE(info, nullptr);
    ASSERT_EQ(info->input_num, 2);
    ASSERT_EQ(info->output_num, 1);
    EXPECT_EQ(std::string(info->input_names[0]), "x");
    EXPECT_EQ(std::string(info->input_names[1]), "y");
    EXPECT_EQ(std::string(info->output_names[0]), "z");
    EXPECT_EQ(info->input_dtypes[0], BM_FLOAT32);
    EXPECT_EQ(info->output_dtypes[0], BM_FLOAT32);
    ASSERT_EQ(info->stage_num, 1);
    EXPECT_EQ(bmrt_shape_count(&info->stages[0].input_shapes[0]), 16u * 16 * 16);
    EXPECT_EQ(info->stages[0].output_shapes[0].num_dims, 4);
    EXPECT_EQ(info->stages[0].output_shapes[0].dims[2], 8);
    EXPECT_EQ(info->max_output_bytes[0], 16u * 8 * 8 * 4);

    bm_tensor_t in[2] = {dev.tensor(n.inputs.at("x")), dev.tensor(n.inputs.at("y"))};
    bm_tensor_t out{};
    ASSERT_TRUE(bmrt_launch_tensor(dev.bmrt, n.name.c_str(), in, 2, &out, 1));
    ASSERT_EQ(bm_thread_sync(dev.handle), BM_SUCCESS);
    EXPECT_EQ(out.dtype, BM_FLOAT32);
    EXPECT_EQ(out.st_mode, BM_STORE_1N);
    EXPECT_EQ(dev.read(out), want.data);
    bm_free_device(dev.handle, out.device_mem);

    // Caller-owned output memory.
    bm_tensor_t own{};
    ASSERT_TRUE(bmrt_tensor(&own, dev.bmrt, BM_FLOAT32, shape({1, 16, 8, 8})));
    ASSERT_TRUE(bmrt_launch_tensor_ex(dev.bmrt, n.name.c_str(), in, 2, &own, 1, true, false));
    ASSERT_EQ(bm_thread_sync(dev.handle), BM_SUCCESS);
    EXPECT_EQ(dev.read(own), want.data);
    for (const bm_tensor_t &t : {in[0], in[1], own}) bm_free_device(dev.handle, t.device_mem);
  }
}

// The bytes (bmrt_load_bmodel_data) and a BM1684 bmodel in the same bmrt, loaded before and after it: each
// net runs as it does alone.
TEST(CApiBm1684x, BesideABm1684BmodelInOneBmrt) {
  const Bm1684xNet &n = net();
  const NpyArray want = expected(BackendKind::Func);
  testnets::ConvAddNet convAdd(1);
  auto bm1684 = bmodel::serialize(convAdd.model());
  ASSERT_TRUE(bm1684);
  for (bool bm1684First : {true, false}) {
    SCOPED_TRACE(bm1684First ? "BM1684 first" : "BM1684X first");
    Device dev("func");
    if (bm1684First) ASSERT_TRUE(bmrt_load_bmodel_data(dev.bmrt, bm1684->data(), bm1684->size()));
    ASSERT_TRUE(bmrt_load_bmodel_data(dev.bmrt, n.bytes.data(), n.bytes.size()));
    if (!bm1684First) ASSERT_TRUE(bmrt_load_bmodel_data(dev.bmrt, bm1684->data(), bm1684->size()));
    EXPECT_EQ(bmrt_get_network_number(dev.bmrt), 2);

    bm_tensor_t in[2] = {dev.tensor(n.inputs.at("x")), dev.tensor(n.inputs.at("y"))};
    bm_tensor_t x{}, y{}, z{}, out{};
    ASSERT_TRUE(bmrt_tensor(&x, dev.bmrt, BM_FLOAT32, shape({1, 3, 8, 8})));
    ASSERT_TRUE(bmrt_tensor(&y, dev.bmrt, BM_FLOAT32, shape({1, 4, 8, 8})));
    bm_tensor_t convIn[2] = {x, y};
    ASSERT_TRUE(bmrt_launch_tensor(dev.bmrt, "conv_add", convIn, 2, &z, 1));
    ASSERT_TRUE(bmrt_launch_tensor(dev.bmrt, n.name.c_str(), in, 2, &out, 1));
    ASSERT_EQ(bm_thread_sync(dev.handle), BM_SUCCESS);
    EXPECT_EQ(dev.read(out), want.data);
    EXPECT_EQ(z.device_mem.size, 4u * 256);
  }
}

// The C++ Runtime under the C API runs the net too, with its chip's preset and the overrides over it
// (TPU_HW_CONFIG's route): slower DDR, more cycles, the same bytes.
TEST(CApiBm1684x, RuntimeRunsItWithTheChipsConfig) {
  if (!backendAvailable(BackendKind::Sim)) GTEST_SKIP() << "no SystemC model in this build";
  const Bm1684xNet &n = net();
  double cycles[2] = {0, 0};
  for (int slow = 0; slow < 2; ++slow) {
    auto rt = Runtime::create(isa::HwConfig(), BackendKind::Sim);
    ASSERT_TRUE(rt);
    if (slow) (*rt)->setChipConfigOverrides("{\"ddrBandwidthGBs\": 1}", "slow.json");
    ASSERT_TRUE((*rt)->loadBmodel(n.path));
    RunReport report;
    auto out = (*rt)->run(n.name, n.inputs, RunOptions(), report);
    ASSERT_TRUE(out) << out.message();
    EXPECT_EQ(out->at("z").data, expected(BackendKind::Sim).data);
    EXPECT_TRUE(report.timed);
    EXPECT_EQ(report.clockMhz, 1000.0);
    EXPECT_EQ(report.groups, n.model.nets[0].groups.size());
    cycles[slow] = report.totalCycles;
  }
  EXPECT_GT(cycles[1], cycles[0]);
  auto rt = Runtime::create(isa::HwConfig(), BackendKind::Func);
  ASSERT_TRUE(rt);
  (*rt)->setChipConfigOverrides("{\"lanes\": 1}", "bad.json");
  Status st = (*rt)->loadBmodel(n.path);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.message(), n.path + ": bad.json: unknown hardware parameter 'lanes'");
  EXPECT_TRUE((*rt)->netNames().empty());
}

// Every refusal: one line naming the call, false, and the handle still works.
TEST(CApiBm1684x, BadCallsFailWithOneLoggedLine) {
  const Bm1684xNet &n = net();
  {
    // The device backend (here libsophon's stand-ins) has no BM1684X yet.
    setenv("TPU_LIBSOPHON_DIR", STUB_LIBSOPHON_DIR, 1);
    Device dev("device");
    ::testing::internal::CaptureStderr();
    EXPECT_FALSE(bmrt_load_bmodel_data(dev.bmrt, n.bytes.data(), n.bytes.size()));
    EXPECT_FALSE(bmrt_load_bmodel(dev.bmrt, n.path.c_str()));
    EXPECT_EQ(::testing::internal::GetCapturedStderr(),
              "bmrt_load_bmodel_data: error: <bmodel data>: a BM1684X bmodel runs on the func or sim backend (no "
              "device yet)\nbmrt_load_bmodel: error: " +
                  n.path + ": a BM1684X bmodel runs on the func or sim backend (no device yet)\n");
    EXPECT_EQ(bmrt_get_network_number(dev.bmrt), 0);
    unsetenv("TPU_LIBSOPHON_DIR");
  }
  Device dev("func");
  ASSERT_TRUE(bmrt_load_bmodel_data(dev.bmrt, n.bytes.data(), n.bytes.size()));
  bm_tensor_t x = dev.tensor(n.inputs.at("x")), y = dev.tensor(n.inputs.at("y")), out{};
  bm_tensor_t inputs[2] = {x, y};
  const std::string where = "bmrt_launch_tensor: error: net '" + n.name + "'";

  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(bmrt_launch_tensor(dev.bmrt, "nope", inputs, 2, &out, 1));
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "bmrt_launch_tensor: error: no net named 'nope' (loaded: '" + n.name + "')\n");
  EXPECT_EQ(bm_thread_sync(dev.handle), BM_ERR_FAILURE);

  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(bmrt_launch_tensor(dev.bmrt, n.name.c_str(), inputs, 1, &out, 1));
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), where + ": 1 input tensors given, it has 2\n");

  bm_tensor_t swapped[2] = {y, x};
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(bmrt_launch_tensor(dev.bmrt, n.name.c_str(), swapped, 2, &out, 1));
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            where + ": input 0 'x': shape 1x16x8x8 given, the net expects 1x16x16x16\n");

  bm_tensor_t small[2] = {x, y};
  small[1].device_mem.size = 100;
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(bmrt_launch_tensor(dev.bmrt, n.name.c_str(), small, 2, &out, 1));
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            where + ": input 1 'y': device memory of 100 bytes holds less than the 4096 the tensor needs\n");

  bm_tensor_t int8[2] = {x, y};
  int8[0].dtype = BM_INT8;
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(bmrt_launch_tensor(dev.bmrt, n.name.c_str(), int8, 2, &out, 1));
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            where + ": input 0 'x': dtype int8 given, the net expects float32\n");
  EXPECT_EQ(bm_thread_sync(dev.handle), BM_ERR_FAILURE);

  // A chip the toolkit does not know stays an error naming it; a second copy of the net a duplicate.
  bmodel::Model other = n.model;
  other.chip = "BM1688";
  auto otherBytes = bmodel::serialize(other);
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(otherBytes && bmrt_load_bmodel_data(dev.bmrt, otherBytes->data(), otherBytes->size()));
  EXPECT_FALSE(bmrt_load_bmodel_data(dev.bmrt, n.bytes.data(), n.bytes.size()));
  std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("bmodel is for chip 'BM1688'"), std::string::npos) << log;
  EXPECT_NE(log.find("bmrt_load_bmodel_data: error: <bmodel data>: net '" + n.name +
                     "': a net of this name is already loaded from <bmodel data>"),
            std::string::npos)
      << log;
  EXPECT_EQ(bmrt_get_network_number(dev.bmrt), 1);

  // After all that the net runs.
  ASSERT_TRUE(bmrt_launch_tensor(dev.bmrt, n.name.c_str(), inputs, 2, &out, 1));
  ASSERT_EQ(bm_thread_sync(dev.handle), BM_SUCCESS);
  EXPECT_EQ(dev.read(out), expected(BackendKind::Func).data);
}
