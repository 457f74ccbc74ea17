// The C++ runtime: load bmodels into a simulated BM1684, convert inputs and
// outputs between user fp32 and the device's layouts, launch nets on a
// backend (`func`: the semantics library alone; `sim`: the SystemC model,
// timed; `device`: a real BM1684 through libsophon). A Runtime made from a config owns its simulated device; separate
// such Runtimes are independent and may be used from separate threads.
#pragma once

#include "isa/HwConfig.h"
#include "isa/bmodel/Model.h"
#include "runtime/Backend.h"
#include "runtime/Device.h"
#include "support/Npz.h"
#include "support/Status.h"

#include <memory>
#include <string>
#include <vector>

namespace tpu::runtime {

class Runtime {
public:
  // Fails when the config is invalid or the backend is not built in.
  static Result<std::unique_ptr<Runtime>> create(const isa::HwConfig &cfg, BackendKind backend);
  // A runtime on an existing device, shared with other runtimes (as several
  // bmrt instances share one bm_handle_t); the caller serialises their use.
  static Result<std::unique_ptr<Runtime>> create(std::shared_ptr<SimDevice> device,
                                                 BackendKind backend);
  ~Runtime();
  Runtime(const Runtime &) = delete;
  Runtime &operator=(const Runtime &) = delete;

  // Loads every net of a bmodel: validates the container (isa/bmodel), the
  // chip, each command (decoded once here, so a bad command fails the load
  // naming net, group and command), the program order of each group, the
  // host op of each CPU sub-net (naming net and sub-net), and places the
  // coefficients at their address. Net names must be unique
  // across everything loaded. Errors are prefixed with the file name.
  Status loadBmodel(const std::string &path);
  Status loadBmodel(const uint8_t *data, size_t size, const std::string &origin = "<memory>");

  std::vector<std::string> netNames() const;
  // nullptr-free lookup: an unknown name is an error listing the known ones.
  Result<const bmodel::Net *> net(const std::string &name) const;

  // Converts a user array (float32, quantized with the tensor's scale; or
  // already in the tensor's own dtype, taken as is) to the device layout and
  // writes it at the input's device address. The shapes must be equal.
  Status setInput(const std::string &net, const std::string &input, const NpyArray &value);
  // Executes every command group of the net on the backend and waits; the
  // CPU sub-nets of a net run on the host between its TPU sub-nets.
  Status launch(const std::string &net, const RunOptions &opts, RunReport &report);
  // Reads an output back as float32 (dequantized with its scale).
  Result<NpyArray> getOutput(const std::string &net, const std::string &output);

  // setInput for every input (the map must name exactly the net's inputs),
  // launch, getOutput for every output (named by the output tensors).
  Result<NpzMap> run(const std::string &net, const NpzMap &inputs, const RunOptions &opts,
                     RunReport &report);

  SimDevice &device() { return *device_; }
  BackendKind backend() const { return backend_->kind(); }

private:
  Runtime(std::shared_ptr<SimDevice> device, std::unique_ptr<Backend> backend);
  Status adopt(bmodel::Model model, const std::string &origin,
               std::shared_ptr<const std::vector<uint8_t>> image);
  Status place(LoadedNet &net);
  Status placeRanges(LoadedNet &net);
  Status runSteps(const LoadedNet &net, const RunOptions &opts, RunReport &report);
  Result<const LoadedNet *> find(const std::string &name) const;

  std::shared_ptr<SimDevice> device_;
  std::unique_ptr<Backend> backend_;
  std::vector<std::unique_ptr<LoadedNet>> nets_; // in load order
};

} // namespace tpu::runtime
