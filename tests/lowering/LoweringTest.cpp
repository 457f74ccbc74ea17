// Top -> Tpu lowering per op, F32 and INT8: the Tpu interpreter against the
// Top interpreter (cosine), and each lowered op compiled to a bmodel and run
// on the runtime's func backend against the Tpu interpreter (bit for bit in
// INT8). Plus mixed precision and the bad-input errors.
#include "compiler/Lowering/Lowering.h"
#include "compiler/Backend/CodeGen.h"
#include "compiler/Calibration/Calibrator.h"
#include "compiler/Dialect/Tpu/TpuOps.h"
#include "compiler/Export/TpuToGraph.h"
#include "compiler/Interpreter/TopInterpreter.h"
#include "compiler/TpuInterpreter/TpuInterpreter.h"
#include "kernels/Compare.h"
#include "runtime/Runtime.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <sstream>

using namespace tpu;
using lowering::Quantize;

namespace {

std::string typeOf(const std::vector<int64_t> &shape) {
  std::string s = "tensor<";
  for (int64_t d : shape) s += std::to_string(d) + "x";
  return s + "f32>";
}

struct Case {
  std::vector<std::vector<int64_t>> inputs; // named in0, in1, ...
  std::vector<float> inputStd;              // spread of each input (default 1)
  std::vector<int64_t> output;              // the body defines %y
  std::string body;
  NpzMap weights;
};

struct Outcome {
  double cosineVsTop = 0;     // Tpu interpreter vs Top interpreter
  bool bitExact = false;      // bmodel (func backend) vs Tpu interpreter
  double bmodelCosine = 0;    // bmodel vs Tpu interpreter
  backend::Graph graph;
};

class Pipeline {
public:
  explicit Pipeline(const Case &c) : c_(c) {
    dir_ = std::filesystem::path(testing::TempDir()) /
           ("lowering_" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::create_directories(dir_);
  }

  Result<mlir::OwningOpRef<mlir::ModuleOp>> parse() {
    TPU_RETURN_IF_ERROR(writeNpz((dir_ / "w.npz").string(), c_.weights));
    std::ostringstream m;
    m << "module attributes {top.weight_file = \"" << (dir_ / "w.npz").string() << "\"} {\n"
      << "func.func @main(";
    for (size_t i = 0; i < c_.inputs.size(); ++i) m << (i ? ", " : "") << "%a" << i << ": " << typeOf(c_.inputs[i]);
    m << ") -> " << typeOf(c_.output) << " attributes {top.output_names = [\"y\"]} {\n";
    for (size_t i = 0; i < c_.inputs.size(); ++i)
      m << "%in" << i << " = top.input %a" << i << " : (" << typeOf(c_.inputs[i]) << ") -> " << typeOf(c_.inputs[i])
        << " loc(\"in" << i << "\")\n";
    m << c_.body << "\nreturn %y : " << typeOf(c_.output) << "\n}\n}\n";
    top::registerTopDialects(ctx_);
    ctx_.getOrLoadDialect<tpuir::TpuDialect>();
    auto module = mlir::parseSourceString<mlir::ModuleOp>(m.str(), &ctx_);
    if (!module) return makeError("module does not parse:\n", m.str());
    return module;
  }

  NpzMap sample(std::mt19937 &rng) const {
    NpzMap s;
    for (size_t i = 0; i < c_.inputs.size(); ++i) {
      std::normal_distribution<float> d(0.0f, i < c_.inputStd.size() ? c_.inputStd[i] : 1.0f);
      std::vector<float> v(size_t(NpyArray{"float32", c_.inputs[i], {}}.numel()));
      for (auto &x : v) x = d(rng);
      s["in" + std::to_string(i)] = NpyArray::from(c_.inputs[i], v.data(), v.size());
    }
    return s;
  }

  Result<Outcome> run(Quantize mode, std::set<std::string> keepF32 = {}, bool cpuOps = true) {
    auto module = parse();
    if (!module) return makeError(module.message());
    std::mt19937 rng(1234);
    std::vector<NpzMap> samples;
    for (int i = 0; i < 8; ++i) samples.push_back(sample(rng));
    calib::CalibrationOptions co; // max thresholds, as these tests were written against
    co.method = calib::Method::Max;
    auto table = calib::calibrate(**module, samples, co);
    if (!table) return makeError(table.message());
    auto weights = top::WeightStore::loadFor(**module);
    if (!weights) return makeError(weights.message());
    lowering::LoweringOptions lo;
    lo.mode = mode;
    lo.calibration = &*table;
    lo.keepF32 = std::move(keepF32);
    lo.cpuOps = cpuOps;
    auto lowered = lowering::lowerToTpu(**module, *weights, lo);
    if (!lowered) return makeError(lowered.message());
    auto graph = exporter::toGraph(*lowered->module, lowered->weights.arrays());
    if (!graph) return makeError(graph.message());

    Outcome out;
    out.graph = *graph;
    NpzMap input = sample(rng);
    auto topInterp = top::TopInterpreter::create(**module);
    if (!topInterp) return makeError(topInterp.message());
    auto ref = (*topInterp)->run(input);
    if (!ref) return makeError(ref.message());
    auto tpuInterp = tpuinterp::TpuInterpreter::create(*graph);
    if (!tpuInterp) return makeError(tpuInterp.message());
    auto got = (*tpuInterp)->run(input);
    if (!got) return makeError(got.message());
    const NpyArray &r = ref->at("y"), &g = got->at("y");
    out.cosineVsTop = kernels::compareTensors(r.as<float>(), g.as<float>(), r.numel()).cosine;

    const std::string path = (dir_ / "m.bmodel").string();
    TPU_RETURN_IF_ERROR(backend::writeBmodel(*graph, backend::Options{}, path));
    auto rt = runtime::Runtime::create(isa::HwConfig{}, runtime::BackendKind::Func);
    if (!rt) return makeError(rt.message());
    TPU_RETURN_IF_ERROR((*rt)->loadBmodel(path));
    runtime::RunReport report;
    auto dev = (*rt)->run(graph->name, input, runtime::RunOptions{}, report);
    if (!dev) return makeError(dev.message());
    const NpyArray &d = dev->at("y");
    out.bitExact = d.data == g.data;
    out.bmodelCosine = kernels::compareTensors(g.as<float>(), d.as<float>(), g.numel()).cosine;
    return out;
  }

private:
  Case c_;
  std::filesystem::path dir_;
  mlir::MLIRContext ctx_;
};

NpyArray randomWeight(std::vector<int64_t> shape, float stddev, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, stddev);
  std::vector<float> v(size_t(NpyArray{"float32", shape, {}}.numel()));
  for (auto &x : v) x = d(rng);
  return NpyArray::from(std::move(shape), v.data(), v.size());
}

size_t countKind(const backend::Graph &g, backend::OpKind k) {
  size_t n = 0;
  for (const auto &op : g.ops) n += op.kind == k;
  return n;
}

// Deploys c in F32 (matches the Top interpreter and its bmodel, no casts)
// and INT8 (bit-exact bmodel); `check` then sees each mode's outcome.
using OutcomeCheck = std::function<void(Quantize mode, const Outcome &r)>;
void expectBoth(const Case &c, const OutcomeCheck &check, double minInt8Cosine = 0.99) {
  {
    Pipeline p(c);
    auto f = p.run(Quantize::F32);
    ASSERT_TRUE(f) << f.message();
    EXPECT_GE(f->cosineVsTop, 0.9999);
    EXPECT_GE(f->bmodelCosine, 0.99999);
    EXPECT_EQ(countKind(f->graph, backend::OpKind::Cast), 0u);
    if (check) check(Quantize::F32, *f);
  }
  Pipeline p(c);
  auto q = p.run(Quantize::INT8);
  ASSERT_TRUE(q) << q.message();
  EXPECT_GE(q->cosineVsTop, minInt8Cosine);
  EXPECT_TRUE(q->bitExact);
  if (check) check(Quantize::INT8, *q);
}
void expectBoth(const Case &c, double minInt8Cosine = 0.99) { expectBoth(c, nullptr, minInt8Cosine); }

std::string conv(const std::string &out, const std::string &in, const std::string &w, const std::string &b,
                 const std::vector<int64_t> &xs, const std::vector<int64_t> &ws, const std::vector<int64_t> &ys,
                 const std::string &attrs) {
  std::ostringstream s;
  s << "%" << out << " = \"top.conv\"(%" << in << ", %" << w << ", %" << b << ") {" << attrs << "} : ("
    << typeOf(xs) << ", " << typeOf(ws) << ", " << (b == "none" ? std::string("none") : typeOf({ws[0]})) << ") -> "
    << typeOf(ys) << " loc(\"" << out << "\")\n";
  return s.str();
}

const char *k3p1 = "kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, "
                   "dilations = array<i64: 1, 1>";

TEST(Lowering, ConvReluOddChannels) {
  Case c;
  c.inputs = {{1, 3, 9, 11}};
  c.output = {1, 5, 9, 11};
  c.weights["w"] = randomWeight({5, 3, 3, 3}, 0.3f, 1);
  c.weights["b"] = randomWeight({5}, 0.2f, 2);
  c.body = "%w = top.weight \"w\" : tensor<5x3x3x3xf32>\n%b = top.weight \"b\" : tensor<5xf32>\n" +
           conv("c", "in0", "w", "b", {1, 3, 9, 11}, {5, 3, 3, 3}, {1, 5, 9, 11}, k3p1) +
           "%y = \"top.relu\"(%c) : (tensor<1x5x9x11xf32>) -> tensor<1x5x9x11xf32> loc(\"y_relu\")";
  expectBoth(c);
}

TEST(Lowering, DepthwiseStride2Relu6Batch2) {
  Case c;
  c.inputs = {{2, 6, 10, 10}};
  c.output = {2, 6, 5, 5};
  c.weights["w"] = randomWeight({6, 1, 3, 3}, 0.5f, 3);
  c.body = "%w = top.weight \"w\" : tensor<6x1x3x3xf32>\n%none = top.none\n" +
           conv("y", "in0", "w", "none", {2, 6, 10, 10}, {6, 1, 3, 3}, {2, 6, 5, 5},
                "kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, "
                "dilations = array<i64: 1, 1>, group = 6 : i64, do_relu = true, relu_limit = 1.0 : f64");
  expectBoth(c);
}

TEST(Lowering, MaxPoolCeilAndAvgPoolPadded) {
  Case c;
  c.inputs = {{1, 7, 9, 9}};
  c.output = {1, 7, 3, 3};
  c.body = "%p = \"top.max_pool\"(%in0) {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = "
           "array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = true} : (tensor<1x7x9x9xf32>) -> "
           "tensor<1x7x4x4xf32> loc(\"p\")\n"
           "%y = \"top.avg_pool\"(%p) {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = "
           "array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, count_include_pad = true} : "
           "(tensor<1x7x4x4xf32>) -> tensor<1x7x2x2xf32> loc(\"y\")";
  c.output = {1, 7, 2, 2};
  expectBoth(c);
}

TEST(Lowering, GlobalAvgPoolReshapeGemm) {
  Case c;
  c.inputs = {{1, 16, 5, 5}};
  c.output = {1, 10};
  c.weights["fw"] = randomWeight({10, 16}, 0.3f, 4);
  c.weights["fb"] = randomWeight({10}, 0.1f, 5);
  c.body = "%g = \"top.global_avg_pool\"(%in0) : (tensor<1x16x5x5xf32>) -> tensor<1x16x1x1xf32> loc(\"g\")\n"
           "%f = \"top.reshape\"(%g) {shape = array<i64: 1, 16>} : (tensor<1x16x1x1xf32>) -> tensor<1x16xf32> loc(\"f\")\n"
           "%fw = top.weight \"fw\" : tensor<10x16xf32>\n%fb = top.weight \"fb\" : tensor<10xf32>\n"
           "%y = \"top.gemm\"(%f, %fw, %fb) {transB = true, alpha = 0.5 : f64} : (tensor<1x16xf32>, tensor<10x16xf32>, "
           "tensor<10xf32>) -> tensor<1x10xf32> loc(\"y\")";
  expectBoth(c);
}

TEST(Lowering, MatMulWithUntransposedWeight) {
  Case c;
  c.inputs = {{3, 12}};
  c.output = {3, 7};
  c.weights["m"] = randomWeight({12, 7}, 0.3f, 6);
  c.body = "%m = top.weight \"m\" : tensor<12x7xf32>\n"
           "%y = \"top.matmul\"(%in0, %m) : (tensor<3x12xf32>, tensor<12x7xf32>) -> tensor<3x7xf32> loc(\"y\")";
  expectBoth(c);
}

std::string binary(const char *op, const char *t) {
  return std::string("%y = \"top.") + op + "\"(%in0, %in1) : (" + t + ", " + t + ") -> " + t + " loc(\"y\")";
}

TEST(Lowering, AddWithDifferentScalesThenRelu) {
  Case c;
  c.inputs = {{1, 5, 6, 7}, {1, 5, 6, 7}};
  c.inputStd = {1.0f, 3.0f};
  c.output = {1, 5, 6, 7};
  c.body = "%s = \"top.add\"(%in0, %in1) : (tensor<1x5x6x7xf32>, tensor<1x5x6x7xf32>) -> tensor<1x5x6x7xf32> loc(\"s\")\n"
           "%y = \"top.relu\"(%s) : (tensor<1x5x6x7xf32>) -> tensor<1x5x6x7xf32> loc(\"y\")";
  expectBoth(c, [](Quantize mode, const Outcome &r) {
    if (mode != Quantize::INT8) return;
    // The relu is fused: one add with relu, no separate relu op.
    EXPECT_EQ(countKind(r.graph, backend::OpKind::Relu), 0u);
    for (const auto &op : r.graph.ops)
      if (op.kind == backend::OpKind::Add) {
        EXPECT_TRUE(op.relu);
      }
  });
}

TEST(Lowering, MulAndMax) {
  Case c;
  c.inputs = {{1, 3, 4, 9}, {1, 3, 4, 9}};
  c.output = {1, 3, 4, 9};
  c.body = binary("mul", "tensor<1x3x4x9xf32>");
  expectBoth(c, 0.98);
  c.body = binary("max", "tensor<1x3x4x9xf32>");
  expectBoth(c);
}

TEST(Lowering, LeakyReluAndClip) {
  Case c;
  c.inputs = {{1, 4, 8, 8}};
  c.output = {1, 4, 8, 8};
  c.body = "%l = \"top.leaky_relu\"(%in0) {alpha = 0.1 : f64} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc(\"l\")\n"
           "%y = \"top.clip\"(%l) {min = -0.2 : f64, max = 1.5 : f64} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc(\"y\")";
  expectBoth(c);
}

TEST(Lowering, ConcatRequantizesInputsToOneScale) {
  Case c;
  c.inputs = {{1, 3, 5, 5}, {1, 4, 5, 5}};
  c.inputStd = {4.0f, 0.5f};
  c.output = {1, 11, 5, 5};
  // a (small range) is also read by the second relu, so it keeps its own
  // scale and is requantized to the concat's (values that feed only concats
  // share the concat's scale; a graph input is cast from fp32 twice instead).
  c.body = "%a = \"top.relu\"(%in1) : (tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32> loc(\"a\")\n"
           "%r = \"top.relu\"(%a) : (tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32> loc(\"r\")\n"
           "%y = \"top.concat\"(%in0, %a, %r) {axis = 1 : i64} : (tensor<1x3x5x5xf32>, tensor<1x4x5x5xf32>, "
           "tensor<1x4x5x5xf32>) -> tensor<1x11x5x5xf32> loc(\"y\")";
  expectBoth(c, [](Quantize mode, const Outcome &r) {
    if (mode != Quantize::INT8) return;
    EXPECT_GE(countKind(r.graph, backend::OpKind::Requant), 1u);
  });
}

TEST(Lowering, NearestResizeIsUpsample) {
  Case c;
  c.inputs = {{1, 3, 4, 5}};
  c.output = {1, 3, 8, 15};
  c.body = "%y = \"top.resize\"(%in0) {mode = \"nearest\", coordinate_transformation_mode = \"asymmetric\", "
           "nearest_mode = \"floor\", scales = array<f64: 1.0, 1.0, 2.0, 3.0>, sizes = array<i64>} : "
           "(tensor<1x3x4x5xf32>) -> tensor<1x3x8x15xf32> loc(\"y\")";
  expectBoth(c);
}

TEST(Lowering, SigmoidIsATableInInt8AndTheChipRecipeInF32) {
  Case c;
  c.inputs = {{1, 2, 6, 6}};
  c.output = {1, 2, 6, 6};
  c.body = "%y = \"top.sigmoid\"(%in0) : (tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32> loc(\"y\")";
  expectBoth(c, [](Quantize mode, const Outcome &r) {
    if (mode != Quantize::INT8) return;
    EXPECT_EQ(countKind(r.graph, backend::OpKind::Lut), 1u);
    // Sigmoid's output is >= 0: a uint8 table.
    EXPECT_EQ(r.graph.tensors[size_t(r.graph.ops[1].output)].dtype, backend::DType::U8);
  });
}

TEST(Lowering, TanhIsAnInt8TableAndAnFp32Program) {
  Case c;
  c.inputs = {{1, 3, 5, 7}};
  c.output = {1, 3, 5, 7};
  c.body = "%y = \"top.tanh\"(%in0) : (tensor<1x3x5x7xf32>) -> tensor<1x3x5x7xf32> loc(\"y\")";
  Pipeline p(c);
  auto q = p.run(Quantize::INT8);
  ASSERT_TRUE(q) << q.message();
  EXPECT_GE(q->cosineVsTop, 0.99);
  EXPECT_TRUE(q->bitExact);
  EXPECT_EQ(countKind(q->graph, backend::OpKind::Lut), 1u);
  Pipeline pf(c);
  auto f = pf.run(Quantize::F32);
  ASSERT_TRUE(f) << f.message();
  EXPECT_GE(f->cosineVsTop, 0.9999);
  EXPECT_EQ(countKind(f->graph, backend::OpKind::Unary), 1u);
}

size_t countFused(const backend::Graph &g, backend::OpKind k, bool relu) {
  size_t n = 0;
  for (const auto &op : g.ops) n += op.kind == k && op.relu == relu;
  return n;
}

// A batch norm on an activation no conv produces (PP-OCR has one behind a
// concat): one per-channel affine (scale and bias weights, int8: int16
// scale, int32 bias), the relu behind it fused. 67 channels: past one lane
// row.
TEST(Lowering, BatchNormIsAPerChannelAffineWithRelu) {
  Case c;
  c.inputs = {{2, 67, 9, 7}};
  c.output = {2, 67, 9, 7};
  c.weights["gamma"] = randomWeight({67}, 1.0f, 12);
  c.weights["beta"] = randomWeight({67}, 0.5f, 13);
  c.weights["mean"] = randomWeight({67}, 0.3f, 14);
  std::vector<float> var(67);
  for (size_t i = 0; i < var.size(); ++i) var[i] = 0.2f + 0.05f * float(i % 13);
  c.weights["var"] = NpyArray::from({67}, var.data(), var.size());
  c.body = "%g = top.weight \"gamma\" : tensor<67xf32>\n%b = top.weight \"beta\" : tensor<67xf32>\n"
           "%m = top.weight \"mean\" : tensor<67xf32>\n%v = top.weight \"var\" : tensor<67xf32>\n"
           "%bn = \"top.batch_norm\"(%in0, %g, %b, %m, %v) {epsilon = 1.0e-5 : f64} : (tensor<2x67x9x7xf32>, "
           "tensor<67xf32>, tensor<67xf32>, tensor<67xf32>, tensor<67xf32>) -> tensor<2x67x9x7xf32> loc(\"bn\")\n"
           "%y = \"top.relu\"(%bn) : (tensor<2x67x9x7xf32>) -> tensor<2x67x9x7xf32> loc(\"y\")";
  expectBoth(c, [&](Quantize mode, const Outcome &r) {
    EXPECT_EQ(countFused(r.graph, backend::OpKind::Affine, true), 1u);
    EXPECT_EQ(countKind(r.graph, backend::OpKind::Relu), 0u);
    for (const auto &op : r.graph.ops)
      if (op.kind == backend::OpKind::Affine) {
        ASSERT_EQ(op.inputs.size(), 3u);
        EXPECT_EQ(r.graph.tensors[size_t(op.inputs[1])].dtype,
                  mode == Quantize::F32 ? backend::DType::F32 : backend::DType::I16);
        EXPECT_EQ(r.graph.tensors[size_t(op.inputs[2])].dtype,
                  mode == Quantize::F32 ? backend::DType::F32 : backend::DType::I32);
      }
  });
}

// Behind an fp32 conv, batch norm and PP-OCR's learnable affine (x * s + b
// with scalars, the constant first in the mul) fold into the filter and
// bias, the relu after them fuses: one conv (grouped here, 12 channels in
// groups of 3). INT8 keeps them as one per-channel affine (with the relu).
TEST(Lowering, ConvAbsorbsBatchNormAndScalarAffine) {
  Case c;
  c.inputs = {{1, 12, 9, 7}};
  c.output = {1, 12, 9, 7};
  c.weights["w"] = randomWeight({12, 3, 3, 3}, 0.3f, 61);
  c.weights["gamma"] = randomWeight({12}, 1.0f, 62);
  c.weights["beta"] = randomWeight({12}, 0.3f, 63);
  c.weights["mean"] = randomWeight({12}, 0.3f, 64);
  std::vector<float> var(12, 0.6f);
  c.weights["var"] = NpyArray::from({12}, var.data(), var.size());
  c.weights["s"] = NpyArray::from({1}, std::vector<float>{1.7f});
  c.weights["t"] = NpyArray::from({1}, std::vector<float>{0.4f});
  const std::string y = "tensor<1x12x9x7xf32>", v = "tensor<12xf32>";
  c.body = "%w = top.weight \"w\" : tensor<12x3x3x3xf32>\n%none = top.none\n%g = top.weight \"gamma\" : " + v +
           "\n%be = top.weight \"beta\" : " + v + "\n%m = top.weight \"mean\" : " + v + "\n%v = top.weight \"var\" : " + v +
           "\n%s = top.weight \"s\" : tensor<1xf32>\n%t = top.weight \"t\" : tensor<1xf32>\n" +
           conv("c", "in0", "w", "none", {1, 12, 9, 7}, {12, 3, 3, 3}, {1, 12, 9, 7}, std::string(k3p1) + ", group = 4 : i64") +
           "%bn = \"top.batch_norm\"(%c, %g, %be, %m, %v) {epsilon = 1.0e-5 : f64} : (" + y + ", " + v + ", " + v + ", " +
           v + ", " + v + ") -> " + y + " loc(\"bn\")\n"
           "%ms = \"top.mul\"(%s, %bn) : (tensor<1xf32>, " + y + ") -> " + y + " loc(\"ms\")\n"
           "%at = \"top.add\"(%ms, %t) : (" + y + ", tensor<1xf32>) -> " + y + " loc(\"at\")\n"
           "%y = \"top.relu\"(%at) : (" + y + ") -> " + y + " loc(\"y\")";
  expectBoth(c, [&](Quantize mode, const Outcome &r) {
    const bool f32 = mode == Quantize::F32;
    EXPECT_EQ(countFused(r.graph, backend::OpKind::Conv, f32), 1u);
    EXPECT_EQ(countFused(r.graph, backend::OpKind::Affine, true), f32 ? 0u : 1u);
    EXPECT_EQ(countKind(r.graph, backend::OpKind::Affine), f32 ? 0u : 1u);
    EXPECT_EQ(countKind(r.graph, backend::OpKind::Relu), 0u);
  });
}

// PP-OCR's "learnable affine": x * scalar + scalar (the constant first in
// the mul) is one scalar affine.
TEST(Lowering, ScalarMulThenAddIsOneAffine) {
  Case c;
  c.inputs = {{1, 5, 6, 7}};
  c.output = {1, 5, 6, 7};
  c.weights["s"] = NpyArray::from({1}, std::vector<float>{0.8f});
  c.weights["t"] = NpyArray::from({1}, std::vector<float>{-0.3f});
  c.body = "%s = top.weight \"s\" : tensor<1xf32>\n%t = top.weight \"t\" : tensor<1xf32>\n"
           "%m = \"top.mul\"(%s, %in0) : (tensor<1xf32>, tensor<1x5x6x7xf32>) -> tensor<1x5x6x7xf32> loc(\"m\")\n"
           "%y = \"top.add\"(%m, %t) : (tensor<1x5x6x7xf32>, tensor<1xf32>) -> tensor<1x5x6x7xf32> loc(\"y\")";
  expectBoth(c, [](Quantize mode, const Outcome &r) {
    if (mode != Quantize::INT8) return;
    EXPECT_EQ(countKind(r.graph, backend::OpKind::Affine), 1u);
    EXPECT_EQ(countKind(r.graph, backend::OpKind::Mul) + countKind(r.graph, backend::OpKind::Add), 0u);
    for (const auto &op : r.graph.ops)
      if (op.kind == backend::OpKind::Affine) {
        EXPECT_EQ(op.inputs.size(), 1u);
        EXPECT_EQ(op.multipliers.size(), 2u);
      }
  });
}

// A per-channel constant ([1, C, 1, 1], as a transposed conv's bias comes
// out of paddle2onnx) added, one ([C, 1, 1]) multiplied, a relu behind: one
// per-channel affine with relu.
TEST(Lowering, PerChannelConstantAddAndMul) {
  Case c;
  c.inputs = {{2, 70, 5, 3}};
  c.output = {2, 70, 5, 3};
  c.weights["b"] = randomWeight({1, 70, 1, 1}, 0.5f, 21);
  c.weights["k"] = randomWeight({70, 1, 1}, 1.0f, 22);
  c.body = "%b = top.weight \"b\" : tensor<1x70x1x1xf32>\n%k = top.weight \"k\" : tensor<70x1x1xf32>\n"
           "%a = \"top.add\"(%in0, %b) : (tensor<2x70x5x3xf32>, tensor<1x70x1x1xf32>) -> tensor<2x70x5x3xf32> loc(\"a\")\n"
           "%m = \"top.mul\"(%k, %a) : (tensor<70x1x1xf32>, tensor<2x70x5x3xf32>) -> tensor<2x70x5x3xf32> loc(\"m\")\n"
           "%y = \"top.relu\"(%m) : (tensor<2x70x5x3xf32>) -> tensor<2x70x5x3xf32> loc(\"y\")";
  expectBoth(c, [](Quantize mode, const Outcome &r) {
    if (mode != Quantize::INT8) return;
    EXPECT_EQ(countKind(r.graph, backend::OpKind::Affine), 1u);
    EXPECT_EQ(countFused(r.graph, backend::OpKind::Affine, true), 1u);
    EXPECT_EQ(countKind(r.graph, backend::OpKind::Relu), 0u);
  });
  // The add alone: a scale of ones, per-channel bias.
  c.body = "%b = top.weight \"b\" : tensor<1x70x1x1xf32>\n"
           "%y = \"top.add\"(%in0, %b) : (tensor<2x70x5x3xf32>, tensor<1x70x1x1xf32>) -> tensor<2x70x5x3xf32> loc(\"y\")";
  expectBoth(c, [](Quantize mode, const Outcome &r) {
    if (mode != Quantize::F32) return;
    ASSERT_EQ(countKind(r.graph, backend::OpKind::Affine), 1u);
    EXPECT_EQ(r.graph.ops[0].inputs.size(), 3u);
  });
}

// A constant broadcast along W (not channels): an fp32 weight operand of
// the add (in INT8 an fp32 island between casts, still bit-exact).
TEST(Lowering, ConstantsThatAreNotPerChannelAreFp32Weights) {
  Case c;
  c.inputs = {{1, 4, 3, 5}};
  c.output = {1, 4, 3, 5};
  c.weights["r"] = randomWeight({5}, 1.0f, 23); // broadcast along W, not channels
  c.body = "%r = top.weight \"r\" : tensor<5xf32>\n"
           "%y = \"top.add\"(%in0, %r) : (tensor<1x4x3x5xf32>, tensor<5xf32>) -> tensor<1x4x3x5xf32> loc(\"y\")";
  expectBoth(c, [](Quantize mode, const Outcome &r) {
    if (mode != Quantize::F32) return;
    ASSERT_EQ(countKind(r.graph, backend::OpKind::Add), 1u);
    EXPECT_EQ(r.graph.tensors[size_t(r.graph.ops[0].inputs[1])].shape, (std::vector<int64_t>{1, 1, 1, 5}));
  });
}

// Squeeze-excite: x * hard_sigmoid(conv(gap(x))), the (N, C, 1, 1) factor
// broadcast over H and W, here as the first operand of the mul.
TEST(Lowering, SqueezeExciteBroadcastMul) {
  Case c;
  c.inputs = {{2, 66, 7, 5}};
  c.output = {2, 66, 7, 5};
  c.weights["w"] = randomWeight({66, 66, 1, 1}, 0.2f, 31);
  c.weights["b"] = randomWeight({66}, 0.3f, 32);
  const char *k1 = "kernel_shape = array<i64: 1, 1>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, "
                   "dilations = array<i64: 1, 1>";
  c.body = "%w = top.weight \"w\" : tensor<66x66x1x1xf32>\n%b = top.weight \"b\" : tensor<66xf32>\n"
           "%g = \"top.global_avg_pool\"(%in0) : (tensor<2x66x7x5xf32>) -> tensor<2x66x1x1xf32> loc(\"g\")\n" +
           conv("c", "g", "w", "b", {2, 66, 1, 1}, {66, 66, 1, 1}, {2, 66, 1, 1}, k1) +
           "%h = \"top.hard_sigmoid\"(%c) {alpha = 0.2 : f64, beta = 0.5 : f64} : (tensor<2x66x1x1xf32>) -> "
           "tensor<2x66x1x1xf32> loc(\"h\")\n"
           "%y = \"top.mul\"(%h, %in0) : (tensor<2x66x1x1xf32>, tensor<2x66x7x5xf32>) -> tensor<2x66x7x5xf32> loc(\"y\")";
  expectBoth(c, [](Quantize mode, const Outcome &r) {
    if (mode != Quantize::F32) return;
    for (const auto &op : r.graph.ops)
      if (op.kind == backend::OpKind::Mul) {
        EXPECT_EQ(r.graph.tensors[size_t(op.inputs[1])].shape, (std::vector<int64_t>{2, 66, 1, 1}));
      }
  });
}

// NumPy broadcasting over channels (and batch): a mul and a sub of a
// (1, 1, 3, 5) operand, and a sub whose first operand is the broadcast one;
// F32 close to the Top interpreter, INT8 bit-exact with the Tpu interpreter.
TEST(Lowering, BroadcastOverChannels) {
  Case c;
  c.inputs = {{2, 4, 3, 5}, {1, 1, 3, 5}};
  c.output = {2, 4, 3, 5};
  c.body = "%m = \"top.mul\"(%in0, %in1) : (tensor<2x4x3x5xf32>, tensor<1x1x3x5xf32>) -> tensor<2x4x3x5xf32> loc(\"m\")\n"
           "%y = \"top.sub\"(%in1, %m) : (tensor<1x1x3x5xf32>, tensor<2x4x3x5xf32>) -> tensor<2x4x3x5xf32> loc(\"y\")";
  expectBoth(c, [](Quantize mode, const Outcome &r) {
    if (mode != Quantize::INT8) return;
    EXPECT_EQ(countKind(r.graph, backend::OpKind::Sub), 1u);
    EXPECT_EQ(countKind(r.graph, backend::OpKind::Cast), 3u); // two inputs in, the output out: no fp32 island
  });
}

// Transposed convs as PP-OCR's head has them (k2 s2, 24 -> 24 with relu,
// 24 -> 1) and one with padding and output padding, odd channels.
TEST(Lowering, ConvTranspose) {
  struct Geo {
    int64_t ic, oc, k, s, pad, outPad;
    bool relu, bias;
  };
  for (Geo g : {Geo{24, 24, 2, 2, 0, 0, true, true}, Geo{24, 1, 2, 2, 0, 0, false, false},
                Geo{5, 67, 3, 2, 1, 1, true, true}}) {
    Case c;
    const int64_t ih = 9, iw = 6;
    const int64_t oh = (ih - 1) * g.s - 2 * g.pad + g.k + g.outPad, ow = (iw - 1) * g.s - 2 * g.pad + g.k + g.outPad;
    c.inputs = {{1, g.ic, ih, iw}};
    c.output = {1, g.oc, oh, ow};
    c.weights["w"] = randomWeight({g.ic, g.oc, g.k, g.k}, 0.3f, 41);
    c.weights["b"] = randomWeight({g.oc}, 0.2f, 42);
    const std::string x = typeOf({1, g.ic, ih, iw}), y = typeOf({1, g.oc, oh, ow}), w = typeOf({g.ic, g.oc, g.k, g.k});
    const std::string k = std::to_string(g.k), s = std::to_string(g.s), p = std::to_string(g.pad),
                      op = std::to_string(g.outPad);
    c.body = "%w = top.weight \"w\" : " + w + "\n" +
             (g.bias ? "%b = top.weight \"b\" : " + typeOf({g.oc}) + "\n" : std::string("%b = top.none\n")) +
             "%t = \"top.conv_transpose\"(%in0, %w, %b) {kernel_shape = array<i64: " + k + ", " + k +
             ">, strides = array<i64: " + s + ", " + s + ">, pads = array<i64: " + p + ", " + p + ", " + p + ", " + p +
             ">, dilations = array<i64: 1, 1>, output_padding = array<i64: " + op + ", " + op + ">} : (" + x + ", " +
             w + ", " + (g.bias ? typeOf({g.oc}) : std::string("none")) + ") -> " + y + " loc(\"t\")\n" +
             "%y = \"top." + (g.relu ? "relu" : "sigmoid") + "\"(%t) : (" + y + ") -> " + y + " loc(\"y\")";
    SCOPED_TRACE("ic " + std::to_string(g.ic) + " oc " + std::to_string(g.oc) + " k " + k);
    expectBoth(c, [&](Quantize mode, const Outcome &r) {
      if (mode != Quantize::INT8) return;
      EXPECT_EQ(countFused(r.graph, backend::OpKind::ConvTranspose, g.relu), 1u);
    });
  }
}

// PP-OCR's head: conv_transpose, its bias as a [1, C, 1, 1] add, batch norm,
// relu: the add and the batch norm fold into the filter and bias, the relu
// fuses; one op.
TEST(Lowering, ConvTransposeAbsorbsBiasAddAndBatchNorm) {
  Case c;
  c.inputs = {{1, 24, 6, 5}};
  c.output = {1, 24, 12, 10};
  c.weights["w"] = randomWeight({24, 24, 2, 2}, 0.3f, 51);
  c.weights["b"] = randomWeight({1, 24, 1, 1}, 0.3f, 52);
  c.weights["gamma"] = randomWeight({24}, 1.0f, 53);
  c.weights["beta"] = randomWeight({24}, 0.3f, 54);
  c.weights["mean"] = randomWeight({24}, 0.3f, 55);
  std::vector<float> var(24, 0.7f);
  c.weights["var"] = NpyArray::from({24}, var.data(), var.size());
  const std::string y = "tensor<1x24x12x10xf32>", v = "tensor<24xf32>";
  c.body = "%w = top.weight \"w\" : tensor<24x24x2x2xf32>\n%none = top.none\n%b = top.weight \"b\" : tensor<1x24x1x1xf32>\n"
           "%g = top.weight \"gamma\" : " + v + "\n%be = top.weight \"beta\" : " + v + "\n%m = top.weight \"mean\" : " + v +
           "\n%v = top.weight \"var\" : " + v + "\n"
           "%t = \"top.conv_transpose\"(%in0, %w, %none) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, "
           "pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>} : "
           "(tensor<1x24x6x5xf32>, tensor<24x24x2x2xf32>, none) -> " + y + " loc(\"t\")\n"
           "%a = \"top.add\"(%t, %b) : (" + y + ", tensor<1x24x1x1xf32>) -> " + y + " loc(\"a\")\n"
           "%bn = \"top.batch_norm\"(%a, %g, %be, %m, %v) {epsilon = 1.0e-5 : f64} : (" + y + ", " + v + ", " + v + ", " +
           v + ", " + v + ") -> " + y + " loc(\"bn\")\n"
           "%y = \"top.relu\"(%bn) : (" + y + ") -> " + y + " loc(\"y\")";
  expectBoth(c, [&](Quantize, const Outcome &r) {
    EXPECT_EQ(countFused(r.graph, backend::OpKind::ConvTranspose, true), 1u);
    EXPECT_EQ(countKind(r.graph, backend::OpKind::Affine) + countKind(r.graph, backend::OpKind::Add) +
                  countKind(r.graph, backend::OpKind::Relu),
              0u);
  });
}

// A grouped transposed conv (filter [ic, oc/group, kh, kw]) with a batch
// norm and relu behind it: the batch norm folds into the filter channel by
// channel of each group (input channel i feeds outputs (i / icg) * ocg + j).
TEST(Lowering, GroupedConvTransposeAbsorbsBatchNorm) {
  for (int64_t group : {2, 4}) {
    Case c;
    c.inputs = {{1, 4, 3, 3}};
    c.output = {1, 6 * group / 2, 6, 6};
    const int64_t oc = 6 * group / 2;
    const std::string y = "tensor<1x" + std::to_string(oc) + "x6x6xf32>", v = "tensor<" + std::to_string(oc) + "xf32>";
    const std::string w = "tensor<4x" + std::to_string(oc / group) + "x2x2xf32>";
    c.weights["w"] = randomWeight({4, oc / group, 2, 2}, 0.3f, 43);
    c.weights["gamma"] = randomWeight({oc}, 1.0f, 44);
    c.weights["beta"] = randomWeight({oc}, 0.3f, 45);
    c.weights["mean"] = randomWeight({oc}, 0.3f, 46);
    std::vector<float> var(size_t(oc), 0.6f);
    c.weights["var"] = NpyArray::from({oc}, var.data(), var.size());
    c.body = "%w = top.weight \"w\" : " + w + "\n%b = top.none\n%g = top.weight \"gamma\" : " + v +
             "\n%be = top.weight \"beta\" : " + v + "\n%m = top.weight \"mean\" : " + v + "\n%v = top.weight \"var\" : " + v +
             "\n%t = \"top.conv_transpose\"(%in0, %w, %b) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, "
             "pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, group = " +
             std::to_string(group) + " : i64} : (tensor<1x4x3x3xf32>, " + w + ", none) -> " + y + " loc(\"t\")\n"
             "%bn = \"top.batch_norm\"(%t, %g, %be, %m, %v) {epsilon = 1.0e-5 : f64} : (" + y + ", " + v + ", " + v + ", " +
             v + ", " + v + ") -> " + y + " loc(\"bn\")\n"
             "%y = \"top.relu\"(%bn) : (" + y + ") -> " + y + " loc(\"y\")";
    SCOPED_TRACE("group " + std::to_string(group));
    expectBoth(c, [&](Quantize, const Outcome &r) {
      EXPECT_EQ(countFused(r.graph, backend::OpKind::ConvTranspose, true), 1u);
      EXPECT_EQ(countKind(r.graph, backend::OpKind::Affine), 0u);
    });
  }
}

// INT8: scalar affines around a table op (PP-OCR: x * s + b, hard_swish,
// x * s + b) fold into its 256 entries: one lut, no affine; F32 keeps them.
TEST(Lowering, ScalarAffinesFoldIntoTables) {
  Case c;
  c.inputs = {{1, 66, 5, 7}};
  c.inputStd = {2.0f};
  c.output = {1, 66, 5, 7};
  c.weights["s"] = NpyArray::from({1}, std::vector<float>{1.3f});
  c.weights["t"] = NpyArray::from({1}, std::vector<float>{0.6f});
  c.weights["u"] = NpyArray::from({1}, std::vector<float>{0.7f});
  c.weights["v"] = NpyArray::from({1}, std::vector<float>{-0.2f});
  const std::string y = "tensor<1x66x5x7xf32>", one = "tensor<1xf32>";
  c.body = "%s = top.weight \"s\" : " + one + "\n%t = top.weight \"t\" : " + one + "\n%u = top.weight \"u\" : " + one +
           "\n%v = top.weight \"v\" : " + one + "\n"
           "%m = \"top.mul\"(%s, %in0) : (" + one + ", " + y + ") -> " + y + " loc(\"m\")\n"
           "%a = \"top.add\"(%m, %t) : (" + y + ", " + one + ") -> " + y + " loc(\"a\")\n"
           "%h = \"top.hard_swish\"(%a) : (" + y + ") -> " + y + " loc(\"h\")\n"
           "%m2 = \"top.mul\"(%u, %h) : (" + one + ", " + y + ") -> " + y + " loc(\"m2\")\n"
           "%y = \"top.add\"(%m2, %v) : (" + y + ", " + one + ") -> " + y + " loc(\"y\")";
  expectBoth(c, [](Quantize mode, const Outcome &r) {
    if (mode == Quantize::INT8) {
      EXPECT_EQ(countKind(r.graph, backend::OpKind::Lut), 1u);
      EXPECT_EQ(countKind(r.graph, backend::OpKind::Affine), 0u);
    } else {
      EXPECT_EQ(countKind(r.graph, backend::OpKind::Affine), 3u); // two scalar affines + hard_swish's
    }
  });
}

// fp32: hard_sigmoid = affine + clip, hard_swish = affine + clip + mul; int8:
// one table each.
TEST(Lowering, HardSigmoidAndHardSwish) {
  Case c;
  c.inputs = {{1, 65, 4, 6}};
  c.inputStd = {3.0f};
  c.output = {1, 65, 4, 6};
  c.body = "%h = \"top.hard_swish\"(%in0) : (tensor<1x65x4x6xf32>) -> tensor<1x65x4x6xf32> loc(\"h\")\n"
           "%y = \"top.hard_sigmoid\"(%h) {alpha = 0.1666667 : f64, beta = 0.5 : f64} : (tensor<1x65x4x6xf32>) -> "
           "tensor<1x65x4x6xf32> loc(\"y\")";
  expectBoth(c, [](Quantize mode, const Outcome &r) {
    if (mode == Quantize::F32) {
      EXPECT_EQ(countKind(r.graph, backend::OpKind::Affine), 2u);
      EXPECT_EQ(countKind(r.graph, backend::OpKind::Clip), 2u);
      EXPECT_EQ(countKind(r.graph, backend::OpKind::Mul), 1u);
    } else {
      EXPECT_EQ(countKind(r.graph, backend::OpKind::Lut), 2u);
    }
  });
}

TEST(Lowering, ConvQuantizationUsesTheInt8RangeAndAnExactShift) {
  Case c;
  c.inputs = {{1, 3, 6, 6}};
  c.output = {1, 4, 6, 6};
  c.weights["w"] = randomWeight({4, 3, 3, 3}, 0.3f, 9);
  c.weights["b"] = randomWeight({4}, 0.2f, 10);
  c.body = "%w = top.weight \"w\" : tensor<4x3x3x3xf32>\n%b = top.weight \"b\" : tensor<4xf32>\n" +
           conv("y", "in0", "w", "b", {1, 3, 6, 6}, {4, 3, 3, 3}, {1, 4, 6, 6}, k3p1);
  Pipeline p(c);
  auto q = p.run(Quantize::INT8);
  ASSERT_TRUE(q) << q.message();
  const backend::Op *convOp = nullptr;
  for (const auto &op : q->graph.ops)
    if (op.kind == backend::OpKind::Conv) convOp = &op;
  ASSERT_NE(convOp, nullptr);
  const backend::Tensor &w = q->graph.tensors[size_t(convOp->inputs[1])];
  const backend::Tensor &b = q->graph.tensors[size_t(convOp->inputs[2])];
  EXPECT_EQ(w.dtype, backend::DType::I8);
  EXPECT_EQ(b.dtype, backend::DType::I16);
  int maxW = 0;
  for (uint8_t x : w.data) maxW = std::max(maxW, std::abs(int(int8_t(x))));
  // The largest shift that fits: the weights use more than half the range.
  EXPECT_GT(maxW, 63);
  EXPECT_LE(maxW, 127);
  EXPECT_GT(convOp->rshift, 0u);
}

TEST(Lowering, MixedPrecisionInsertsCasts) {
  Case c;
  c.inputs = {{1, 3, 6, 6}};
  c.output = {1, 4, 6, 6};
  c.weights["w"] = randomWeight({4, 3, 3, 3}, 0.3f, 11);
  c.body = "%w = top.weight \"w\" : tensor<4x3x3x3xf32>\n%none = top.none\n" +
           conv("c", "in0", "w", "none", {1, 3, 6, 6}, {4, 3, 3, 3}, {1, 4, 6, 6}, k3p1) +
           "%y = \"top.leaky_relu\"(%c) {alpha = 0.2 : f64} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> loc(\"y\")";
  Pipeline p(c);
  auto q = p.run(Quantize::INT8, {"c"});
  ASSERT_TRUE(q) << q.message();
  EXPECT_GE(q->cosineVsTop, 0.99);
  EXPECT_TRUE(q->bitExact);
  const backend::Op *convOp = nullptr;
  for (const auto &op : q->graph.ops)
    if (op.kind == backend::OpKind::Conv) convOp = &op;
  ASSERT_NE(convOp, nullptr);
  EXPECT_EQ(q->graph.tensors[size_t(convOp->output)].dtype, backend::DType::F32);
  // fp32 conv -> cast to int8 -> leaky relu int8 -> cast to fp32 output.
  EXPECT_EQ(countKind(q->graph, backend::OpKind::Cast), 2u);
}

TEST(Lowering, MissingCalibrationTensorsAreNamed) {
  Case c;
  c.inputs = {{1, 2, 4, 4}};
  c.output = {1, 2, 4, 4};
  c.body = "%y = \"top.relu\"(%in0) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc(\"y\")";
  Pipeline p(c);
  auto module = p.parse();
  ASSERT_TRUE(module) << module.message();
  auto weights = top::WeightStore::loadFor(**module);
  ASSERT_TRUE(weights) << weights.message();
  calib::CalibrationTable table;
  table.tensors["in0"] = {1.0, -1.0, 1.0};
  lowering::LoweringOptions lo;
  lo.mode = Quantize::INT8;
  lo.calibration = &table;
  auto lowered = lowering::lowerToTpu(**module, *weights, lo);
  ASSERT_FALSE(lowered);
  EXPECT_EQ(lowered.message(), "the calibration table lacks 1 tensor(s) of the model: y");
  lo.calibration = nullptr;
  auto none = lowering::lowerToTpu(**module, *weights, lo);
  ASSERT_FALSE(none);
  EXPECT_NE(none.message().find("calibration table"), std::string::npos);
}

TEST(Lowering, OpWithoutLoweringIsNamed) {
  Case c;
  c.inputs = {{1, 2, 4, 4}};
  c.output = {1, 2, 4, 4};
  c.output = {1, 1, 4, 4};
  c.body = "%i = \"top.arg_max\"(%in0) <{axis = 1 : i64}> : (tensor<1x2x4x4xf32>) -> tensor<1x1x4x4xi64> loc(\"the_index\")\n"
           "%y = \"top.cast\"(%i) <{to = f32}> : (tensor<1x1x4x4xi64>) -> tensor<1x1x4x4xf32> loc(\"y\")";
  Pipeline p(c);
  // With CPU sub-nets refused, the op the chip cannot run is named.
  auto r = p.run(Quantize::F32, {}, /*cpuOps=*/false);
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("no lowering for top.arg_max 'the_index' at loc(\"the_index\")"), std::string::npos)
      << r.message();
  // Allowed (the default), arg_max and the cast run on the host: the bmodel
  // equals the Tpu interpreter, which equals the Top interpreter.
  for (Quantize mode : {Quantize::F32, Quantize::INT8}) {
    auto host = p.run(mode);
    ASSERT_TRUE(host) << host.message();
    EXPECT_TRUE(host->bitExact);
    EXPECT_DOUBLE_EQ(host->cosineVsTop, 1.0);
    EXPECT_EQ(std::count_if(host->graph.ops.begin(), host->graph.ops.end(),
                            [](const backend::Op &op) { return op.kind == backend::OpKind::Cpu; }),
              2);
  }
}

TEST(Lowering, QuantizeModeNames) {
  EXPECT_EQ(*lowering::parseQuantize("INT8"), Quantize::INT8);
  EXPECT_EQ(*lowering::parseQuantize("F32"), Quantize::F32);
  EXPECT_EQ(*lowering::parseQuantize("F16"), Quantize::F16);
  EXPECT_EQ(*lowering::parseQuantize("BF16"), Quantize::BF16);
  for (Quantize m : {Quantize::F32, Quantize::INT8, Quantize::F16, Quantize::BF16})
    EXPECT_EQ(*lowering::parseQuantize(lowering::quantizeName(m)), m);
  auto bad = lowering::parseQuantize("FP8");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.message(), "--quantize 'FP8' is not one of F32, INT8, F16, BF16");
}

} // namespace
