// Multi-stage nets on the runtime (docs/runtime.md, "Stages"): conv_add at
// widths 8 and 16 as two stages of one net, each run at its own shape on
// func and sim, the stage picked from the inputs' shapes (run, setInput +
// launch, the C API), one copy of the weights and of the neuron memory,
// and every refusal with its message.
#include "bmruntime_interface.h"

#include "TestNets.h"
#include "isa/bmodel/Bmodel.h"
#include "runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace tpu;
using namespace tpu::runtime;
using namespace tpu::runtime::testnets;

namespace {

ConvAddNet convAdd(uint32_t width, unsigned seed = 1) {
  ConvAddNet net(seed);
  net.w = width;
  return net;
}

// conv_add at widths 8 and 16: the same weights, one stage each.
bmodel::Model twoStages(unsigned secondSeed = 1) {
  bmodel::Model m = convAdd(8).model();
  m.nets.push_back(convAdd(16, secondSeed).model().nets[0]);
  return m;
}

std::unique_ptr<Runtime> makeRuntime(BackendKind kind = BackendKind::Func) {
  auto rt = Runtime::create(isa::HwConfig(), kind);
  EXPECT_TRUE(rt) << rt.message();
  return rt ? rt.take() : nullptr;
}

Status load(Runtime &rt, const bmodel::Model &m) {
  auto bytes = bmodel::serialize(m);
  if (!bytes) return bytes.status();
  return rt.loadBmodel(bytes->data(), bytes->size(), "stages.bmodel");
}

NpzMap inputsOf(const ConvAddNet &net, unsigned seed) {
  return {{"x", NpyArray::from({1, 3, 8, net.w}, randomFloats(3 * 8 * net.w, seed))},
          {"y", NpyArray::from({1, 4, 8, net.w}, randomFloats(4 * 8 * net.w, seed + 1))}};
}

void expectReference(const ConvAddNet &net, const NpzMap &in, const NpyArray &z) {
  EXPECT_EQ(z.shape, (std::vector<int64_t>{1, 4, 8, net.w}));
  auto expected = net.reference(in.at("x").values<float>(), in.at("y").values<float>());
  auto got = z.values<float>();
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], expected[i], 1e-5f * (1 + std::fabs(expected[i]))) << "element " << i;
}

const char *kStages = "(stages: [1,3,8,8], [1,4,8,8]; [1,3,8,16], [1,4,8,16])";

} // namespace

// Each stage gives its own result, the bytes of the single-stage bmodel of
// its width, on both backends.
TEST(MultiStage, EachStageRunsAtItsShapeOnFuncAndSim) {
  std::vector<BackendKind> kinds = {BackendKind::Func};
  if (backendAvailable(BackendKind::Sim)) kinds.push_back(BackendKind::Sim);
  for (BackendKind kind : kinds) {
    auto rt = makeRuntime(kind);
    ASSERT_TRUE(load(*rt, twoStages()));
    EXPECT_EQ(rt->netNames(), std::vector<std::string>{"conv_add"});
    auto stages = rt->stages("conv_add");
    ASSERT_TRUE(stages);
    ASSERT_EQ(stages->size(), 2u);
    EXPECT_EQ((*stages)[1]->inputs[0].shape, (std::vector<uint64_t>{1, 3, 8, 16}));
    for (uint32_t width : {16u, 8u}) {
      const ConvAddNet net = convAdd(width);
      const NpzMap in = inputsOf(net, width);
      RunReport report;
      auto out = rt->run("conv_add", in, RunOptions(), report);
      ASSERT_TRUE(out) << out.message();
      expectReference(net, in, out->at("z"));
      EXPECT_EQ(report.timed, kind == BackendKind::Sim);

      auto single = makeRuntime(kind);
      ASSERT_TRUE(load(*single, net.model()));
      RunReport singleReport;
      auto alone = single->run("conv_add", in, RunOptions(), singleReport);
      ASSERT_TRUE(alone) << alone.message();
      EXPECT_EQ(out->at("z").data, alone->at("z").data) << backendKindName(kind) << " width " << width;
      EXPECT_EQ(report.totalCycles, singleReport.totalCycles);
    }
  }
}

