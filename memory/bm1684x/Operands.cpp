#include "memory/bm1684x/Operands.h"

#include "isa/bm1684x/MemoryMap.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace tpu::memory::bm1684x {

using isa::bm1684x::Command;
namespace map = isa::bm1684x;

unsigned DataType::bits() const {
  switch (prec) {
  case 0:
    return 8;
  case 1:
  case 3:
  case 5:
    return 16;
  case 2:
  case 4:
    return 32;
  case 6:
    return 4;
  default:
    return 0;
  }
}

std::string DataType::name() const {
  switch (prec) {
  case 1:
    return "f16";
  case 2:
    return "f32";
  case 5:
    return "bf16";
  default:
    break;
  }
  std::string base = "i" + std::to_string(bits());
  return sign == Sign::Signed ? "s" + base : sign == Sign::Unsigned ? "u" + base : base;
}

std::string Operand::name() const {
  char buf[64];
  switch (space) {
  case Space::Lmem: {
    uint64_t lane = address / map::kLaneBytes, inLane = address % map::kLaneBytes;
    std::string s = "%R" + std::to_string(inLane / map::kBankBytes);
    if (inLane % map::kBankBytes) s += "." + std::to_string(inLane % map::kBankBytes);
    if (lane) s += ".L" + std::to_string(lane);
    return s;
  }
  case Space::Static:
    return "%S" + std::to_string(address);
  case Space::L2:
    return "%L" + std::to_string(address);
  case Space::Global:
    return "%G" + std::to_string(address);
  case Space::Const:
    std::snprintf(buf, sizeof buf, "%%C%.9g", constValue());
    return buf;
  }
  return "%?";
}

std::string Operand::typeText() const {
  if (space == Space::Const) return type.name();
  std::string s = "memref<";
  for (uint64_t d : shape) s += std::to_string(d) + "x";
  s += type.name();
  if (stride && std::any_of(stride->begin(), stride->end(), [](int64_t v) { return v != 0; })) {
    s += ", strides: [";
    for (size_t i = 0; i < 4; ++i) s += (i ? ", " : "") + std::to_string((*stride)[i]);
    s += "]";
  }
  return s + ">";
}

double Operand::constValue() const {
  uint32_t bits = uint32_t(address);
  switch (type.prec) {
  case 2: {
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }
  case 5: { // bf16: the high half of an fp32
    uint32_t wide = bits << 16;
    float f;
    std::memcpy(&f, &wide, sizeof f);
    return f;
  }
  case 1: { // fp16
    uint32_t sign = (bits >> 15) & 1, exp = (bits >> 10) & 0x1f, man = bits & 0x3ff;
    double v = exp == 0    ? man / 1024.0 * (1.0 / 16384)
               : exp == 31 ? (man ? 0.0 / 0.0 : 1.0 / 0.0)
                           : (1 + man / 1024.0) * double(1u << exp) / 32768;
    return sign ? -v : v;
  }
  default: {
    unsigned n = type.bits();
    uint64_t v = n >= 64 ? bits : bits & ((1ull << n) - 1);
    if (type.sign == DataType::Sign::Signed && n < 64 && (v >> (n - 1)) & 1)
      return double(int64_t(v) - int64_t(1ull << n));
    return double(v);
  }
  }
}

