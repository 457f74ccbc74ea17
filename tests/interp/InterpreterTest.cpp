// The Top interpreter on small hand-written modules: values checked by hand,
// names, dump-all, and every bad-input path.
#include "compiler/Interpreter/TopInterpreter.h"

#include "compiler/Dialect/Top/HostEval.h"
#include "compiler/Dialect/Top/TopOps.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

using namespace tpu;

namespace {

struct Loaded {
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

std::unique_ptr<Loaded> parse(const std::string &text) {
  auto l = std::make_unique<Loaded>();
  top::registerTopDialects(l->context);
  l->module = mlir::parseSourceString<mlir::ModuleOp>(text, &l->context);
  return l;
}

// conv(2x2 ones, bias 1) -> relu -> max_pool 2x2 -> reshape -> gemm -> softmax
const char *kSmallNet = R"mlir(
module attributes {top.weight_file = "w.npz"} {
  func.func @main(%arg0: tensor<1x1x3x3xf32>) -> (tensor<1x2xf32>, tensor<1x1x2x2xf32>) {
    %0 = "top.input"(%arg0) : (tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32> loc("image")
    %w = top.weight "conv_w" : tensor<1x1x2x2xf32> loc("conv_w")
    %b = top.weight "conv_b" : tensor<1xf32> loc("conv_b")
    %1 = "top.conv"(%0, %w, %b) {kernel_shape = array<i64: 2,2>, strides = array<i64: 1,1>, pads = array<i64: 0,0,0,0>, dilations = array<i64: 1,1>} : (tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>, tensor<1xf32>) -> tensor<1x1x2x2xf32> loc("conv")
    %2 = "top.relu"(%1) : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> loc("relu")
    %3 = "top.max_pool"(%2) {kernel_shape = array<i64: 2,2>, strides = array<i64: 2,2>, pads = array<i64: 0,0,0,0>, dilations = array<i64: 1,1>} : (tensor<1x1x2x2xf32>) -> tensor<1x1x1x1xf32> loc("pool")
    %4 = "top.reshape"(%3) {shape = array<i64: 1, 1>} : (tensor<1x1x1x1xf32>) -> tensor<1x1xf32> loc("flat")
    %fw = top.weight "fc_w" : tensor<1x2xf32> loc("fc_w")
    %n = top.none
    %5 = "top.gemm"(%4, %fw, %n) : (tensor<1x1xf32>, tensor<1x2xf32>, none) -> tensor<1x2xf32> loc("fc")
    %6 = "top.softmax"(%5) {axis = 1 : i64} : (tensor<1x2xf32>) -> tensor<1x2xf32> loc("prob")
    return %6, %2 : tensor<1x2xf32>, tensor<1x1x2x2xf32>
  }
}
)mlir";

NpzMap smallNetWeights() {
  NpzMap w;
  w["conv_w"] = NpyArray::from<float>({1, 1, 2, 2}, {1, 1, 1, 1});
  w["conv_b"] = NpyArray::from<float>({1}, {-10});
  w["fc_w"] = NpyArray::from<float>({1, 2}, {0.5f, -0.5f});
  return w;
}

NpzMap smallNetInput() {
  NpzMap in;
  in["image"] = NpyArray::from<float>({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  return in;
}

} // namespace

TEST(TopInterpreter, RunsSmallNetWithHandComputedValues) {
  auto l = parse(kSmallNet);
  ASSERT_TRUE(l->module);
  auto interp = top::TopInterpreter::create(*l->module, smallNetWeights());
  ASSERT_TRUE(interp) << interp.message();
  ASSERT_EQ((*interp)->inputs().size(), 1u);
  EXPECT_EQ((*interp)->inputs()[0].name, "image");
  EXPECT_EQ((*interp)->inputs()[0].shape, (std::vector<int64_t>{1, 1, 3, 3}));
  ASSERT_EQ((*interp)->outputs().size(), 2u);
  EXPECT_EQ((*interp)->outputs()[0].name, "prob");
  EXPECT_EQ((*interp)->outputs()[1].name, "relu");

  auto out = (*interp)->run(smallNetInput());
  ASSERT_TRUE(out) << out.message();
  ASSERT_EQ(out->size(), 2u);
  // conv sums of 2x2 windows: 12 16 24 28, minus 10: 2 6 14 18.
  EXPECT_EQ(out->at("relu").values<float>(), (std::vector<float>{2, 6, 14, 18}));
  // pool -> 18; fc -> [9, -9]; softmax.
  auto prob = out->at("prob").values<float>();
  EXPECT_NEAR(prob[0], 1.0 / (1.0 + std::exp(-18.0)), 1e-7);
  EXPECT_NEAR(prob[1], std::exp(-18.0) / (1.0 + std::exp(-18.0)), 1e-9);
}

TEST(TopInterpreter, DumpAllNamesEveryTensorAndRunsAreDeterministic) {
  auto l = parse(kSmallNet);
  auto interp = top::TopInterpreter::create(*l->module, smallNetWeights());
  ASSERT_TRUE(interp) << interp.message();
  auto all = (*interp)->run(smallNetInput(), true);
  ASSERT_TRUE(all) << all.message();
  std::vector<std::string> names;
  for (const auto &[name, a] : *all) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"conv", "fc", "flat", "image", "pool", "prob", "relu"}));
  EXPECT_EQ(all->at("conv").values<float>(), (std::vector<float>{2, 6, 14, 18}));
  EXPECT_EQ(all->at("flat").shape, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(all->at("fc").values<float>(), (std::vector<float>{9, -9}));
  auto again = (*interp)->run(smallNetInput(), true);
  ASSERT_TRUE(again);
  for (const auto &[name, a] : *all) EXPECT_EQ(again->at(name).data, a.data) << name;
}

TEST(TopInterpreter, RejectsBadInputsWithOneClearMessage) {
  auto l = parse(kSmallNet);
  auto interp = top::TopInterpreter::create(*l->module, smallNetWeights());
  ASSERT_TRUE(interp) << interp.message();
  NpzMap wrongName;
  wrongName["img"] = smallNetInput().at("image");
  auto r1 = (*interp)->run(wrongName);
  ASSERT_FALSE(r1);
  EXPECT_EQ(r1.message(), "input 'image' is missing (given: img)");
  NpzMap wrongShape;
  wrongShape["image"] = NpyArray::from<float>({1, 1, 9}, std::vector<float>(9, 0));
  auto r2 = (*interp)->run(wrongShape);
  ASSERT_FALSE(r2);
  EXPECT_EQ(r2.message(), "input 'image' has shape 1x1x9 but the model expects 1x1x3x3");
  NpzMap wrongDtype;
  wrongDtype["image"] = NpyArray::from<double>({1, 1, 3, 3}, std::vector<double>(9, 0));
  auto r3 = (*interp)->run(wrongDtype);
  ASSERT_FALSE(r3);
  EXPECT_EQ(r3.message(), "input 'image' has dtype float64 but the model expects float32");
  NpzMap extra = smallNetInput();
  extra["bogus"] = NpyArray::from<float>({1}, {0});
  auto r4 = (*interp)->run(extra);
  ASSERT_FALSE(r4);
  EXPECT_EQ(r4.message(), "'bogus' is not a model input (inputs: image)");
}

TEST(TopInterpreter, RejectsMissingOrMismatchedWeights) {
  auto l = parse(kSmallNet);
  NpzMap w = smallNetWeights();
  w.erase("fc_w");
  auto missing = top::TopInterpreter::create(*l->module, w);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.message().find("weight 'fc_w' is not in the weight file"), std::string::npos)
      << missing.message();
  w = smallNetWeights();
  w["conv_b"] = NpyArray::from<float>({2}, {1, 2});
  auto wrong = top::TopInterpreter::create(*l->module, w);
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.message().find("conv_b"), std::string::npos) << wrong.message();
  // Without explicit weights the module's weight file is read; it does not exist.
  auto noFile = top::TopInterpreter::create(*l->module);
  ASSERT_FALSE(noFile);
  EXPECT_NE(noFile.message().find("w.npz"), std::string::npos) << noFile.message();
}

