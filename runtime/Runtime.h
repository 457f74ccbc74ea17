// The C++ runtime: load bmodels into a simulated BM1684, convert inputs and
// outputs between user fp32 and the device's layouts, launch nets on a
// backend (`func`: the semantics library alone; `sim`: the SystemC model,
// timed; `device`: a real BM1684 through libsophon). A Runtime made from a config owns its simulated device; separate
// such Runtimes are independent and may be used from separate threads.
// A bmodel of a chip its own runner runs (runtime/ChipRunners.h: the BM1684X)
// loads too, on func or sim: its IO tensors are staged in buffers allocated
// on this device (the addresses its description gives), and a launch hands
// them to the chip's runner and writes its outputs back there, so setInput,
// getOutput, run and the C API treat it as any other net.
#pragma once

#include "isa/HwConfig.h"
#include "isa/bmodel/Model.h"
#include "runtime/Backend.h"
#include "runtime/Device.h"
#include "runtime/HostStep.h"
#include "support/Npz.h"
#include "support/Status.h"

#include <map>
#include <memory>
#include <optional>
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
  // The stages of a multi-stage net (docs/bmodel.md "Stages") share one
  // coefficient range (claimed once; their bytes must be equal) and their
  // neuron memory (the union of the stages' ranges, claimed once).
  // A bmodel of a chip its runner runs (ChipRunners.h) keeps its coefficients
  // and commands with the runner: its description (net(), stages()) has its
  // IO tensors at their staging buffers and no groups or coefficients. It
  // needs the func or sim backend ("a BM1684X bmodel runs on the func or sim
  // backend (no device yet)") and runs with its chip's preset, with the
  // overrides of setChipConfigOverrides over it.
  Status loadBmodel(const std::string &path);
  Status loadBmodel(const uint8_t *data, size_t size, const std::string &origin = "<memory>");
  // HwConfig keys (JSON text; empty: none) over the preset of a bmodel's chip
  // when its chip's runner runs it (the BM1684's config is the device's);
  // errors name `origin`. For the bmodels loaded after the call.
  void setChipConfigOverrides(std::string json, std::string origin);

  // One name per net; a multi-stage net once.
  std::vector<std::string> netNames() const;
  // nullptr-free lookup: an unknown name is an error listing the known ones.
  // For a multi-stage net: its first stage (its inputs' and outputs' names
  // and dtypes are every stage's; stages() gives each stage's shapes).
  Result<const bmodel::Net *> net(const std::string &name) const;
  // The stages of a net in file order (one for a single-stage net), each a
  // full description with its own shapes and addresses.
  Result<std::vector<const bmodel::Net *>> stages(const std::string &name) const;
  // The stage whose input shapes equal `inputShapes` (in input order), as
  // BMRuntime picks it; none: "net 'rec' has no stage for input 'x'
  // [1,3,48,500] (stages: [1,3,48,320]; [1,3,48,640])".
  Result<size_t> stageFor(const std::string &name, const std::vector<std::vector<int64_t>> &inputShapes) const;

  // Converts a user array (float32, quantized with the tensor's scale; or
  // already in the tensor's own dtype, taken as is) to the device layout and
  // writes it at the input's device address. The shapes must be equal. For a
  // multi-stage net the array is kept until launch, which picks the stage
  // from the shapes of the inputs given (some stage must take this shape).
  Status setInput(const std::string &net, const std::string &input, const NpyArray &value);
  // Executes every command group of the net on the backend and waits; the
  // CPU sub-nets of a net run on the host between its TPU sub-nets. A
  // multi-stage net runs the stage its inputs' shapes pick (every input must
  // have been given to setInput).
  Status launch(const std::string &net, const RunOptions &opts, RunReport &report);
  // Runs stage `stage` of the net (stages() order) on what its input tensors
  // hold: for callers that place the inputs themselves (the C API).
  Status launch(const std::string &net, size_t stage, const RunOptions &opts, RunReport &report);
  // Reads an output back as float32 (dequantized with its scale); of a
  // multi-stage net, the output of the stage launched last.
  Result<NpyArray> getOutput(const std::string &net, const std::string &output);
  // An output's shape after the last launch: its tensor's, or the smaller
  // one a host op's data gave it (NonMaxSuppression's row count; the values
  // come first in the tensor's memory).
  Result<std::vector<int64_t>> outputShape(const std::string &net, const std::string &output) const;

  // setInput for every input (the map must name exactly the net's inputs),
  // launch, getOutput for every output (named by the output tensors); a
  // multi-stage net runs the stage of the inputs' shapes (stageFor).
  Result<NpzMap> run(const std::string &net, const NpzMap &inputs, const RunOptions &opts,
                     RunReport &report);

  SimDevice &device() { return *device_; }
  BackendKind backend() const { return backend_->kind(); }

private:
  // A loaded net: its stages in file order (one for a single-stage net), the
  // device memory claimed for them all and, for a multi-stage net, the
  // inputs setInput kept and the stage launched last.
  struct NetEntry {
    std::vector<std::unique_ptr<LoadedNet>> stages;
    std::vector<SimDevice::Claim> ranges;
    std::map<std::string, NpyArray> givenInputs;
    std::optional<size_t> launched;
    ShapesFromData shapesFromData; // of the last launch
    // A net its chip's runner runs: per stage the model it takes (that stage
    // alone), the hardware it runs on, and the IO staging buffers allocated
    // on the device (released with the net).
    std::vector<bmodel::Model> runnerModels;
    isa::HwConfig runnerHw;
    std::vector<uint64_t> staging;
  };

  Runtime(std::shared_ptr<SimDevice> device, std::unique_ptr<Backend> backend);
  Status adopt(bmodel::Model model, const std::string &origin,
               std::shared_ptr<const std::vector<uint8_t>> image);
  Status place(NetEntry &net);
  Status placeRanges(NetEntry &net);
  Status writeInput(const std::string &net, const bmodel::Tensor &input, const NpyArray &value);
  // Output `output` of the stage launched last (of the only stage).
  Result<const bmodel::Tensor *> launchedOutput(const std::string &net, const NetEntry &entry,
                                                const std::string &output) const;
  Result<NpyArray> readOutput(const std::string &net, const NetEntry &entry, const bmodel::Tensor &output);
  Status launchStage(NetEntry &net, size_t stage, const RunOptions &opts, RunReport &report);
  Status runSteps(const LoadedNet &net, const RunOptions &opts, RunReport &report, ShapesFromData &shapes);
  // Places a net its chip's runner runs: IO staging buffers; and runs a stage of it.
  Status placeRunnerNet(NetEntry &net);
  Status runOnChipRunner(NetEntry &net, size_t stage, const RunOptions &opts, RunReport &report);
  // Gives the device back every range and buffer of a net.
  void unplace(NetEntry &net);
  // The entry of a loaded net (setInput and launch update its state).
  Result<NetEntry *> find(const std::string &name) const;

  std::shared_ptr<SimDevice> device_;
  std::unique_ptr<Backend> backend_;
  std::vector<std::unique_ptr<NetEntry>> nets_; // in load order
  std::string chipConfigJson_, chipConfigOrigin_;
};

} // namespace tpu::runtime
