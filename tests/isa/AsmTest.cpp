// Assembler / disassembler: round trips of every command class with random
// field values, whole models, and every rejected-input case.
#include "isa/Assembler.h"
#include "isa/Disassembler.h"
#include "isa/GdmaCommand.h"
#include "isa/TiuCommand.h"
#include "isa/Opcodes.h"
#include "isa/bmodel/Bmodel.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>

using namespace tpu;
using namespace tpu::isa;

namespace {

uint64_t randomValue(std::mt19937_64 &rng, unsigned width) {
  // Half the fields zero (not printed), the rest random, sometimes the maximum.
  switch (rng() % 4) {
  case 0: case 1: return 0;
  case 2: return width >= 64 ? ~0ull : (1ull << width) - 1;
  default: return width >= 64 ? rng() : rng() & ((1ull << width) - 1);
  }
}

template <typename FieldT> RawCommand<FieldT> randomRaw(std::mt19937_64 &rng) {
  RawCommand<FieldT> r;
  for (size_t i = 0; i < size_t(FieldT::Count); ++i)
    r[FieldT(i)] = randomValue(rng, fieldInfo(FieldT(i)).width);
  return r;
}

std::string asmError(const std::string &text) {
  auto m = assemble(text, "t.s", ".");
  EXPECT_FALSE(m.isOk()) << text;
  return m.isOk() ? std::string() : m.message();
}

const char *kHead = ".net n\n.group\n";

} // namespace

TEST(Asm, TiuRoundTripEveryClassRandomFields) {
  std::mt19937_64 rng(42);
  int classes = 0;
  for (unsigned tsk = 0; tsk < kTiuTaskCount; ++tsk)
    for (unsigned eu = 0; eu < kEuOpCount; ++eu) {
      if (!isValidTiuOp(tsk, eu)) continue;
      ++classes;
      for (int trial = 0; trial < 20; ++trial) {
        TiuRaw r = randomRaw<TiuField>(rng);
        r[TiuField::tsk_typ] = tsk;
        r[TiuField::tsk_eu_typ] = eu;
        CommandBytes bytes = *r.encode();
        auto text = disassembleTiu(bytes);
        ASSERT_TRUE(text.isOk()) << text.message();
        auto back = assembleCommand(*text);
        ASSERT_TRUE(back.isOk()) << back.message() << "\n" << *text;
        EXPECT_TRUE(back->isTiu);
        EXPECT_EQ(back->bytes, bytes) << *text;
        EXPECT_EQ(*disassembleTiu(back->bytes), *text);
      }
    }
  EXPECT_GT(classes, 100);
}

TEST(Asm, GdmaRoundTripEveryDirectionAndFunctionRandomFields) {
  std::mt19937_64 rng(43);
  for (unsigned dir = 0; dir < 4; ++dir)
    for (unsigned fn = 0; fn < 8; ++fn)
      for (int trial = 0; trial < 20; ++trial) {
        GdmaRaw r = randomRaw<GdmaField>(rng);
        r[GdmaField::direction] = dir;
        r[GdmaField::special_func] = fn;
        r[GdmaField::src_data_format] = rng() % kGdmaFormatCount;
        r[GdmaField::dst_data_format] = rng() % kGdmaFormatCount;
        CommandBytes bytes = *r.encode();
        auto text = disassembleGdma(bytes);
        ASSERT_TRUE(text.isOk()) << text.message();
        auto back = assembleCommand(*text);
        ASSERT_TRUE(back.isOk()) << back.message() << "\n" << *text;
        EXPECT_FALSE(back->isTiu);
        EXPECT_EQ(back->bytes, bytes) << *text;
        EXPECT_EQ(*disassembleGdma(back->bytes), *text);
      }
}

