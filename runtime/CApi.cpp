// The bmlib / BMRuntime C API (runtime/include/*.h) over tpu::runtime. Every
// entry point catches its failure as a Status, logs it as one line and
// returns the C status; nothing here aborts on user input.
#include "bmruntime_interface.h"

#include "runtime/IoConvert.h"
#include "runtime/Runtime.h"
#include "support/ReadFile.h"

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

using namespace tpu;
using namespace tpu::runtime;

namespace {

// bmrt_launch_tensor is asynchronous, as on the chip: it checks its
// arguments, places the inputs and sets up the output tensors, then queues
// the run; one worker per device runs the queue in order and bm_thread_sync
// waits for it. A job runs under the device mutex, so memory calls made
// before the sync see the finished run (the chip leaves them undefined).
class LaunchQueue {
public:
  explicit LaunchQueue(std::mutex &device) : device_(device), worker_([this] { work(); }) {}
  ~LaunchQueue() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    cv_.notify_all();
    worker_.join(); // after the queued jobs
  }
  void submit(std::function<bool()> job) {
    {
      std::lock_guard<std::mutex> lock(m_);
      jobs_.push_back(std::move(job));
    }
    cv_.notify_all();
  }
  void recordFailure() {
    std::lock_guard<std::mutex> lock(m_);
    failed_ = true;
  }
  // Waits until every queued job has run.
  void waitIdle() {
    std::unique_lock<std::mutex> lock(m_);
    idle_.wait(lock, [this] { return jobs_.empty() && !busy_; });
  }
  // Whether a job failed (or a launch was rejected) since the last call.
  bool takeFailure() {
    std::lock_guard<std::mutex> lock(m_);
    bool failed = failed_;
    failed_ = false;
    return failed;
  }

private:
  void work() {
    std::unique_lock<std::mutex> lock(m_);
    for (;;) {
      cv_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
      if (jobs_.empty()) return; // stopping, nothing left
      std::function<bool()> job = std::move(jobs_.front());
      jobs_.pop_front();
      busy_ = true;
      lock.unlock();
      bool ok;
      {
        std::lock_guard<std::mutex> device(device_);
        ok = job();
      }
      lock.lock();
      busy_ = false;
      failed_ = failed_ || !ok;
      if (jobs_.empty()) idle_.notify_all();
    }
  }

  std::mutex &device_;
  std::mutex m_;
  std::condition_variable cv_, idle_;
  std::deque<std::function<bool()>> jobs_;
  bool busy_ = false, stop_ = false, failed_ = false;
  std::thread worker_; // last: starts after the members it uses
};

} // namespace

struct bm_context {
  std::mutex mu; // one call at a time per device
  std::shared_ptr<SimDevice> device;
  BackendKind backend = BackendKind::Func;
  // TPU_HW_CONFIG's text: the device's BM1684 parameters over the BM1684's
  // defaults, and over the preset of another chip for a bmodel of that chip.
  std::string configJson, configPath;
  LaunchQueue launches{mu}; // destroyed first: its jobs use the device
};

namespace {

void logError(const char *api, const std::string &message) {
  std::cerr << api << ": error: " << message << "\n";
}

// The net description the C API hands out, with the storage its pointers use.
struct NetInfoStorage {
  bm_net_info_t info{};
  std::vector<const char *> inNames, outNames;
  std::vector<bm_data_type_t> inTypes, outTypes;
  std::vector<float> inScales, outScales;
  std::vector<size_t> maxIn, maxOut;
  std::vector<int> inZero, outZero, inLoc, outLoc;
  // Per stage (one for a single-stage net): its shapes and device memory.
  std::vector<std::vector<bm_shape_t>> inShapes, outShapes;
  std::vector<std::vector<bm_device_mem_t>> inMems, outMems;
  std::vector<bm_stage_info_t> stages;
};

struct Bmrt {
  bm_context *ctx;
  std::unique_ptr<Runtime> rt;
  std::map<std::string, std::unique_ptr<NetInfoStorage>> infos;
};

Bmrt *asBmrt(void *p) { return static_cast<Bmrt *>(p); }

bm_device_mem_t deviceMem(uint64_t addr, uint64_t size) {
  bm_device_mem_t m{};
  m.u.device.device_addr = addr;
  m.flags.u.mem_type = BM_MEM_TYPE_DEVICE;
  m.size = unsigned(size);
  return m;
}

Result<bm_shape_t> toShape(const std::vector<uint64_t> &dims) {
  if (dims.size() > BM_MAX_DIMS_NUM) return makeError(dims.size(), " dimensions (at most 8)");
  bm_shape_t s{};
  s.num_dims = int(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] > uint64_t(INT32_MAX)) return makeError("dimension ", dims[i], " too large");
    s.dims[i] = int(dims[i]);
  }
  return s;
}

