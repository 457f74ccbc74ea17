#include "isa/TiuCommand.h"

#include <array>
#include <cstring>
#include <utility>
#include <vector>

namespace tpu::isa {

namespace {
constexpr TiuField kNone = TiuField::Count;
using F = TiuField;
} // namespace

// Operand slots: which field holds which part of each operand (docs/isa.md).
// res0's signedness lives in opt_res_add_sign (ours: the table has no
// opt_res0_sign; the sign also applies to the value res_add reads back).
const OperandSlot kRes0Slot{"res0", F::res0_addr, F::res0_n, F::res0_c, F::res0_h, F::res0_w,
                            F::opt_res0_prec, F::opt_res_add_sign, F::short_res0_str,
                            F::res0_n_str, F::res0_c_str, F::res0_h_str, F::res0_w_str, kNone};
const OperandSlot kOpd0Slot{"opd0", F::opd0_addr, F::opd0_n, F::opd0_c, F::opd0_h, F::opd0_w,
                            F::opt_opd0_prec, F::opt_opd0_sign, F::short_opd0_str,
                            F::opd0_n_str, F::opd0_c_str, F::opd0_h_str, F::opd0_w_str,
                            F::opt_opd0_const};
const OperandSlot kOpd1Slot{"opd1", F::opd1_addr, F::opd1_n, F::opd1_c, F::opd1_h, F::opd1_w,
                            F::opt_opd1_prec, F::opt_opd1_sign, F::short_opd1_str,
                            F::opd1_n_str, F::opd1_c_str, F::opd1_h_str, F::opd1_w_str,
                            F::opt_opd1_const};
const OperandSlot kOpd2Slot{"opd2", F::opd2_addr, kNone, kNone, kNone, kNone,
                            F::opt_opd2_prec, F::opt_opd2_sign, F::short_opd2_str,
                            F::opd2_n_str, F::opd2_c_str, F::opd2_h_str, F::opd2_w_str,
                            F::opt_opd2_const};

std::string_view strideModeName(StrideMode m) {
  static constexpr std::string_view kNames[kStrideModeCount] = {"aligned", "compact",
                                                                "per_channel", "explicit"};
  return unsigned(m) < kStrideModeCount ? kNames[unsigned(m)] : "invalid";
}

LocalOperand constOperand(float value) {
  LocalOperand o;
  o.isConst = true, o.prec = Prec::Fp32;
  std::memcpy(&o.constValue, &value, 4);
  return o;
}

WindowAxis windowRows(const Conv &c) {
  return {c.input.shape.h, c.inputInsH, c.padTop, c.padBottom, c.weight.shape.h, c.kernelInsH, c.strideH};
}
WindowAxis windowCols(const Conv &c) {
  return {c.input.shape.w, c.inputInsW, c.padLeft, c.padRight, c.weight.shape.w, c.kernelInsW, c.strideW};
}
WindowAxis windowRows(const Pord &p) {
  return {p.input.shape.h, p.inputInsH, p.padTop, p.padBottom, p.kernel.shape.h, p.kernelInsH, p.strideH};
}
WindowAxis windowCols(const Pord &p) {
  return {p.input.shape.w, p.inputInsW, p.padLeft, p.padRight, p.kernel.shape.w, p.kernelInsW, p.strideW};
}

bool LocalOperand::operator==(const LocalOperand &o) const {
  return addr == o.addr && shape == o.shape && prec == o.prec && isSigned == o.isSigned &&
         strideMode == o.strideMode && stride == o.stride && isConst == o.isConst &&
         constValue == o.constValue;
}

namespace {

void put(TiuRaw &raw, TiuField f, uint64_t v) {
  if (f != kNone) raw.set(f, v);
}
uint64_t get(const TiuRaw &raw, TiuField f, uint64_t dflt) {
  return f != kNone ? raw.get(f) : dflt;
}

struct Encoder {
  TiuRaw &raw;
  template <class T> void operator()(TiuField f, const T &m) { raw.set(f, uint64_t(m)); }
  void operator()(OptionalOperandCount<const bool> c) {
    raw.set(F::tsk_opd_num, c.base + (c.present ? 1 : 0));
  }
  void operator()(OperandRef<const LocalOperand> r) {
    const LocalOperand &o = r.op;
    const OperandSlot &s = r.slot;
    put(raw, s.addr, o.isConst ? o.constValue : o.addr);
    put(raw, s.n, o.shape.n), put(raw, s.c, o.shape.c);
    put(raw, s.h, o.shape.h), put(raw, s.w, o.shape.w);
    put(raw, s.prec, uint64_t(o.prec)), put(raw, s.sign, o.isSigned);
    put(raw, s.strideMode, uint64_t(o.strideMode));
    put(raw, s.nStr, o.stride.n), put(raw, s.cStr, o.stride.c);
    put(raw, s.hStr, o.stride.h), put(raw, s.wStr, o.stride.w);
    put(raw, s.isConst, o.isConst);
  }
};

struct Decoder {
  const TiuRaw &raw;
  Status status;
  void operator()(TiuField f, EuOp &m) { m = EuOp(raw.get(f)); } // validated before
  void operator()(TiuField f, bool &m) { m = raw.get(f) != 0; }
  template <class T> void operator()(TiuField f, T &m) { m = T(raw.get(f)); }
  void operator()(OptionalOperandCount<bool> c) {
    uint64_t n = raw.get(F::tsk_opd_num);
    if (n != c.base && n != c.base + 1u) {
      fail(makeError("tsk_opd_num = ", n, " is invalid (expected ", unsigned(c.base), " or ",
                     c.base + 1u, ")"));
      return;
    }
    c.present = n == c.base + 1u;
  }
  void operator()(OperandRef<LocalOperand> r) {
    LocalOperand &o = r.op;
    const OperandSlot &s = r.slot;
    o = LocalOperand{};
    uint64_t prec = raw.get(s.prec);
    if (prec == uint64_t(Prec::Fp16))
      return fail(makeError(fieldInfo(s.prec).name, " = 1 (fp16): the BM1684 TIU computes no fp16"));
    if (!isValidPrec(prec))
      return fail(makeError(fieldInfo(s.prec).name, " = ", prec, " is not a precision code"));
    uint64_t mode = raw.get(s.strideMode);
    if (mode >= kStrideModeCount)
      return fail(makeError(fieldInfo(s.strideMode).name, " = ", mode, " is not a stride mode"));
    o.prec = Prec(prec);
    o.strideMode = StrideMode(mode);
    o.isSigned = raw.get(s.sign) != 0;
    o.isConst = get(raw, s.isConst, 0) != 0;
    (o.isConst ? o.constValue : o.addr) = uint32_t(raw.get(s.addr));
    o.shape = Shape4{uint32_t(get(raw, s.n, 1)), uint32_t(get(raw, s.c, 1)),
                     uint32_t(get(raw, s.h, 1)), uint32_t(get(raw, s.w, 1))};
    o.stride = Strides4{uint32_t(raw.get(s.nStr)), uint32_t(raw.get(s.cStr)),
                        uint32_t(raw.get(s.hStr)), uint32_t(raw.get(s.wStr))};
  }
  void fail(Status st) {
    if (status.isOk()) status = std::move(st);
  }
};

// Flattens every member to numbers, for member-wise equality.
struct Flattener {
  std::vector<uint64_t> out;
  template <class T> void operator()(TiuField, const T &m) { out.push_back(uint64_t(m)); }
  void operator()(OptionalOperandCount<const bool> c) { out.push_back(c.present); }
  void operator()(OperandRef<const LocalOperand> r) {
    const LocalOperand &o = r.op;
    for (uint64_t v : {uint64_t(o.addr), uint64_t(o.shape.n), uint64_t(o.shape.c),
                       uint64_t(o.shape.h), uint64_t(o.shape.w), uint64_t(o.prec),
                       uint64_t(o.isSigned), uint64_t(o.strideMode), uint64_t(o.stride.n),
                       uint64_t(o.stride.c), uint64_t(o.stride.h), uint64_t(o.stride.w),
                       uint64_t(o.isConst), uint64_t(o.constValue)})
      out.push_back(v);
  }
};

template <size_t... I>
constexpr std::array<TiuOp (*)(), sizeof...(I)> makeFactories(std::index_sequence<I...>) {
  return {{+[]() { return TiuOp(std::in_place_index<I>); }...}};
}
constexpr auto kFactories = makeFactories(std::make_index_sequence<std::variant_size_v<TiuOp>>());
static_assert(std::variant_size_v<TiuOp> == kTiuTaskCount, "one alternative per tsk_typ");

} // namespace

EuOp TiuCommand::eu() const {
  return std::visit([](const auto &s) { return s.eu; }, op);
}

Result<TiuCommand> decodeTiu(const TiuRaw &raw) {
  uint64_t tsk = raw.get(F::tsk_typ), euTyp = raw.get(F::tsk_eu_typ);
  if (tsk >= kTiuTaskCount) return makeError("tsk_typ = ", tsk, " is not a TIU task type");
  if (euTyp >= kEuOpCount) return makeError("tsk_eu_typ = ", euTyp, " is not an eu type");
  if (!isValidTiuOp(tsk, euTyp))
    return makeError("tsk_eu_typ = ", euTyp, " (", euOpName(EuOp(euTyp)),
                     ") is not valid for tsk_typ = ", tsk, " (", tiuTaskName(TiuTask(tsk)), ")");
  TiuCommand cmd;
  cmd.cmdIdTpu = uint16_t(raw.get(F::cmd_id_tpu));
  cmd.cmdIdGdma = uint16_t(raw.get(F::cmd_id_gdma));
  cmd.cmdEnd = raw.get(F::cmd_end) != 0;
  cmd.interrupt = raw.get(F::cmd_intr_en) != 0;
  cmd.op = kFactories[tsk]();
  Decoder dec{raw, Status::ok()};
  std::visit([&](auto &s) { std::decay_t<decltype(s)>::fields(s, dec); }, cmd.op);
  if (!dec.status.isOk()) return dec.status.prefix(std::string(tiuTaskName(TiuTask(tsk))));
  return cmd;
}

Result<TiuCommand> decodeTiu(const uint8_t *bytes) { return decodeTiu(TiuRaw::decode(bytes)); }

TiuRaw encode(const TiuCommand &cmd) {
  TiuRaw raw;
  raw.set(F::cmd_en, 1);
  raw.set(F::cmd_id_en, 1);
  raw.set(F::cmd_id_tpu, cmd.cmdIdTpu);
  raw.set(F::cmd_id_gdma, cmd.cmdIdGdma);
  raw.set(F::cmd_end, cmd.cmdEnd);
  raw.set(F::cmd_intr_en, cmd.interrupt);
  raw.set(F::tsk_typ, cmd.op.index());
  Encoder enc{raw};
  std::visit([&](const auto &s) { std::decay_t<decltype(s)>::fields(s, enc); }, cmd.op);
  return raw;
}

Result<CommandBytes> encodeBytes(const TiuCommand &cmd) { return encode(cmd).encode(); }

Status validateTiu(const TiuCommand &cmd) {
  // The word carries every code; decoding it applies the same checks as for
  // words read from a file, and packing it checks the field widths.
  TiuRaw raw = encode(cmd);
  auto bytes = raw.encode();
  if (!bytes.isOk()) return bytes.status();
  auto back = decodeTiu(raw);
  return back.isOk() ? Status::ok() : back.status();
}

bool operator==(const TiuCommand &a, const TiuCommand &b) {
  if (a.cmdIdTpu != b.cmdIdTpu || a.cmdIdGdma != b.cmdIdGdma || a.cmdEnd != b.cmdEnd ||
      a.interrupt != b.interrupt || a.op.index() != b.op.index())
    return false;
  auto flatten = [](const TiuOp &op) {
    Flattener f;
    std::visit([&](const auto &s) { std::decay_t<decltype(s)>::fields(s, f); }, op);
    return f.out;
  };
  return flatten(a.op) == flatten(b.op);
}

} // namespace tpu::isa
