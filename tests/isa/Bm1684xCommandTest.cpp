// The BM1684X command codec (isa/bm1684x): its tables, every type's round trip through bytes and text,
// fuzzed buffers and rejected text. Bm1684xTpuMlirTest checks it on TPU-MLIR's own buffers.
#include "isa/bm1684x/Command.h"
#include "isa/bm1684x/Layouts.h"
#include "isa/bm1684x/Text.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

using namespace tpu;
using namespace tpu::isa;
using namespace tpu::isa::bm1684x;

namespace {

uint64_t randomValue(std::mt19937_64 &rng, unsigned width) {
  switch (rng() % 4) {
  case 0:
  case 1:
    return 0;
  case 2:
    return width >= 64 ? ~0ull : (1ull << width) - 1;
  default:
    return width >= 64 ? rng() : rng() & ((1ull << width) - 1);
  }
}

bool implicitName(const OpInfo &op, std::string_view name) {
  bool tiu = op.engine == Engine::Tiu;
  return name == "cmd_short" || name == "cmd_id" || name == "cmd_id_dep" || name == (tiu ? "tsk_typ" : "cmd_type") ||
         (name == (tiu ? "tsk_eu_typ" : "cmd_special_function") && op.sub != kAnySub);
}

// A command of `op` in the given form with random operand fields and ids.
Command randomCommand(std::mt19937_64 &rng, const OpInfo &op, bool isShort) {
  auto c = Command::make(op, isShort, unsigned(rng() % (op.engine == Engine::Tiu ? 32 : 8)));
  EXPECT_TRUE(c.isOk()) << op.mnemonic;
  for (size_t i = 0; i < c->layout().fieldCount; ++i) {
    const FieldInfo &f = c->layout().fields[i];
    bool isId = f.name == "cmd_id" || f.name == "cmd_id_dep";
    if (isId || !implicitName(op, f.name)) EXPECT_TRUE(c->setField(i, randomValue(rng, f.width)).isOk());
  }
  return *c;
}

std::vector<bool> formsOf(const OpInfo &op) {
  if (op.hasTwoForms()) return {false, true};
  return {op.longLayout == nullptr};
}

} // namespace

TEST(Bm1684xLayouts, SelectorFieldsSitWhereSelectionReadsThem) {
  for (const OpInfo *op = opsBegin(); op != opsEnd(); ++op)
    for (bool isShort : formsOf(*op)) {
      const Layout &l = *op->layout(isShort);
      bool tiu = op->engine == Engine::Tiu;
      auto at = [&](std::string_view name, unsigned offset, unsigned width) {
        int i = l.find(name);
        ASSERT_GE(i, 0) << l.sheet << " lacks " << name;
        EXPECT_EQ(l.fields[i].offset, offset) << l.sheet << "." << name;
        EXPECT_EQ(l.fields[i].width, width) << l.sheet << "." << name;
      };
      at(tiu ? "tsk_typ" : "cmd_type", tiu ? 41 : 32, 4);
      at(tiu ? "tsk_eu_typ" : "cmd_special_function", tiu ? 45 : 36, tiu ? 5 : 3);
      if (op->longLayout != op->shortLayout) at("cmd_short", tiu ? 0 : 3, 1);
      if (l.find("cmd_id") >= 0) {
        at("cmd_id", tiu ? 1 : 9, 20);
        at("cmd_id_dep", tiu ? 21 : 64, 20);
      }
    }
}

TEST(Bm1684xLayouts, TypesAndMnemonicsAreUnique) {
  std::set<std::string_view> mnemonics;
  std::set<std::tuple<Engine, unsigned, int>> keys;
  for (const OpInfo *op = opsBegin(); op != opsEnd(); ++op) {
    EXPECT_TRUE(mnemonics.insert(op->mnemonic).second) << op->mnemonic;
    EXPECT_TRUE(keys.insert({op->engine, op->type, op->sub}).second) << op->mnemonic;
    EXPECT_EQ(findOp(op->mnemonic), op);
    if (op->sub != kAnySub) EXPECT_EQ(findOp(op->engine, op->type, unsigned(op->sub)), op);
  }
  // 30 layouts: the long TIU one, 14 short TIU ones, LAR, SYSID and 13 DMA ones.
  EXPECT_EQ(layoutsEnd() - layoutsBegin(), 30);
}

TEST(Bm1684xCommand, EveryTypeAndFormRoundTripsThroughBytesAndText) {
  std::mt19937_64 rng(1684);
  for (const OpInfo *op = opsBegin(); op != opsEnd(); ++op)
    for (bool isShort : formsOf(*op))
      for (int trial = 0; trial < 20; ++trial) {
        Command c = randomCommand(rng, *op, isShort);
        std::vector<uint8_t> bytes = c.encode();
        ASSERT_EQ(bytes.size(), c.layout().bytes());
        auto back = Command::decode(op->engine, bytes.data(), bytes.size());
        ASSERT_TRUE(back.isOk()) << op->mnemonic << ": " << back.message();
        EXPECT_TRUE(*back == c) << op->mnemonic;
        std::string line = disassemble(c);
        auto parsed = assembleLine(line);
        ASSERT_TRUE(parsed.isOk()) << line << ": " << parsed.message();
        EXPECT_EQ(parsed->encode(), bytes) << line;
      }
}

