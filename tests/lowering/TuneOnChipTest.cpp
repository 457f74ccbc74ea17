// The per-tensor threshold search on the chip's arithmetic (tpuc calibrate
// --tune / --search-threshold with scoreCalibrationOnChip): its evaluator
// scores candidates incrementally and moves its base to each accepted
// threshold, so every score must equal a from-scratch INT8 evaluation of the
// same table (int8OutputCosine), bit for bit.
#include "compiler/Calibration/Calibrator.h"
#include "compiler/Dialect/Tpu/TpuOps.h"
#include "compiler/Flow/CalibrationOnChip.h"
#include "compiler/Flow/QuantizeTableSearch.h"
#include "compiler/Interpreter/TopInterpreter.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>

using namespace tpu;

namespace {

NpyArray normal(std::vector<int64_t> shape, float stddev, std::mt19937 &rng) {
  std::normal_distribution<float> d(0.0f, stddev);
  std::vector<float> v(size_t(NpyArray{"float32", shape, {}}.numel()));
  for (auto &x : v) x = d(rng);
  return NpyArray::from(std::move(shape), v.data(), v.size());
}

// in0 -> conv c1 -> relu r1 -> conv c2 -> add (c2 + in0 through a 1x1 conv) y
const char *kBody = R"(
%w1 = top.weight "w1" : tensor<6x3x3x3xf32>
%b1 = top.weight "b1" : tensor<6xf32>
%w2 = top.weight "w2" : tensor<4x6x3x3xf32>
%w3 = top.weight "w3" : tensor<4x3x1x1xf32>
%none = top.none
%c1 = "top.conv"(%in0, %w1, %b1) {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<6x3x3x3xf32>, tensor<6xf32>) -> tensor<1x6x8x8xf32> loc("c1")
%r1 = "top.relu"(%c1) : (tensor<1x6x8x8xf32>) -> tensor<1x6x8x8xf32> loc("r1")
%c2 = "top.conv"(%r1, %w2, %none) {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x6x8x8xf32>, tensor<4x6x3x3xf32>, none) -> tensor<1x4x8x8xf32> loc("c2")
%c3 = "top.conv"(%in0, %w3, %none) {kernel_shape = array<i64: 1, 1>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x1x1xf32>, none) -> tensor<1x4x8x8xf32> loc("c3")
%y = "top.add"(%c2, %c3) : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("y")
)";

TEST(TuneOnChip, EveryScoreEqualsAFreshEvaluationAcrossAcceptedThresholds) {
  std::mt19937 rng(7);
  const auto dir = std::filesystem::path(testing::TempDir()) / "tune_on_chip";
  std::filesystem::create_directories(dir);
  NpzMap w{{"w1", normal({6, 3, 3, 3}, 0.3f, rng)},
           {"b1", normal({6}, 0.2f, rng)},
           {"w2", normal({4, 6, 3, 3}, 0.2f, rng)},
           {"w3", normal({4, 3, 1, 1}, 0.5f, rng)}};
  ASSERT_TRUE(writeNpz((dir / "w.npz").string(), w));
  const std::string src = "module attributes {top.weight_file = \"" + (dir / "w.npz").string() +
                          "\"} {\nfunc.func @main(%a0: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> attributes "
                          "{top.output_names = [\"y\"]} {\n%in0 = top.input %a0 : (tensor<1x3x8x8xf32>) -> "
                          "tensor<1x3x8x8xf32> loc(\"in0\")\n" +
                          std::string(kBody) + "return %y : tensor<1x4x8x8xf32>\n}\n}\n";
  mlir::MLIRContext ctx;
  top::registerTopDialects(ctx);
  ctx.getOrLoadDialect<tpuir::TpuDialect>();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(src, &ctx);
  ASSERT_TRUE(module);
  auto weights = top::WeightStore::loadFor(*module);
  ASSERT_TRUE(weights) << weights.message();

  std::vector<NpzMap> samples;
  for (int i = 0; i < 3; ++i) samples.push_back({{"in0", normal({1, 3, 8, 8}, 1.0f, rng)}});
  calib::CalibrationOptions co;
  co.method = calib::Method::Max;
  auto table = calib::calibrate(*module, samples, co);
  ASSERT_TRUE(table) << table.message();
  flow::scoreCalibrationOnChip(co, *module, *weights, {}, nullptr);
  ASSERT_TRUE(co.scoreThresholds);

  // Tensors in program order; each round scores three candidates (the
  // current threshold among them), then accepts the lowest, so the next
  // round's evaluator has moved its base.
  for (const char *name : {"in0", "r1", "c2", "c3", "in0"}) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(table->tensors.count(name));
    const double t = table->tensors.at(name).threshold;
    const std::vector<double> candidates{0.4 * t, t, 1.3 * t};
    auto scores = co.scoreThresholds(*table, name, candidates, samples);
    ASSERT_TRUE(scores) << scores.message();
    ASSERT_EQ(scores->size(), candidates.size());
    for (size_t k = 0; k < candidates.size(); ++k) {
      calib::CalibrationTable alone = *table;
      alone.tensors.at(name).threshold = candidates[k];
      auto fresh = flow::int8OutputCosine(*module, *weights, alone, samples);
      ASSERT_TRUE(fresh) << fresh.message();
      EXPECT_EQ((*scores)[k], *fresh) << "candidate " << candidates[k];
    }
    EXPECT_NE((*scores)[0], (*scores)[1]); // the candidates do change the output
    table->tensors.at(name).threshold = candidates[0];
  }
}

} // namespace
