// Typed TIU commands: every class survives encode -> 128 bytes -> decode with
// random member values; invalid task/eu/precision/stride codes are rejected
// with the field named.
#include "isa/TiuCommand.h"

#include <gtest/gtest.h>

#include <random>

using namespace tpu::isa;

namespace {

// Fills every member the struct's field table names with a random value that
// fits its field (operands get a random, canonical LocalOperand).
struct Randomizer {
  std::mt19937_64 &rng;
  TiuTask task;
  uint64_t bitsOf(TiuField f) { return rng() & fieldInfo(f).maxValue(); }
  void operator()(TiuField f, EuOp &m) {
    std::vector<EuOp> valid;
    for (unsigned e = 0; e < kEuOpCount; ++e)
      if (isValidTiuOp(unsigned(task), e)) valid.push_back(EuOp(e));
    m = valid[rng() % valid.size()];
    (void)f;
  }
  void operator()(TiuField f, bool &m) { m = bitsOf(f) & 1; }
  void operator()(TiuField f, uint8_t &m) { m = uint8_t(bitsOf(f)); }
  void operator()(TiuField f, uint32_t &m) { m = uint32_t(bitsOf(f)); }
  void operator()(OptionalOperandCount<bool> c) { c.present = rng() & 1; }
  void operator()(OperandRef<LocalOperand> r) {
    const OperandSlot &s = r.slot;
    LocalOperand &o = r.op;
    o = LocalOperand{};
    auto has = [](TiuField f) { return f != TiuField::Count; };
    o.isConst = has(s.isConst) && (rng() & 1);
    (o.isConst ? o.constValue : o.addr) = uint32_t(bitsOf(s.addr));
    if (has(s.n)) o.shape = Shape4{uint32_t(bitsOf(s.n)), uint32_t(bitsOf(s.c)),
                                   uint32_t(bitsOf(s.h)), uint32_t(bitsOf(s.w))};
    constexpr Prec kPrecs[] = {Prec::Int8, Prec::Fp32, Prec::Int16, Prec::Int32};
    o.prec = kPrecs[rng() % 4];
    o.isSigned = rng() & 1;
    o.strideMode = StrideMode(rng() % kStrideModeCount);
    o.stride = Strides4{uint32_t(bitsOf(s.nStr)), uint32_t(bitsOf(s.cStr)),
                        uint32_t(bitsOf(s.hStr)), uint32_t(bitsOf(s.wStr))};
  }
};

TiuCommand randomCommand(std::mt19937_64 &rng, unsigned task) {
  TiuCommand cmd;
  cmd.cmdIdTpu = uint16_t(rng());
  cmd.cmdIdGdma = uint16_t(rng());
  cmd.cmdEnd = rng() & 1;
  cmd.interrupt = rng() & 1;
  TiuRaw seed;
  seed.set(TiuField::tsk_typ, task);
  for (unsigned e = 0; e < kEuOpCount; ++e)
    if (isValidTiuOp(task, e)) {
      seed.set(TiuField::tsk_eu_typ, e);
      break;
    }
  seed.set(TiuField::tsk_opd_num, task == 0 || task == 1 || task == 2 ? 2 : 0);
  auto blank = decodeTiu(seed);
  EXPECT_TRUE(blank.isOk()) << blank.message();
  cmd.op = blank->op;
  Randomizer r{rng, TiuTask(task)};
  std::visit([&](auto &s) { std::decay_t<decltype(s)>::fields(s, r); }, cmd.op);
  return cmd;
}

TEST(TiuCommand, EveryClassRoundTripsThroughBytes) {
  std::mt19937_64 rng(1684);
  for (unsigned task = 0; task < kTiuTaskCount; ++task)
    for (int i = 0; i < 200; ++i) {
      TiuCommand cmd = randomCommand(rng, task);
      ASSERT_EQ(cmd.task(), TiuTask(task));
      auto bytes = encodeBytes(cmd);
      ASSERT_TRUE(bytes.isOk()) << bytes.message();
      auto back = decodeTiu(bytes->data());
      ASSERT_TRUE(back.isOk()) << back.message();
      EXPECT_TRUE(*back == cmd) << "task " << task << " iteration " << i;
      EXPECT_EQ(back->eu(), cmd.eu());
      // Re-encoding the decoded command gives the same words.
      auto again = encodeBytes(*back);
      ASSERT_TRUE(again.isOk());
      EXPECT_EQ(*again, *bytes);
    }
}

TEST(TiuCommand, TypedMembersLandInTheirFields) {
  Conv conv;
  conv.input.addr = 0x80040;
  conv.input.shape = {2, 3, 17, 19};
  conv.weight.prec = Prec::Int8;
  conv.output.isSigned = false;
  conv.padTop = 3;
  conv.strideW = 2;
  conv.kernelInsH = 1;
  conv.hasBias = true;
  conv.bias.strideMode = StrideMode::PerChannel;
  conv.rshift = 7;
  conv.relu = true;
  TiuCommand cmd{5, 4, false, false, conv};
  TiuRaw raw = encode(cmd);
  EXPECT_EQ(raw.get(TiuField::tsk_typ), 0u);
  EXPECT_EQ(raw.get(TiuField::tsk_eu_typ), unsigned(EuOp::Mac));
  EXPECT_EQ(raw.get(TiuField::cmd_id_tpu), 5u);
  EXPECT_EQ(raw.get(TiuField::cmd_id_gdma), 4u);
  EXPECT_EQ(raw.get(TiuField::opd0_addr), 0x80040u);
  EXPECT_EQ(raw.get(TiuField::opd0_c), 3u);
  EXPECT_EQ(raw.get(TiuField::opd0_w), 19u);
  EXPECT_EQ(raw.get(TiuField::opd0_up_pad), 3u);
  EXPECT_EQ(raw.get(TiuField::res_op_x_str), 2u);
  EXPECT_EQ(raw.get(TiuField::opd1_y_ins0), 1u);
  EXPECT_EQ(raw.get(TiuField::tsk_opd_num), 3u);
  EXPECT_EQ(raw.get(TiuField::short_opd2_str), 2u);
  EXPECT_EQ(raw.get(TiuField::opt_right_shift), 7u);
  EXPECT_EQ(raw.get(TiuField::opt_relu), 1u);
  EXPECT_EQ(raw.get(TiuField::opt_res_add_sign), 0u);
  EXPECT_EQ(raw.get(TiuField::opt_res0_prec), unsigned(Prec::Int8));

  Arith ar;
  ar.eu = EuOp::Max;
  ar.opd1.isConst = true;
  ar.opd1.constValue = 0xfffffff9u; // -7
  raw = encode(TiuCommand{0, 0, false, false, ar});
  EXPECT_EQ(raw.get(TiuField::tsk_typ), 3u);
  EXPECT_EQ(raw.get(TiuField::opt_opd1_const), 1u);
  EXPECT_EQ(raw.get(TiuField::opd1_addr), 0xfffffff9u);
}

TEST(TiuCommand, OperandBuilders) {
  LocalOperand t = lmemTensor(0x80000 + 64, {1, 3, 4, 5}, Prec::Int16, false, StrideMode::Compact);
  EXPECT_EQ(t.addr, 0x80040u);
  EXPECT_EQ(t.shape, (Shape4{1, 3, 4, 5}));
  EXPECT_EQ(t.prec, Prec::Int16);
  EXPECT_FALSE(t.isSigned);
  EXPECT_EQ(t.strideMode, StrideMode::Compact);
  LocalOperand e = lmemTensor(0, {1, 1, 2, 2}, Prec::Int8, true, Strides4{0, 1, 8, 2});
  EXPECT_EQ(e.strideMode, StrideMode::Explicit);
  EXPECT_TRUE(e.stride == (Strides4{0, 1, 8, 2}));
  LocalOperand k = constOperand(-7, Prec::Int8);
  EXPECT_TRUE(k.isConst);
  EXPECT_EQ(k.constValue, 0xfffffff9u);
  LocalOperand f = constOperand(1.0f);
  EXPECT_EQ(f.prec, Prec::Fp32);
  EXPECT_EQ(f.constValue, 0x3f800000u);
}

TEST(TiuCommand, WindowAxisGivesTheOutputSize) {
  Conv c;
  c.input.shape = {1, 3, 224, 224};
  c.weight.shape = {3, 64, 7, 7};
  c.padTop = c.padBottom = c.padLeft = c.padRight = 3;
  c.strideH = c.strideW = 2;
  EXPECT_EQ(windowRows(c).outputSize(), 112u);
  EXPECT_EQ(windowCols(c).outputSize(), 112u);
  c.kernelInsH = 1; // dilation 2: kernel extent 13
  EXPECT_EQ(windowRows(c).dilatedKernel(), 13u);
  EXPECT_EQ(windowRows(c).outputSize(), (230u - 13) / 2 + 1);
  c.inputInsW = 1, c.strideW = 1; // 2x upsampling by insertion
  EXPECT_EQ(windowCols(c).paddedInput(), 223u * 2 + 1 + 6);
  Pord p;
  p.input.shape = {1, 8, 5, 5};
  p.kernel.shape = {1, 8, 7, 7};
  EXPECT_EQ(windowRows(p).outputSize(), 0u); // kernel larger than the input
  p.strideH = 0;
  p.kernel.shape.h = 1;
  EXPECT_EQ(windowRows(p).outputSize(), 0u);
}

TEST(TiuCommand, ValidateChecksTypedCommands) {
  Arith ar;
  EXPECT_TRUE(validateTiu(TiuCommand{0, 0, false, false, ar}).isOk());
  Conv conv;
  conv.eu = EuOp::Add;
  tpu::Status st = validateTiu(TiuCommand{0, 0, false, false, conv});
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("tsk_eu_typ = 2 (add) is not valid for tsk_typ = 0 (conv)"), std::string::npos);
  ar.opd1.prec = Prec(6);
  st = validateTiu(TiuCommand{0, 0, false, false, ar});
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("opt_opd1_prec = 6"), std::string::npos) << st.message();
  ar.opd1.prec = Prec::Int8;
  ar.res0.shape.c = 5000; // 12-bit field
  st = validateTiu(TiuCommand{0, 0, false, false, ar});
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("res0_c = 5000 does not fit in 12 bits"), std::string::npos) << st.message();
}