TEST(MultiStage, SetInputAndLaunchPickTheStageOfTheGivenShapes) {
  auto rt = makeRuntime();
  ASSERT_TRUE(load(*rt, twoStages()));
  auto noRun = rt->getOutput("conv_add", "z");
  ASSERT_FALSE(noRun);
  EXPECT_EQ(noRun.message(), "output 'z' of net 'conv_add': none of its 2 stages has run (the output's shape "
                             "depends on the stage)");
  RunReport report;
  Status st = rt->launch("conv_add", RunOptions(), report);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.message(), "input 'x' of net 'conv_add' is not set (a multi-stage net picks its stage from the shapes "
                          "of its inputs)");
  for (uint32_t width : {16u, 8u}) {
    const ConvAddNet net = convAdd(width);
    const NpzMap in = inputsOf(net, 40 + width);
    for (const auto &[name, value] : in) ASSERT_TRUE(rt->setInput("conv_add", name, value));
    ASSERT_TRUE(rt->launch("conv_add", RunOptions(), report));
    auto z = rt->getOutput("conv_add", "z");
    ASSERT_TRUE(z) << z.message();
    expectReference(net, in, *z);
  }
  // Inputs of two stages: no stage takes both.
  ASSERT_TRUE(rt->setInput("conv_add", "x", inputsOf(convAdd(16), 1).at("x")));
  st = rt->launch("conv_add", RunOptions(), report);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.message(), std::string("net 'conv_add' has no stage for input 'y' [1,4,8,8] ") + kStages);
}

TEST(MultiStage, ShapesOfNoStageAreOneLineNamingTheStages) {
  auto rt = makeRuntime();
  ASSERT_TRUE(load(*rt, twoStages()));
  RunReport report;
  auto out = rt->run("conv_add", inputsOf(convAdd(12), 3), RunOptions(), report);
  ASSERT_FALSE(out);
  EXPECT_EQ(out.message(), std::string("net 'conv_add' has no stage for input 'x' [1,3,8,12] ") + kStages);
  Status st = rt->setInput("conv_add", "y", NpyArray::from({1, 4, 8, 12}, randomFloats(4 * 96, 1)));
  ASSERT_FALSE(st);
  EXPECT_EQ(st.message(), std::string("net 'conv_add' has no stage for input 'y' [1,4,8,12] ") + kStages);
  // Names and dtypes are checked as for a single-stage net.
  st = rt->setInput("conv_add", "x", NpyArray::from({1, 3, 8, 8}, std::vector<double>(192)));
  ASSERT_FALSE(st);
  EXPECT_EQ(st.message(), "input 'x' of net 'conv_add': dtype float64 given, expected float32");
  out = rt->run("conv_add", {{"x", NpyArray::from({1, 3, 8, 8}, randomFloats(192, 1))}}, RunOptions(), report);
  ASSERT_FALSE(out);
  EXPECT_EQ(out.message(), "input 'y' of net 'conv_add' is missing");
  auto stage = rt->stageFor("conv_add", {{1, 3, 8, 16}, {1, 4, 8, 16}});
  ASSERT_TRUE(stage);
  EXPECT_EQ(*stage, 1u);
  EXPECT_FALSE(rt->launch("conv_add", 2, RunOptions(), report));
}

// One copy of the weights; the neuron memory is the union of the stages'.
TEST(MultiStage, StagesShareTheirWeightsAndNeuronMemory) {
  bmodel::Model m = twoStages();
  m.nets[1].ctxSize += 0x8000; // the wider stage needs more
  const bmodel::Net &wide = m.nets[1];
  auto device = std::make_shared<SimDevice>(isa::HwConfig());
  {
    auto rt = Runtime::create(device, BackendKind::Func);
    ASSERT_TRUE(rt);
    ASSERT_TRUE(load(**rt, m));
    EXPECT_EQ(device->usedBytes(), wide.coeff.size() + wide.ctxSize);
    std::vector<float> w(convAdd(8).weight.size());
    ASSERT_TRUE(device->gmem().read(wide.coeffAddr, w.data(), w.size() * 4));
    EXPECT_EQ(w, convAdd(8).weight);
  }
  EXPECT_EQ(device->usedBytes(), 0u);
}