std::string shapeText(const bm_shape_t &s) {
  std::string t;
  for (int i = 0; i < s.num_dims && i < BM_MAX_DIMS_NUM; ++i)
    t += (i ? "x" : "") + std::to_string(s.dims[i]);
  return t.empty() ? "scalar" : t;
}

Status checkShape(const bm_shape_t &given, const std::vector<uint64_t> &want) {
  bool same = given.num_dims == int(want.size());
  for (size_t i = 0; same && i < want.size(); ++i) same = given.dims[i] >= 0 && uint64_t(given.dims[i]) == want[i];
  if (same) return Status::ok();
  auto w = toShape(want);
  return makeError("shape ", shapeText(given), " given, the net expects ",
                   w ? shapeText(*w) : std::string("?"));
}

// The tensor `t` seen in another store mode.
bmodel::Tensor withMode(const bmodel::Tensor &t, bm_store_mode_t mode) {
  bmodel::Tensor u = t;
  u.storeMode = StoreMode(mode);
  return u;
}

// Checks one user input (device memory, any store mode) against the net's.
Status checkInput(const SimDevice &dev, const bmodel::Tensor &t, const bm_tensor_t &user) {
  if (uint32_t(user.dtype) != uint32_t(t.dtype))
    return makeError("dtype ", dataTypeName(DataType(user.dtype)), " given, the net expects ",
                     dataTypeName(t.dtype));
  TPU_RETURN_IF_ERROR(checkShape(user.shape, t.shape));
  auto bytes = deviceBytes(withMode(t, user.st_mode));
  if (!bytes) return bytes.status();
  if (user.device_mem.size < *bytes)
    return makeError("device memory of ", user.device_mem.size, " bytes holds less than the ",
                     *bytes, " the tensor needs");
  return dev.gmem().checkRange(user.device_mem.u.device.device_addr, *bytes, "read");
}

// Copies one checked user input to the net's input.
Status placeInput(SimDevice &dev, const bmodel::Tensor &t, const bm_tensor_t &user) {
  bmodel::Tensor view = withMode(t, user.st_mode);
  auto bytes = deviceBytes(view);
  if (!bytes) return bytes.status();
  std::vector<uint8_t> data(*bytes);
  TPU_RETURN_IF_ERROR(dev.gmem().read(user.device_mem.u.device.device_addr, data.data(), data.size()));
  if (view.storeMode != t.storeMode) {
    auto moved = relayout(view, data.data(), data.size(), t.storeMode);
    if (!moved) return moved.status();
    data = moved.take();
  }
  return dev.gmem().write(t.deviceAddr, data.data(), data.size());
}

// Sets up one output tensor as the caller will see it: its store mode, shape,
// dtype and device memory (allocated here unless userMem).
Status describeOutput(SimDevice &dev, const bmodel::Tensor &t, bm_tensor_t &user, bool userMem, bool userStmode,
                      std::vector<uint64_t> &allocated) {
  bm_store_mode_t mode = userStmode ? user.st_mode : BM_STORE_1N;
  auto bytes = deviceBytes(withMode(t, mode));
  if (!bytes) return bytes.status();
  auto shape = toShape(t.shape);
  if (!shape) return shape.status();
  if (userMem) {
    if (user.device_mem.size < *bytes)
      return makeError("device memory of ", user.device_mem.size, " bytes holds less than the ", *bytes,
                       " the output needs");
    TPU_RETURN_IF_ERROR(dev.gmem().checkRange(user.device_mem.u.device.device_addr, *bytes, "write"));
  } else {
    auto addr = dev.allocate(*bytes, "output '" + t.name + "'");
    if (!addr) return addr.status();
    allocated.push_back(*addr);
    user.device_mem = deviceMem(*addr, *bytes);
  }
  user.dtype = bm_data_type_t(t.dtype);
  user.shape = *shape;
  user.st_mode = mode;
  return Status::ok();
}