TEST(Asm, TextFormat) {
  TiuRaw r;
  r[TiuField::tsk_typ] = 0;
  r[TiuField::tsk_eu_typ] = 1;
  r[TiuField::cmd_id_tpu] = 12;
  r[TiuField::cmd_id_gdma] = 7;
  r[TiuField::res0_c] = 64;
  r[TiuField::res0_addr] = 0x1000;
  EXPECT_EQ(*disassembleTiu(*r.encode()), "%B12 = conv.mac res0_c=64 res0_addr=0x1000 deps %D7");
  GdmaRaw g;
  g[GdmaField::cmd_id] = 7;
  g[GdmaField::eng0_sync_id] = 3;
  g[GdmaField::src_nsize] = 2;
  g[GdmaField::dst_start_addr_h8] = 1;
  EXPECT_EQ(*disassembleGdma(*g.encode()), "%D7 = gdma.s2l.copy src_nsize=2 dst_start_addr_h8=0x1 deps %B3");
  // Hex and decimal are both accepted; no deps means "waits for nothing".
  auto c = assembleCommand("%D7 = gdma.s2l.copy src_nsize=0x2 dst_start_addr_h8=1 deps %B3");
  ASSERT_TRUE(c.isOk()) << c.message();
  EXPECT_EQ(c->bytes, *g.encode());
  auto n = assembleCommand("%B1 = ar.add   # a comment");
  ASSERT_TRUE(n.isOk()) << n.message();
  EXPECT_EQ(TiuRaw::decode(n->bytes.data())[TiuField::cmd_id_gdma], 0u);
}

TEST(Asm, CommandErrorsCarryColumns) {
  auto e = [](const char *line) {
    auto r = assembleCommand(line);
    EXPECT_FALSE(r.isOk()) << line;
    return r.isOk() ? std::string() : r.message();
  };
  EXPECT_EQ(e("%B1 = conv.mac bogus=1"), "column 16: unknown TIU field 'bogus'");
  EXPECT_EQ(e("%B1 = conv.mac res0_c=70000"), "column 23: field res0_c = 70000 does not fit in 12 bits");
  EXPECT_EQ(e("%B1 = conv.frob"), "column 7: unknown TIU mnemonic 'conv.frob'");
  EXPECT_EQ(e("%B1 = conv.add"), "column 7: 'add' is not a valid operation for conv (invalid tsk/eu combination)");
  EXPECT_EQ(e("%B1 = pord.mul"), "column 7: 'mul' is not a valid operation for pord (invalid tsk/eu combination)");
  EXPECT_EQ(e("%D1 = gdma.s2x.copy"), "column 7: unknown GDMA mnemonic 'gdma.s2x.copy' (gdma.<s2l|l2s|s2s|l2l>.<function>)");
  EXPECT_EQ(e("%B1 = conv.mac tsk_typ=3"), "column 16: field tsk_typ is given by the mnemonic or the %-names");
  EXPECT_EQ(e("%B1 = conv.mac res0_c=1 res0_c=2"), "column 25: field res0_c given twice");
  EXPECT_EQ(e("%B1 = conv.mac deps %B2"), "column 21: expected a GDMA (%D) command name, got '%B2'");
  EXPECT_EQ(e("%B70000 = conv.mac"), "column 3: command id 70000 does not fit in 16 bits");
  EXPECT_EQ(e("%B1 = conv.mac res0_c=-1"), "column 23: expected a non-negative integer, got '-1'");
  EXPECT_EQ(e("%B1 = conv.mac res0_c=12z"), "column 23: expected an integer, got '12z'");
  EXPECT_EQ(e("%D1 = gdma.s2l.copy src_data_format=6"), "column 7: unknown src_data_format 6");
  EXPECT_EQ(e("%B1 conv.mac"), "column 1: expected '%B<id> = <mnemonic> ...' or '%D<id> = gdma....'");
}

namespace {

const char *kProgram = R"(# a small program
.model type=test version=1.0 time="2026-01-01 00:00"
.net tiny
.ctx addr=0x100000000 size=4096
.input x int8 [1,3,4,4] addr=0x100000000 mode=4N scale=0.5
.output y fp32 [1,3,4,4] addr=0x100001000 zero_point=-2
.coeff addr=0x100100000 size=5
.coeff_data 0102
.coeff_data 03ff80
.group
.layer load
%D1 = gdma.s2l.copy src_nsize=1 src_start_addr_h8=0x1
.layer conv1
%B1 = conv.mac res0_c=3 deps %D1
.layer
%D2 = gdma.l2s.copy dst_start_addr_h8=0x1 deps %B1
.group
%B1 = ar.add
)";

} // namespace

