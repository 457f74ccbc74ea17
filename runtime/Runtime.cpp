#include "runtime/Runtime.h"

#include "isa/bmodel/Bmodel.h"
#include "runtime/HostStep.h"
#include "runtime/IoConvert.h"
#include "support/ReadFile.h"

#include <chrono>

namespace tpu::runtime {

namespace {

std::string quoted(const std::string &s) { return "'" + s + "'"; }

std::vector<int64_t> signedShape(const std::vector<uint64_t> &shape) {
  return std::vector<int64_t>(shape.begin(), shape.end());
}

const bmodel::Tensor *findTensor(const std::vector<bmodel::Tensor> &list, const std::string &name) {
  for (const auto &t : list)
    if (t.name == name) return &t;
  return nullptr;
}

std::string tensorNames(const std::vector<bmodel::Tensor> &list) {
  std::string names;
  for (const auto &t : list) names += (names.empty() ? "" : ", ") + quoted(t.name);
  return names.empty() ? "none" : names;
}

// Decodes one group's queues and merges them into program order.
Result<LoadedGroup> decodeGroup(const bmodel::CmdGroup &group) {
  LoadedGroup out;
  out.tiu.reserve(group.tiu.size());
  for (size_t i = 0; i < group.tiu.size(); ++i) {
    auto cmd = isa::decodeTiu(isa::TiuRaw::decode(group.tiu[i].data()));
    if (!cmd) return makeError("TIU command ", i, ": ", cmd.message());
    out.tiu.push_back(cmd.take());
  }
  out.gdma.reserve(group.gdma.size());
  for (size_t i = 0; i < group.gdma.size(); ++i) {
    auto cmd = isa::decodeGdma(isa::GdmaRaw::decode(group.gdma[i].data()));
    if (!cmd) return makeError("GDMA command ", i, ": ", cmd.message());
    out.gdma.push_back(cmd.take());
  }
  auto order = isa::programOrder(group.tiu, group.gdma);
  if (!order) return order.status();
  out.order = order.take();
  return out;
}

} // namespace

Runtime::Runtime(std::shared_ptr<SimDevice> device, std::unique_ptr<Backend> backend)
    : device_(std::move(device)), backend_(std::move(backend)) {}

// Nets leave the device with their runtime: their ranges are released.
Runtime::~Runtime() {
  for (const auto &n : nets_) device_->unreserveAll(n->ranges);
}

Result<std::unique_ptr<Runtime>> Runtime::create(const isa::HwConfig &cfg, BackendKind kind) {
  TPU_RETURN_IF_ERROR(cfg.validate());
  return create(std::make_shared<SimDevice>(cfg), kind);
}

Result<std::unique_ptr<Runtime>> Runtime::create(std::shared_ptr<SimDevice> device,
                                                 BackendKind kind) {
  auto backend = makeBackend(kind);
  if (!backend) return backend.status();
  return std::unique_ptr<Runtime>(new Runtime(std::move(device), backend.take()));
}

Status Runtime::loadBmodel(const std::string &path) {
  auto model = bmodel::readFile(path);
  if (!model) return model.status(); // readFile names the file
  std::shared_ptr<const std::vector<uint8_t>> image;
  if (backend_->kind() == BackendKind::Device) {
    // The device gets the file itself; readFile has checked its size.
    auto bytes = tpu::readFile(path);
    if (!bytes) return bytes.status();
    image = std::make_shared<std::vector<uint8_t>>(bytes->begin(), bytes->end());
  }
  return adopt(model.take(), path, image);
}

Status Runtime::loadBmodel(const uint8_t *data, size_t size, const std::string &origin) {
  auto model = bmodel::parse(data, size);
  if (!model) return Status(model.status()).prefix(origin);
  std::shared_ptr<const std::vector<uint8_t>> image;
  if (backend_->kind() == BackendKind::Device)
    image = std::make_shared<std::vector<uint8_t>>(data, data + size);
  return adopt(model.take(), origin, image);
}

// All nets of a model or none: a failure undoes the nets placed before it.
Status Runtime::adopt(bmodel::Model model, const std::string &origin,
                      std::shared_ptr<const std::vector<uint8_t>> image) {
  const size_t before = nets_.size();
  for (auto &desc : model.nets) {
    auto loaded = std::make_unique<LoadedNet>();
    loaded->origin = origin;
    loaded->desc = std::move(desc);
    loaded->image = image;
    Status st = place(*loaded);
    if (!st) {
      while (nets_.size() > before) {
        device_->unreserveAll(nets_.back()->ranges);
        nets_.pop_back();
      }
      return st.prefix(origin);
    }
    nets_.push_back(std::move(loaded));
  }
  return Status::ok();
}

// Decodes the net's groups, claims its memory on the device and writes the
// coefficients. On failure the device keeps no range of this net.
Status Runtime::place(LoadedNet &net) {
  Status st = placeRanges(net);
  if (!st) device_->unreserveAll(net.ranges);
  return st;
}

Status Runtime::placeRanges(LoadedNet &net) {
  const bmodel::Net &d = net.desc;
  const std::string where = "net " + quoted(d.name);
  for (const auto &other : nets_)
    if (other->desc.name == d.name)
      return makeError(where, ": a net of this name is already loaded from ", other->origin);
  for (size_t g = 0; g < d.groups.size(); ++g) {
    auto group = decodeGroup(d.groups[g]);
    if (!group) return makeError(where, ": group ", g, ": ", group.message());
    net.groups.push_back(group.take());
  }
  auto steps = planSteps(d);
  if (!steps) return Status(steps.status()).prefix(where);
  net.steps = steps.take();
  // The net's IO tensors and those its sub-nets read and write.
  std::vector<const std::vector<bmodel::Tensor> *> tensorLists{&d.inputs, &d.outputs};
  for (const auto &s : d.subnets) tensorLists.insert(tensorLists.end(), {&s.inputs, &s.outputs});
  for (const auto *list : tensorLists)
    for (const auto &t : *list) {
      auto bytes = deviceBytes(t);
      if (!bytes) return makeError(where, ": tensor ", quoted(t.name), ": ", bytes.message());
    }
  // Claim memory only once everything above is known to be good.
  auto claim = [&](uint64_t addr, uint64_t bytes, SimDevice::Use use, const std::string &owner) {
    Status st = device_->reserve(addr, bytes, use, owner);
    if (st && bytes) net.ranges.push_back({addr, owner});
    return st;
  };
  TPU_RETURN_IF_ERROR(
      claim(d.coeffAddr, d.coeff.size(), SimDevice::Use::Coefficients, where + " coefficients"));
  TPU_RETURN_IF_ERROR(
      claim(d.ctxAddr, d.ctxSize, SimDevice::Use::Neurons, where + " neuron memory"));
  // Tensors outside the context range are neuron memory of their own; a
  // host op may read a weight in the coefficients.
  auto within = [](const bmodel::Tensor &t, uint64_t bytes, uint64_t addr, uint64_t size) {
    return t.deviceAddr >= addr && bytes <= size && t.deviceAddr - addr <= size - bytes;
  };
  for (const auto *list : tensorLists)
    for (const auto &t : *list) {
      uint64_t bytes = t.storageBytes();
      if (!within(t, bytes, d.ctxAddr, d.ctxSize) && !within(t, bytes, d.coeffAddr, d.coeff.size()))
        TPU_RETURN_IF_ERROR(claim(t.deviceAddr, bytes, SimDevice::Use::Neurons,
                                  where + " tensor " + quoted(t.name)));
    }
  if (!d.coeff.empty())
    TPU_RETURN_IF_ERROR(device_->gmem().write(d.coeffAddr, d.coeff.data(), d.coeff.size()));
  return Status::ok();
}

std::vector<std::string> Runtime::netNames() const {
  std::vector<std::string> names;
  for (const auto &n : nets_) names.push_back(n->desc.name);
  return names;
}

Result<const LoadedNet *> Runtime::find(const std::string &name) const {
  std::string known;
  for (const auto &n : nets_) {
    if (n->desc.name == name) return n.get();
    known += (known.empty() ? "" : ", ") + quoted(n->desc.name);
  }
  return makeError("no net named ", quoted(name), " (loaded: ", known.empty() ? "none" : known,
                   ")");
}

Result<const bmodel::Net *> Runtime::net(const std::string &name) const {
  auto n = find(name);
  if (!n) return n.status();
  return &(*n)->desc;
}

Status Runtime::setInput(const std::string &netName, const std::string &input,
                         const NpyArray &value) {
  auto n = find(netName);
  if (!n) return n.status();
  const bmodel::Net &d = (*n)->desc;
  const bmodel::Tensor *t = findTensor(d.inputs, input);
  if (!t)
    return makeError("net ", quoted(netName), " has no input ", quoted(input), " (inputs: ",
                     tensorNames(d.inputs), ")");
  const std::string where = "input " + quoted(input) + " of net " + quoted(netName);
  if (value.shape != signedShape(t->shape))
    return makeError(where, ": shape ", shapeToString(value.shape), " given, the net expects ",
                     shapeToString(signedShape(t->shape)));
  std::vector<uint8_t> bytes;
  const std::string own = dataTypeName(t->dtype);
  if (value.dtype == "float32") {
    auto conv = toDevice(*t, value.as<float>(), uint64_t(value.numel()));
    if (!conv) return makeError(where, ": ", conv.message());
    bytes = conv.take();
  } else if (value.dtype == own) {
    // Already the device's values, in plain C order (1N): only the store
    // mode may differ.
    bmodel::Tensor plain = *t;
    plain.storeMode = bmodel::StoreMode::N1;
    auto moved = relayout(plain, value.data.data(), value.data.size(), t->storeMode);
    if (!moved) return makeError(where, ": ", moved.message());
    bytes = moved.take();
  } else {
    return makeError(where, ": dtype ", value.dtype, " given, expected float32",
                     own == "float32" ? "" : " or " + own);
  }
  Status st = device_->gmem().write(t->deviceAddr, bytes.data(), bytes.size());
  return st ? st : st.prefix(where);
}

Result<NpyArray> Runtime::getOutput(const std::string &netName, const std::string &output) {
  auto n = find(netName);
  if (!n) return n.status();
  const bmodel::Net &d = (*n)->desc;
  const bmodel::Tensor *t = findTensor(d.outputs, output);
  if (!t)
    return makeError("net ", quoted(netName), " has no output ", quoted(output), " (outputs: ",
                     tensorNames(d.outputs), ")");
  const std::string where = "output " + quoted(output) + " of net " + quoted(netName);
  auto size = deviceBytes(*t);
  if (!size) return makeError(where, ": ", size.message());
  std::vector<uint8_t> bytes(*size);
  Status st = device_->gmem().read(t->deviceAddr, bytes.data(), bytes.size());
  if (!st) return st.prefix(where);
  auto values = fromDevice(*t, bytes.data(), bytes.size());
  if (!values) return makeError(where, ": ", values.message());
  return NpyArray::from(signedShape(t->shape), *values);
}

Status Runtime::launch(const std::string &netName, const RunOptions &opts, RunReport &report) {
  auto n = find(netName);
  if (!n) return n.status();
  report = RunReport();
  report.backend = backend_->kind();
  for (const auto &g : (*n)->groups) {
    ++report.groups;
    report.tiuCommands += g.tiu.size();
    report.gdmaCommands += g.gdma.size();
  }
  auto start = std::chrono::steady_clock::now();
  Status st = runSteps(**n, opts, report);
  report.wallSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return st ? st : st.prefix("net " + quoted(netName));
}

// TPU steps on the backend, CPU sub-nets here on the host, in order.
Status Runtime::runSteps(const LoadedNet &net, const RunOptions &opts, RunReport &report) {
  auto launch = backend_->begin(*device_, net, opts);
  if (!launch) return launch.status();
  for (const LoadedStep &step : net.steps) {
    if (!step.host) {
      TPU_RETURN_IF_ERROR((*launch)->execute(step.groups));
      continue;
    }
    auto start = std::chrono::steady_clock::now();
    Status st = runHostStep(*device_, net.desc.subnets[step.subnet], *step.host);
    report.hostSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ++report.cpuSubnets;
    if (!st)
      return st.prefix("sub-net " + std::to_string(step.subnet) + " (" +
                       std::string(kernels::findHostOp(step.host->code)->name) + ")");
  }
  (*launch)->finish(report);
  return Status::ok();
}

Result<NpzMap> Runtime::run(const std::string &netName, const NpzMap &inputs,
                            const RunOptions &opts, RunReport &report) {
  auto n = find(netName);
  if (!n) return n.status();
  const bmodel::Net &d = (*n)->desc;
  for (const auto &[name, array] : inputs)
    if (!findTensor(d.inputs, name))
      return makeError("net ", quoted(netName), " has no input ", quoted(name), " (inputs: ",
                       tensorNames(d.inputs), ")");
  for (const auto &t : d.inputs) {
    auto it = inputs.find(t.name);
    if (it == inputs.end())
      return makeError("input ", quoted(t.name), " of net ", quoted(netName), " is missing");
    TPU_RETURN_IF_ERROR(setInput(netName, t.name, it->second));
  }
  TPU_RETURN_IF_ERROR(launch(netName, opts, report));
  NpzMap outputs;
  for (const auto &t : d.outputs) {
    auto out = getOutput(netName, t.name);
    if (!out) return out.status();
    outputs[t.name] = out.take();
  }
  return outputs;
}

} // namespace tpu::runtime