namespace {

// One operand as the command's fields describe it, before it is placed in a memory.
struct Desc {
  uint64_t address = 0;
  std::array<uint64_t, 4> shape{};
  std::optional<std::array<int64_t, 4>> stride;
  DataType type;
  LocalLayout layout = LocalLayout::AlignEU;
  bool isConst = false;
};

uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// The strides a local layout implies (TPU-MLIR's local_layout_to_stride): channels are spread over the
// lanes from the operand's own lane on, so the n stride counts the channel rows one lane holds.
std::optional<std::array<int64_t, 4>> layoutStride(const Desc &d, uint64_t lane) {
  auto [n, c, h, w] = d.shape;
  (void)n;
  uint64_t bytes = std::max(1u, d.type.bits() / 8), perEu = map::kEuBytes / bytes;
  uint64_t rows = ceilDiv(c + lane, map::kLanes);
  switch (d.layout) {
  case LocalLayout::AlignEU: {
    uint64_t cs = ceilDiv(h * w, perEu) * perEu;
    return std::array<int64_t, 4>{int64_t(rows * cs), int64_t(cs), int64_t(w), 1};
  }
  case LocalLayout::Compact:
    return std::array<int64_t, 4>{int64_t(rows * h * w), int64_t(h * w), int64_t(w), 1};
  case LocalLayout::Offset:
    return std::array<int64_t, 4>{0, 1, 0, 0};
  case LocalLayout::Stride:
    return d.stride;
  default:
    return std::nullopt; // weight layouts: the shape says it all
  }
}

Result<Operand> place(const Desc &d) {
  Operand o;
  o.type = d.type;
  o.shape = d.shape;
  o.layout = d.layout;
  if (d.isConst) {
    o.space = Space::Const;
    o.address = d.address & 0xffffffffu;
    return o;
  }
  uint64_t a = d.address < map::kLmemBytes ? d.address + map::kLmemStart : d.address;
  if (a >= map::kLmemStart && a < map::kLmemEnd) {
    o.space = Space::Lmem;
    o.address = a - map::kLmemStart;
    o.stride = layoutStride(d, o.address / map::kLaneBytes);
  } else {
    if (a >= map::kStaticStart && a < map::kStaticEnd)
      o.space = Space::Static, o.address = a - map::kStaticStart;
    else if (a >= map::kL2Start && a < map::kL2End)
      o.space = Space::L2, o.address = a - map::kL2Start;
    else if (a >= map::kGlobalStart && a < map::kGlobalEnd)
      o.space = Space::Global, o.address = a - map::kGlobalStart;
    else {
      char buf[32];
      std::snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)d.address);
      return makeError("address ", buf, " is in no memory");
    }
    o.stride = d.stride;
  }
  return o;
}

std::array<uint64_t, 4> dims(const Command &c, const char *prefix) {
  std::string p(prefix);
  return {c.get(p + "_n"), c.get(p + "_c"), c.get(p + "_h"), c.get(p + "_w")};
}
std::array<int64_t, 4> strides(const Command &c, const char *prefix) {
  std::string p(prefix);
  return {int64_t(c.get(p + "_n_str")), int64_t(c.get(p + "_c_str")), int64_t(c.get(p + "_h_str")),
          int64_t(c.get(p + "_w_str"))};
}
DataType typeOf(const Command &c, const std::string &precField, bool isSigned) {
  return DataType::of(unsigned(c.get(precField)), isSigned);
}
DataType signless(unsigned prec) { return {prec, DataType::Sign::Signless}; }

Result<LocalLayout> layoutCode(const Command &c, const char *field) {
  uint64_t v = c.get(field);
  if (v > 3) return makeError(field, " = ", v, " is no tensor layout (0 aligned, 1 compact, 2 offset, 3 strided)");
  return LocalLayout(v);
}

struct Parts {
  std::vector<Desc> results, operands;
};