// Copies one net output to the user's tensor (set up by describeOutput).
Status copyOutput(SimDevice &dev, const bmodel::Tensor &t, const bm_tensor_t &user) {
  std::vector<uint8_t> data(t.storageBytes());
  TPU_RETURN_IF_ERROR(dev.gmem().read(t.deviceAddr, data.data(), data.size()));
  if (StoreMode(user.st_mode) != t.storeMode) {
    auto moved = relayout(t, data.data(), data.size(), StoreMode(user.st_mode));
    if (!moved) return moved.status();
    data = moved.take();
  }
  return dev.gmem().write(user.device_mem.u.device.device_addr, data.data(), data.size());
}

// Checks a launch, places its inputs and sets up its outputs (under the
// device mutex); then queues the run and the output copies.
Status launchTensors(Bmrt &b, const char *netName, const bm_tensor_t *inputs, int inNum,
                     bm_tensor_t *outputs, int outNum, bool userMem, bool userStmode) {
  if (!netName) return makeError("net name is NULL");
  auto stages = b.rt->stages(netName);
  if (!stages) return stages.status();
  const bmodel::Net &first = *stages->front();
  const std::string name = netName, where = "net '" + name + "'";
  if (inNum != int(first.inputs.size()) || (inNum && !inputs))
    return makeError(where, ": ", inNum, " input tensors given, it has ", first.inputs.size());
  if (outNum != int(first.outputs.size()) || (outNum && !outputs))
    return makeError(where, ": ", outNum, " output tensors given, it has ", first.outputs.size());
  // As BMRuntime: the stage whose input shapes are the given tensors'.
  size_t stage = 0;
  if (stages->size() > 1) {
    std::vector<std::vector<int64_t>> shapes;
    for (int i = 0; i < inNum; ++i)
      shapes.emplace_back(inputs[i].shape.dims,
                          inputs[i].shape.dims + std::clamp(inputs[i].shape.num_dims, 0, BM_MAX_DIMS_NUM));
    auto picked = b.rt->stageFor(name, shapes);
    if (!picked) return picked.status();
    stage = *picked;
  }
  const bmodel::Net &d = *(*stages)[stage];
  SimDevice &dev = b.rt->device();
  auto inputWhere = [&](size_t i) { return where + ": input " + std::to_string(i) + " '" + d.inputs[i].name + "'"; };
  for (int i = 0; i < inNum; ++i)
    if (Status st = checkInput(dev, d.inputs[i], inputs[i]); !st) return st.prefix(inputWhere(size_t(i)));
  // The run reads the inputs when it starts (the caller keeps them until the sync).
  std::vector<bm_tensor_t> given(inputs, inputs + inNum);
  std::vector<std::string> inputWheres;
  for (int i = 0; i < inNum; ++i) inputWheres.push_back(inputWhere(size_t(i)));
  // Outputs are handed over only when all of them are set up.
  std::vector<bm_tensor_t> result(outputs, outputs + outNum);
  std::vector<uint64_t> allocated;
  for (int i = 0; i < outNum; ++i) {
    Status st = describeOutput(dev, d.outputs[i], result[i], userMem, userStmode, allocated);
    if (!st) {
      for (uint64_t a : allocated) (void)dev.release(a);
      return st.prefix(where + ": output " + std::to_string(i) + " '" + d.outputs[i].name + "'");
    }
  }
  Bmrt *bp = &b;
  auto run = [bp, name, stage, where, result, given, inputWheres]() -> Status {
    const bmodel::Net &net = *(*bp->rt->stages(name))[stage];
    for (size_t i = 0; i < given.size(); ++i)
      if (Status st = placeInput(bp->rt->device(), net.inputs[i], given[i]); !st) return st.prefix(inputWheres[i]);
    RunReport report;
    TPU_RETURN_IF_ERROR(bp->rt->launch(name, stage, RunOptions(), report));
    for (size_t i = 0; i < result.size(); ++i)
      if (Status st = copyOutput(bp->rt->device(), net.outputs[i], result[i]); !st)
        return st.prefix(where + ": output " + std::to_string(i) + " '" + net.outputs[i].name + "'");
    return Status::ok();
  };
  // The device backend forwards to libbmrt, which queues on the chip itself;
  // a failure there (no card) is reported by this call, outputs untouched.
  // A net with CPU sub-nets runs here too: a host op may give an output a
  // shape from the data (NonMaxSuppression's rows), which the caller reads
  // in the output tensor when the call returns, as from BMRuntime.
  const bool hostSteps = std::any_of(d.subnets.begin(), d.subnets.end(),
                                     [](const bmodel::Subnet &s) { return s.mode == bmodel::Subnet::Mode::Cpu; });
  if (b.ctx->backend == BackendKind::Device || hostSteps) {
    if (Status st = run(); !st) {
      for (uint64_t a : allocated) (void)dev.release(a);
      return st;
    }
    for (int i = 0; i < outNum; ++i) {
      auto real = b.rt->outputShape(name, d.outputs[size_t(i)].name);
      auto shape =
          real ? toShape(std::vector<uint64_t>(real->begin(), real->end())) : Result<bm_shape_t>(real.status());
      if (!shape) return shape.status();
      result[size_t(i)].shape = *shape;
    }
    std::copy(result.begin(), result.end(), outputs);
    return Status::ok();
  }
  std::copy(result.begin(), result.end(), outputs);
  b.ctx->launches.submit([run] {
    Status st = run();
    if (!st) logError("bmrt_launch_tensor", st.message());
    return bool(st);
  });
  return Status::ok();
}

