#include "runtime/bm1684x/FuncRun.h"

#include "isa/bmodel/Bmodel.h"

namespace tpu::runtime::bm1684x {

namespace {

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

} // namespace

Result<PreparedNet> prepareNet(const bmodel::Model &model, const std::string &netName, const NpzMap &inputs) {
  PreparedNet p;
  if (netName.empty()) {
    if (model.nets.size() != 1) return makeError("the bmodel has ", model.nets.size(), " nets: name one");
    p.net = &model.nets[0];
  } else {
    for (const bmodel::Net &n : model.nets)
      if (n.name == netName) p.net = &n;
    if (!p.net) return makeError("no net '", netName, "' in the bmodel");
  }
  const bmodel::Net &net = *p.net;
  if (!net.subnets.empty() && net.subnets.size() != 1)
    return makeError("net '", net.name, "': CPU sub-nets do not run on the BM1684X yet");
  p.memories = std::make_unique<sim::bm1684x::Memories>();
  auto &ddr = p.memories->global();
  if (!net.coeff.empty())
    if (Status st = ddr.write(net.coeffAddr, net.coeff.data(), net.coeff.size()); !st)
      return st.prefix("net '" + net.name + "' coefficients");
  if (inputs.size() != net.inputs.size())
    return makeError("net '", net.name, "' takes ", net.inputs.size(), " input(s), given ", inputs.size());
  for (const bmodel::Tensor &t : net.inputs) {
    auto it = inputs.find(t.name);
    if (it == inputs.end()) return makeError("no array for input '", t.name, "'");
    if (t.dtype != bmodel::DataType::Float32) return makeError("input '", t.name, "': only float32 tensors so far");
    std::vector<int64_t> shape(t.shape.begin(), t.shape.end());
    if (it->second.shape != shape)
      return makeError("input '", t.name, "' is ", shapeText(it->second.shape), ", the net takes ", shapeText(shape));
    std::vector<float> values = it->second.toFloat();
    TPU_RETURN_IF_ERROR(ddr.write(t.deviceAddr, values.data(), values.size() * sizeof(float)));
  }
  for (size_t g = 0; g < net.groups.size(); ++g) {
    const bmodel::CmdGroup &group = net.groups[g];
    auto tiu = isa::bm1684x::decodeBuffer(isa::Engine::Tiu, group.tiuStream.data(), group.tiuStream.size());
    auto dma = isa::bm1684x::decodeBuffer(isa::Engine::Gdma, group.gdmaStream.data(), group.gdmaStream.size());
    if (!tiu || !dma)
      return Status(!tiu ? tiu.status() : dma.status()).prefix("net '" + net.name + "' group " + std::to_string(g));
    p.groups.push_back({tiu.take(), dma.take()});
  }
  return p;
}

Result<NpzMap> readOutputs(const PreparedNet &p) {
  NpzMap outputs;
  for (const bmodel::Tensor &t : p.net->outputs) {
    if (t.dtype != bmodel::DataType::Float32) return makeError("output '", t.name, "': only float32 tensors so far");
    std::vector<int64_t> shape(t.shape.begin(), t.shape.end());
    std::vector<float> values(t.size / sizeof(float));
    TPU_RETURN_IF_ERROR(p.memories->global().read(t.deviceAddr, values.data(), values.size() * sizeof(float)));
    outputs[t.name] = NpyArray::from(shape, values);
  }
  return outputs;
}

Result<NpzMap> runFunc(const bmodel::Model &model, const std::string &netName, const NpzMap &inputs) {
  auto prepared = prepareNet(model, netName, inputs);
  if (!prepared) return prepared.status();
  for (size_t g = 0; g < prepared->groups.size(); ++g) {
    const isa::bm1684x::CommandGroup &group = prepared->groups[g];
    if (Status st = sim::bm1684x::run(*prepared->memories, group.tiu, group.dma); !st)
      return st.prefix("net '" + prepared->net->name + "' group " + std::to_string(g));
  }
  return readOutputs(*prepared);
}

Result<NpzMap> runFuncFile(const std::string &bmodelPath, const std::string &netName, const NpzMap &inputs) {
  auto model = bmodel::readFile(bmodelPath, nullptr, bmodel::ChipScope::AnyKnown);
  if (!model) return model.status();
  auto outputs = runFunc(*model, netName, inputs);
  if (!outputs) return Status(outputs.status()).prefix(bmodelPath);
  return outputs;
}

} // namespace tpu::runtime::bm1684x