Result<Parts> conv(const Command &c) {
  auto l0 = layoutCode(c, "opd0_str");
  if (!l0) return l0.status();
  bool s0 = c.get("opd0_sign"), s1 = c.get("opd1_sign"), s2 = c.get("opd2_sign");
  unsigned prec = unsigned(c.get("opd0_prec"));
  Desc in{c.get("opd0_addr"),
          {c.get("res0_n"), c.get("opd0_c"), c.get("opd0_h"), c.get("opd0_w")},
          strides(c, "opd0"),
          DataType::of(prec, s0),
          *l0};
  Desc out{c.get("res0_addr"), dims(c, "res0"), {}, typeOf(c, "res0_prec", s0 || s1 || s2)};
  Desc weight{c.get("opd1_addr"),
              {c.get("res0_c"), c.get("opd0_c"), c.get("opd1_h"), c.get("opd1_w")},
              {},
              DataType::of(prec, s1),
              prec == 0   ? LocalLayout::Ic64
              : prec == 2 ? LocalLayout::Ic1
                          : LocalLayout::Ic32,
              bool(c.get("opd1_const"))};
  Desc bias{c.get("opd2_addr"),  {1, c.get("res0_c"), 1, 1}, {},
            DataType::of(2, s0), LocalLayout::Compact,       bool(c.get("opd2_const"))};
  Desc pad{c.get("opd3_addr"),   {1, c.get("opd0_c"), 1, 2}, {}, in.type,
           LocalLayout::Compact, bool(c.get("opd3_const"))};
  if (prec == 0) {
    if (c.op().sub == 0) { // input zero points per channel
      bias.shape = {1, c.get("opd0_c"), 1, 1};
      bias.type = DataType::of(0, s2);
      out.type = typeOf(c, "res0_prec", s0 || s1 || s2 || c.get("opd2_addr"));
    } else { // requantising forms: int16 bias, uint8 shift
      bias.type = DataType::of(3, s2);
      pad.type = DataType::of(0, false);
    }
  }
  return Parts{{out}, {in, weight, bias, pad}};
}

Result<Parts> poolOrDepthwise(const Command &c) {
  bool s0 = c.get("opd0_sign"), s1 = c.get("opd1_sign"), s2 = c.get("opd2_sign");
  auto [n, ch, h, w] = dims(c, "res0");
  (void)h, (void)w;
  unsigned prec = unsigned(c.get("opd0_prec"));
  Desc in{c.get("opd0_addr"), {n, ch, c.get("opd0_h"), c.get("opd0_w")}, {}, DataType::of(prec, s0)};
  Desc out{c.get("res0_addr"), dims(c, "res0"), {}, typeOf(c, "res0_prec", s0)};
  Desc weight{c.get("opd1_addr"),
              {1, ch, c.get("opd1_h"), c.get("opd1_w")},
              {},
              DataType::of(prec, s1),
              LocalLayout::Compact,
              bool(c.get("opd1_const"))};
  Desc bias{c.get("opd2_addr"),     {1, ch, 1, 1},        {},
            DataType::of(prec, s2), LocalLayout::Compact, bool(c.get("opd2_const"))};
  Desc pad{c.get("opd3_addr"), {1, ch, 1, 2}, {}, in.type, LocalLayout::Compact, bool(c.get("opd3_const"))};
  switch (c.op().sub) {
  case 1:
  case 4:
    return Parts{{out}, {in, pad}}; // average, max
  case 0:
  case 2: { // depthwise (+ relu)
    out.type = typeOf(c, "res0_prec", s0 || s1 || s2);
    if (c.op().sub == 2) out.type = typeOf(c, "res0_prec", c.get("res0_prec") == 4);
    bias.type = prec == 0 ? DataType::of(4, true) : in.type;
    return Parts{{out}, {in, weight, bias, pad}};
  }
  default: { // ROI forms: per output position four int16 coordinates
    pad.shape = {1, c.get("res0_w"), 1, 4};
    pad.type = DataType::of(3, true);
    if (c.op().sub == 5) return Parts{{out}, {in, weight, pad}};
    return Parts{{out}, {in, pad}};
  }
  }
}

