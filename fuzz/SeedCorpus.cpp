// Writes seed corpora for the fuzz targets from the project's assembler
// sources: each .s file assembled to a .bmodel (fuzz_bmodel), once more with
// its groups as sub-nets, once with a second stage per net, once with both, and each of its
// commands as a fuzz_command input (selector byte + 128 command bytes).
//   fuzz_seeds <bmodel-dir> <command-dir> <file.s>...
#include "isa/Assembler.h"
#include "isa/bmodel/Bmodel.h"
#include "kernels/HostOps.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {
bool writeFile(const std::filesystem::path &path, const std::vector<uint8_t> &bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
  return bool(out);
}

// The nets as chains of sub-nets (docs/bmodel.md, "Sub-nets"): each group a
// TPU sub-net, CPU sub-nets after the first (an arg_max, a cast to i64 and
// the second result of a topk: integer, real and text attributes, one and
// two results), so that the bmodel fuzzer starts from that layout too. The
// reader checks the container only, so the tensors need not fit the op.
tpu::bmodel::Model withSubnets(tpu::bmodel::Model model) {
  using tpu::bmodel::Subnet;
  tpu::kernels::HostCall argMax;
  argMax.code = tpu::kernels::findHostOp("top.arg_max")->code;
  argMax.attrs.setInts("axis", {1});
  argMax.resultShapes = {{1, 1}};
  tpu::kernels::HostCall cast;
  cast.code = tpu::kernels::findHostOp("top.cast")->code;
  cast.attrs.setText("to", "i64");
  cast.resultShapes = {{1, 4}};
  tpu::kernels::HostCall topk;
  topk.code = tpu::kernels::findHostOp("top.topk")->code;
  topk.attrs.setInts("axis", {1});
  topk.attrs.setInts("k", {2});
  topk.attrs.setInts("largest", {1});
  topk.resultShapes = {{1, 2}, {1, 2}};
  topk.result = 1;
  for (auto &net : model.nets)
    for (size_t g = 0; g < net.groups.size(); ++g) {
      Subnet tpu;
      tpu.firstGroup = g;
      tpu.groupCount = 1;
      tpu.inputs = net.inputs;
      tpu.outputs = net.outputs;
      net.subnets.push_back(tpu);
      if (g != 0) continue;
      for (const tpu::kernels::HostCall *call : {&argMax, &cast, &topk}) {
        Subnet cpu;
        cpu.mode = Subnet::Mode::Cpu;
        cpu.cpuOpType = call->code;
        cpu.cpuParam = call->serialize();
        cpu.inputs = cpu.outputs = net.outputs;
        net.subnets.push_back(cpu);
      }
    }
  return model;
}
// Each net with a second stage (docs/bmodel.md, "Stages"): the same net with
// its first input one batch item larger, so that the fuzzer starts from a
// multi-stage Net too. Nets without a shaped input get no second stage.
tpu::bmodel::Model withStages(const tpu::bmodel::Model &model) {
  tpu::bmodel::Model out = model;
  out.nets.clear();
  for (const auto &net : model.nets) {
    out.nets.push_back(net);
    if (net.inputs.empty() || net.inputs[0].shape.empty()) continue;
    tpu::bmodel::Net wider = net;
    tpu::bmodel::Tensor &in = wider.inputs[0];
    ++in.shape[0];
    in.size = std::max(in.size, in.storageBytes());
    out.nets.push_back(wider);
  }
  return out;
}
} // namespace

int main(int argc, char **argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: fuzz_seeds <bmodel-dir> <command-dir> <file.s>...\n");
    return 2;
  }
  std::filesystem::path bmodelDir = argv[1], commandDir = argv[2];
  int written = 0;
  for (int a = 3; a < argc; ++a) {
    std::filesystem::path src = argv[a];
    // Files that do not assemble (the error-path lit inputs) seed only the assembler.
    auto model = tpu::isa::assemble(
        [&] {
          std::ifstream in(src, std::ios::binary);
          return std::string(std::istreambuf_iterator<char>(in), {});
        }(),
        src.string(), src.parent_path().string());
    if (!model.isOk()) continue;
    auto bytes = tpu::bmodel::serialize(*model);
    if (!bytes.isOk()) continue;
    std::string stem = src.stem().string();
    written += writeFile(bmodelDir / (stem + ".bmodel"), *bytes);
    auto chained = tpu::bmodel::serialize(withSubnets(*model));
    if (chained.isOk()) written += writeFile(bmodelDir / (stem + "_subnets.bmodel"), *chained);
    auto staged = tpu::bmodel::serialize(withStages(*model));
    if (staged.isOk()) written += writeFile(bmodelDir / (stem + "_stages.bmodel"), *staged);
    // Both: stages whose nets are chains of sub-nets.
    auto both = tpu::bmodel::serialize(withStages(withSubnets(*model)));
    if (both.isOk()) written += writeFile(bmodelDir / (stem + "_stages_subnets.bmodel"), *both);
    int index = 0;
    for (const auto &net : model->nets)
      for (const auto &group : net.groups)
        for (int engine = 0; engine < 2; ++engine)
          for (const auto &cmd : engine == 0 ? group.tiu : group.gdma) {
            std::vector<uint8_t> input{uint8_t(engine)};
            input.insert(input.end(), cmd.begin(), cmd.end());
            written += writeFile(commandDir / (stem + "_" + std::to_string(index++) + ".bin"), input);
          }
  }
  std::printf("fuzz_seeds: %d files\n", written);
  return 0;
}
