#include "runtime/DeviceBackend.h"

#include "bmruntime_interface.h"

#include <dlfcn.h>

#include <cstdlib>
#include <map>

namespace tpu::runtime {

namespace {

// The libsophon entry points this backend calls, resolved by name.
struct LibSophon {
  void *bmlib = nullptr, *bmrt = nullptr;
  decltype(&::bm_dev_request) devRequest = nullptr;
  decltype(&::bm_dev_free) devFree = nullptr;
  decltype(&::bm_malloc_device_byte) malloc = nullptr;
  decltype(&::bm_free_device) free = nullptr;
  decltype(&::bm_memcpy_s2d) s2d = nullptr;
  decltype(&::bm_memcpy_d2s) d2s = nullptr;
  decltype(&::bm_thread_sync) sync = nullptr;
  decltype(&::bmrt_create) create = nullptr;
  decltype(&::bmrt_destroy) destroy = nullptr;
  decltype(&::bmrt_load_bmodel_data) loadData = nullptr;
  decltype(&::bmrt_launch_tensor_ex) launch = nullptr;

  ~LibSophon() {
    if (bmrt) dlclose(bmrt);
    if (bmlib) dlclose(bmlib);
  }

  Status open() {
    const char *dir = std::getenv("TPU_LIBSOPHON_DIR");
    auto path = [&](const char *name) {
      return dir && *dir ? std::string(dir) + "/" + name : std::string(name);
    };
    auto load = [&](const char *name, void *&handle) -> Status {
      handle = dlopen(path(name).c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!handle) return makeError("no BM1684 device or libsophon found: ", dlerror());
      return Status::ok();
    };
    TPU_RETURN_IF_ERROR(load("libbmlib.so", bmlib));
    TPU_RETURN_IF_ERROR(load("libbmrt.so", bmrt));
    auto bind = [&](void *lib, const char *name, auto &fn) -> Status {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      if (!fn) return makeError("no BM1684 device or libsophon found: ", name, " missing");
      return Status::ok();
    };
    TPU_RETURN_IF_ERROR(bind(bmlib, "bm_dev_request", devRequest));
    TPU_RETURN_IF_ERROR(bind(bmlib, "bm_dev_free", devFree));
    TPU_RETURN_IF_ERROR(bind(bmlib, "bm_malloc_device_byte", malloc));
    TPU_RETURN_IF_ERROR(bind(bmlib, "bm_free_device", free));
    TPU_RETURN_IF_ERROR(bind(bmlib, "bm_memcpy_s2d", s2d));
    TPU_RETURN_IF_ERROR(bind(bmlib, "bm_memcpy_d2s", d2s));
    TPU_RETURN_IF_ERROR(bind(bmlib, "bm_thread_sync", sync));
    TPU_RETURN_IF_ERROR(bind(bmrt, "bmrt_create", create));
    TPU_RETURN_IF_ERROR(bind(bmrt, "bmrt_destroy", destroy));
    TPU_RETURN_IF_ERROR(bind(bmrt, "bmrt_load_bmodel_data", loadData));
    TPU_RETURN_IF_ERROR(bind(bmrt, "bmrt_launch_tensor_ex", launch));
    return Status::ok();
  }
};

Result<bm_shape_t> shapeOf(const bmodel::Tensor &t) {
  if (t.shape.size() > BM_MAX_DIMS_NUM) return makeError("tensor '", t.name, "' has too many dims");
  bm_shape_t s{};
  s.num_dims = int(t.shape.size());
  for (size_t i = 0; i < t.shape.size(); ++i) s.dims[i] = int(t.shape[i]);
  return s;
}

class DeviceBackend final : public Backend {
public:
  explicit DeviceBackend(std::unique_ptr<LibSophon> lib) : lib_(std::move(lib)) {}
  ~DeviceBackend() override {
    if (bmrt_) lib_->destroy(bmrt_);
    if (handle_) lib_->devFree(handle_);
  }
  BackendKind kind() const override { return BackendKind::Device; }

  Result<std::unique_ptr<Launch>> begin(SimDevice &host, const LoadedNet &net, const RunOptions &) override {
    // bmrt runs whole nets; our host ops are not libsophon's CPU layers.
    for (const LoadedStep &step : net.steps)
      if (step.host)
        return makeError("the device backend does not run CPU sub-nets yet (sub-net ", step.subnet,
                         "): use --backend sim or func");
    return std::unique_ptr<Launch>(std::make_unique<DeviceLaunch>(*this, host, net));
  }