TiuRaw validArith() {
  TiuRaw raw;
  raw.set(TiuField::tsk_typ, unsigned(TiuTask::Arith));
  raw.set(TiuField::tsk_eu_typ, unsigned(EuOp::Add));
  return raw;
}

void expectRejected(const TiuRaw &raw, const std::string &fragment) {
  auto r = decodeTiu(raw);
  ASSERT_FALSE(r.isOk()) << "expected an error mentioning " << fragment;
  EXPECT_NE(r.message().find(fragment), std::string::npos) << r.message();
}

TEST(TiuCommand, InvalidCodesAreRejectedNamingTheField) {
  ASSERT_TRUE(decodeTiu(validArith()).isOk());
  TiuRaw raw = validArith();
  raw.set(TiuField::tsk_typ, 15);
  expectRejected(raw, "tsk_typ = 15");
  raw = validArith();
  raw.set(TiuField::tsk_eu_typ, 27);
  expectRejected(raw, "tsk_eu_typ = 27");
  raw = validArith();
  raw.set(TiuField::tsk_typ, unsigned(TiuTask::Conv)); // conv.add does not exist
  expectRejected(raw, "tsk_eu_typ = 2 (add) is not valid for tsk_typ = 0 (conv)");
  for (TiuField f : {TiuField::opt_res0_prec, TiuField::opt_opd0_prec, TiuField::opt_opd1_prec,
                     TiuField::opt_opd2_prec}) {
    raw = validArith();
    raw.set(f, 5);
    expectRejected(raw, std::string(fieldInfo(f).name) + " = 5 is not a precision code");
    raw.set(f, unsigned(Prec::Fp16)); // the chip's code for fp16, which its TIU does not compute
    expectRejected(raw, std::string(fieldInfo(f).name) + " = 1 (fp16): the BM1684 TIU computes no fp16");
  }
  for (TiuField f : {TiuField::short_res0_str, TiuField::short_opd0_str,
                     TiuField::short_opd1_str, TiuField::short_opd2_str}) {
    raw = validArith();
    raw.set(f, 6);
    expectRejected(raw, std::string(fieldInfo(f).name) + " = 6 is not a stride mode");
  }
  raw = validArith();
  raw.set(TiuField::tsk_typ, unsigned(TiuTask::Conv));
  raw.set(TiuField::tsk_eu_typ, unsigned(EuOp::Mac));
  raw.set(TiuField::tsk_opd_num, 1);
  expectRejected(raw, "tsk_opd_num = 1");
}

TEST(TiuCommand, FieldsAClassDoesNotUseAreIgnored) {
  TiuRaw raw = validArith();
  raw.set(TiuField::opd0_up_pad, 9); // ar has no padding
  auto r = decodeTiu(raw);
  ASSERT_TRUE(r.isOk());
  EXPECT_EQ(encode(*r).get(TiuField::opd0_up_pad), 0u);
}

} // namespace