TEST(TopInterpreter, RejectsResultTypesThatContradictTheShapeRule) {
  auto l = parse(R"mlir(
module {
  func.func @main(%arg0: tensor<2x3xf32>) -> tensor<3x3xf32> {
    %0 = "top.relu"(%arg0) : (tensor<2x3xf32>) -> tensor<3x3xf32> loc("bad_relu")
    return %0 : tensor<3x3xf32>
  }
}
)mlir");
  ASSERT_TRUE(l->module);
  auto interp = top::TopInterpreter::create(*l->module);
  ASSERT_FALSE(interp);
  EXPECT_NE(interp.message().find("top.relu 'bad_relu'"), std::string::npos) << interp.message();
  EXPECT_NE(interp.message().find("tensor<2x3xf32>"), std::string::npos) << interp.message();
}

TEST(TopInterpreter, SplitConcatGatherCastAndUnnamedValues) {
  auto l = parse(R"mlir(
module {
  func.func @main(%arg0: tensor<2x4xf32>, %arg1: tensor<3xi64>) -> (tensor<2x3xf32>, tensor<2x4xf32>, tensor<2x3xi1>) {
    %0 = "top.input"(%arg0) : (tensor<2x4xf32>) -> tensor<2x4xf32> loc("x")
    %i = "top.input"(%arg1) : (tensor<3xi64>) -> tensor<3xi64> loc("idx")
    %1:2 = "top.split"(%0) {axis = 1 : i64, split = array<i64: 1, 3>} : (tensor<2x4xf32>) -> (tensor<2x1xf32>, tensor<2x3xf32>) loc(fused["left", "right"])
    %2 = "top.concat"(%1#1, %1#0) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
    %3 = "top.gather"(%0, %i) {axis = 1 : i64} : (tensor<2x4xf32>, tensor<3xi64>) -> tensor<2x3xf32> loc("g")
    %4 = "top.cast"(%3) {to = i1} : (tensor<2x3xf32>) -> tensor<2x3xi1> loc("nonzero")
    return %3, %2, %4 : tensor<2x3xf32>, tensor<2x4xf32>, tensor<2x3xi1>
  }
}
)mlir");
  ASSERT_TRUE(l->module);
  auto interp = top::TopInterpreter::create(*l->module);
  ASSERT_TRUE(interp) << interp.message();
  NpzMap in;
  in["x"] = NpyArray::from<float>({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
  in["idx"] = NpyArray::from<int64_t>({3}, {-1, 0, 2});
  auto out = (*interp)->run(in, true);
  ASSERT_TRUE(out) << out.message();
  EXPECT_EQ(out->at("left").values<float>(), (std::vector<float>{0, 4}));
  EXPECT_EQ(out->at("right").values<float>(), (std::vector<float>{1, 2, 3, 5, 6, 7}));
  EXPECT_EQ(out->at("concat_0").values<float>(), (std::vector<float>{1, 2, 3, 0, 5, 6, 7, 4}));
  EXPECT_EQ(out->at("g").values<float>(), (std::vector<float>{3, 0, 2, 7, 4, 6}));
  EXPECT_EQ(out->at("idx").dtype, "int64");
  EXPECT_EQ(out->at("nonzero").dtype, "bool");
  EXPECT_EQ(out->at("nonzero").data, (std::vector<uint8_t>{1, 0, 1, 1, 1, 1}));
  // An index out of range is a data error, not a crash.
  in["idx"] = NpyArray::from<int64_t>({3}, {0, 4, 1});
  auto bad = (*interp)->run(in);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.message().find("index 4 out of range"), std::string::npos) << bad.message();
}

TEST(TopInterpreter, LoadTopModuleReportsParseErrorsOnOneLine) {
  std::string path = (std::filesystem::temp_directory_path() / "interp_bad.mlir").string();
  {
    std::ofstream f(path);
    f << "module {\n  func.func @main( {\n}\n";
  }
  mlir::MLIRContext context;
  auto m = top::loadTopModule(context, path);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.message().find(path + ":2:"), 0u) << m.message();
  EXPECT_EQ(m.message().find('\n'), std::string::npos) << m.message();
  auto missing = top::loadTopModule(context, path + ".nope");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.message().find("cannot open"), std::string::npos);
  std::remove(path.c_str());
}