TEST(Asm, AssemblesDirectives) {
  auto m = assemble(kProgram, "t.s", ".");
  ASSERT_TRUE(m.isOk()) << m.message();
  EXPECT_EQ(m->type, "test");
  EXPECT_EQ(m->time, "2026-01-01 00:00");
  ASSERT_EQ(m->nets.size(), 1u);
  const bmodel::Net &n = m->nets[0];
  EXPECT_EQ(n.name, "tiny");
  EXPECT_EQ(n.ctxAddr, 0x100000000u);
  EXPECT_EQ(n.ctxSize, 4096u);
  ASSERT_EQ(n.inputs.size(), 1u);
  EXPECT_EQ(n.inputs[0].dtype, bmodel::DataType::Int8);
  EXPECT_EQ(n.inputs[0].storeMode, bmodel::StoreMode::N4);
  EXPECT_EQ(n.inputs[0].size, 4u * 3 * 4 * 4); // batch 1 padded to 4
  EXPECT_EQ(n.inputs[0].scale, 0.5f);
  EXPECT_EQ(n.outputs[0].zeroPoint, -2);
  EXPECT_EQ(n.outputs[0].size, 4u * 3 * 4 * 4);
  EXPECT_EQ(n.coeff, (std::vector<uint8_t>{1, 2, 3, 0xff, 0x80}));
  ASSERT_EQ(n.groups.size(), 2u);
  EXPECT_EQ(n.groups[0].gdma.size(), 2u);
  EXPECT_EQ(n.groups[0].tiu.size(), 1u);
  EXPECT_EQ(n.groups[0].gdmaLayer, (std::vector<std::string>{"load", ""}));
  EXPECT_EQ(n.groups[0].tiuLayer, (std::vector<std::string>{"conv1"}));
  EXPECT_EQ(n.groups[1].tiuLayer, (std::vector<std::string>{""}));
}

// A host op's empty tensor (a dim of 0) takes no bytes and survives the
// container and the text.
TEST(Asm, EmptyTensorRoundTrips) {
  auto m = assemble(".net n\n.input x fp32 [2,3]\n.output y fp32 [2,0,3] addr=0x100\n", "t.s", ".");
  ASSERT_TRUE(m.isOk()) << m.message();
  EXPECT_EQ(m->nets[0].outputs[0].size, 0u);
  auto bytes = bmodel::serialize(*m);
  ASSERT_TRUE(bytes.isOk()) << bytes.message();
  auto back = bmodel::parse(bytes->data(), bytes->size());
  ASSERT_TRUE(back.isOk()) << back.message();
  EXPECT_EQ(back->nets[0].outputs[0].shape, (std::vector<uint64_t>{2, 0, 3}));
  EXPECT_EQ(*disassembleModel(*back), *disassembleModel(*m));
}

TEST(Asm, ModelTextRoundTripIsIdentity) {
  auto m = assemble(kProgram, "t.s", ".");
  ASSERT_TRUE(m.isOk()) << m.message();
  auto text = disassembleModel(*m);
  ASSERT_TRUE(text.isOk()) << text.message();
  auto m2 = assemble(*text, "dis.s", ".");
  ASSERT_TRUE(m2.isOk()) << m2.message() << "\n" << *text;
  EXPECT_EQ(*disassembleModel(*m2), *text);
  // Same model, so the same bmodel bytes.
  EXPECT_EQ(*bmodel::serialize(*m), *bmodel::serialize(*m2));
}

