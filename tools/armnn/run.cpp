// Arm NN reference runner for TFLite models (Debian's Arm NN, CpuRef backend):
//   armnn-run model.tflite in.npz out.npz
// Feeds the float32 arrays of in.npz to the model's inputs by name (shape as in
// the model), runs the network on the CpuRef backend and writes every output as
// float32 into out.npz — the TFLite counterpart of tools/ort for ONNX.
// Errors (including an operator Arm NN's parser does not know): one line on
// stderr, exit code 2.
//
// Arm NN 20.08 takes filters only as constant tensors, so the DEQUANTIZE of a
// float16 constant (how TFLite stores half-precision weights) is folded first:
// its output becomes a float32 constant holding the same values (exact: every
// float16 is a float32). Nothing else in the model is changed.
//
// Where Arm NN 20.08 computes something other than TFLite the model is refused
// rather than run to a different result (docs/models.md has the measurements):
// RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR with half_pixel_centers (ignored),
// RESIZE_NEAREST_NEIGHBOR with align_corners (ignored: it takes floor(y * in / out)),
// TRANSPOSE_CONV with SAME padding (placed differently; VALID agrees).
#include "compiler/Import/tflite/TfliteModel.h"
#include "compiler/Import/tflite/schema_generated.h"
#include "support/Npz.h"

#include <armnn/ArmNN.hpp>
#include <armnnTfLiteParser/ITfLiteParser.hpp>

#include <algorithm>
#include <fstream>
#include <iostream>

