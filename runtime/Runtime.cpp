#include "runtime/Runtime.h"

#include "isa/bmodel/Bmodel.h"
#include "runtime/ChipRunners.h"
#include "runtime/HostStep.h"
#include "runtime/IoConvert.h"
#include "support/ReadFile.h"

#include <algorithm>
#include <chrono>
#include <sstream>

namespace tpu::runtime {

namespace {

std::string quoted(const std::string &s) { return "'" + s + "'"; }

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

std::string hex(uint64_t v) {
  std::ostringstream os;
  os << "0x" << std::hex << v;
  return os.str();
}

// An input is given in float32 (converted) or in the tensor's own dtype.
Status checkInputDtype(const bmodel::Tensor &t, const NpyArray &value, const std::string &where) {
  const std::string own = dataTypeName(t.dtype);
  if (value.dtype == "float32" || value.dtype == own) return Status::ok();
  if (value.dtype == "int64" && t.dtype == bmodel::DataType::Int32) return Status::ok(); // ONNX indices
  return makeError(where, ": dtype ", value.dtype, " given, expected float32", own == "float32" ? "" : " or " + own,
                   own == "int32" ? " or int64" : "");
}

// An int64 array (ONNX's index type) as the int32 values of an int32 input;
// a value out of int32's range is an error naming it.
Result<NpyArray> int32Values(const NpyArray &value) {
  std::vector<int32_t> v;
  const int64_t *p = value.as<int64_t>();
  for (int64_t i = 0; i < value.numel(); ++i) {
    if (p[i] < INT32_MIN || p[i] > INT32_MAX) return makeError("element ", i, " is ", p[i], ", beyond int32");
    v.push_back(int32_t(p[i]));
  }
  return NpyArray::from<int32_t>(value.shape, v);
}

// "net 'rec' has no stage for input 'x' [1,3,48,500] (stages: [1,3,48,320];
// [1,3,48,640])": each stage listed by all its input shapes.
Status noStage(const std::string &net, const std::vector<std::unique_ptr<LoadedNet>> &stages, size_t input,
               const std::vector<int64_t> &shape) {
  std::string list;
  for (const auto &s : stages) list += (list.empty() ? "" : "; ") + bmodel::inputShapesText(s->desc);
  return makeError("net ", quoted(net), " has no stage for input ", quoted(stages.front()->desc.inputs[input].name),
                   " ", bmodel::shapeText(std::vector<uint64_t>(shape.begin(), shape.end())), " (stages: ", list, ")");
}

// A device range [addr, addr + bytes).
struct Span {
  uint64_t addr, bytes;
};

// The union of `spans` as disjoint ranges in address order (empty ones dropped).
std::vector<Span> unionOf(std::vector<Span> spans) {
  std::sort(spans.begin(), spans.end(), [](const Span &a, const Span &b) { return a.addr < b.addr; });
  std::vector<Span> out;
  for (const Span &s : spans) {
    if (s.bytes == 0) continue;
    if (!out.empty() && s.addr <= out.back().addr + out.back().bytes)
      out.back().bytes = std::max(out.back().bytes, s.addr + s.bytes - out.back().addr);
    else
      out.push_back(s);
  }
  return out;
}

// What a net its chip's runner runs shows of itself: its IO (and sub-nets);
// its coefficients and commands stay with the runner's model.
bmodel::Net ioDescription(const bmodel::Net &n) {
  bmodel::Net d;
  d.name = n.name;
  d.inputs = n.inputs;
  d.outputs = n.outputs;
  d.ctxAddr = n.ctxAddr;
  d.ctxSize = n.ctxSize;
  d.coeffAddr = n.coeffAddr;
  d.subnets = n.subnets;
  return d;
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
  for (const auto &n : nets_) unplace(*n);
}

void Runtime::unplace(NetEntry &net) {
  device_->unreserveAll(net.ranges);
  net.ranges.clear();
  for (uint64_t addr : net.staging) (void)device_->release(addr);
  net.staging.clear();
}

void Runtime::setChipConfigOverrides(std::string json, std::string origin) {
  chipConfigJson_ = std::move(json);
  chipConfigOrigin_ = std::move(origin);
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
  auto model = bmodel::readFile(path, nullptr, bmodel::ChipScope::AnyKnown);
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
  auto model = bmodel::parse(data, size, bmodel::ChipScope::AnyKnown);
  if (!model) return Status(model.status()).prefix(origin);
  std::shared_ptr<const std::vector<uint8_t>> image;
  if (backend_->kind() == BackendKind::Device)
    image = std::make_shared<std::vector<uint8_t>>(data, data + size);
  return adopt(model.take(), origin, image);
}

// All nets of a model or none: a failure undoes the nets placed before it.
Status Runtime::adopt(bmodel::Model model, const std::string &origin,
                      std::shared_ptr<const std::vector<uint8_t>> image) {
  // A chip the registry knows (parse checked) runs here or on its runner.
  const bool byRunner = runsOutsideRuntime(model.chip);
  if (!byRunner && model.chip != bmodel::kChip)
    return makeError(origin, ": bmodel is for chip '", model.chip,
                     "', which neither this runtime nor a chip runner runs");
  isa::HwConfig runnerHw;
  if (byRunner) {
    if (Status st = runnerTakesBackend(model.chip, backend_->kind()); !st) return st.prefix(origin);
    auto hw = chipConfig(model, chipConfigJson_, chipConfigOrigin_);
    if (!hw) return Status(hw.status()).prefix(origin);
    runnerHw = hw.take();
  }
  if (backend_->kind() == BackendKind::Device && model.type == bmodel::kToolkitModelType)
    return makeError(origin, ": built by tpuc, whose BM1684 commands follow this toolkit's own operand conventions, "
                             "not yet the chip's (docs/isa.md): a BM1684 would compute something else; run it on "
                             "the sim or func backend");
  const size_t before = nets_.size();
  std::vector<bmodel::Net> nets = std::move(model.nets);
  model.nets.clear(); // `model` keeps the header a runner's model copies
  for (const bmodel::StageRun &run : bmodel::stageRuns(nets)) {
    auto entry = std::make_unique<NetEntry>();
    for (size_t i = run.first; i < run.first + run.count; ++i) {
      auto loaded = std::make_unique<LoadedNet>();
      loaded->origin = origin;
      loaded->image = image;
      if (byRunner) {
        // The runner takes a model of this stage alone; Runtime keeps its IO description.
        loaded->desc = ioDescription(nets[i]);
        entry->runnerModels.push_back(model);
        entry->runnerModels.back().nets.push_back(std::move(nets[i]));
      } else {
        loaded->desc = std::move(nets[i]);
      }
      entry->stages.push_back(std::move(loaded));
    }
    entry->runnerHw = runnerHw;
    Status st = place(*entry);
    if (!st) {
      while (nets_.size() > before) {
        unplace(*nets_.back());
        nets_.pop_back();
      }
      return st.prefix(origin);
    }
    nets_.push_back(std::move(entry));
  }
  return Status::ok();
}

// Decodes the net's groups, claims its memory on the device and writes the
// coefficients. On failure the device keeps no range of this net.
Status Runtime::place(NetEntry &net) {
  const bmodel::Net &first = net.stages.front()->desc;
  for (const auto &other : nets_)
    if (other->stages.front()->desc.name == first.name)
      return makeError("net ", quoted(first.name), ": a net of this name is already loaded from ",
                       other->stages.front()->origin);
  Status st = net.runnerModels.empty() ? placeRanges(net) : placeRunnerNet(net);
  if (!st) unplace(net);
  return st;
}

// A net its chip's runner runs keeps nothing of its own on the device but its
// IO: one staging buffer per input and output, shared by the stages (which
// never run at the same time), at the top of DDR.
Status Runtime::placeRunnerNet(NetEntry &net) {
  const std::string where = "net " + quoted(net.stages.front()->desc.name);
  auto stageIo = [](LoadedNet &s, bool input) -> std::vector<bmodel::Tensor> & {
    return input ? s.desc.inputs : s.desc.outputs;
  };
  for (bool input : {true, false})
    for (size_t k = 0; k < stageIo(*net.stages.front(), input).size(); ++k) {
      uint64_t bytes = 0;
      for (const auto &s : net.stages) {
        const bmodel::Tensor &t = stageIo(*s, input)[k];
        auto b = deviceBytes(t);
        if (!b) return makeError(where, ": tensor ", quoted(t.name), ": ", b.message());
        bytes = std::max(bytes, *b);
      }
      const std::string &name = stageIo(*net.stages.front(), input)[k].name;
      auto addr =
          device_->allocateHigh(bytes, where + (input ? " input " : " output ") + quoted(name) + " staging buffer");
      if (!addr) return Status(addr.status()).prefix(where);
      net.staging.push_back(*addr);
      for (const auto &s : net.stages) stageIo(*s, input)[k].deviceAddr = *addr;
    }
  return Status::ok();
}

Status Runtime::placeRanges(NetEntry &net) {
  const bmodel::Net &first = net.stages.front()->desc;
  const std::string where = "net " + quoted(first.name);
  const bool multiStage = net.stages.size() > 1;
  // Neuron ranges by owner, in the order they are met. Stages never run at
  // the same time, so an owner's ranges over all stages are claimed once,
  // as their union.
  std::vector<std::pair<std::string, std::vector<Span>>> neurons;
  auto addNeurons = [&](const std::string &owner, uint64_t addr, uint64_t bytes) {
    auto it = std::find_if(neurons.begin(), neurons.end(), [&](const auto &n) { return n.first == owner; });
    if (it == neurons.end()) it = neurons.insert(neurons.end(), {owner, {}});
    it->second.push_back({addr, bytes});
  };
  for (size_t s = 0; s < net.stages.size(); ++s) {
    LoadedNet &stage = *net.stages[s];
    const bmodel::Net &d = stage.desc;
    const std::string stageWhere = multiStage ? where + " stage " + std::to_string(s) : where;
    for (size_t g = 0; g < d.groups.size(); ++g) {
      auto group = decodeGroup(d.groups[g]);
      if (!group) return makeError(stageWhere, ": group ", g, ": ", group.message());
      stage.groups.push_back(group.take());
    }
    auto steps = planSteps(d);
    if (!steps) return Status(steps.status()).prefix(stageWhere);
    stage.steps = steps.take();
    // The net's IO tensors and those its sub-nets read and write.
    std::vector<const std::vector<bmodel::Tensor> *> tensorLists{&d.inputs, &d.outputs};
    for (const auto &sub : d.subnets) tensorLists.insert(tensorLists.end(), {&sub.inputs, &sub.outputs});
    for (const auto *list : tensorLists)
      for (const auto &t : *list) {
        auto bytes = deviceBytes(t);
        if (!bytes) return makeError(stageWhere, ": tensor ", quoted(t.name), ": ", bytes.message());
      }
    // One copy of the weights serves every stage.
    if (s > 0 && (d.coeffAddr != first.coeffAddr || d.coeff.size() != first.coeff.size()))
      return makeError(where, ": stage ", s, "'s coefficients [", hex(d.coeffAddr), ", +", hex(d.coeff.size()),
                       ") are not stage 0's [", hex(first.coeffAddr), ", +", hex(first.coeff.size()),
                       "): the stages of a net share one coefficient range");
    if (s > 0 && d.coeff != first.coeff)
      return makeError(where, ": stage ", s,
                       "'s coefficient bytes differ from stage 0's: the stages of a net share one coefficient range");
    addNeurons(where + " neuron memory", d.ctxAddr, d.ctxSize);
    // Tensors outside the context range are neuron memory of their own; a
    // host op may read a weight in the coefficients.
    auto within = [](const bmodel::Tensor &t, uint64_t bytes, uint64_t addr, uint64_t size) {
      return t.deviceAddr >= addr && bytes <= size && t.deviceAddr - addr <= size - bytes;
    };
    for (const auto *list : tensorLists)
      for (const auto &t : *list) {
        uint64_t bytes = t.storageBytes();
        if (!within(t, bytes, d.ctxAddr, d.ctxSize) && !within(t, bytes, d.coeffAddr, d.coeff.size()))
          addNeurons(where + " tensor " + quoted(t.name), t.deviceAddr, bytes);
      }
  }
  // Claim memory only once everything above is known to be good.
  auto claim = [&](uint64_t addr, uint64_t bytes, SimDevice::Use use, const std::string &owner) {
    Status st = device_->reserve(addr, bytes, use, owner);
    if (st && bytes) net.ranges.push_back({addr, owner});
    return st;
  };
  TPU_RETURN_IF_ERROR(
      claim(first.coeffAddr, first.coeff.size(), SimDevice::Use::Coefficients, where + " coefficients"));
  for (auto &[owner, spans] : neurons)
    for (const Span &span : unionOf(spans))
      TPU_RETURN_IF_ERROR(claim(span.addr, span.bytes, SimDevice::Use::Neurons, owner));
  if (!first.coeff.empty())
    TPU_RETURN_IF_ERROR(device_->gmem().write(first.coeffAddr, first.coeff.data(), first.coeff.size()));
  return Status::ok();
}

std::vector<std::string> Runtime::netNames() const {
  std::vector<std::string> names;
  for (const auto &n : nets_) names.push_back(n->stages.front()->desc.name);
  return names;
}

Result<Runtime::NetEntry *> Runtime::find(const std::string &name) const {
  std::string known;
  for (const auto &n : nets_) {
    if (n->stages.front()->desc.name == name) return n.get();
    known += (known.empty() ? "" : ", ") + quoted(n->stages.front()->desc.name);
  }
  return makeError("no net named ", quoted(name), " (loaded: ", known.empty() ? "none" : known,
                   ")");
}

Result<const bmodel::Net *> Runtime::net(const std::string &name) const {
  auto n = find(name);
  if (!n) return n.status();
  return &(*n)->stages.front()->desc;
}

Result<std::vector<const bmodel::Net *>> Runtime::stages(const std::string &name) const {
  auto n = find(name);
  if (!n) return n.status();
  std::vector<const bmodel::Net *> out;
  for (const auto &s : (*n)->stages) out.push_back(&s->desc);
  return out;
}

Result<size_t> Runtime::stageFor(const std::string &name, const std::vector<std::vector<int64_t>> &inputShapes) const {
  auto n = find(name);
  if (!n) return n.status();
  const auto &stages = (*n)->stages;
  const bmodel::Net &first = stages.front()->desc;
  if (inputShapes.size() != first.inputs.size())
    return makeError("net ", quoted(name), ": ", inputShapes.size(), " input shapes given, it has ",
                     first.inputs.size(), " inputs");
  // Input by input, as the stages' input shapes are all distinct.
  std::vector<size_t> candidates(stages.size());
  for (size_t s = 0; s < stages.size(); ++s) candidates[s] = s;
  for (size_t k = 0; k < first.inputs.size(); ++k) {
    std::vector<size_t> left;
    for (size_t s : candidates)
      if (signedShape(stages[s]->desc.inputs[k].shape) == inputShapes[k]) left.push_back(s);
    if (left.empty()) return noStage(name, stages, k, inputShapes[k]);
    candidates = std::move(left);
  }
  return candidates.front();
}

Status Runtime::setInput(const std::string &netName, const std::string &input,
                         const NpyArray &value) {
  auto n = find(netName);
  if (!n) return n.status();
  NetEntry &entry = **n;
  const bmodel::Net &d = entry.stages.front()->desc;
  const bmodel::Tensor *t = findTensor(d.inputs, input);
  if (!t)
    return makeError("net ", quoted(netName), " has no input ", quoted(input), " (inputs: ",
                     tensorNames(d.inputs), ")");
  if (entry.stages.size() == 1) return writeInput(netName, *t, value);
  // Which stage runs depends on all inputs: launch writes them.
  const size_t k = size_t(t - d.inputs.data());
  auto takes = [&](const std::unique_ptr<LoadedNet> &s) { return signedShape(s->desc.inputs[k].shape) == value.shape; };
  if (std::none_of(entry.stages.begin(), entry.stages.end(), takes))
    return noStage(netName, entry.stages, k, value.shape);
  TPU_RETURN_IF_ERROR(checkInputDtype(*t, value, "input " + quoted(input) + " of net " + quoted(netName)));
  entry.givenInputs[input] = value;
  return Status::ok();
}

Status Runtime::writeInput(const std::string &netName, const bmodel::Tensor &t, const NpyArray &value) {
  const std::string where = "input " + quoted(t.name) + " of net " + quoted(netName);
  if (value.shape != signedShape(t.shape))
    return makeError(where, ": shape ", shapeToString(value.shape), " given, the net expects ",
                     shapeToString(signedShape(t.shape)));
  TPU_RETURN_IF_ERROR(checkInputDtype(t, value, where));
  std::vector<uint8_t> bytes;
  if (value.dtype == "float32") {
    auto conv = toDevice(t, value.as<float>(), uint64_t(value.numel()));
    if (!conv) return makeError(where, ": ", conv.message());
    bytes = conv.take();
  } else {
    // Already the device's values (int64 indices as int32), in plain C order
    // (1N): only the store mode may differ.
    auto own = value.dtype == "int64" ? int32Values(value) : Result<NpyArray>(value);
    if (!own) return makeError(where, ": ", own.message());
    bmodel::Tensor plain = t;
    plain.storeMode = bmodel::StoreMode::N1;
    auto moved = relayout(plain, own->data.data(), own->data.size(), t.storeMode);
    if (!moved) return makeError(where, ": ", moved.message());
    bytes = moved.take();
  }
  Status st = device_->gmem().write(t.deviceAddr, bytes.data(), bytes.size());
  return st ? st : st.prefix(where);
}

Result<const bmodel::Tensor *> Runtime::launchedOutput(const std::string &netName, const NetEntry &entry,
                                                       const std::string &output) const {
  const bmodel::Net &d = entry.stages.front()->desc;
  const bmodel::Tensor *t = findTensor(d.outputs, output);
  if (!t)
    return makeError("net ", quoted(netName), " has no output ", quoted(output), " (outputs: ",
                     tensorNames(d.outputs), ")");
  if (entry.stages.size() == 1) return t;
  if (!entry.launched)
    return makeError("output ", quoted(output), " of net ", quoted(netName), ": none of its ", entry.stages.size(),
                     " stages has run (the output's shape depends on the stage)");
  return &entry.stages[*entry.launched]->desc.outputs[size_t(t - d.outputs.data())];
}

Result<NpyArray> Runtime::getOutput(const std::string &netName, const std::string &output) {
  auto n = find(netName);
  if (!n) return n.status();
  auto t = launchedOutput(netName, **n, output);
  if (!t) return t.status();
  return readOutput(netName, **n, **t);
}

Result<std::vector<int64_t>> Runtime::outputShape(const std::string &netName, const std::string &output) const {
  auto n = find(netName);
  if (!n) return n.status();
  auto t = launchedOutput(netName, **n, output);
  if (!t) return t.status();
  return realShape((*n)->shapesFromData, **t);
}

Result<NpyArray> Runtime::readOutput(const std::string &netName, const NetEntry &entry, const bmodel::Tensor &t) {
  const std::string where = "output " + quoted(t.name) + " of net " + quoted(netName);
  auto size = deviceBytes(t);
  if (!size) return makeError(where, ": ", size.message());
  std::vector<uint8_t> bytes(*size);
  Status st = device_->gmem().read(t.deviceAddr, bytes.data(), bytes.size());
  if (!st) return st.prefix(where);
  auto values = fromDevice(t, bytes.data(), bytes.size());
  if (!values) return makeError(where, ": ", values.message());
  const kernels::Shape shape = realShape(entry.shapesFromData, t);
  values->resize(size_t(kernels::numElements(shape))); // a host op's smaller result comes first
  return NpyArray::from(shape, *values);
}

Status Runtime::launch(const std::string &netName, const RunOptions &opts, RunReport &report) {
  auto n = find(netName);
  if (!n) return n.status();
  NetEntry &entry = **n;
  if (entry.stages.size() == 1) return launchStage(entry, 0, opts, report);
  const bmodel::Net &d = entry.stages.front()->desc;
  std::vector<std::vector<int64_t>> shapes;
  for (const auto &t : d.inputs) {
    auto given = entry.givenInputs.find(t.name);
    if (given == entry.givenInputs.end())
      return makeError("input ", quoted(t.name), " of net ", quoted(netName),
                       " is not set (a multi-stage net picks its stage from the shapes of its inputs)");
    shapes.push_back(given->second.shape);
  }
  auto stage = stageFor(netName, shapes);
  if (!stage) return stage.status();
  const bmodel::Net &picked = entry.stages[*stage]->desc;
  for (const auto &t : picked.inputs) TPU_RETURN_IF_ERROR(writeInput(netName, t, entry.givenInputs.at(t.name)));
  return launchStage(entry, *stage, opts, report);
}

Status Runtime::launch(const std::string &netName, size_t stage, const RunOptions &opts, RunReport &report) {
  auto n = find(netName);
  if (!n) return n.status();
  if (stage >= (*n)->stages.size())
    return makeError("net ", quoted(netName), " has ", (*n)->stages.size(), " stage(s), no stage ", stage);
  return launchStage(**n, stage, opts, report);
}

Status Runtime::launchStage(NetEntry &net, size_t stage, const RunOptions &opts, RunReport &report) {
  const LoadedNet &loaded = *net.stages[stage];
  report = RunReport();
  report.backend = backend_->kind();
  for (const auto &g : loaded.groups) {
    ++report.groups;
    report.tiuCommands += g.tiu.size();
    report.gdmaCommands += g.gdma.size();
  }
  net.launched = stage;
  auto start = std::chrono::steady_clock::now();
  net.shapesFromData.clear();
  Status st = net.runnerModels.empty() ? runSteps(loaded, opts, report, net.shapesFromData)
                                       : runOnChipRunner(net, stage, opts, report);
  report.wallSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string where = "net " + quoted(loaded.desc.name);
  return st ? st : st.prefix(net.stages.size() == 1 ? where : where + " stage " + std::to_string(stage));
}

// TPU steps on the backend, CPU sub-nets here on the host, in order.
Status Runtime::runSteps(const LoadedNet &net, const RunOptions &opts, RunReport &report, ShapesFromData &shapes) {
  auto launch = backend_->begin(*device_, net, opts);
  if (!launch) return launch.status();
  for (const LoadedStep &step : net.steps) {
    if (!step.host) {
      TPU_RETURN_IF_ERROR((*launch)->execute(step.groups));
      continue;
    }
    auto start = std::chrono::steady_clock::now();
    Status st = runHostStep(*device_, net.desc.subnets[step.subnet], *step.host, shapes);
    report.hostSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ++report.cpuSubnets;
    if (!st)
      return st.prefix("sub-net " + std::to_string(step.subnet) + " (" +
                       std::string(kernels::findHostOp(step.host->code)->name) + ")");
  }
  (*launch)->finish(report);
  return Status::ok();
}

// The staged inputs as the runner takes them (float32 arrays), its run, its
// outputs written to their staging buffers in the tensors' layout.
Status Runtime::runOnChipRunner(NetEntry &net, size_t stage, const RunOptions &opts, RunReport &report) {
  const bmodel::Net &d = net.stages[stage]->desc;
  NpzMap inputs;
  for (const bmodel::Tensor &t : d.inputs) {
    const std::string where = "input " + quoted(t.name);
    auto size = deviceBytes(t);
    if (!size) return makeError(where, ": ", size.message());
    std::vector<uint8_t> bytes(*size);
    if (Status st = device_->gmem().read(t.deviceAddr, bytes.data(), bytes.size()); !st) return st.prefix(where);
    auto values = fromDevice(t, bytes.data(), bytes.size());
    if (!values) return makeError(where, ": ", values.message());
    inputs[t.name] = NpyArray::from(signedShape(t.shape), *values);
  }
  auto outputs = runOutsideRuntime(net.runnerModels[stage], d.name, inputs, backend_->kind(), net.runnerHw,
                                   opts.recordTrace, report);
  if (!outputs) return outputs.status();
  for (const bmodel::Tensor &t : d.outputs) {
    const std::string where = "output " + quoted(t.name);
    auto it = outputs->find(t.name);
    if (it == outputs->end()) return makeError(where, ": the chip's runner gave no such output");
    std::vector<float> values = it->second.toFloat();
    auto bytes = toDevice(t, values.data(), values.size());
    if (!bytes) return makeError(where, ": ", bytes.message());
    if (Status st = device_->gmem().write(t.deviceAddr, bytes->data(), bytes->size()); !st) return st.prefix(where);
  }
  return Status::ok();
}

Result<NpzMap> Runtime::run(const std::string &netName, const NpzMap &inputs,
                            const RunOptions &opts, RunReport &report) {
  auto n = find(netName);
  if (!n) return n.status();
  NetEntry &entry = **n;
  const bmodel::Net &d = entry.stages.front()->desc;
  for (const auto &[name, array] : inputs)
    if (!findTensor(d.inputs, name))
      return makeError("net ", quoted(netName), " has no input ", quoted(name), " (inputs: ",
                       tensorNames(d.inputs), ")");
  std::vector<std::vector<int64_t>> shapes;
  for (const auto &t : d.inputs) {
    auto it = inputs.find(t.name);
    if (it == inputs.end())
      return makeError("input ", quoted(t.name), " of net ", quoted(netName), " is missing");
    shapes.push_back(it->second.shape);
  }
  size_t stage = 0;
  if (entry.stages.size() > 1) {
    auto picked = stageFor(netName, shapes);
    if (!picked) return picked.status();
    stage = *picked;
  }
  const bmodel::Net &s = entry.stages[stage]->desc;
  for (const auto &t : s.inputs) TPU_RETURN_IF_ERROR(writeInput(netName, t, inputs.at(t.name)));
  TPU_RETURN_IF_ERROR(launchStage(entry, stage, opts, report));
  NpzMap outputs;
  for (const auto &t : s.outputs) {
    auto out = readOutput(netName, entry, t);
    if (!out) return out.status();
    outputs[t.name] = out.take();
  }
  return outputs;
}

} // namespace tpu::runtime
