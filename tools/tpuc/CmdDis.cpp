// tpuc dis: print a bmodel as assembler text (header and summary as comments,
// then every command of every group in program order) — wiring only; the
// work is in isa/bmodel/Bmodel.h and isa/Disassembler.h.
#include "isa/Disassembler.h"
#include "isa/bmodel/Bmodel.h"
#include "support/ArgParser.h"
#include "tools/tpuc/Subcommand.h"

#include <cstdio>
#include <fstream>
#include <iostream>

namespace {

int runDis(int argc, char **argv) {
  tpu::ArgParser args("dis", "tpuc dis model.bmodel [-o model.s]");
  args.positionals(1, 1, "model.bmodel");
  args.option("--output", "write the text here instead of stdout", "-o");
  if (auto st = args.parse(argc, argv); !st) return tpuc::fail("dis", st.message());
  if (args.helpRequested()) {
    std::cout << args.help();
    return tpuc::kExitOk;
  }
  const std::string &path = args.args()[0];
  tpu::bmodel::Header header;
  auto model = tpu::bmodel::readFile(path, &header);
  if (!model) return tpuc::fail("dis", model.message());
  auto text = tpu::isa::disassembleModel(*model);
  if (!text) return tpuc::fail("dis", path + ": " + text.message());

  char magic[16];
  std::snprintf(magic, sizeof magic, "0x%08X", header.magic);
  std::string out = "# " + path + ": magic " + magic + ", header_size " + std::to_string(header.headerSize) +
                    ", flatbuffers_size " + std::to_string(header.flatbuffersSize) + ", binary_size " +
                    std::to_string(header.binarySize) + "\n# chip " + model->chip + ", " +
                    std::to_string(model->nets.size()) + " net(s)\n";
  for (const auto &net : model->nets) {
    size_t tiu = 0, gdma = 0;
    for (const auto &g : net.groups) tiu += g.tiu.size(), gdma += g.gdma.size();
    out += "# net " + net.name + ": " + std::to_string(net.inputs.size()) + " input(s), " +
           std::to_string(net.outputs.size()) + " output(s), " + std::to_string(net.groups.size()) +
           " group(s), " + std::to_string(tiu) + " TIU + " + std::to_string(gdma) + " GDMA commands, " +
           std::to_string(net.coeff.size()) + " coefficient bytes\n";
  }
  out += *text;
  if (!args.has("--output")) {
    std::cout << out;
    return tpuc::kExitOk;
  }
  std::ofstream f(args.get("--output"));
  if (!f || !(f << out)) return tpuc::fail("dis", "cannot write " + args.get("--output"));
  return tpuc::kExitOk;
}

tpuc::RegisterSubcommand registerDis("dis", "print a bmodel's header, tensors and commands as assembler text",
                                     runDis);

} // namespace