Result<NetInfoStorage *> netInfo(Bmrt &b, const std::string &name) {
  auto it = b.infos.find(name);
  if (it != b.infos.end()) return it->second.get();
  auto stages = b.rt->stages(name);
  if (!stages) return stages.status();
  // Names, dtypes, scales and zero points are the first stage's (names and
  // dtypes are every stage's); shapes and memory are per stage.
  const bmodel::Net &d = *stages->front();
  auto s = std::make_unique<NetInfoStorage>();
  auto fill = [&](const std::vector<bmodel::Tensor> &list, std::vector<const char *> &names,
                  std::vector<bm_data_type_t> &types, std::vector<float> &scales, std::vector<int> &zero,
                  std::vector<int> &loc) {
    for (const auto &t : list) {
      names.push_back(t.name.c_str());
      types.push_back(bm_data_type_t(t.dtype));
      scales.push_back(t.scale);
      zero.push_back(t.zeroPoint);
      loc.push_back(0);
    }
  };
  fill(d.inputs, s->inNames, s->inTypes, s->inScales, s->inZero, s->inLoc);
  fill(d.outputs, s->outNames, s->outTypes, s->outScales, s->outZero, s->outLoc);
  s->maxIn.assign(d.inputs.size(), 0);
  s->maxOut.assign(d.outputs.size(), 0);
  auto fillStage = [&](const std::vector<bmodel::Tensor> &list, std::vector<size_t> &maxBytes,
                       std::vector<bm_shape_t> &shapes, std::vector<bm_device_mem_t> &mems) -> Status {
    for (size_t i = 0; i < list.size(); ++i) {
      const bmodel::Tensor &t = list[i];
      maxBytes[i] = std::max(maxBytes[i], size_t(t.storageBytes()));
      auto shape = toShape(t.shape);
      if (!shape) return shape.status();
      shapes.push_back(*shape);
      mems.push_back(deviceMem(t.deviceAddr, t.storageBytes()));
    }
    return Status::ok();
  };
  for (const bmodel::Net *stage : *stages) {
    s->inShapes.emplace_back();
    s->outShapes.emplace_back();
    s->inMems.emplace_back();
    s->outMems.emplace_back();
    TPU_RETURN_IF_ERROR(fillStage(stage->inputs, s->maxIn, s->inShapes.back(), s->inMems.back()));
    TPU_RETURN_IF_ERROR(fillStage(stage->outputs, s->maxOut, s->outShapes.back(), s->outMems.back()));
  }
  for (size_t i = 0; i < stages->size(); ++i)
    s->stages.push_back({s->inShapes[i].data(), s->outShapes[i].data(), s->inMems[i].data(), s->outMems[i].data()});
  s->info = {d.name.c_str(),        false,
             int(d.inputs.size()),  s->inNames.data(),
             s->inTypes.data(),     s->inScales.data(),
             int(d.outputs.size()), s->outNames.data(),
             s->outTypes.data(),    s->outScales.data(),
             int(s->stages.size()), s->stages.data(),
             s->maxIn.data(),       s->maxOut.data(),
             s->inZero.data(),      s->outZero.data(),
             s->inLoc.data(),       s->outLoc.data()};
  return (b.infos[name] = std::move(s)).get();
}

