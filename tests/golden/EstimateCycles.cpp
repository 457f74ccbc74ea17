// golden_estimate_cycles m.bmodel: the compiler's cost model
// (backend::estimateCycles, the timing library on the cmd-id schedule) summed
// over every command group of every net, printed as "estimate_cycles N".
// The golden tests (tests/golden/golden.py) compare it with the simulated
// total; a bmodel from `tpuc asm` has no compiler report, so the estimate is
// taken from the bmodel itself, the same way for every program.
#include "compiler/Backend/CodeGen.h"
#include "isa/bmodel/Bmodel.h"

#include <cstdio>

namespace {

using namespace tpu;

Result<double> estimateBmodel(const std::string &path, const isa::HwConfig &hw) {
  auto model = bmodel::readFile(path);
  if (!model) return model.status();
  double total = 0;
  for (const bmodel::Net &net : model->nets)
    for (size_t g = 0; g < net.groups.size(); ++g) {
      backend::CommandBuilder::Group group;
      for (const isa::CommandBytes &bytes : net.groups[g].tiu) {
        auto cmd = isa::decodeTiu(bytes.data());
        if (!cmd) return makeError(net.name, " group ", g, ": ", cmd.message());
        group.tiu.push_back(*cmd);
      }
      for (const isa::CommandBytes &bytes : net.groups[g].gdma) {
        auto cmd = isa::decodeGdma(isa::GdmaRaw::decode(bytes.data()));
        if (!cmd) return makeError(net.name, " group ", g, ": ", cmd.message());
        group.gdma.push_back(*cmd);
      }
      auto cycles = backend::estimateCycles(group, hw);
      if (!cycles) return Status(cycles.status()).prefix(net.name + " group " + std::to_string(g));
      total += *cycles;
    }
  return total;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: golden_estimate_cycles m.bmodel (default hardware parameters)\n");
    return 2;
  }
  auto total = estimateBmodel(argv[1], isa::HwConfig{});
  if (!total) {
    std::fprintf(stderr, "golden_estimate_cycles: %s: %s\n", argv[1], total.message().c_str());
    return 2;
  }
  std::printf("estimate_cycles %.3f\n", *total);
  return 0;
}
