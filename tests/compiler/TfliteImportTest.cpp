// The TFLite importer on a small fully quantized model that the test writes
// itself with the FlatBuffers builder (no quantized model ships as a package):
//   input f32 -> QUANTIZE int8 -> CONV_2D (int8 per-channel filter, int32 bias,
//   fused RELU) -> MAX_POOL_2D -> DEQUANTIZE -> output f32.
// Checked: the weights are the real (dequantized) values in OIHW order, the
// emitted calibration table holds the model's own ranges as symmetric
// thresholds, and the Top interpreter computes the dequantized model.
#include "compiler/Calibration/CalibrationTable.h"
#include "compiler/Import/tflite/TfliteImporter.h"
#include "compiler/Import/tflite/schema_generated.h"
#include "compiler/Interpreter/TopInterpreter.h"

#include "llvm/Support/FileSystem.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>

namespace {

namespace fb = ::tflite;
using tpu::NpyArray;

constexpr int H = 6, W = 6, C = 2, O = 3, K = 3;
const float kInScale = 0.02f, kOutScale = 0.05f, kWeightScales[O] = {0.01f, 0.02f, 0.03f};
const int64_t kInZero = -10, kOutZero = -128;

int8_t weightQ(int o, int y, int x, int c) { return int8_t((o * 37 + y * 11 + x * 5 + c * 3) % 41 - 20); }
int32_t biasQ(int o) { return 100 * (o - 1); }

std::unique_ptr<fb::QuantizationParametersT> quant(std::vector<float> scale, std::vector<int64_t> zero, int axis = 0) {
  auto q = std::make_unique<fb::QuantizationParametersT>();
  q->scale = std::move(scale);
  q->zero_point = std::move(zero);
  q->quantized_dimension = axis;
  return q;
}

template <typename T> std::vector<uint8_t> bytesOf(const std::vector<T> &v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

std::vector<uint8_t> quantizedModel() {
  fb::ModelT m;
  m.version = 3;
  for (int code : {fb::BuiltinOperator_QUANTIZE, fb::BuiltinOperator_CONV_2D, fb::BuiltinOperator_MAX_POOL_2D,
                   fb::BuiltinOperator_DEQUANTIZE}) {
    auto c = std::make_unique<fb::OperatorCodeT>();
    c->deprecated_builtin_code = int8_t(code);
    c->builtin_code = fb::BuiltinOperator(code);
    m.operator_codes.push_back(std::move(c));
  }
  m.buffers.push_back(std::make_unique<fb::BufferT>()); // the empty sentinel
  auto tensor = [&](const char *name, std::vector<int32_t> shape, fb::TensorType type,
                    std::unique_ptr<fb::QuantizationParametersT> q, std::vector<uint8_t> data = {}) {
    auto t = std::make_unique<fb::TensorT>();
    t->name = name;
    t->shape = std::move(shape);
    t->type = type;
    t->quantization = std::move(q);
    if (!data.empty()) {
      t->buffer = m.buffers.size();
      auto b = std::make_unique<fb::BufferT>();
      b->data = std::move(data);
      m.buffers.push_back(std::move(b));
    }
    return t;
  };
  std::vector<int8_t> w;
  for (int o = 0; o < O; ++o)
    for (int y = 0; y < K; ++y)
      for (int x = 0; x < K; ++x)
        for (int c = 0; c < C; ++c) w.push_back(weightQ(o, y, x, c));
  std::vector<int32_t> bias;
  std::vector<float> biasScales;
  for (int o = 0; o < O; ++o) {
    bias.push_back(biasQ(o));
    biasScales.push_back(kInScale * kWeightScales[o]);
  }
  auto g = std::make_unique<fb::SubGraphT>();
  g->tensors.push_back(tensor("input", {1, H, W, C}, fb::TensorType_FLOAT32, nullptr));
  g->tensors.push_back(tensor("input_int8", {1, H, W, C}, fb::TensorType_INT8, quant({kInScale}, {kInZero})));
  g->tensors.push_back(tensor("conv_w", {O, K, K, C}, fb::TensorType_INT8,
                              quant({kWeightScales, kWeightScales + O}, {0, 0, 0}, 0), bytesOf(w)));
  g->tensors.push_back(tensor("conv_b", {O}, fb::TensorType_INT32, quant(biasScales, {0, 0, 0}), bytesOf(bias)));
  g->tensors.push_back(tensor("conv_out", {1, H, W, O}, fb::TensorType_INT8, quant({kOutScale}, {kOutZero})));
  g->tensors.push_back(tensor("pool_out", {1, H / 2, W / 2, O}, fb::TensorType_INT8, quant({kOutScale}, {kOutZero})));
  g->tensors.push_back(tensor("output", {1, H / 2, W / 2, O}, fb::TensorType_FLOAT32, nullptr));
  g->inputs = {0};
  g->outputs = {6};
  auto op = [&](uint32_t code, std::vector<int32_t> in, std::vector<int32_t> out) {
    auto o = std::make_unique<fb::OperatorT>();
    o->opcode_index = code;
    o->inputs = std::move(in);
    o->outputs = std::move(out);
    return o;
  };
  g->operators.push_back(op(0, {0}, {1}));
  auto conv = op(1, {1, 2, 3}, {4});
  fb::Conv2DOptionsT convOptions;
  convOptions.padding = fb::Padding_SAME;
  convOptions.stride_w = convOptions.stride_h = 1;
  convOptions.fused_activation_function = fb::ActivationFunctionType_RELU;
  conv->builtin_options.Set(convOptions);
  g->operators.push_back(std::move(conv));
  auto pool = op(2, {4}, {5});
  fb::Pool2DOptionsT poolOptions;
  poolOptions.padding = fb::Padding_VALID;
  poolOptions.stride_w = poolOptions.stride_h = poolOptions.filter_width = poolOptions.filter_height = 2;
  pool->builtin_options.Set(poolOptions);
  g->operators.push_back(std::move(pool));
  g->operators.push_back(op(3, {5}, {6}));
  m.subgraphs.push_back(std::move(g));
  flatbuffers::FlatBufferBuilder builder;
  builder.Finish(fb::Model::Pack(builder, &m), fb::ModelIdentifier());
  return std::vector<uint8_t>(builder.GetBufferPointer(), builder.GetBufferPointer() + builder.GetSize());
}

std::string tempDir() {
  llvm::SmallString<128> dir;
  EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("tflite_import", dir));
  return dir.str().str();
}

// The quantized model parsed and imported (in memory).
class TfliteQuantized : public ::testing::Test {
protected:
  void SetUp() override {
    std::vector<uint8_t> bytes = quantizedModel();
    auto model = tpu::tflite::parseModel(bytes.data(), bytes.size());
    ASSERT_TRUE(model.isOk()) << model.message();
    auto result = tpu::tflite::importModel(context, *model, {});
    ASSERT_TRUE(result.isOk()) << result.message();
    imported = result.take();
  }
  mlir::MLIRContext context;
  tpu::tflite::ImportedModule imported;
};

TEST_F(TfliteQuantized, WeightsAreRealValuesInOihw) {
  const NpyArray &w = imported.weights.at("conv_w");
  ASSERT_EQ(w.shape, (std::vector<int64_t>{O, C, K, K}));
  for (int o = 0; o < O; ++o)
    for (int c = 0; c < C; ++c)
      for (int y = 0; y < K; ++y)
        for (int x = 0; x < K; ++x)
          EXPECT_FLOAT_EQ(w.as<float>()[((o * C + c) * K + y) * K + x], kWeightScales[o] * weightQ(o, y, x, c));
  const NpyArray &b = imported.weights.at("conv_b");
  for (int o = 0; o < O; ++o) EXPECT_FLOAT_EQ(b.as<float>()[o], kInScale * kWeightScales[o] * biasQ(o));
}

TEST(TfliteImport, CalibrationTableHoldsTheModelsScales) {
  std::string dir = tempDir(), tflite = dir + "/q.tflite", cali = dir + "/q.cali";
  std::vector<uint8_t> bytes = quantizedModel();
  std::ofstream(tflite, std::ios::binary).write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  tpu::tflite::ImportOptions options;
  options.calibrationPath = cali;
  auto st = tpu::tflite::importTfliteFile(tflite, dir + "/q.top.mlir", options);
  ASSERT_TRUE(st.isOk()) << st.message();
  auto table = tpu::calib::CalibrationTable::load(cali);
  ASSERT_TRUE(table.isOk()) << table.message();
  // int8 covers [scale * (-128 - zp), scale * (127 - zp)]; the threshold is the larger end.
  struct Expected {
    const char *name;
    double min, max;
  };
  for (Expected e : {Expected{"input", kInScale * (-128 - kInZero), kInScale * (127 - kInZero)},
                     Expected{"conv_out", kOutScale * (-128 - kOutZero), kOutScale * (127 - kOutZero)},
                     Expected{"pool_out", kOutScale * (-128 - kOutZero), kOutScale * (127 - kOutZero)}}) {
    auto it = table->tensors.find(e.name);
    ASSERT_NE(it, table->tensors.end()) << e.name << " is not in\n" << table->text();
    EXPECT_NEAR(it->second.min, e.min, 1e-6) << e.name;
    EXPECT_NEAR(it->second.max, e.max, 1e-6) << e.name;
    EXPECT_NEAR(it->second.threshold, std::max(std::abs(e.min), std::abs(e.max)), 1e-6) << e.name;
  }
}

TEST_F(TfliteQuantized, TopInterpreterComputesTheDequantizedModel) {
  auto interp = top::TopInterpreter::create(*imported.module, imported.weights);
  ASSERT_TRUE(interp.isOk()) << interp.message();
  std::vector<float> x(H * W * C); // NHWC
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.7f * float(i)) * 2.0f;
  auto out = (*interp)->run({{"input", NpyArray::from({1, H, W, C}, x)}});
  ASSERT_TRUE(out.isOk()) << out.message();
  const NpyArray &y = out->at("output");
  ASSERT_EQ(y.shape, (std::vector<int64_t>{1, H / 2, W / 2, O}));
  // The float model the quantized one stands for, straight from TFLite's definitions (NHWC, OHWI).
  auto conv = [&](int oy, int ox, int o) {
    double acc = kInScale * kWeightScales[o] * biasQ(o);
    for (int ky = 0; ky < K; ++ky)
      for (int kx = 0; kx < K; ++kx) {
        int iy = oy + ky - 1, ix = ox + kx - 1; // SAME, stride 1: one row/column of padding
        if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
        for (int c = 0; c < C; ++c) acc += x[(iy * W + ix) * C + c] * kWeightScales[o] * weightQ(o, ky, kx, c);
      }
    return std::max(acc, 0.0);
  };
  for (int py = 0; py < H / 2; ++py)
    for (int px = 0; px < W / 2; ++px)
      for (int o = 0; o < O; ++o) {
        double m = 0;
        for (int dy = 0; dy < 2; ++dy)
          for (int dx = 0; dx < 2; ++dx) m = std::max(m, conv(2 * py + dy, 2 * px + dx, o));
        EXPECT_NEAR(y.as<float>()[(py * (W / 2) + px) * O + o], m, 1e-5) << py << "," << px << "," << o;
      }
}

} // namespace
