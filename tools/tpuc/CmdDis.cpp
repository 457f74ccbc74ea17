// tpuc dis: print a bmodel as assembler text (header, summary and sub-nets as
// comments, then every command of every group in program order) — wiring
// only; the work is in isa/bmodel/Bmodel.h and isa/Disassembler.h. With
// --work, the work each net asks of the chip as JSON instead
// (tools/explore/BmodelWork.h). With --chip bm1684x, a subnet's two command
// buffers (isa/bm1684x/Text.h) instead of a bmodel.
#include "isa/Disassembler.h"
#include "isa/bm1684x/Text.h"
#include "isa/bmodel/Bmodel.h"
#include "isa/chips/Registry.h"
#include "kernels/HostOps.h"
#include "memory/bm1684x/Operands.h"
#include "support/ReadFile.h"
#include "tools/explore/BmodelWork.h"
#include "tools/tpuc/Subcommand.h"
#include "tools/tpuc/SubcommandArgs.h"

#include <cstdio>
#include <fstream>
#include <iostream>

namespace {

std::string tensorNames(const std::vector<tpu::bmodel::Tensor> &list) {
  std::string s;
  for (const auto &t : list) s += (s.empty() ? "'" : ", '") + t.name + "'";
  return s.empty() ? "none" : s;
}

// "subnet 1: CPU top.arg_max result 0 of 1 (axis=1) inputs 'x' -> outputs 'y'";
// a host op that does not parse is shown with the reason (the runtime
// refuses it at load time).
std::string describeSubnet(const tpu::bmodel::Subnet &s, size_t index) {
  std::string line = "subnet " + std::to_string(index) + ": ";
  if (s.mode == tpu::bmodel::Subnet::Mode::Tpu) {
    line += "TPU groups [" + std::to_string(s.firstGroup) + ", " + std::to_string(s.firstGroup + s.groupCount) + ")";
  } else if (auto call = tpu::kernels::HostCall::parse(s.cpuParam.data(), s.cpuParam.size())) {
    line += "CPU " + call->describe();
  } else {
    line += "CPU op_type " + std::to_string(s.cpuOpType) + ", unreadable parameters (" + call.message() + ")";
  }
  return line + " inputs " + tensorNames(s.inputs) + " -> outputs " + tensorNames(s.outputs);
}

// "inputs 'x' [1,3,16,64] -> outputs 'y' [1,4,16,64]": what tells the stages apart.
std::string describeStage(const tpu::bmodel::Net &stage) {
  auto list = [](const std::vector<tpu::bmodel::Tensor> &tensors) {
    std::string s;
    for (const auto &t : tensors) s += (s.empty() ? "'" : ", '") + t.name + "' " + tpu::bmodel::shapeText(t.shape);
    return s.empty() ? std::string("none") : s;
  };
  return "inputs " + list(stage.inputs) + " -> outputs " + list(stage.outputs);
}

// The header, the nets, their stages and sub-nets, as comments.
std::string summary(const std::string &path, const tpu::bmodel::Header &header, const tpu::bmodel::Model &model) {
  char magic[16];
  std::snprintf(magic, sizeof magic, "0x%08X", header.magic);
  std::string out = "# " + path + ": magic " + magic + ", header_size " + std::to_string(header.headerSize) +
                    ", flatbuffers_size " + std::to_string(header.flatbuffersSize) + ", binary_size " +
                    std::to_string(header.binarySize) + "\n# chip " + model.chip + ", " +
                    std::to_string(tpu::bmodel::stageRuns(model.nets).size()) + " net(s)\n";
  for (const tpu::bmodel::StageRun &run : tpu::bmodel::stageRuns(model.nets))
    for (size_t stage = 0; stage < run.count; ++stage) {
      const auto &net = model.nets[run.first + stage];
      if (run.count > 1)
        out += "# net '" + net.name + "' stage " + std::to_string(stage) + " of " + std::to_string(run.count) + ": " +
               describeStage(net) + "\n";
      size_t tiu = 0, gdma = 0;
      for (const auto &g : net.groups)
        tiu += g.tiu.size() + g.tiuStreamCount, gdma += g.gdma.size() + g.gdmaStreamCount;
      out += "# net " + net.name + ": " + std::to_string(net.inputs.size()) + " input(s), " +
             std::to_string(net.outputs.size()) + " output(s), " + std::to_string(net.groups.size()) + " group(s), " +
             std::to_string(tiu) + " TIU + " + std::to_string(gdma) + " GDMA commands, " +
             std::to_string(net.coeff.size()) + " coefficient bytes\n";
      for (size_t i = 0; i < net.subnets.size(); ++i) out += "#   " + describeSubnet(net.subnets[i], i) + "\n";
    }
  return out;
}

// The text to stdout, or to -o.
int writeOut(const tpuc::SubcommandArgs &args, const std::string &out) {
  if (!args.has("--output")) {
    std::cout << out;
    return tpuc::kExitOk;
  }
  std::ofstream f(args.get("--output"));
  if (!f || !(f << out)) return tpuc::fail("dis", "cannot write " + args.get("--output"));
  return tpuc::kExitOk;
}

// "%R10 memref<...> = %R0 memref<...>, %C0 f32": what a BM1684X command writes and reads.
std::string describeOperands(const tpu::isa::bm1684x::Command &c) {
  auto ops = tpu::memory::bm1684x::operandsOf(c);
  if (!ops) return ops.message();
  auto list = [](const std::vector<tpu::memory::bm1684x::Operand> &v) {
    std::string s;
    for (const auto &o : v) s += (s.empty() ? "" : ", ") + o.name() + " " + o.typeText();
    return s;
  };
  return list(ops->results) + " = " + list(ops->operands);
}

// What BM1684X text takes of the options: --operands; --work and --coeff-files are the BM1684's.
tpu::Result<tpu::isa::bm1684x::Annotation> bm1684xAnnotation(const tpuc::SubcommandArgs &args) {
  if (args.isSet("--work") || args.isSet("--coeff-files"))
    return tpu::makeError("--work and --coeff-files are for BM1684 bmodels");
  return args.isSet("--operands") ? tpu::isa::bm1684x::Annotation(describeOperands) : tpu::isa::bm1684x::Annotation();
}

// A BM1684X bmodel: each group's commands in program order, after the summary. No directives: the text
// does not assemble back into a bmodel (tpuc asm --chip bm1684x makes command buffers).
int disassembleBm1684xModel(const tpuc::SubcommandArgs &args, const std::string &path,
                            const tpu::bmodel::Header &header, const tpu::bmodel::Model &model) {
  auto annotate = bm1684xAnnotation(args);
  if (!annotate) return tpuc::fail("dis", annotate.message());
  std::string out = summary(path, header, model);
  for (const auto &net : model.nets)
    for (size_t g = 0; g < net.groups.size(); ++g) {
      const auto &group = net.groups[g];
      out += "\n# net " + net.name + " group " + std::to_string(g) + ": " + std::to_string(group.tiuStreamCount) +
             " TIU, " + std::to_string(group.gdmaStreamCount) + " DMA\n";
      auto text = tpu::isa::bm1684x::disassembleBuffers(group.tiuStream, group.gdmaStream, *annotate);
      if (!text)
        return tpuc::fail("dis", path + ": net '" + net.name + "' group " + std::to_string(g) + ": " + text.message());
      out += *text;
    }
  return writeOut(args, out);
}

// BM1684X: the TIU and DMA command buffers of one subnet, in program order.
int disassembleBm1684x(const tpuc::SubcommandArgs &args) {
  auto annotate = bm1684xAnnotation(args);
  if (!annotate) return tpuc::fail("dis", annotate.message());
  std::vector<uint8_t> buffers[2];
  for (size_t i = 0; i < 2; ++i) {
    auto bytes = tpu::readFile(args.args()[i]);
    if (!bytes) return tpuc::fail("dis", bytes.message());
    buffers[i].assign(bytes->begin(), bytes->end());
  }
  auto text = tpu::isa::bm1684x::disassembleBuffers(buffers[0], buffers[1], *annotate);
  if (!text) return tpuc::fail("dis", args.args()[0] + ", " + args.args()[1] + ": " + text.message());
  return writeOut(args, "# BM1684X commands of " + args.args()[0] + " and " + args.args()[1] + "\n" + *text);
}

int runDis(int argc, char **argv) {
  tpuc::SubcommandArgs args("dis",
                            "model.bmodel [-o model.s [--coeff-files] | --work] | --chip bm1684x TIU.bin DMA.bin");
  args.positionals(1, 2, "model.bmodel | TIU.bin DMA.bin");
  args.option("--chip", "the chip the input is for (bm1684, bm1684x; default bm1684)");
  args.flag("--operands", "BM1684X commands: after each, what it writes and reads (memory, address, shape, "
                          "strides, type)");
  args.option("--output", "write the text here instead of stdout", "-o");
  args.flag("--coeff-files", "with -o: write each net's coefficients to <output>.net<i>.coeff.bin "
                             "and refer to them with .coeff_file instead of inline hex");
  args.flag(
      "--work",
      "instead of the text, each net's work as JSON: per command group its TIU/GDMA command counts "
      "and layers, per layer its commands, TIU multiply-accumulates and the DDR payload bytes its GDMA commands read "
      "(coefficients among them) and write");
  if (auto done = args.parseCommandLine(argc, argv)) return *done;
  auto chip = tpu::isa::parseChip(args.get("--chip", "bm1684"));
  if (!chip) return tpuc::fail("dis", chip.message());
  if (args.args().size() == 2) {
    if (*chip != tpu::isa::Chip::BM1684X) return tpuc::fail("dis", "two command buffers need --chip bm1684x");
    return disassembleBm1684x(args);
  }
  const std::string &path = args.args()[0];
  tpu::bmodel::Header header;
  auto model = tpu::bmodel::readFile(path, &header, tpu::bmodel::ChipScope::AnyKnown);
  if (!model) return tpuc::fail("dis", model.message());
  const tpu::isa::ChipInfo &info = *tpu::isa::chipByBmodelName(model->chip); // the reader knew it
  if (args.has("--chip") && info.chip != *chip)
    return tpuc::fail("dis", path + ": bmodel is for chip " + model->chip + ", not --chip " + args.get("--chip"));
  if (info.chip == tpu::isa::Chip::BM1684X) return disassembleBm1684xModel(args, path, header, *model);
  if (args.isSet("--operands")) return tpuc::fail("dis", "--operands is for BM1684X commands");
  if (args.isSet("--work")) {
    if (args.isSet("--coeff-files")) return tpuc::fail("dis", "--coeff-files writes the text, not --work");
    auto work = tpu::explore::workJson(*model);
    if (!work) return tpuc::fail("dis", path + ": " + work.message());
    return writeOut(args, *work);
  }
  tpu::isa::DisassembleOptions options;
  if (args.isSet("--coeff-files")) {
    if (!args.has("--output")) return tpuc::fail("dis", "--coeff-files needs -o model.s");
    std::string out = args.get("--output");
    std::string dir = out.rfind('/') == std::string::npos ? "" : out.substr(0, out.rfind('/') + 1);
    for (size_t i = 0; i < model->nets.size(); ++i) {
      const auto &coeff = model->nets[i].coeff;
      if (coeff.empty()) continue;
      std::string name = out.substr(dir.size()) + ".net" + std::to_string(i) + ".coeff.bin";
      std::ofstream f(dir + name, std::ios::binary);
      if (!f || !f.write(reinterpret_cast<const char *>(coeff.data()), std::streamsize(coeff.size())))
        return tpuc::fail("dis", "cannot write " + dir + name);
      options.coeffFiles[i] = name; // relative to the .s file, as .coeff_file expects
    }
  }
  auto text = tpu::isa::disassembleModel(*model, options);
  if (!text) return tpuc::fail("dis", path + ": " + text.message());

  return writeOut(args, summary(path, header, *model) + *text);
}

tpuc::RegisterSubcommand registerDis("dis", "print a bmodel's header, tensors and commands as assembler text",
                                     runDis);

} // namespace