// The host ops read a unary op's parameters from its attributes; an absent
// one must be the Top op's default (one value, in ODS and in unaryParams).
TEST(TopInterpreter, UnaryHostParamsAreTheOpsDefaults) {
  auto l = parse(R"mlir(
module {
  func.func @main(%arg0: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
    %0 = "top.input"(%arg0) : (tensor<4xf32>) -> tensor<4xf32> loc("x")
    %1 = "top.leaky_relu"(%0) : (tensor<4xf32>) -> tensor<4xf32> loc("leaky")
    %2 = "top.elu"(%0) : (tensor<4xf32>) -> tensor<4xf32> loc("elu")
    %3 = "top.hard_sigmoid"(%0) : (tensor<4xf32>) -> tensor<4xf32> loc("hsig")
    return %1, %2, %3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
}
)mlir");
  ASSERT_TRUE(l->module);
  namespace k = tpu::kernels;
  auto params = [](mlir::Operation *op, k::UnaryKind kind) {
    auto attrs = top::hostAttrsOf(op);
    EXPECT_TRUE(attrs) << attrs.message();
    return attrs ? k::unaryParams(kind, *attrs) : std::pair<float, float>{};
  };
  int seen = 0;
  l->module->walk([&](mlir::Operation *op) {
    if (auto o = mlir::dyn_cast<top::LeakyReluOp>(op)) {
      EXPECT_FLOAT_EQ(params(op, k::UnaryKind::LeakyRelu).first, float(o.getAlpha().convertToDouble()));
      ++seen;
    } else if (auto o = mlir::dyn_cast<top::EluOp>(op)) {
      EXPECT_FLOAT_EQ(params(op, k::UnaryKind::Elu).first, float(o.getAlpha().convertToDouble()));
      ++seen;
    } else if (auto o = mlir::dyn_cast<top::HardSigmoidOp>(op)) {
      auto [a, b] = params(op, k::UnaryKind::HardSigmoid);
      EXPECT_FLOAT_EQ(a, float(o.getAlpha().convertToDouble()));
      EXPECT_FLOAT_EQ(b, float(o.getBeta().convertToDouble()));
      ++seen;
    }
  });
  EXPECT_EQ(seen, 3);
}
