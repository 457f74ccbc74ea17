// libFuzzer target: the bmodel reader (isa/bmodel), for the BM1684 and for any
// known chip. Any byte string must parse or be rejected with an error; an
// accepted model must serialise again, and
// its CPU sub-nets' host op parameters parse (kernels::HostCall) or are
// rejected, a parsed call writing back what it parsed.
#include "isa/bmodel/Bmodel.h"
#include "kernels/HostOps.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // tpuc dis reads any chip of the registry (a BM1684X bmodel keeps its command streams): the same promise.
  auto anyChip = tpu::bmodel::parse(data, size, tpu::bmodel::ChipScope::AnyKnown);
  if (anyChip.isOk() && !tpu::bmodel::serialize(*anyChip).isOk()) std::abort();
  auto model = tpu::bmodel::parse(data, size);
  if (!model.isOk()) return 0;
  // What the reader accepts, the writer can write (no inconsistent model escapes).
  if (!tpu::bmodel::serialize(*model).isOk()) std::abort();
  // The container leaves a CPU sub-net's parameters to the runtime, which
  // parses and checks them at load (runtime/HostStep.cpp): the same parse and
  // check here, on fuzzed bytes. A parsed call writes what it parsed.
  for (const tpu::bmodel::Net &net : model->nets)
    for (const tpu::bmodel::Subnet &subnet : net.subnets) {
      if (subnet.mode != tpu::bmodel::Subnet::Mode::Cpu) continue;
      auto call = tpu::kernels::HostCall::parse(subnet.cpuParam.data(), subnet.cpuParam.size());
      if (!call.isOk()) continue;
      std::vector<tpu::kernels::Shape> inputs;
      for (const tpu::bmodel::Tensor &t : subnet.inputs)
        inputs.push_back(tpu::kernels::Shape(t.shape.begin(), t.shape.end()));
      (void)call->check(inputs);
      (void)call->describe();
      const std::vector<uint8_t> bytes = call->serialize();
      auto again = tpu::kernels::HostCall::parse(bytes.data(), bytes.size());
      if (!again.isOk() || again->serialize() != bytes) std::abort();
    }
  return 0;
}
