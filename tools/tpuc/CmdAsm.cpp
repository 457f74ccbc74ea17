// tpuc asm: assembler text -> bmodel (BM1684), or -> the two command buffers (BM1684X, whose bmodels the
// toolkit does not build yet) — wiring only; the work is in isa/Assembler.h, isa/bm1684x/Text.h and
// isa/bmodel/Bmodel.h.
#include "isa/Assembler.h"
#include "isa/bm1684x/Text.h"
#include "isa/bmodel/Bmodel.h"
#include "isa/chips/Registry.h"
#include "support/ReadFile.h"
#include "tools/tpuc/Subcommand.h"
#include "tools/tpuc/SubcommandArgs.h"

#include <fstream>

namespace {

tpu::Status writeBytes(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::ofstream f(path, std::ios::binary);
  if (!f || !f.write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size())))
    return tpu::makeError("cannot write ", path);
  return tpu::Status::ok();
}

// BM1684X: file.s -> <output>.tiu.bin and <output>.dma.bin, TPU-MLIR's names for a subnet's command buffers.
int assembleBm1684x(const std::string &path, const std::string &output) {
  auto text = tpu::readFile(path);
  if (!text) return tpuc::fail("asm", text.message());
  auto buffers = tpu::isa::bm1684x::assembleText(*text, path);
  if (!buffers) return tpuc::fail("asm", buffers.message());
  for (auto [suffix, bytes] : {std::pair{".tiu.bin", &buffers->tiu}, std::pair{".dma.bin", &buffers->dma}})
    if (auto st = writeBytes(output + suffix, *bytes); !st) return tpuc::fail("asm", st.message());
  return tpuc::kExitOk;
}

int runAsm(int argc, char **argv) {
  tpuc::SubcommandArgs args("asm", "file.s -o model.bmodel | --chip bm1684x file.s -o PREFIX");
  args.positionals(1, 1, "file.s");
  args.option("--output", "the bmodel to write; with --chip bm1684x, writes PREFIX.tiu.bin and PREFIX.dma.bin", "-o");
  args.option("--chip", "the chip whose commands the text holds (bm1684, bm1684x; default bm1684)");
  args.flag("--no-order-check", "accept groups that cannot be ordered (to test the simulator's "
                                "deadlock detection)");
  if (auto done = args.parseCommandLine(argc, argv, {{"--output", "-o model.bmodel"}})) return *done;
  auto chip = tpu::isa::parseChip(args.get("--chip", "bm1684"));
  if (!chip) return tpuc::fail("asm", chip.message());
  if (*chip == tpu::isa::Chip::BM1684X) {
    if (args.isSet("--no-order-check")) return tpuc::fail("asm", "--no-order-check is for BM1684 bmodels");
    return assembleBm1684x(args.args()[0], args.get("--output"));
  }
  tpu::isa::AssembleOptions options;
  options.checkOrder = !args.isSet("--no-order-check");
  auto model = tpu::isa::assembleFile(args.args()[0], options);
  if (!model) return tpuc::fail("asm", model.message());
  if (auto st = tpu::bmodel::writeFile(*model, args.get("--output")); !st)
    return tpuc::fail("asm", st.message());
  return tpuc::kExitOk;
}

tpuc::RegisterSubcommand registerAsm("asm", "assemble a .s file into a bmodel", runAsm);

} // namespace
