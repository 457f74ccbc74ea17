#include "runtime/bm1684x/FuncRun.h"

#include "isa/bm1684x/Command.h"
#include "isa/bmodel/Bmodel.h"
#include "simulator/semantics/bm1684x/Executor.h"

#include <memory>

namespace tpu::runtime::bm1684x {

namespace {

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

Result<std::vector<isa::bm1684x::Command>> decodeStream(isa::Engine engine, const std::vector<uint8_t> &stream) {
  return isa::bm1684x::decodeBuffer(engine, stream.data(), stream.size());
}

} // namespace

Result<NpzMap> runFunc(const bmodel::Model &model, const std::string &netName, const NpzMap &inputs) {
  const bmodel::Net *net = nullptr;
  if (netName.empty()) {
    if (model.nets.size() != 1) return makeError("the bmodel has ", model.nets.size(), " nets: name one");
    net = &model.nets[0];
  } else {
    for (const bmodel::Net &n : model.nets)
      if (n.name == netName) net = &n;
    if (!net) return makeError("no net '", netName, "' in the bmodel");
  }
  if (!net->subnets.empty() && net->subnets.size() != 1)
    return makeError("net '", net->name, "': CPU sub-nets do not run on the BM1684X yet");
  // The memories are large host arrays: on the heap.
  auto memories = std::make_unique<sim::bm1684x::Memories>();
  auto &ddr = memories->global();
  if (!net->coeff.empty())
    if (Status st = ddr.write(net->coeffAddr, net->coeff.data(), net->coeff.size()); !st)
      return st.prefix("net '" + net->name + "' coefficients");
  if (inputs.size() != net->inputs.size())
    return makeError("net '", net->name, "' takes ", net->inputs.size(), " input(s), given ", inputs.size());
  for (const bmodel::Tensor &t : net->inputs) {
    auto it = inputs.find(t.name);
    if (it == inputs.end()) return makeError("no array for input '", t.name, "'");
    if (t.dtype != bmodel::DataType::Float32) return makeError("input '", t.name, "': only float32 tensors so far");
    std::vector<int64_t> shape(t.shape.begin(), t.shape.end());
    if (it->second.shape != shape)
      return makeError("input '", t.name, "' is ", shapeText(it->second.shape), ", the net takes ", shapeText(shape));
    std::vector<float> values = it->second.toFloat();
    TPU_RETURN_IF_ERROR(ddr.write(t.deviceAddr, values.data(), values.size() * sizeof(float)));
  }
  for (size_t g = 0; g < net->groups.size(); ++g) {
    const bmodel::CmdGroup &group = net->groups[g];
    auto tiu = decodeStream(isa::Engine::Tiu, group.tiuStream);
    auto dma = decodeStream(isa::Engine::Gdma, group.gdmaStream);
    Status st = !tiu ? tiu.status() : !dma ? dma.status() : sim::bm1684x::run(*memories, *tiu, *dma);
    if (!st) return st.prefix("net '" + net->name + "' group " + std::to_string(g));
  }
  NpzMap outputs;
  for (const bmodel::Tensor &t : net->outputs) {
    if (t.dtype != bmodel::DataType::Float32) return makeError("output '", t.name, "': only float32 tensors so far");
    std::vector<int64_t> shape(t.shape.begin(), t.shape.end());
    std::vector<float> values(t.size / sizeof(float));
    TPU_RETURN_IF_ERROR(ddr.read(t.deviceAddr, values.data(), values.size() * sizeof(float)));
    outputs[t.name] = NpyArray::from(shape, values);
  }
  return outputs;
}

Result<NpzMap> runFuncFile(const std::string &bmodelPath, const std::string &netName, const NpzMap &inputs) {
  auto model = bmodel::readFile(bmodelPath, nullptr, bmodel::ChipScope::AnyKnown);
  if (!model) return model.status();
  auto outputs = runFunc(*model, netName, inputs);
  if (!outputs) return Status(outputs.status()).prefix(bmodelPath);
  return outputs;
}

} // namespace tpu::runtime::bm1684x