Result<Parts> arith(const Command &c) {
  if (c.op().sub == 24 || c.op().sub == 25)
    return makeError("operands of ", c.op().mnemonic, " (index generation) are not described yet");
  auto shape = dims(c, "res0");
  std::array<LocalLayout, 3> layouts{};
  const char *layoutFields[3] = {"res0_str", "opd0_str", "opd1_str"};
  for (size_t i = 0; i < 3; ++i) {
    auto l = layoutCode(c, layoutFields[i]);
    if (!l) return l.status();
    layouts[i] = *l;
  }
  bool s0 = c.get("opd0_sign"), s1 = c.get("opd1_sign");
  Desc out{c.get("res0_addr"), shape, strides(c, "res0"), typeOf(c, "res0_prec", s0 || s1), layouts[0]};
  Desc a{c.get("opd0_addr"),         shape,      strides(c, "opd0"),
         typeOf(c, "opd0_prec", s0), layouts[1], bool(c.get("opd0_const"))};
  Desc b{c.get("opd1_addr"),         shape,      strides(c, "opd1"),
         typeOf(c, "opd1_prec", s1), layouts[2], bool(c.get("opd1_const"))};
  Desc third{c.get("opd2_addr"),   {1, shape[1], 1, 1},      {}, typeOf(c, "opd2_prec", c.get("opd2_sign")),
             LocalLayout::Compact, bool(c.get("opd2_const"))};
  if (c.op().sub == 17) third.shape[3] = 2;                                    // clamp: min and max
  if (c.op().sub == 28) a.shape[0] = 1;                                        // copy_mb
  if (c.op().sub == 14) out.type = typeOf(c, "res0_prec", c.get("opd2_sign")); // cast
  // A strided operand whose stride is 0 along a dimension is broadcast along it: its own extent there is 1.
  for (Desc *d : {&a, &b})
    if (d->layout == LocalLayout::Stride)
      for (size_t i = 0; i < 4; ++i)
        if ((*d->stride)[i] == 0) d->shape[i] = 1;
  std::vector<Desc> all{a, b, third};
  all.resize(std::min<size_t>(3, c.get("tsk_opd_num")));
  return Parts{{out}, all};
}

// Requantise (rq0: fp32 scale and zero point; rq1: int32 multiplier, int8 shift, zero point) and dequantise
// (dq0: zero point and fp32 scale; dq1: zero point, multiplier, shift). The parameters are per channel, one
// 4-byte word after another from opd1_addr, or constants packed into opd1_addr / opd2_addr.
Result<Parts> requantOrDequant(const Command &c) {
  auto shape = dims(c, "res0");
  const bool s0 = c.get("opd0_sign"), s2 = c.get("opd2_sign"), isConst = c.get("opd1_const");
  Desc in{c.get("opd0_addr"), shape, {}, typeOf(c, "opd0_prec", s0)};
  Desc out{c.get("res0_addr"), shape, {}, typeOf(c, "res0_prec", s2)};
  // The k-th per-channel parameter word, or the constant `bits`.
  auto param = [&](unsigned k, DataType type, uint64_t bits) {
    Desc d{isConst ? bits : c.get("opd1_addr") + 4 * k, {1, shape[1], 1, 1}, {}, type};
    d.isConst = isConst;
    return d;
  };
  const uint64_t p1 = c.get("opd1_addr"), p2 = c.get("opd2_addr");
  const DataType f32{2, DataType::Sign::Signless}, si32 = DataType::of(4, true);
  switch (c.op().sub) {
  case 0:
    return Parts{{out}, {in, param(0, f32, p1), param(1, f32, p2)}};
  case 1:
    if (isConst)
      return Parts{
          {out}, {in, param(0, si32, p1), param(1, DataType::of(0, true), p2), param(2, DataType::of(3, s2), p2 >> 8)}};
    return Parts{{out}, {in, param(0, si32, 0), param(1, si32, 0), param(2, si32, 0)}};
  case 3:
    return Parts{{out}, {in, param(0, DataType::of(4, s0), p1), param(1, f32, p2)}};
  case 4:
    if (isConst) // zero point, then scale, then shift (packed above the zero point)
      return Parts{
          {out},
          {in, param(0, DataType::of(3, s0), p1), param(0, si32, p2), param(0, DataType::of(3, true), p1 >> 16)}};
    return Parts{{out}, {in, param(0, si32, 0), param(1, si32, 0), param(2, si32, 0)}};
  default:
    return makeError("operands of ", c.op().mnemonic, " are not described yet");
  }
}