TEST(Asm, SampleProgramAssemblesAndRoundTrips) {
  std::string path = std::string(TPU_TEST_DATA_DIR) + "/asm/conv_add.s";
  auto m = assembleFile(path);
  ASSERT_TRUE(m.isOk()) << m.message();
  ASSERT_EQ(m->nets.size(), 1u);
  EXPECT_FALSE(m->nets[0].coeff.empty());
  auto bytes = bmodel::serialize(*m);
  ASSERT_TRUE(bytes.isOk());
  auto back = bmodel::parse(bytes->data(), bytes->size());
  ASSERT_TRUE(back.isOk()) << back.message();
  auto text = disassembleModel(*back);
  ASSERT_TRUE(text.isOk()) << text.message();
  auto again = assemble(*text, "dis.s", ".");
  ASSERT_TRUE(again.isOk()) << again.message();
  EXPECT_EQ(*bmodel::serialize(*again), *bytes);
}

// The sample's fields mean what the typed commands say: every command decodes
// to the intended class and operands (docs/isa.md).
TEST(Asm, SampleProgramDecodesToTypedCommands) {
  auto m = assembleFile(std::string(TPU_TEST_DATA_DIR) + "/asm/conv_add.s");
  ASSERT_TRUE(m.isOk()) << m.message();
  const bmodel::Net &net = m->nets[0];
  EXPECT_EQ(net.coeff.size(), 16u * 8 * 9 * 4 + 16 * 4);
  ASSERT_EQ(net.groups.size(), 1u);
  const bmodel::CmdGroup &g = net.groups[0];
  ASSERT_EQ(g.tiu.size(), 2u);
  ASSERT_EQ(g.gdma.size(), 5u);
  auto conv = decodeTiu(g.tiu[0].data());
  ASSERT_TRUE(conv.isOk()) << conv.message();
  const Conv *c = conv->as<Conv>();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->input.shape, (Shape4{1, 8, 10, 10}));
  EXPECT_EQ(c->weight.shape, (Shape4{8, 16, 3, 3}));
  EXPECT_EQ(c->output.shape, (Shape4{1, 16, 8, 8}));
  EXPECT_TRUE(c->hasBias);
  EXPECT_EQ(c->output.prec, Prec::Fp32);
  auto add = decodeTiu(g.tiu[1].data());
  ASSERT_TRUE(add.isOk()) << add.message();
  ASSERT_NE(add->as<Arith>(), nullptr);
  EXPECT_EQ(add->eu(), EuOp::Add);
  for (size_t i = 0; i < g.gdma.size(); ++i) {
    auto d = decodeGdma(GdmaRaw::decode(g.gdma[i].data()));
    ASSERT_TRUE(d.isOk()) << d.message();
    EXPECT_EQ(d->direction, i < 4 ? GdmaDirection::S2L : GdmaDirection::L2S);
  }
  EXPECT_EQ(g.tiuLayer, (std::vector<std::string>{"conv1", "add1"}));
  EXPECT_EQ(g.gdmaLayer, (std::vector<std::string>{"conv1", "conv1", "conv1", "add1", "add1"}));
}

TEST(Asm, CoeffFileIsRelativeToTheSource) {
  std::string dir = ::testing::TempDir();
  {
    std::ofstream f(dir + "/w.bin", std::ios::binary);
    f.write("\x01\x02\x03", 3);
  }
  auto m = assemble(".net n\n.coeff_data aa\n.coeff_file w.bin\n", dir + "/x.s", dir);
  ASSERT_TRUE(m.isOk()) << m.message();
  EXPECT_EQ(m->nets[0].coeff, (std::vector<uint8_t>{0xaa, 1, 2, 3}));
  EXPECT_EQ(asmError(".net n\n.coeff_file missing.bin\n"), "t.s:2:13: cannot open coefficient file ./missing.bin");
}