Result<BackendKind> backendFromEnvironment() {
  const char *env = std::getenv("TPU_BACKEND");
  if (!env || !*env) return backendAvailable(BackendKind::Sim) ? BackendKind::Sim : BackendKind::Func;
  auto kind = parseBackendKind(env);
  if (!kind) return makeError("TPU_BACKEND: ", kind.message());
  if (*kind == BackendKind::Device) {
    // Fail here, where applications expect "no device", not at bmrt_create.
    auto probe = makeBackend(BackendKind::Device);
    if (!probe) return makeError("TPU_BACKEND=device: ", probe.message());
  }
  return kind;
}

} // namespace

extern "C" {

bm_status_t bm_dev_getcount(int *count) {
  if (!count) return BM_ERR_PARAM;
  *count = 1;
  return BM_SUCCESS;
}

bm_status_t bm_dev_request(bm_handle_t *handle, int devid) {
  if (!handle) return logError("bm_dev_request", "handle pointer is NULL"), BM_ERR_PARAM;
  *handle = nullptr;
  if (devid != 0)
    return logError("bm_dev_request", "no device " + std::to_string(devid) +
                                          " (one simulated BM1684, device 0)"),
           BM_ERR_PARAM;
  auto backend = backendFromEnvironment();
  if (!backend) return logError("bm_dev_request", backend.message()), BM_ERR_DEVNOTREADY;
  isa::HwConfig cfg;
  std::string configJson, configPath;
  if (const char *path = std::getenv("TPU_HW_CONFIG"); path && *path) {
    auto text = readFile(path, "hardware config");
    auto loaded = text ? isa::HwConfig::fromJson(*text, path) : Result<isa::HwConfig>(text.status());
    if (!loaded) return logError("bm_dev_request", loaded.message()), BM_ERR_PARAM;
    cfg = loaded.take();
    configJson = *text;
    configPath = path;
  }
  if (Status st = cfg.validate(); !st) return logError("bm_dev_request", st.message()), BM_ERR_PARAM;
  auto ctx = std::make_unique<bm_context>();
  ctx->device = std::make_shared<SimDevice>(cfg);
  ctx->backend = *backend;
  ctx->configJson = std::move(configJson);
  ctx->configPath = std::move(configPath);
  *handle = ctx.release();
  return BM_SUCCESS;
}

void bm_dev_free(bm_handle_t handle) { delete handle; }

bm_status_t bm_malloc_device_byte(bm_handle_t handle, bm_device_mem_t *pmem, unsigned int size) {
  if (!handle || !pmem) return logError("bm_malloc_device_byte", "NULL argument"), BM_ERR_PARAM;
  std::lock_guard<std::mutex> lock(handle->mu);
  auto addr = handle->device->allocate(size, "bm_malloc_device_byte buffer");
  if (!addr) return logError("bm_malloc_device_byte", addr.message()), BM_ERR_NOMEM;
  *pmem = deviceMem(*addr, size);
  return BM_SUCCESS;
}

void bm_free_device(bm_handle_t handle, bm_device_mem_t mem) {
  if (!handle) return logError("bm_free_device", "handle is NULL");
  std::lock_guard<std::mutex> lock(handle->mu);
  if (Status st = handle->device->release(mem.u.device.device_addr); !st)
    logError("bm_free_device", st.message());
}

static bm_status_t copy(const char *api, bm_handle_t handle, bool toDevice, void *host,
                        bm_device_mem_t mem, unsigned int size) {
  if (!handle || !host) return logError(api, "NULL argument"), BM_ERR_PARAM;
  if (size > mem.size)
    return logError(api, std::to_string(size) + " bytes requested from a " +
                             std::to_string(mem.size) + "-byte device buffer"),
           BM_ERR_PARAM;
  std::lock_guard<std::mutex> lock(handle->mu);
  Status st = toDevice ? handle->device->gmem().write(mem.u.device.device_addr, host, size)
                       : handle->device->gmem().read(mem.u.device.device_addr, host, size);
  if (!st) return logError(api, st.message()), BM_ERR_PARAM;
  return BM_SUCCESS;
}

bm_status_t bm_memcpy_s2d(bm_handle_t handle, bm_device_mem_t dst, void *src) {
  return copy("bm_memcpy_s2d", handle, true, src, dst, dst.size);
}
bm_status_t bm_memcpy_d2s(bm_handle_t handle, void *dst, bm_device_mem_t src) {
  return copy("bm_memcpy_d2s", handle, false, dst, src, src.size);
}
bm_status_t bm_memcpy_s2d_partial(bm_handle_t handle, bm_device_mem_t dst, void *src, unsigned int size) {
  return copy("bm_memcpy_s2d_partial", handle, true, src, dst, size);
}
bm_status_t bm_memcpy_d2s_partial(bm_handle_t handle, void *dst, bm_device_mem_t src, unsigned int size) {
  return copy("bm_memcpy_d2s_partial", handle, false, dst, src, size);
}

// Waits for the queued launches; reports whether one of them failed (or a
// launch was rejected) since the last sync.
bm_status_t bm_thread_sync(bm_handle_t handle) {
  if (!handle) return BM_ERR_PARAM;
  handle->launches.waitIdle();
  return handle->launches.takeFailure() ? BM_ERR_FAILURE : BM_SUCCESS;
}

unsigned long long bm_mem_get_device_addr(bm_device_mem_t mem) { return mem.u.device.device_addr; }
unsigned int bm_mem_get_device_size(bm_device_mem_t mem) { return mem.size; }
bm_device_mem_t bm_mem_from_device(unsigned long long addr, unsigned int len) {
  return deviceMem(addr, len);
}

void *bmrt_create(bm_handle_t handle) {
  if (!handle) return logError("bmrt_create", "bm_handle is NULL"), nullptr;
  auto rt = Runtime::create(handle->device, handle->backend);
  if (!rt) return logError("bmrt_create", rt.message()), nullptr;
  (*rt)->setChipConfigOverrides(handle->configJson, handle->configPath);
  return new Bmrt{handle, rt.take(), {}};
}

void bmrt_destroy(void *p) {
  if (!p) return;
  Bmrt *b = asBmrt(p);
  b->ctx->launches.waitIdle(); // queued runs use this runtime
  std::lock_guard<std::mutex> lock(b->ctx->mu);
  delete b;
}

bool bmrt_load_bmodel(void *p, const char *path) {
  if (!p || !path) return logError("bmrt_load_bmodel", "NULL argument"), false;
  Bmrt *b = asBmrt(p);
  std::lock_guard<std::mutex> lock(b->ctx->mu);
  if (Status st = b->rt->loadBmodel(path); !st) return logError("bmrt_load_bmodel", st.message()), false;
  return true;
}

bool bmrt_load_bmodel_data(void *p, const void *data, size_t size) {
  if (!p || !data) return logError("bmrt_load_bmodel_data", "NULL argument"), false;
  Bmrt *b = asBmrt(p);
  std::lock_guard<std::mutex> lock(b->ctx->mu);
  Status st = b->rt->loadBmodel(static_cast<const uint8_t *>(data), size, "<bmodel data>");
  if (!st) return logError("bmrt_load_bmodel_data", st.message()), false;
  return true;
}

int bmrt_get_network_number(void *p) {
  if (!p) return 0;
  Bmrt *b = asBmrt(p);
  std::lock_guard<std::mutex> lock(b->ctx->mu);
  return int(b->rt->netNames().size());
}

void bmrt_get_network_names(void *p, const char ***names) {
  if (!names) return;
  *names = nullptr;
  if (!p) return;
  Bmrt *b = asBmrt(p);
  std::lock_guard<std::mutex> lock(b->ctx->mu);
  auto list = b->rt->netNames();
  auto *array = static_cast<const char **>(std::malloc(sizeof(char *) * (list.size() + 1)));
  if (!array) return logError("bmrt_get_network_names", "out of host memory");
  for (size_t i = 0; i < list.size(); ++i) array[i] = (*b->rt->net(list[i]))->name.c_str();
  array[list.size()] = nullptr;
  *names = array;
}

const bm_net_info_t *bmrt_get_network_info(void *p, const char *name) {
  if (!p || !name) return logError("bmrt_get_network_info", "NULL argument"), nullptr;
  Bmrt *b = asBmrt(p);
  std::lock_guard<std::mutex> lock(b->ctx->mu);
  auto info = netInfo(*b, name);
  if (!info) return logError("bmrt_get_network_info", info.message()), nullptr;
  return &(*info)->info;
}

void bmrt_print_network_info(const bm_net_info_t *info) {
  if (!info) return;
  std::cout << "net " << info->name << ": " << info->input_num << " input(s), "
            << info->output_num << " output(s)\n";
  // One shape per stage: "1x3x16x32 | 1x3x16x64".
  auto print = [&](const char *kind, int n, const char *const *names, const bm_data_type_t *types, const float *scales,
                   bool input) {
    for (int i = 0; i < n; ++i) {
      std::cout << "  " << kind << " " << names[i] << ": " << dataTypeName(DataType(types[i])) << " ";
      for (int s = 0; s < info->stage_num; ++s)
        std::cout << (s ? " | " : "")
                  << shapeText((input ? info->stages[s].input_shapes : info->stages[s].output_shapes)[i]);
      std::cout << " scale " << scales[i] << "\n";
    }
  };
  print("input", info->input_num, info->input_names, info->input_dtypes, info->input_scales, true);
  print("output", info->output_num, info->output_names, info->output_dtypes, info->output_scales, false);
}

bool bmrt_launch_tensor_ex(void *p, const char *net, const bm_tensor_t inputs[], int inNum,
                           bm_tensor_t outputs[], int outNum, bool userMem, bool userStmode) {
  if (!p) return logError("bmrt_launch_tensor", "p_bmrt is NULL"), false;
  Bmrt *b = asBmrt(p);
  std::lock_guard<std::mutex> lock(b->ctx->mu);
  Status st = launchTensors(*b, net, inputs, inNum, outputs, outNum, userMem, userStmode);
  if (!st) {
    b->ctx->launches.recordFailure();
    return logError("bmrt_launch_tensor", st.message()), false;
  }
  return true;
}

bool bmrt_launch_tensor(void *p, const char *net, const bm_tensor_t inputs[], int inNum,
                        bm_tensor_t outputs[], int outNum) {
  return bmrt_launch_tensor_ex(p, net, inputs, inNum, outputs, outNum, false, false);
}

int bmrt_data_type_size(bm_data_type_t dtype) { return int(dataTypeBytes(DataType(dtype))); }

uint64_t bmrt_shape_count(const bm_shape_t *shape) {
  if (!shape || shape->num_dims < 0 || shape->num_dims > BM_MAX_DIMS_NUM) return 0;
  uint64_t n = 1;
  for (int i = 0; i < shape->num_dims; ++i) n *= uint64_t(shape->dims[i] < 0 ? 0 : shape->dims[i]);
  return n;
}

size_t bmrt_tensor_bytesize(const bm_tensor_t *tensor) {
  if (!tensor) return 0;
  return size_t(bmrt_shape_count(&tensor->shape) * uint64_t(bmrt_data_type_size(tensor->dtype)));
}

size_t bmrt_tensor_device_size(const bm_tensor_t *tensor) {
  return tensor ? tensor->device_mem.size : 0;
}

bool bmrt_tensor(bm_tensor_t *tensor, void *p, bm_data_type_t dtype, bm_shape_t shape) {
  if (!tensor || !p) return logError("bmrt_tensor", "NULL argument"), false;
  Bmrt *b = asBmrt(p);
  bm_tensor_t t{};
  t.dtype = dtype;
  t.shape = shape;
  t.st_mode = BM_STORE_1N;
  uint64_t bytes = bmrt_tensor_bytesize(&t);
  if (bmrt_data_type_size(dtype) == 0 || bytes > UINT32_MAX)
    return logError("bmrt_tensor", "bad data type or shape " + shapeText(shape)), false;
  std::lock_guard<std::mutex> lock(b->ctx->mu);
  auto addr = b->rt->device().allocate(bytes, "bmrt_tensor " + shapeText(shape));
  if (!addr) return logError("bmrt_tensor", addr.message()), false;
  t.device_mem = deviceMem(*addr, bytes);
  *tensor = t;
  return true;
}

} // extern "C"