Result<Parts> sfu(const Command &c) {
  auto shape = dims(c, "res0");
  Desc in{c.get("opd0_addr"), shape, {}, typeOf(c, "opd0_prec", true)};
  Desc out{c.get("res0_addr"), shape, {}, typeOf(c, "res0_prec", true)};
  int64_t terms = int64_t(c.get("opd1_n"));
  Desc table{c.get("opd1_addr"),
             {1, std::min<uint64_t>(shape[1], map::kLanes), 1, uint64_t(terms)},
             std::array<int64_t, 4>{0, 0, terms, 1},
             in.type,
             LocalLayout::Stride};
  if (c.op().sub == 12 || c.op().sub == 13) return Parts{{out}, {in, table}}; // Taylor series: coefficients
  return Parts{{out}, {in}};
}

// Compare-and-select (TPU-MLIR's sCMP converter), all over res0's shape: opd0 and opd1 of opd0's type, opd2
// and opd3 of opd2_prec (signless). sel_gt/sel_eq/sel_lt have one result, res0 of opd2_prec; gt_and_sel and
// lt_and_sel two, res0 of opd0's type and res1 (res1_addr) of opd2_prec.
Result<Parts> compareSelect(const Command &c) {
  auto shape = dims(c, "res0");
  const DataType cmpType = typeOf(c, "opd0_prec", c.get("opd0_sign")),
                 valueType = signless(unsigned(c.get("opd2_prec")));
  auto compared = [&](const char *addr, const char *layoutField, const char *constField) -> Result<Desc> {
    auto l = layoutCode(c, layoutField);
    if (!l) return l.status();
    Desc d{c.get(addr), shape, {}, cmpType, *l, bool(c.get(constField))};
    if (*l == LocalLayout::Stride) d.stride = std::array<int64_t, 4>{0, 0, 0, 0}; // as TPU-MLIR: sCMP has none
    return d;
  };
  auto a = compared("opd0_addr", "opd0_str", "opd0_const");
  if (!a) return a.status();
  auto b = compared("opd1_addr", "opd1_str", "opd1_const");
  if (!b) return b.status();
  Desc ifTrue{c.get("opd2_addr"), shape, {}, valueType, LocalLayout::AlignEU, bool(c.get("opd2_const"))};
  Desc ifFalse{c.get("opd3_addr"), shape, {}, valueType, LocalLayout::AlignEU, bool(c.get("opd3_const"))};
  Desc res0{c.get("res0_addr"), shape, {}, cmpType};
  Desc res1{c.get("res1_addr"), shape, {}, valueType};
  const int sub = c.op().sub;
  if (sub == 23 || sub == 24 || sub == 26) { // sel_gt, sel_eq, sel_lt: the choice only
    res0.type = valueType;
    return Parts{{res0}, {*a, *b, ifTrue, ifFalse}};
  }
  return Parts{{res0, res1}, {*a, *b, ifTrue, ifFalse}};
}

Result<Parts> transposeOrBroadcast(const Command &c) {
  auto [n, ch, h, w] = dims(c, "res0");
  DataType type = signless(unsigned(c.get("res0_prec")));
  Desc in{c.get("opd0_addr"), {n, ch, h, w}, {}, type};
  Desc out{c.get("res0_addr"), {n, ch, h, w}, {}, type};
  switch (c.op().sub) {
  case 0:
  case 1:
    in.shape = {n, w, h, ch};
    break; // c <-> w transposes
  case 3:
    in.shape[1] = 1;
    break; // lane broadcast
  case 4:
    out.shape = {1, ch, 1, w};
    break; // static broadcast
  case 5:
    out.shape = {1, ch, 1, 1}, out.layout = LocalLayout::Compact;
    break;
  default:
    break;
  }
  if (c.op().sub == 0) // cw_ts reads its input with rows of w padded to the EU vector
    in.layout = LocalLayout::Stride, in.stride = [&] {
      uint64_t perEu = map::kEuBytes / std::max(1u, type.bits() / 8), hs = ceilDiv(ch, perEu) * perEu;
      return std::array<int64_t, 4>{int64_t(ceilDiv(w, map::kLanes) * h * hs), int64_t(h * hs), int64_t(hs), 1};
    }();
  return Parts{{out}, {in}};
}