TEST(Bm1684xCommand, FuzzedBuffersDecodeExactlyOrFailWithAReason) {
  std::mt19937_64 rng(35);
  size_t decoded = 0, rejected = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    Engine engine = trial % 2 ? Engine::Gdma : Engine::Tiu;
    std::vector<uint8_t> buf;
    if (trial % 4 < 2) { // random bytes
      buf.resize(16 * (1 + rng() % 24));
      for (auto &b : buf) b = uint8_t(rng());
    } else { // valid commands with one byte garbled
      std::vector<const OpInfo *> ops;
      for (const OpInfo *op = opsBegin(); op != opsEnd(); ++op)
        if (op->engine == engine) ops.push_back(op);
      for (int n = 1 + int(rng() % 6); n > 0; --n) {
        const OpInfo &op = *ops[rng() % ops.size()];
        std::vector<bool> forms = formsOf(op);
        auto bytes = randomCommand(rng, op, forms[rng() % forms.size()]).encode();
        buf.insert(buf.end(), bytes.begin(), bytes.end());
      }
      buf[rng() % buf.size()] = uint8_t(rng());
    }
    auto cmds = decodeBuffer(engine, buf.data(), buf.size());
    if (!cmds) {
      ++rejected;
      EXPECT_NE(cmds.message().find(" at byte "), std::string::npos) << cmds.message();
      continue;
    }
    ++decoded;
    // What decodes re-encodes to the same bytes, through text too.
    std::vector<uint8_t> again;
    for (const Command &c : *cmds) {
      auto bytes = c.encode();
      again.insert(again.end(), bytes.begin(), bytes.end());
      auto parsed = assembleLine(disassemble(c));
      ASSERT_TRUE(parsed.isOk()) << disassemble(c) << ": " << parsed.message();
      EXPECT_EQ(parsed->encode(), bytes);
    }
    ASSERT_LE(again.size(), buf.size());
    EXPECT_TRUE(std::equal(again.begin(), again.end(), buf.begin()));
  }
  EXPECT_GT(decoded, 500u);
  EXPECT_GT(rejected, 500u);
}

TEST(Bm1684xCommand, RejectedTextSaysWhatAndWhere) {
  auto err = [](const std::string &line) {
    auto c = assembleLine(line);
    EXPECT_FALSE(c.isOk()) << line;
    return c.isOk() ? std::string() : c.message();
  };
  EXPECT_EQ(err("%B1 = arith.frobnicate"), "column 7: unknown BM1684X mnemonic 'arith.frobnicate'");
  EXPECT_EQ(err("%B1 = arith.add res9_c=1"), "column 17: unknown field 'res9_c' of arith.add (LONG_TIU)");
  EXPECT_EQ(err("%B1 = arith.add res0_c=70000"), "column 24: field res0_c = 70000 does not fit in 16 bits");
  EXPECT_EQ(err("%B1 = arith.add tsk_eu_typ=3"), "column 17: field tsk_eu_typ is given by the mnemonic or the %-names");
  EXPECT_EQ(err("%D1 = arith.add"), "column 1: expected a TIU (%B) command name, got '%D1'");
  EXPECT_EQ(err("arith.add res0_c=1"), "column 1: arith.add needs a name: '%B<id> = arith.add ...'");
  EXPECT_EQ(err("%B1 = lar"), "column 1: lar carries no id: write the mnemonic first");
  EXPECT_EQ(err("%D1 = s.dma.tensor"), "column 7: dma.tensor has no separate short form");
  EXPECT_EQ(err("%B2000000 = arith.add"), "column 3: command id 2000000 does not fit in 20 bits");
  EXPECT_EQ(err("%B1 = arith.add deps %B1"), "column 22: expected a GDMA (%D) command name, got '%B1'");
  EXPECT_EQ(err("%B1 = arith.add res0_c=1 res0_c=2"), "column 26: field res0_c given twice");
  auto text = assembleText("%B1 = arith.add\n%B1 = arith.sub\n", "t.s");
  ASSERT_FALSE(text.isOk());
  EXPECT_EQ(text.message(), "t.s: TIU command 1 has id 1 not greater than the previous id 1");
  text = assembleText("# two\n%B1 = arith.add\n%D1 = dma.tensor bogus\n", "t.s");
  ASSERT_FALSE(text.isOk());
  EXPECT_EQ(text.message(), "t.s:3:18: expected name=value, got 'bogus'");
}

TEST(Bm1684xCommand, TruncatedAndUnknownCommandsAreNamed) {
  std::vector<uint8_t> buf(16, 0);
  auto cmds = decodeBuffer(Engine::Tiu, buf.data(), buf.size()); // zeros: a long conv, 128 bytes
  ASSERT_FALSE(cmds.isOk());
  EXPECT_EQ(cmds.message(), "TIU command 0 at byte 0: TIU command conv.normal truncated: 16 bytes left of its 128");
  setBits(buf.data(), 41, 4, 8); // tsk_typ 8: none
  cmds = decodeBuffer(Engine::Tiu, buf.data(), buf.size());
  ASSERT_FALSE(cmds.isOk());
  EXPECT_EQ(cmds.message(), "TIU command 0 at byte 0: unknown TIU command type tsk_typ=8 tsk_eu_typ=0");
  std::vector<uint8_t> dma(16, 0);
  setBits(dma.data(), 3, 1, 1); // a short DMA tensor does not exist
  cmds = decodeBuffer(Engine::Gdma, dma.data(), dma.size());
  ASSERT_FALSE(cmds.isOk());
  EXPECT_EQ(cmds.message(), "DMA command 0 at byte 0: DMA command dma.tensor has no short form");
}