TEST(Asm, FileErrorsCarryLineAndColumn) {
  std::string h = kHead;
  EXPECT_EQ(asmError(h + "%B1 = conv.mac res0_c=70000\n"), "t.s:3:23: field res0_c = 70000 does not fit in 12 bits");
  EXPECT_EQ(asmError(h + "\n%B1 = conv.mac foo=1\n"), "t.s:4:16: unknown TIU field 'foo'");
  EXPECT_EQ(asmError(".net n\n%B1 = ar.add\n"), "t.s:2:1: command before any .group directive");
  EXPECT_EQ(asmError("%B1 = ar.add\n"), "t.s:1:1: command before any .net directive");
  EXPECT_EQ(asmError(".group\n"), "t.s:1:1: '.group' before any .net directive");
  EXPECT_EQ(asmError(".net n\n.bogus\n"), "t.s:2:1: unknown directive '.bogus'");
  EXPECT_EQ(asmError(".net n\n.net n\n"), "t.s:2:6: net 'n' defined twice");
  EXPECT_EQ(asmError(".model colour=red\n"), "t.s:1:8: unknown .model option 'colour'");
  EXPECT_EQ(asmError(".model type=\"abc\n"), "t.s:1:13: unterminated string");
}

TEST(Asm, TensorDirectiveErrors) {
  std::string n = ".net n\n";
  EXPECT_EQ(asmError(n + ".input x int9 [1]\n"), "t.s:2:10: unknown data type 'int9'");
  EXPECT_EQ(asmError(n + ".input x int8 1,2\n"), "t.s:2:15: expected a shape like [1,3,224,224], got '1,2'");
  EXPECT_EQ(asmError(n + ".input x int8 [1,2] mode=3N\n"), "t.s:2:26: unknown store mode '3N' (1N, 2N or 4N)");
  EXPECT_EQ(asmError(n + ".input x fp32 [1,2] mode=4N\n"), "t.s:2:10: store mode 4N does not fit fp32");
  EXPECT_EQ(asmError(n + ".input x int8 [1,2] size=1\n"), "t.s:2:1: size 1 is smaller than the 2 bytes of the shape");
  EXPECT_EQ(asmError(n + ".input x int8 [1,2] addr=0x10000000000\n"),
            "t.s:2:26: addr 0x10000000000 is beyond the 40-bit address space");
  EXPECT_EQ(asmError(n + ".input x int8 [1099511627776,2]\n"), "t.s:2:15: shape exceeds the 2^40-byte address space");
  EXPECT_EQ(asmError(n + ".input x int8 [1]\n.input x int8 [1]\n"), "t.s:3:8: tensor 'x' declared twice");
  EXPECT_EQ(asmError(n + ".output y int8 [1] scale=abc\n"), "t.s:2:26: expected a finite number for scale, got 'abc'");
  EXPECT_EQ(asmError(n + ".coeff_data 0g\n"), "t.s:2:14: not a hex digit");
  EXPECT_EQ(asmError(n + ".coeff size=3\n.coeff_data 00\n"), "t.s:2: net 'n': .coeff size=3 but 1 coefficient bytes were given");
}

TEST(Asm, DeadlockIsReportedWithGroupAndLines) {
  std::string text = std::string(kHead) + "%B1 = ar.add deps %D1\n%D1 = gdma.s2l.copy deps %B1\n";
  EXPECT_EQ(asmError(text), "t.s: net 'n' group 0 (lines 3-4): deadlock: TIU command 0 (%B1) waits for %D1 "
                            "and GDMA command 0 (%D1) waits for %B1");
}

TEST(Asm, DisassemblyRejectsUnknownTaskNamingGroupAndCommand) {
  auto m = assemble(kProgram, "t.s", ".");
  ASSERT_TRUE(m.isOk());
  TiuRaw r = TiuRaw::decode(m->nets[0].groups[1].tiu[0].data());
  r[TiuField::tsk_typ] = 15;
  m->nets[0].groups[1].tiu[0] = *r.encode();
  auto text = disassembleModel(*m);
  ASSERT_FALSE(text.isOk());
  EXPECT_EQ(text.message(), "net 'tiny' group 1: TIU command 0: unknown tsk_typ 15");
}