  // Without CPU sub-nets a launch is one step of all the net's groups.
  Status execute(SimDevice &host, const LoadedNet &net) {
    TPU_RETURN_IF_ERROR(ensureLoaded(net));
    // Device buffers of this launch, freed on every path out.
    std::vector<bm_device_mem_t> owned;
    struct Release {
      LibSophon &lib;
      bm_handle_t h;
      std::vector<bm_device_mem_t> &mems;
      ~Release() {
        for (auto &m : mems) lib.free(h, m);
      }
    } release{*lib_, handle_, owned};

    auto tensorsFor = [&](const std::vector<bmodel::Tensor> &list, bool copyIn,
                          std::vector<bm_tensor_t> &out) -> Status {
      for (const auto &t : list) {
        bm_tensor_t bt{};
        bt.dtype = bm_data_type_t(t.dtype);
        bt.st_mode = bm_store_mode_t(t.storeMode);
        auto shape = shapeOf(t);
        if (!shape) return shape.status();
        bt.shape = *shape;
        const uint64_t bytes = t.storageBytes();
        if (lib_->malloc(handle_, &bt.device_mem, unsigned(bytes)) != BM_SUCCESS)
          return makeError("bm_malloc_device_byte of ", bytes, " bytes for '", t.name, "' failed");
        owned.push_back(bt.device_mem);
        if (copyIn) {
          std::vector<uint8_t> staged(bytes);
          TPU_RETURN_IF_ERROR(host.gmem().read(t.deviceAddr, staged.data(), bytes));
          if (lib_->s2d(handle_, bt.device_mem, staged.data()) != BM_SUCCESS)
            return makeError("bm_memcpy_s2d of input '", t.name, "' failed");
        }
        out.push_back(bt);
      }
      return Status::ok();
    };
    std::vector<bm_tensor_t> inputs, outputs;
    TPU_RETURN_IF_ERROR(tensorsFor(net.desc.inputs, true, inputs));
    TPU_RETURN_IF_ERROR(tensorsFor(net.desc.outputs, false, outputs));
    // Outputs in our memory and store mode, so they read back like the
    // simulated backends' outputs.
    if (!lib_->launch(bmrt_, net.desc.name.c_str(), inputs.data(), int(inputs.size()),
                      outputs.data(), int(outputs.size()), true, true))
      return makeError("bmrt_launch_tensor_ex failed on the device");
    if (lib_->sync(handle_) != BM_SUCCESS) return makeError("bm_thread_sync failed on the device");
    for (size_t i = 0; i < outputs.size(); ++i) {
      const bmodel::Tensor &t = net.desc.outputs[i];
      std::vector<uint8_t> staged(t.storageBytes());
      if (lib_->d2s(handle_, staged.data(), outputs[i].device_mem) != BM_SUCCESS)
        return makeError("bm_memcpy_d2s of output '", t.name, "' failed");
      TPU_RETURN_IF_ERROR(host.gmem().write(t.deviceAddr, staged.data(), staged.size()));
    }
    return Status::ok();
  }

private:
  class DeviceLaunch final : public Launch {
  public:
    DeviceLaunch(DeviceBackend &backend, SimDevice &host, const LoadedNet &net)
        : backend_(backend), host_(host), net_(net) {}
    Status execute(GroupRange) override { return backend_.execute(host_, net_); }
    void finish(RunReport &) override {}

  private:
    DeviceBackend &backend_;
    SimDevice &host_;
    const LoadedNet &net_;
  };

  // Opens the device and loads each bmodel image once.
  Status ensureLoaded(const LoadedNet &net) {
    if (!handle_) {
      if (lib_->devRequest(&handle_, 0) != BM_SUCCESS || !handle_) {
        handle_ = nullptr;
        return makeError("no BM1684 device or libsophon found: bm_dev_request(0) failed");
      }
      bmrt_ = lib_->create(handle_);
      if (!bmrt_) return makeError("bmrt_create failed on the device");
    }
    if (!net.image) return makeError("the bmodel image of net '", net.desc.name, "' was not kept");
    if (loaded_.count(net.image.get())) return Status::ok();
    if (!lib_->loadData(bmrt_, net.image->data(), net.image->size()))
      return makeError("bmrt_load_bmodel_data failed on the device (", net.origin, ")");
    loaded_[net.image.get()] = net.image; // keeps the key alive
    return Status::ok();
  }

  std::unique_ptr<LibSophon> lib_;
  bm_handle_t handle_ = nullptr;
  void *bmrt_ = nullptr;
  std::map<const void *, std::shared_ptr<const std::vector<uint8_t>>> loaded_;
};

} // namespace

Result<std::unique_ptr<Backend>> makeDeviceBackend() {
  auto lib = std::make_unique<LibSophon>();
  TPU_RETURN_IF_ERROR(lib->open());
  return std::unique_ptr<Backend>(std::make_unique<DeviceBackend>(std::move(lib)));
}

} // namespace tpu::runtime