// Scatter/gather (TPU-MLIR's sSG converter), the per-lane table lookups pe_s_gather_d1coor (sub-type 5) and
// pe_s_gather_hzd (13), which the converter reads alike: opd0 the table, (1, res0_c, opd0_h, opd0_w) of
// opd0_prec, aligned (opd0_str 0; the converter's other layout, T4, is not described); opd1 the index,
// (res0_n, res0_c, 1, opd1_w) of opd1_prec, unsigned, aligned, at opd1_addr (the converter writes opd0_addr
// there, evidently a slip: the index has its own address field); res0 (res0_n, res0_c, res0_h, res0_w) of
// res0_prec, aligned. sSG has no sign fields: the table and the result are signless data of their width.
// The other sub-types are not described yet.
Result<Parts> scatterGather(const Command &c) {
  const int sub = c.op().sub;
  if (sub != 5 && sub != 13) return makeError("operands of ", c.op().mnemonic, " are not described yet");
  if (uint64_t l = c.get("opd0_str")) return makeError("opd0_str = ", l, " is not described (0: the table aligned)");
  const auto shape = dims(c, "res0");
  const DataType tableType = signless(unsigned(c.get("opd0_prec")));
  Desc table{c.get("opd0_addr"), {1, shape[1], c.get("opd0_h"), c.get("opd0_w")}, {}, tableType};
  Desc index{c.get("opd1_addr"), {shape[0], shape[1], 1, c.get("opd1_w")}, {}, typeOf(c, "opd1_prec", false)};
  Desc out{c.get("res0_addr"), shape, {}, signless(unsigned(c.get("res0_prec")))};
  return Parts{{out}, {table, index}};
}

Result<Parts> tensorDma(const Command &c) {
  enum { None = 0, Transpose = 1, Collect = 2, Broadcast = 3, Distribute = 4, Bank4Copy = 5, Bank4Broadcast = 6 };
  uint64_t fn = c.op().sub;
  if (fn == Bank4Copy || fn == Bank4Broadcast)
    return makeError("operands of ", c.op().mnemonic, " (four-bank forms) are not described yet");
  DataType type = signless(unsigned(c.get("src_data_format")));
  Desc src{(c.get("src_start_addr_h8") << 32) | c.get("src_start_addr_l32"), {}, {}, type, LocalLayout::Stride};
  src.shape = {c.get("src_nsize"), c.get("src_csize"), c.get("src_hsize"), c.get("src_wsize")};
  src.stride = std::array<int64_t, 4>{int64_t(c.get("src_nstride")), int64_t(c.get("src_cstride")),
                                      int64_t(c.get("src_hstride")), int64_t(c.get("src_wstride"))};
  Desc dst = src;
  dst.address = (c.get("dst_start_addr_h8") << 32) | c.get("dst_start_addr_l32");
  dst.shape = {c.get("dst_nsize"), c.get("dst_csize"), c.get("dst_hsize"), c.get("dst_wsize")};
  dst.stride = std::array<int64_t, 4>{int64_t(c.get("dst_nstride")), int64_t(c.get("dst_cstride")),
                                      int64_t(c.get("dst_hstride")), int64_t(c.get("dst_wstride"))};
  if (c.get("nchw_copy")) dst.shape = src.shape;
  auto [n, ch, h, w] = src.shape;
  if (fn == Broadcast) src.shape[1] = 1, dst.shape = {dst.shape[0], c.get("dst_csize"), dst.shape[2], dst.shape[3]};
  if (fn == Transpose) dst.shape = {ch, n, h, w};
  if (fn == Collect || fn == Distribute) dst.shape = {n, w, h, ch};
  if (fn != None) (*src.stride)[3] = 1, (*dst.stride)[3] = 1;
  if (c.get("fill_constant_en")) src = Desc{c.get("constant_value"), {}, {}, type, LocalLayout::Stride, true};
  return Parts{{dst}, {src}};
}