TEST(MultiStage, StagesWithOtherWeightsAreRefused) {
  auto rt = makeRuntime();
  Status st = load(*rt, twoStages(/*secondSeed=*/2));
  ASSERT_FALSE(st);
  EXPECT_EQ(st.message(), "stages.bmodel: net 'conv_add': stage 1's coefficient bytes differ from stage 0's: the "
                          "stages of a net share one coefficient range");
  bmodel::Model moved = twoStages();
  moved.nets[1].coeffAddr += 0x100000;
  st = load(*rt, moved);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.message(), "stages.bmodel: net 'conv_add': stage 1's coefficients [0x100100000, +0x1b0) are not "
                          "stage 0's [0x100000000, +0x1b0): the stages of a net share one coefficient range");
  EXPECT_TRUE(rt->netNames().empty());
  EXPECT_EQ(rt->device().usedBytes(), 0u);
}

// As BMRuntime: bm_net_info_t lists every stage, a launch runs the stage of
// its input tensors' shapes.
TEST(MultiStage, CApiReportsEveryStageAndLaunchesTheOneOfItsInputs) {
  setenv("TPU_BACKEND", "func", 1);
  bm_handle_t handle = nullptr;
  ASSERT_EQ(bm_dev_request(&handle, 0), BM_SUCCESS);
  void *bmrt = bmrt_create(handle);
  ASSERT_NE(bmrt, nullptr);
  auto bytes = bmodel::serialize(twoStages());
  ASSERT_TRUE(bytes);
  ASSERT_TRUE(bmrt_load_bmodel_data(bmrt, bytes->data(), bytes->size()));
  EXPECT_EQ(bmrt_get_network_number(bmrt), 1);
  const bm_net_info_t *info = bmrt_get_network_info(bmrt, "conv_add");
  ASSERT_NE(info, nullptr);
  ASSERT_EQ(info->stage_num, 2);
  for (int s = 0; s < 2; ++s) {
    EXPECT_EQ(info->stages[s].input_shapes[0].num_dims, 4);
    EXPECT_EQ(info->stages[s].input_shapes[0].dims[3], 8 << s);
    EXPECT_EQ(info->stages[s].output_shapes[0].dims[3], 8 << s);
  }
  EXPECT_EQ(info->max_input_bytes[0], 3u * 8 * 16 * 4);
  EXPECT_EQ(info->max_output_bytes[0], 4u * 8 * 16 * 4);

  for (int width : {16, 8, 12}) {
    const ConvAddNet net = convAdd(uint32_t(width));
    const NpzMap in = inputsOf(net, 60 + unsigned(width));
    bm_tensor_t inputs[2], out{};
    for (int i = 0; i < 2; ++i) {
      const NpyArray &a = in.at(i == 0 ? "x" : "y");
      bm_shape_t shape{4, {1, int(a.shape[1]), 8, width}};
      ASSERT_TRUE(bmrt_tensor(&inputs[i], bmrt, BM_FLOAT32, shape));
      ASSERT_EQ(bm_memcpy_s2d(handle, inputs[i].device_mem, const_cast<uint8_t *>(a.data.data())), BM_SUCCESS);
    }
    if (width == 12) {
      ::testing::internal::CaptureStderr();
      EXPECT_FALSE(bmrt_launch_tensor(bmrt, "conv_add", inputs, 2, &out, 1));
      EXPECT_EQ(::testing::internal::GetCapturedStderr(),
                std::string("bmrt_launch_tensor: error: net 'conv_add' has no stage for input 'x' [1,3,8,12] ") +
                    kStages + "\n");
      EXPECT_EQ(bm_thread_sync(handle), BM_ERR_FAILURE);
    } else {
      ASSERT_TRUE(bmrt_launch_tensor(bmrt, "conv_add", inputs, 2, &out, 1));
      ASSERT_EQ(bm_thread_sync(handle), BM_SUCCESS);
      EXPECT_EQ(out.shape.dims[3], width);
      std::vector<float> z(bmrt_shape_count(&out.shape));
      ASSERT_EQ(bm_memcpy_d2s(handle, z.data(), out.device_mem), BM_SUCCESS);
      expectReference(net, in, NpyArray::from({1, 4, 8, width}, z));
      bm_free_device(handle, out.device_mem);
    }
    for (bm_tensor_t &t : inputs) bm_free_device(handle, t.device_mem);
  }
  bmrt_destroy(bmrt);
  bm_dev_free(handle);
}
