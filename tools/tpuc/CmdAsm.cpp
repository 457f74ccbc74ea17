// tpuc asm: assembler text -> bmodel — wiring only; the work is in
// isa/Assembler.h and isa/bmodel/Bmodel.h.
#include "isa/Assembler.h"
#include "isa/bmodel/Bmodel.h"
#include "tools/tpuc/Subcommand.h"
#include "tools/tpuc/SubcommandArgs.h"

namespace {

int runAsm(int argc, char **argv) {
  tpuc::SubcommandArgs args("asm", "file.s -o model.bmodel");
  args.positionals(1, 1, "file.s");
  args.option("--output", "the bmodel to write", "-o");
  args.flag("--no-order-check", "accept groups that cannot be ordered (to test the simulator's "
                                "deadlock detection)");
  if (auto done = args.parseCommandLine(argc, argv, {{"--output", "-o model.bmodel"}})) return *done;
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