// Mutated programs (random bytes changed, lines cut, duplicated or swapped)
// either assemble or fail with a located message: never a crash or a hang.
TEST(Asm, MutatedProgramsFailCleanly) {
  std::mt19937_64 rng(99);
  std::string base = kProgram;
  const char kAlphabet[] = "%=.#\"[],xBD0123456789abcdef_ \n";
  int failed = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string s = base;
    int edits = 1 + int(rng() % 4);
    for (int e = 0; e < edits && !s.empty(); ++e) {
      size_t at = rng() % s.size();
      switch (rng() % 3) {
      case 0: s[at] = kAlphabet[rng() % (sizeof kAlphabet - 1)]; break;
      case 1: s.erase(at, rng() % 8); break;
      default: s.insert(at, s.substr(rng() % s.size(), rng() % 16)); break;
      }
    }
    auto m = assemble(s, "m.s", ".");
    if (m.isOk()) continue;
    ++failed;
    EXPECT_EQ(m.message().rfind("m.s:", 0), 0u) << m.message();
    EXPECT_EQ(m.message().find('\n'), std::string::npos) << m.message();
  }
  EXPECT_GT(failed, 1000);
}

TEST(Asm, SeveralNetsRoundTripThroughTheContainer) {
  std::string text = std::string(kProgram) +
                     ".net second\n.input a uint8 [2,3] addr=0x100200000\n.output b int16 [4,2] "
                     "addr=0x100300000 mode=2N size=64\n.group\n.layer only\n%D1 = gdma.s2s.fill "
                     "constant_value=0x3f800000\n.group\n%B1 = md_cmp.cmp_select res1_addr=0x40\n";
  auto m = assemble(text, "t.s", ".");
  ASSERT_TRUE(m.isOk()) << m.message();
  ASSERT_EQ(m->nets.size(), 2u);
  EXPECT_EQ(m->nets[1].outputs[0].size, 64u);
  EXPECT_EQ(m->nets[1].groups.size(), 2u);
  EXPECT_EQ(m->nets[1].groups[1].tiuLayer[0], "only"); // .layer persists across .group
  EXPECT_EQ(m->nets[1].groups[0].gdmaLayer[0], "only");
  auto bytes = bmodel::serialize(*m);
  ASSERT_TRUE(bytes.isOk()) << bytes.message();
  auto back = bmodel::parse(bytes->data(), bytes->size());
  ASSERT_TRUE(back.isOk()) << back.message();
  auto t1 = disassembleModel(*m), t2 = disassembleModel(*back);
  ASSERT_TRUE(t1.isOk() && t2.isOk());
  EXPECT_EQ(*t1, *t2);
  EXPECT_NE(t1->find(".net second\n"), std::string::npos);
  EXPECT_NE(t1->find("%D1 = gdma.s2s.fill constant_value=0x3f800000\n"), std::string::npos);
}

TEST(Asm, DeadlockOfAnEarlierNetIsReportedAtItsEnd) {
  std::string text = std::string(kHead) + "%B1 = ar.add deps %D1\n%D1 = gdma.s2l.copy deps %B1\n.net second\n";
  EXPECT_EQ(asmError(text), "t.s: net 'n' group 0 (lines 3-4): deadlock: TIU command 0 (%B1) waits for %D1 "
                            "and GDMA command 0 (%D1) waits for %B1");
}

TEST(Asm, OrderCheckCanBeTurnedOff) {
  std::string text = std::string(kHead) + "%B1 = ar.add deps %D1\n%D1 = gdma.s2l.copy deps %B1\n";
  AssembleOptions options;
  options.checkOrder = false;
  auto m = assemble(text, "t.s", ".", options);
  ASSERT_TRUE(m.isOk()) << m.message();
  EXPECT_EQ(m->nets[0].groups[0].tiu.size(), 1u);
  // The disassembler cannot print it in program order and says why.
  auto dis = disassembleModel(*m);
  ASSERT_FALSE(dis.isOk());
  EXPECT_EQ(dis.message(), "net 'n' group 0: deadlock: TIU command 0 (%B1) waits for %D1 and GDMA command 0 "
                           "(%D1) waits for %B1");
}
