#include "compiler/Import/tflite/TfliteModel.h"
#include "compiler/Import/tflite/schema_generated.h"
#include "support/ReadFile.h"

#include <cmath>
#include <cstring>

namespace tpu::tflite {

namespace fb = ::tflite;

namespace {

constexpr int32_t kCustomCode = fb::BuiltinOperator_CUSTOM;
// Codes below this live in the old byte field (TFLite's own rule: the larger wins).
constexpr int64_t kMaxElements = int64_t(1) << 31;

size_t elementBytes(int8_t type) {
  switch (ElementType(type)) {
  case ElementType::Float32:
  case ElementType::Int32: return 4;
  case ElementType::Float16:
  case ElementType::Int16: return 2;
  case ElementType::UInt8:
  case ElementType::Int8: return 1;
  case ElementType::Int64: return 8;
  }
  return 0;
}

std::string typeName(int8_t type) {
  const char *name = fb::EnumNameTensorType(fb::TensorType(type));
  return name && *name ? name : "type " + std::to_string(type);
}

float halfToFloat(uint16_t h) {
  const int sign = h >> 15, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  float magnitude;
  if (exponent == 0) magnitude = std::ldexp(float(mantissa), -24); // subnormal
  else if (exponent == 31) magnitude = mantissa ? NAN : INFINITY;
  else magnitude = std::ldexp(float(mantissa | 0x400), exponent - 25);
  return sign ? -magnitude : magnitude;
}

// Copied bytewise: the verifier checks a vector's 4-byte length alignment, not
// its elements', so an int64 vector (zero_point) may sit at any 4-byte offset.
template <typename T> std::vector<T> copyVector(const flatbuffers::Vector<T> *v) {
  std::vector<T> out(v ? v->size() : 0);
  if (!out.empty()) std::memcpy(out.data(), v->Data(), out.size() * sizeof(T));
  return out;
}
template <typename T> std::vector<int64_t> widen(const flatbuffers::Vector<T> *v) {
  std::vector<T> values = copyVector(v);
  return std::vector<int64_t>(values.begin(), values.end());
}

// The option tables share field names; each one read fills its fields.
Options decodeOptions(const fb::Operator &op) {
  Options o;
  auto window = [&](const auto *t) {
    o.padding = Padding(t->padding());
    o.strideW = t->stride_w();
    o.strideH = t->stride_h();
  };
  if (auto *t = op.builtin_options_as_Conv2DOptions()) {
    window(t);
    o.activation = Activation(t->fused_activation_function());
    o.dilationW = t->dilation_w_factor();
    o.dilationH = t->dilation_h_factor();
  } else if (auto *t = op.builtin_options_as_DepthwiseConv2DOptions()) {
    window(t);
    o.activation = Activation(t->fused_activation_function());
    o.depthMultiplier = t->depth_multiplier();
    o.dilationW = t->dilation_w_factor();
    o.dilationH = t->dilation_h_factor();
  } else if (auto *t = op.builtin_options_as_Pool2DOptions()) {
    window(t);
    o.filterW = t->filter_width();
    o.filterH = t->filter_height();
    o.activation = Activation(t->fused_activation_function());
  } else if (auto *t = op.builtin_options_as_TransposeConvOptions()) {
    window(t);
    o.activation = Activation(t->fused_activation_function());
  } else if (auto *t = op.builtin_options_as_FullyConnectedOptions()) {
    o.activation = Activation(t->fused_activation_function());
    o.weightsFormat = t->weights_format();
    o.keepNumDims = t->keep_num_dims();
  } else if (auto *t = op.builtin_options_as_SoftmaxOptions()) {
    o.beta = t->beta();
  } else if (auto *t = op.builtin_options_as_ConcatenationOptions()) {
    o.axis = t->axis();
    o.activation = Activation(t->fused_activation_function());
  } else if (auto *t = op.builtin_options_as_AddOptions()) {
    o.activation = Activation(t->fused_activation_function());
  } else if (auto *t = op.builtin_options_as_SubOptions()) {
    o.activation = Activation(t->fused_activation_function());
  } else if (auto *t = op.builtin_options_as_MulOptions()) {
    o.activation = Activation(t->fused_activation_function());
  } else if (auto *t = op.builtin_options_as_DivOptions()) {
    o.activation = Activation(t->fused_activation_function());
  } else if (auto *t = op.builtin_options_as_ResizeBilinearOptions()) {
    o.alignCorners = t->align_corners();
    o.halfPixelCenters = t->half_pixel_centers();
  } else if (auto *t = op.builtin_options_as_ResizeNearestNeighborOptions()) {
    o.alignCorners = t->align_corners();
    o.halfPixelCenters = t->half_pixel_centers();
  } else if (auto *t = op.builtin_options_as_ReshapeOptions()) {
    o.newShape = widen(t->new_shape());
  } else if (auto *t = op.builtin_options_as_ReducerOptions()) {
    o.keepDims = t->keep_dims();
  } else if (auto *t = op.builtin_options_as_SqueezeOptions()) {
    o.squeezeDims = widen(t->squeeze_dims());
  } else if (auto *t = op.builtin_options_as_SplitOptions()) {
    o.numSplits = t->num_splits();
  } else if (auto *t = op.builtin_options_as_StridedSliceOptions()) {
    o.beginMask = t->begin_mask();
    o.endMask = t->end_mask();
    o.ellipsisMask = t->ellipsis_mask();
    o.newAxisMask = t->new_axis_mask();
    o.shrinkAxisMask = t->shrink_axis_mask();
    o.sliceOffset = t->offset();
  } else if (auto *t = op.builtin_options_as_LeakyReluOptions()) {
    o.alpha = t->alpha();
  }
  return o;
}

Result<Tensor> readTensor(const fb::Tensor &t, size_t index, const fb::Model &model) {
  Tensor out;
  out.name = t.name() ? t.name()->str() : "tensor_" + std::to_string(index);
  const std::string where = "tensor " + std::to_string(index) + " '" + out.name + "'";
  out.type = t.type();
  out.typeName = typeName(out.type);
  out.shape = widen(t.shape());
  int64_t numel = 1;
  for (int64_t d : out.shape) {
    if (d < 0) return makeError(where, ": dynamic dimension in shape ", shapeToString(out.shape));
    if (d && numel > kMaxElements / d) return makeError(where, ": shape ", shapeToString(out.shape), " is too large");
    numel *= d;
  }
  if (t.sparsity()) return makeError(where, ": sparse tensors are not supported");
  if (const fb::QuantizationParameters *q = t.quantization()) {
    out.quant.scale = copyVector(q->scale());
    out.quant.min = copyVector(q->min());
    out.quant.max = copyVector(q->max());
    out.quant.zeroPoint = copyVector(q->zero_point());
    out.quant.axis = q->quantized_dimension();
    size_t n = out.quant.scale.size();
    if (n > 1 && (out.quant.axis < 0 || size_t(out.quant.axis) >= out.shape.size() ||
                  int64_t(n) != out.shape[out.quant.axis]))
      return makeError(where, ": ", n, " quantization scales do not match dimension ", out.quant.axis, " of shape ",
                       shapeToString(out.shape));
    if (!out.quant.zeroPoint.empty() && out.quant.zeroPoint.size() != n)
      return makeError(where, ": ", out.quant.zeroPoint.size(), " zero points for ", n, " scales");
  }
  const auto *buffers = model.buffers();
  size_t bufferCount = buffers ? buffers->size() : 0;
  if (t.buffer() >= bufferCount && !(t.buffer() == 0 && bufferCount == 0))
    return makeError(where, ": buffer ", t.buffer(), " out of range (the model has ", bufferCount, " buffers)");
  if (bufferCount == 0) return out;
  const fb::Buffer *buffer = buffers->Get(t.buffer());
  if (!buffer) return makeError(where, ": buffer ", t.buffer(), " is missing");
  if (buffer->offset() > 1)
    return makeError(where, ": its data is stored outside the FlatBuffer (models over 2 GB are not supported)");
  if (!buffer->data() || buffer->data()->size() == 0) return out;
  size_t bytes = elementBytes(out.type);
  if (bytes == 0) return makeError(where, ": constants of type ", out.typeName, " are not supported");
  if (buffer->data()->size() != uint64_t(numel) * bytes)
    return makeError(where, ": buffer ", t.buffer(), " holds ", buffer->data()->size(), " bytes, shape ",
                     shapeToString(out.shape), " of ", out.typeName, " needs ", uint64_t(numel) * bytes);
  out.data.assign(buffer->data()->begin(), buffer->data()->end());
  return out;
}

Status checkIndices(const std::vector<int32_t> &indices, size_t tensorCount, bool optionalAllowed,
                    const std::string &where) {
  for (int32_t i : indices)
    if (i >= int64_t(tensorCount) || i < (optionalAllowed ? -1 : 0))
      return makeError(where, ": tensor index ", i, " out of range (the subgraph has ", tensorCount, " tensors)");
  return Status::ok();
}

} // namespace

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string builtinName(int32_t code) {
  if (code < fb::BuiltinOperator_MIN || code > fb::BuiltinOperator_MAX) return "";
  return fb::EnumNameBuiltinOperator(fb::BuiltinOperator(code));
}

std::string Operator::opName() const { return builtinCode == kCustomCode ? customCode : builtinName(builtinCode); }

std::string Operator::describe() const {
  std::string name = builtinCode == kCustomCode ? "CUSTOM '" + customCode + "'" : builtinName(builtinCode);
  if (name.empty()) name = "unknown builtin code " + std::to_string(builtinCode);
  return "operator " + std::to_string(index) + " (" + name + ")";
}

Result<Model> parseModel(const uint8_t *data, size_t size) {
  if (size < 8 || !fb::ModelBufferHasIdentifier(data))
    return makeError("not a TFLite model (no \"TFL3\" FlatBuffer identifier)");
  flatbuffers::Verifier verifier(data, size);
  if (!fb::VerifyModelBuffer(verifier)) return makeError("corrupt or truncated TFLite FlatBuffer (", size, " bytes)");
  const fb::Model &model = *fb::GetModel(data);
  size_t subgraphs = model.subgraphs() ? model.subgraphs()->size() : 0;
  if (subgraphs != 1) return makeError("the model has ", subgraphs, " subgraphs; only single-subgraph models are supported");
  const fb::SubGraph &graph = *model.subgraphs()->Get(0);
  Model out;
  out.schemaVersion = model.version();
  if (graph.tensors())
    for (size_t i = 0; i < graph.tensors()->size(); ++i) {
      auto t = readTensor(*graph.tensors()->Get(i), i, model);
      if (!t) return t.status();
      out.tensors.push_back(t.take());
    }
  out.inputs = copyVector(graph.inputs());
  out.outputs = copyVector(graph.outputs());
  TPU_RETURN_IF_ERROR(checkIndices(out.inputs, out.tensors.size(), false, "subgraph inputs"));
  TPU_RETURN_IF_ERROR(checkIndices(out.outputs, out.tensors.size(), false, "subgraph outputs"));
  size_t codeCount = model.operator_codes() ? model.operator_codes()->size() : 0;
  if (graph.operators())
    for (size_t i = 0; i < graph.operators()->size(); ++i) {
      const fb::Operator &op = *graph.operators()->Get(i);
      Operator o;
      o.index = i;
      const std::string where = "operator " + std::to_string(i);
      if (op.opcode_index() >= codeCount)
        return makeError(where, ": opcode index ", op.opcode_index(), " out of range (the model has ", codeCount,
                         " operator codes)");
      const fb::OperatorCode &code = *model.operator_codes()->Get(op.opcode_index());
      o.builtinCode = std::max<int32_t>(code.deprecated_builtin_code(), code.builtin_code());
      o.customCode = code.custom_code() ? code.custom_code()->str() : "";
      o.version = code.version();
      o.inputs = copyVector(op.inputs());
      o.outputs = copyVector(op.outputs());
      TPU_RETURN_IF_ERROR(checkIndices(o.inputs, out.tensors.size(), true, where + " inputs"));
      TPU_RETURN_IF_ERROR(checkIndices(o.outputs, out.tensors.size(), false, where + " outputs"));
      o.options = decodeOptions(op);
      o.customOptions = copyVector(op.custom_options());
      out.operators.push_back(std::move(o));
    }
  return out;
}

Result<Model> loadModel(const std::string &path) {
  auto bytes = readFile(path);
  if (!bytes) return bytes.status();
  auto model = parseModel(reinterpret_cast<const uint8_t *>(bytes->data()), bytes->size());
  if (!model) return Status(model.status()).prefix(path);
  return model;
}

Result<NpyArray> realValues(const Tensor &t) {
  const int64_t n = t.numel();
  std::vector<float> values(n);
  auto load = [&](auto type) {
    using T = decltype(type);
    std::vector<double> raw(n);
    for (int64_t i = 0; i < n; ++i) {
      T v;
      std::memcpy(&v, t.data.data() + i * sizeof(T), sizeof(T));
      raw[i] = double(v);
    }
    return raw;
  };
  std::vector<double> raw;
  switch (ElementType(t.type)) {
  case ElementType::Float32:
    std::memcpy(values.data(), t.data.data(), n * sizeof(float));
    return NpyArray::from(t.shape, values);
  case ElementType::Float16:
    for (int64_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, t.data.data() + 2 * i, 2);
      values[i] = halfToFloat(h);
    }
    return NpyArray::from(t.shape, values);
  case ElementType::Int8: raw = load(int8_t()); break;
  case ElementType::UInt8: raw = load(uint8_t()); break;
  case ElementType::Int16: raw = load(int16_t()); break;
  case ElementType::Int32: raw = load(int32_t()); break;
  case ElementType::Int64: raw = load(int64_t()); break;
  default: return makeError("tensor '", t.name, "': constants of type ", t.typeName, " are not supported");
  }
  const Quantization &q = t.quant;
  if (!q.present()) {
    for (int64_t i = 0; i < n; ++i) values[i] = float(raw[i]);
    return NpyArray::from(t.shape, values);
  }
  // Per-axis: element i belongs to slice (i / inner) % dim of the quantized axis.
  int64_t inner = 1, dim = 1;
  if (q.scale.size() > 1) {
    dim = t.shape[q.axis];
    for (size_t d = q.axis + 1; d < t.shape.size(); ++d) inner *= t.shape[d];
  }
  for (int64_t i = 0; i < n; ++i) {
    size_t c = q.scale.size() > 1 ? size_t((i / inner) % dim) : 0;
    double zero = q.zeroPoint.empty() ? 0.0 : double(q.zeroPoint[c]);
    values[i] = float(double(q.scale[c]) * (raw[i] - zero));
  }
  return NpyArray::from(t.shape, values);
}

Result<std::vector<int64_t>> integerValues(const Tensor &t) {
  const int64_t n = t.numel();
  std::vector<int64_t> out(n);
  if (ElementType(t.type) == ElementType::Int32) {
    for (int64_t i = 0; i < n; ++i) {
      int32_t v;
      std::memcpy(&v, t.data.data() + 4 * i, 4);
      out[i] = v;
    }
  } else if (ElementType(t.type) == ElementType::Int64) {
    std::memcpy(out.data(), t.data.data(), n * 8);
  } else {
    return makeError("tensor '", t.name, "' must be an INT32 or INT64 constant, got ", t.typeName);
  }
  return out;
}

} // namespace tpu::tflite
