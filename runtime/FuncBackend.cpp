// The functional backend: every command of every group, in program order,
// straight through the semantics library. No SystemC, no time.
#include "runtime/FuncBackend.h"

#include "simulator/semantics/GdmaExec.h"
#include "simulator/semantics/TiuExec.h"

namespace tpu::runtime {

Status executeGroupInOrder(SimDevice &device, const LoadedGroup &group) {
  const isa::HwConfig &cfg = device.config();
  for (const isa::OrderedCommand &oc : group.order) {
    if (oc.engine == isa::Engine::Tiu) {
      const isa::TiuCommand &cmd = group.tiu[oc.index];
      Status st = sim::executeTiu(cfg, device.lmem(), cmd);
      if (!st)
        return makeError("TIU command ", oc.index, " (id ", cmd.cmdIdTpu, "): ", st.message());
    } else {
      const isa::GdmaCommand &cmd = group.gdma[oc.index];
      Status st = sim::executeGdma(cfg, device.lmem(), device.gmem(), cmd);
      if (!st)
        return makeError("GDMA command ", oc.index, " (id ", cmd.cmdId, "): ", st.message());
    }
  }
  return Status::ok();
}

namespace {

class FuncLaunch final : public Launch {
public:
  FuncLaunch(SimDevice &device, const LoadedNet &net) : device_(device), net_(net) {}
  Status execute(GroupRange range) override {
    for (size_t g = range.first; g < range.first + range.count; ++g) {
      Status st = executeGroupInOrder(device_, net_.groups[g]);
      if (!st) return st.prefix("group " + std::to_string(g));
    }
    return Status::ok();
  }
  void finish(RunReport &) override {}

private:
  SimDevice &device_;
  const LoadedNet &net_;
};

class FuncBackend final : public Backend {
public:
  BackendKind kind() const override { return BackendKind::Func; }
  Result<std::unique_ptr<Launch>> begin(SimDevice &device, const LoadedNet &net, const RunOptions &) override {
    return std::unique_ptr<Launch>(std::make_unique<FuncLaunch>(device, net));
  }
};

} // namespace

std::unique_ptr<Backend> makeFuncBackend() { return std::make_unique<FuncBackend>(); }

} // namespace tpu::runtime
