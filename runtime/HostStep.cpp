#include "runtime/HostStep.h"

#include "runtime/IoConvert.h"
#include "support/Npz.h"

#include <cmath>
#include <cstring>

namespace tpu::runtime {

namespace {

using bmodel::DataType;
using bmodel::Subnet;

std::string quoted(const std::string &s) { return "'" + s + "'"; }

// Host ops see fp32 values; integer tensors travel as int32 (docs/bmodel.md).
// Both are 4-byte types, which the reader only accepts in 1N.
Status checkHostTensor(const bmodel::Tensor &t, const char *kind) {
  if (t.dtype != DataType::Float32 && t.dtype != DataType::Int32)
    return makeError(kind, " ", quoted(t.name), " is ", dataTypeName(t.dtype),
                     ": a CPU sub-net reads and writes float32 or int32 tensors");
  return Status::ok();
}

Result<kernels::HostCall> checkHostCall(const Subnet &s) {
  auto call = kernels::HostCall::parse(s.cpuParam.data(), s.cpuParam.size());
  if (!call) return call.status();
  const kernels::HostOp &op = *kernels::findHostOp(call->code); // parse knows the code
  const std::string name(op.name);
  if (call->code != s.cpuOpType)
    return makeError("op_type ", s.cpuOpType, " but the parameters are for ", name, " (", call->code, ")");
  if (s.outputs.size() != 1)
    return makeError(name, ": a CPU sub-net writes one output, this one has ", s.outputs.size());
  std::vector<kernels::Shape> inShapes;
  for (const auto &t : s.inputs) {
    TPU_RETURN_IF_ERROR(checkHostTensor(t, "input"));
    inShapes.push_back(signedShape(t.shape));
  }
  TPU_RETURN_IF_ERROR(checkHostTensor(s.outputs[0], "output"));
  TPU_RETURN_IF_ERROR(call->check(inShapes));
  const kernels::Shape &result = call->resultShapes[call->result];
  if (signedShape(s.outputs[0].shape) != result)
    return makeError(name, ": output ", quoted(s.outputs[0].name), " is ",
                     shapeToString(signedShape(s.outputs[0].shape)), ", result ", call->result, " of the op is ",
                     shapeToString(result));
  return call;
}

Result<std::vector<float>> readHostTensor(SimDevice &device, const bmodel::Tensor &t, const kernels::Shape &shape) {
  const uint64_t count = uint64_t(kernels::numElements(shape));
  std::vector<uint8_t> bytes(count * 4);
  Status st = device.gmem().read(t.deviceAddr, bytes.data(), bytes.size());
  if (!st) return st.prefix("input " + quoted(t.name));
  std::vector<float> values(count);
  if (t.dtype == DataType::Float32) {
    std::memcpy(values.data(), bytes.data(), bytes.size());
  } else {
    for (uint64_t i = 0; i < count; ++i) {
      int32_t v;
      std::memcpy(&v, bytes.data() + 4 * i, 4);
      values[i] = float(v);
    }
  }
  return values;
}

Status writeHostTensor(SimDevice &device, const bmodel::Tensor &t, const std::vector<float> &values) {
  std::vector<uint8_t> bytes(values.size() * 4);
  if (t.dtype == DataType::Float32) {
    std::memcpy(bytes.data(), values.data(), bytes.size());
  } else {
    for (size_t i = 0; i < values.size(); ++i) {
      const float v = values[i];
      // NaN fails every comparison.
      if (!(v == std::trunc(v) && v >= -2147483648.0f && v < 2147483648.0f))
        return makeError("output ", quoted(t.name), ": element ", i, " is ", v, ", not an int32");
      const int32_t q = int32_t(v);
      std::memcpy(bytes.data() + 4 * i, &q, 4);
    }
  }
  Status st = device.gmem().write(t.deviceAddr, bytes.data(), bytes.size());
  return st ? st : st.prefix("output " + quoted(t.name));
}

} // namespace

kernels::Shape signedShape(const std::vector<uint64_t> &shape) { return kernels::Shape(shape.begin(), shape.end()); }

kernels::Shape realShape(const ShapesFromData &shapes, const bmodel::Tensor &t) {
  auto real = shapes.find(t.name);
  return real == shapes.end() ? signedShape(t.shape) : real->second;
}

Result<std::vector<LoadedStep>> planSteps(const bmodel::Net &net) {
  std::vector<LoadedStep> steps;
  if (net.subnets.empty()) {
    steps.push_back({GroupRange{0, net.groups.size()}, 0, std::nullopt});
    return steps;
  }
  for (size_t i = 0; i < net.subnets.size(); ++i) {
    const Subnet &s = net.subnets[i];
    if (s.mode == Subnet::Mode::Tpu) {
      LoadedStep *prev = steps.empty() ? nullptr : &steps.back();
      if (prev && !prev->host && prev->groups.first + prev->groups.count == s.firstGroup)
        prev->groups.count += s.groupCount;
      else
        steps.push_back({GroupRange{s.firstGroup, s.groupCount}, i, std::nullopt});
      continue;
    }
    auto call = checkHostCall(s);
    if (!call) return Status(call.status()).prefix("sub-net " + std::to_string(i));
    steps.push_back({GroupRange{}, i, call.take()});
  }
  return steps;
}

Status runHostStep(SimDevice &device, const Subnet &subnet, const kernels::HostCall &call, ShapesFromData &shapes) {
  std::vector<std::vector<float>> values;
  std::vector<kernels::Shape> inShapes;
  for (const auto &t : subnet.inputs) {
    inShapes.push_back(realShape(shapes, t));
    auto v = readHostTensor(device, t, inShapes.back());
    if (!v) return v.status();
    values.push_back(v.take());
  }
  std::vector<kernels::ConstView> views;
  for (size_t i = 0; i < values.size(); ++i) views.push_back({inShapes[i], values[i].data()});
  auto result = call.run(views);
  if (!result) return result.status();
  const bmodel::Tensor &out = subnet.outputs[0];
  if (result->shape == signedShape(out.shape))
    shapes.erase(out.name);
  else
    shapes[out.name] = result->shape;
  return writeHostTensor(device, out, result->values);
}

} // namespace tpu::runtime
