// Determinism of the multi-threaded Top interpreter (issue 8): every tensor of
// a small CNN, large enough for the kernels to split their work, is
// bit-identical with 1, 2 and 4 kernel threads.
#include "compiler/Interpreter/TopInterpreter.h"
#include "support/Parallel.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <random>

using namespace tpu;

namespace {

// conv 3x3 pad 1 (16 output channels) -> relu -> avg_pool 2x2 -> reshape -> matmul -> softmax
const char *kNet = R"mlir(
module {
  func.func @main(%arg0: tensor<2x8x32x32xf32>) -> tensor<2x10xf32> {
    %0 = "top.input"(%arg0) : (tensor<2x8x32x32xf32>) -> tensor<2x8x32x32xf32> loc("image")
    %w = top.weight "conv_w" : tensor<16x8x3x3xf32> loc("conv_w")
    %b = top.weight "conv_b" : tensor<16xf32> loc("conv_b")
    %1 = "top.conv"(%0, %w, %b) {kernel_shape = array<i64: 3,3>, strides = array<i64: 1,1>, pads = array<i64: 1,1,1,1>, dilations = array<i64: 1,1>} : (tensor<2x8x32x32xf32>, tensor<16x8x3x3xf32>, tensor<16xf32>) -> tensor<2x16x32x32xf32> loc("conv")
    %2 = "top.relu"(%1) : (tensor<2x16x32x32xf32>) -> tensor<2x16x32x32xf32> loc("relu")
    %3 = "top.avg_pool"(%2) {kernel_shape = array<i64: 2,2>, strides = array<i64: 2,2>, pads = array<i64: 0,0,0,0>, dilations = array<i64: 1,1>} : (tensor<2x16x32x32xf32>) -> tensor<2x16x16x16xf32> loc("pool")
    %4 = "top.reshape"(%3) {shape = array<i64: 2, 4096>} : (tensor<2x16x16x16xf32>) -> tensor<2x4096xf32> loc("flat")
    %fw = top.weight "fc_w" : tensor<4096x10xf32> loc("fc_w")
    %5 = "top.matmul"(%4, %fw) : (tensor<2x4096xf32>, tensor<4096x10xf32>) -> tensor<2x10xf32> loc("logits")
    %6 = "top.softmax"(%5) {axis = 1 : i64} : (tensor<2x10xf32>) -> tensor<2x10xf32> loc("prob")
    return %6 : tensor<2x10xf32>
  }
}
)mlir";

NpyArray randomArray(std::vector<int64_t> shape, unsigned seed) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(static_cast<size_t>(n));
  for (float &x : v) x = d(rng);
  return NpyArray::from(std::move(shape), v);
}

} // namespace

TEST(InterpreterThreads, EveryTensorIsIdenticalForAnyThreadCount) {
  mlir::MLIRContext context;
  top::registerTopDialects(context);
  auto module = mlir::parseSourceString<mlir::ModuleOp>(kNet, &context);
  ASSERT_TRUE(module);
  NpzMap weights{{"conv_w", randomArray({16, 8, 3, 3}, 1)},
                 {"conv_b", randomArray({16}, 2)},
                 {"fc_w", randomArray({4096, 10}, 3)}};
  NpzMap inputs{{"image", randomArray({2, 8, 32, 32}, 4)}};
  const int saved = numThreads();
  std::vector<NpzMap> results;
  for (int threads : {1, 2, 4}) {
    setNumThreads(threads);
    auto interp = top::TopInterpreter::create(*module, weights);
    ASSERT_TRUE(interp) << interp.message();
    auto out = (*interp)->run(inputs, /*dumpAll=*/true);
    ASSERT_TRUE(out) << out.message();
    results.push_back(out.take());
  }
  setNumThreads(saved);
  ASSERT_EQ(results[0].size(), 7u); // image, conv, relu, pool, flat, logits, prob
  for (size_t r = 1; r < results.size(); ++r) {
    ASSERT_EQ(results[r].size(), results[0].size());
    for (const auto &[name, array] : results[0]) {
      ASSERT_EQ(results[r].count(name), 1u) << name;
      EXPECT_EQ(results[r].at(name).shape, array.shape) << name;
      EXPECT_EQ(results[r].at(name).data, array.data) << name << " differs with " << (r == 1 ? 2 : 4)
                                                      << " threads";
    }
  }
}