// Which command types have operand views, and who reads them.
struct Describer {
  isa::Engine engine;
  unsigned type;
  Result<Parts> (*describe)(const Command &);
};
constexpr Describer kDescribers[] = {
    {isa::Engine::Tiu, 0, conv},
    {isa::Engine::Tiu, 1, poolOrDepthwise},
    {isa::Engine::Tiu, 3, arith},
    {isa::Engine::Tiu, 4, requantOrDequant},
    {isa::Engine::Tiu, 5, transposeOrBroadcast},
    {isa::Engine::Tiu, 6, scatterGather},
    {isa::Engine::Tiu, 9, sfu},
    {isa::Engine::Tiu, 13, compareSelect},
    {isa::Engine::Gdma, 0, tensorDma},
};

} // namespace

Span spanOf(const Operand &v) {
  Span span{v.space, 0, 0};
  const auto &s = v.shape;
  if (v.space == Space::Const || s[0] == 0 || s[1] == 0 || s[2] == 0 || s[3] == 0) return span;
  const uint64_t bytes = std::max(1u, v.type.bits() / 8);
  const bool local = v.space == Space::Lmem;
  const uint64_t lane0 = local ? v.address / map::kLaneBytes : 0,
                 base = local ? v.address % map::kLaneBytes : v.address;
  // Lane rows the channel dim takes in local memory; elsewhere the channel dim itself.
  const uint64_t cLast = local ? (lane0 + s[1] - 1) / map::kLanes : s[1] - 1;
  if (!v.stride) {
    if (!local) { // compact
      span.first = base, span.end = base + s[0] * s[1] * s[2] * s[3] * bytes;
      return span;
    }
    // Conv weights (oc, ic, kh, kw): a lane row per output channel row, the input channels grouped.
    const uint64_t group = v.layout == LocalLayout::Ic32 ? 32 : v.layout == LocalLayout::Ic64 ? 64 : 1;
    const uint64_t row = (s[1] + group - 1) / group * group * s[2] * s[3];
    span.first = base, span.end = base + (cLast + 1) * row * bytes;
    return span;
  }
  const std::array<uint64_t, 4> last{s[0] - 1, cLast, s[2] - 1, s[3] - 1};
  int64_t lo = 0, hi = 0;
  for (size_t d = 0; d < 4; ++d) {
    const int64_t step = int64_t(last[d]) * (*v.stride)[d];
    (step < 0 ? lo : hi) += step;
  }
  span.first = uint64_t(int64_t(base) + lo * int64_t(bytes));
  span.end = uint64_t(int64_t(base) + hi * int64_t(bytes)) + bytes;
  return span;
}

Result<Operands> operandsOf(const Command &c) {
  const Describer *describer = nullptr;
  for (const Describer &d : kDescribers)
    if (d.engine == c.op().engine && d.type == c.op().type) describer = &d;
  if (!describer) return makeError("operands of ", c.op().mnemonic, " are not described yet");
  Result<Parts> parts = describer->describe(c);
  if (!parts) return parts.status();
  Operands out;
  for (auto [from, to] : {std::pair{&parts->results, &out.results}, std::pair{&parts->operands, &out.operands}})
    for (const Desc &d : *from) {
      auto o = place(d);
      if (!o) return makeError(c.op().mnemonic, ": ", o.message());
      to->push_back(*o);
    }
  return out;
}

} // namespace tpu::memory::bm1684x