namespace {

constexpr int kExitError = 2;

std::vector<int64_t> dimsOf(const armnn::TensorInfo &info) {
  std::vector<int64_t> dims;
  for (unsigned i = 0; i < info.GetNumDimensions(); ++i) dims.push_back(info.GetShape()[i]);
  return dims;
}

// The model with every DEQUANTIZE of a float16 constant folded into a float32 constant.
tpu::Result<std::vector<uint8_t>> foldHalfDequantize(const std::string &modelPath) {
  std::ifstream in(modelPath, std::ios::binary);
  if (!in) return tpu::makeError(modelPath, ": cannot open");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto checked = tpu::tflite::parseModel(bytes.data(), bytes.size());
  if (!checked) return tpu::Status(checked.status()).prefix(modelPath);
  std::unique_ptr<tflite::ModelT> model = tflite::UnPackModel(bytes.data());
  tflite::SubGraphT &graph = *model->subgraphs.at(0);
  auto &ops = graph.operators;
  size_t folded = 0; // operators removed so far: checked->operators[i + folded] is ops[i]
  for (size_t i = 0; i < ops.size();) {
    const tflite::OperatorCodeT &code = *model->operator_codes.at(ops[i]->opcode_index);
    int32_t builtin = std::max<int32_t>(code.deprecated_builtin_code, code.builtin_code);
    const tpu::tflite::Operator &op = checked->operators[i + folded];
    const bool resize = builtin == tflite::BuiltinOperator_RESIZE_BILINEAR ||
                        builtin == tflite::BuiltinOperator_RESIZE_NEAREST_NEIGHBOR;
    const char *unlike = nullptr;
    if (resize && op.options.halfPixelCenters) unlike = "half_pixel_centers, which Arm NN 20.08 ignores";
    else if (builtin == tflite::BuiltinOperator_RESIZE_NEAREST_NEIGHBOR && op.options.alignCorners)
      unlike = "align_corners, which Arm NN 20.08 ignores for nearest";
    else if (builtin == tflite::BuiltinOperator_TRANSPOSE_CONV && op.options.padding == tpu::tflite::Padding::Same)
      unlike = "SAME padding, which Arm NN 20.08 places unlike TFLite";
    if (unlike) return tpu::makeError(modelPath, ": ", op.describe(), " uses ", unlike, " (its result would differ)");
    const tpu::tflite::Tensor &source = checked->tensors[ops[i]->inputs.at(0)];
    if (builtin != tflite::BuiltinOperator_DEQUANTIZE || source.type != tflite::TensorType_FLOAT16 ||
        !source.isConstant()) {
      ++i;
      continue;
    }
    auto real = tpu::tflite::realValues(source);
    if (!real) return real.status();
    auto buffer = std::make_unique<tflite::BufferT>();
    buffer->data = real->data;
    graph.tensors.at(ops[i]->outputs.at(0))->buffer = model->buffers.size();
    model->buffers.push_back(std::move(buffer));
    ops.erase(ops.begin() + i);
    ++folded;
  }
  flatbuffers::FlatBufferBuilder builder;
  builder.Finish(tflite::Model::Pack(builder, model.get()), tflite::ModelIdentifier());
  return std::vector<uint8_t>(builder.GetBufferPointer(), builder.GetBufferPointer() + builder.GetSize());
}

tpu::Result<tpu::NpzMap> run(const std::string &modelPath, const tpu::NpzMap &inputs) {
  auto folded = foldHalfDequantize(modelPath);
  if (!folded) return folded.status();
  auto parser = armnnTfLiteParser::ITfLiteParser::Create();
  armnn::INetworkPtr network = parser->CreateNetworkFromBinary(*folded);
  if (parser->GetSubgraphCount() != 1)
    return tpu::makeError(modelPath, ": ", parser->GetSubgraphCount(), " subgraphs, expected 1");
  armnn::IRuntimePtr runtime = armnn::IRuntime::Create(armnn::IRuntime::CreationOptions());
  std::vector<std::string> optimizerMessages;
  armnn::IOptimizedNetworkPtr optimized = armnn::Optimize(*network, {armnn::Compute::CpuRef}, runtime->GetDeviceSpec(),
                                                          armnn::OptimizerOptions(), optimizerMessages);
  if (!optimized)
    return tpu::makeError(modelPath, ": the CpuRef backend cannot run the network: ",
                          optimizerMessages.empty() ? "no reason given" : optimizerMessages.front());
  armnn::NetworkId id = 0;
  std::string why;
  if (runtime->LoadNetwork(id, std::move(optimized), why, armnn::INetworkProperties()) != armnn::Status::Success)
    return tpu::makeError(modelPath, ": Arm NN cannot load the network: ", why);

  std::vector<std::vector<float>> inputData;
  armnn::InputTensors bound;
  for (const std::string &name : parser->GetSubgraphInputTensorNames(0)) {
    auto info = parser->GetNetworkInputBindingInfo(0, name);
    auto it = inputs.find(name);
    if (it == inputs.end()) return tpu::makeError("input '", name, "' is missing from the input npz");
    if (!it->second.is<float>()) return tpu::makeError("input '", name, "' must be float32, got ", it->second.dtype);
    if (it->second.shape != dimsOf(info.second))
      return tpu::makeError("input '", name, "' has shape ", tpu::shapeToString(it->second.shape), ", the model wants ",
                            tpu::shapeToString(dimsOf(info.second)));
    inputData.push_back(it->second.values<float>());
    bound.emplace_back(info.first, armnn::ConstTensor(info.second, inputData.back().data()));
  }
  std::vector<std::pair<std::string, armnn::BindingPointInfo>> outputInfos;
  std::vector<std::vector<float>> outputData;
  armnn::OutputTensors outputs;
  for (const std::string &name : parser->GetSubgraphOutputTensorNames(0)) outputInfos.emplace_back(name, parser->GetNetworkOutputBindingInfo(0, name));
  outputData.reserve(outputInfos.size());
  for (const auto &[name, info] : outputInfos) {
    outputData.emplace_back(info.second.GetNumElements());
    outputs.emplace_back(info.first, armnn::Tensor(info.second, outputData.back().data()));
  }
  if (runtime->EnqueueWorkload(id, bound, outputs) != armnn::Status::Success)
    return tpu::makeError(modelPath, ": Arm NN failed to run the network");
  tpu::NpzMap result;
  for (size_t i = 0; i < outputInfos.size(); ++i)
    result[outputInfos[i].first] = tpu::NpyArray::from(dimsOf(outputInfos[i].second.second), outputData[i]);
  return result;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 4) {
    std::cerr << "usage: armnn-run model.tflite in.npz out.npz\n";
    return kExitError;
  }
  armnn::ConfigureLogging(false, false, armnn::LogSeverity::Fatal);
  try {
    auto inputs = tpu::readNpz(argv[2]);
    if (!inputs) throw std::runtime_error(inputs.message());
    auto outputs = run(argv[1], *inputs);
    if (!outputs) throw std::runtime_error(outputs.message());
    if (auto st = tpu::writeNpz(argv[3], *outputs); !st) throw std::runtime_error(st.message());
  } catch (const std::exception &e) { // Arm NN reports unsupported operators and bad files by exception
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    std::cerr << "armnn-run: error: " << what << "\n";
    return kExitError;
  }
  return 0;
}
