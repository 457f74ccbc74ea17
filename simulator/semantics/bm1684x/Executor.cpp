#include "simulator/semantics/bm1684x/Executor.h"

#include "arith/IntArith.h"
#include "isa/bm1684x/MemoryMap.h"
#include "support/Float16.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <type_traits>
#include <utility>

namespace tpu::sim::bm1684x {

using isa::bm1684x::Command;
using memory::bm1684x::Operand;
using memory::bm1684x::Space;
namespace map = isa::bm1684x;

namespace {

isa::HwConfig memoryConfig() {
  isa::HwConfig cfg;
  cfg.npuLanes = map::kLanes;
  cfg.lmemBytesPerLane = uint32_t(map::kLaneBytes);
  cfg.lmemBanks = uint32_t(map::kBanksPerLane);
  cfg.globalMemBase = map::kGlobalStart;
  cfg.globalMemBytes = map::kGlobalEnd - map::kGlobalStart;
  return cfg;
}

using Index = std::array<uint64_t, 4>;

Result<uint64_t> elementBytes(const Operand &v) {
  unsigned bits = v.type.bits();
  if (bits < 8) return makeError(v.type.name(), " elements are not modelled");
  return uint64_t(bits / 8);
}

// Where element `at` of a view lies: for local memory its lane and the byte in it, elsewhere the byte
// offset from the memory's start. Channels of a local view continue lane by lane from the view's own lane.
struct Place {
  uint32_t lane = 0;
  uint64_t byte = 0;
};
Result<Place> placeOf(const Operand &v, const Index &at, uint64_t bytes) {
  using memory::bm1684x::LocalLayout;
  const uint64_t group = v.layout == LocalLayout::Ic1    ? 1
                         : v.layout == LocalLayout::Ic32 ? 32
                         : v.layout == LocalLayout::Ic64 ? 64
                                                         : 0;
  if (group && v.space == Space::Lmem) {
    // Conv weights (oc, ic, kh, kw): output channel oc in lane (the view's lane + oc) % 64, row (the view's
    // lane + oc) / 64 of it; the row holds the input channels in groups of `group`, the group's channels
    // adjacent for each (kh, kw), ceil(ic / group) * group * kh * kw elements: Ic1 (32-bit) ic*kh*kw packed,
    // Ic32 (16-bit) groups of 32, Ic64 (8-bit) groups of 64 (TPU-MLIR's weight reorder for the BM1684X,
    // IC_PARALLEL = 64 bytes / the element's; its debugger's alignIC view with CUBE_NUM 64 / bytes).
    uint64_t lane0 = v.address / map::kLaneBytes, channel = lane0 + at[0];
    auto [oc, ic, kh, kw] = v.shape;
    (void)oc;
    const uint64_t groups = (ic + group - 1) / group;
    const uint64_t elements = channel / map::kLanes * groups * group * kh * kw + at[1] / group * group * kh * kw +
                              (at[2] * kw + at[3]) * group + at[1] % group;
    return Place{uint32_t(channel % map::kLanes), v.address % map::kLaneBytes + elements * bytes};
  }
  if (!v.stride) return makeError(v.name(), ": a weight layout (no strides) is not modelled");
  const auto &s = *v.stride;
  if (v.space == Space::Lmem) {
    uint64_t lane0 = v.address / map::kLaneBytes, channel = lane0 + at[1];
    int64_t elements =
        int64_t(at[0]) * s[0] + int64_t(channel / map::kLanes) * s[1] + int64_t(at[2]) * s[2] + int64_t(at[3]) * s[3];
    return Place{uint32_t(channel % map::kLanes), v.address % map::kLaneBytes + uint64_t(elements) * bytes};
  }
  int64_t elements = int64_t(at[0]) * s[0] + int64_t(at[1]) * s[1] + int64_t(at[2]) * s[2] + int64_t(at[3]) * s[3];
  return Place{0, v.address + uint64_t(elements) * bytes};
}

} // namespace

Memories::Memories()
    : local_(memoryConfig()), global_(memoryConfig()), static_(map::kStaticEnd - map::kStaticStart, 0) {}

// Local and static memory are flat host arrays: the element's bytes there, after the range check.
Result<uint8_t *> Memories::hostBytes(const Operand &v, uint32_t lane, uint64_t byte, uint64_t bytes) {
  if (v.space == Space::Lmem) {
    if (!local_.inLane(byte, bytes)) return local_.checkLaneRange(byte, bytes, v.name().c_str());
    return local_.lane(lane) + byte;
  }
  if (v.space != Space::Static) return makeError(v.name(), ": L2 SRAM is not modelled");
  if (byte > static_.size() || bytes > static_.size() - byte)
    return makeError(v.name(), ": static memory access [", byte, ", +", bytes, ") is outside its ", static_.size(),
                     " bytes");
  return static_.data() + byte;
}

Status Memories::read(const Operand &v, const Index &at, void *value) const {
  auto bytes = elementBytes(v);
  if (!bytes) return bytes.status();
  if (v.space == Space::Const) {
    uint32_t bits = uint32_t(v.address);
    std::memcpy(value, &bits, *bytes);
    return Status::ok();
  }
  auto p = placeOf(v, at, *bytes);
  if (!p) return p.status();
  if (v.space == Space::Global) return global_.read(map::kGlobalStart + p->byte, value, *bytes);
  auto src = const_cast<Memories *>(this)->hostBytes(v, p->lane, p->byte, *bytes); // only read here
  if (!src) return src.status();
  std::memcpy(value, *src, *bytes);
  return Status::ok();
}

Status Memories::write(const Operand &v, const Index &at, const void *value, uint64_t laneMask) {
  if (v.space == Space::Const) return makeError(v.name(), ": a constant is not writable");
  auto bytes = elementBytes(v);
  if (!bytes) return bytes.status();
  auto p = placeOf(v, at, *bytes);
  if (!p) return p.status();
  if (v.space == Space::Global) return global_.write(map::kGlobalStart + p->byte, value, *bytes);
  auto dst = hostBytes(v, p->lane, p->byte, *bytes);
  if (!dst) return dst.status();
  if (v.space != Space::Lmem || ((laneMask >> p->lane) & 1)) std::memcpy(*dst, value, *bytes);
  return Status::ok();
}

namespace {

using memory::bm1684x::Operands;

// Calls fn(index) for every index of `shape`, stopping at the first error.
template <typename Fn> Status forEach(const Index &shape, Fn &&fn) {
  for (uint64_t n = 0; n < shape[0]; ++n)
    for (uint64_t c = 0; c < shape[1]; ++c)
      for (uint64_t h = 0; h < shape[2]; ++h)
        for (uint64_t w = 0; w < shape[3]; ++w) TPU_RETURN_IF_ERROR(fn(Index{n, c, h, w}));
  return Status::ok();
}

// Fields whose effect is not modelled: an error when set.
Status unmodelled(const Command &c, std::initializer_list<const char *> fields) {
  for (const char *f : fields)
    if (uint64_t v = c.get(f)) return makeError(f, " = ", v, " is not modelled");
  return Status::ok();
}

Status tensorDma(Memories &m, const Command &c, const Operands &ops) {
  enum { None = 0, Transpose = 1, Collect = 2, Broadcast = 3, Distribute = 4 };
  const Operand &dst = ops.results[0], &src = ops.operands[0];
  const bool fill = c.get("fill_constant_en");
  if (!fill && !c.get("stride_enable")) return makeError("dma.tensor without stride_enable is not modelled");
  if (c.get("decompress_enable")) return makeError("decompression is not modelled");
  const uint64_t fn = c.op().sub;
  if (fn == None && !fill && src.shape != dst.shape)
    return makeError("source and destination shapes differ (", src.typeText(), ", ", dst.typeText(), ")");
  const uint64_t mask = (c.get("localmem_mask_h32") << 32) | c.get("localmem_mask_l32");
  uint8_t value[8];
  return forEach(dst.shape, [&](const Index &at) -> Status {
    Index from = at;
    if (fn == Broadcast) from[1] = 0;
    if (fn == Transpose) from = {at[1], at[0], at[2], at[3]};
    if (fn == Collect || fn == Distribute) from = {at[0], at[3], at[2], at[1]};
    TPU_RETURN_IF_ERROR(m.read(src, from, value));
    return m.write(dst, at, value, mask);
  });
}

// The executor's numerics. The element types computed on: the floats fp32, fp16 (IEEE binary16, precision
// code 1) and bf16 (code 5), and the integers of 8, 16 and 32 bits (codes 0, 3, 4), signed or unsigned as
// the view's DataType says (a signless integer, whose bits are only copied, counts as signed); the
// elementwise families (arith, cmp) take all of them, sfu and depthwise the floats, conv and pooling the
// floats and the 8-bit integers (max pooling also int16), requantisation the integers.
//
// The rule for fp16 and bf16, which every command here follows: each fp16/bf16 element an operand supplies
// is widened exactly to fp32 (support/Float16.h: f16ToFloat, bf16ToFloat); the command then computes exactly
// as it computes on fp32 (the same operations in the same order, each rounded to fp32; a conv's products and
// sums in fp32); each result element is rounded once to the result's type (floatToF16, floatToBf16: to
// nearest, ties to even, overflow to infinity, fp16 subnormals kept, a NaN stays a quiet NaN). On fp32 the
// widening and the rounding are the identity, so the fp32 results are what they were before fp16 existed.
// An element a command selects rather than computes (copy, max, min, compare-select) is written bit for bit
// when its type is the result's, else converted by the same rule. Operand and result precision fields are
// independent where the command has them (arith: opd0_prec, opd1_prec, res0_prec; fp16 inputs may give an
// fp32 result). A constant operand (opd*_const = 1) holds its value in its operand's precision in the low
// bits of the address field (8-bit integers: the low 8 bits; fp16/bf16 and int16: the low 16 bits, as
// TPU-MLIR's scalar_t union holds them; fp32 and int32: 32 bits), which Memories::read returns as the
// element. A modelling choice, the BM1684X's float datapath not being public (its fp16/bf16 results may
// differ in the last bit where it keeps more or less than fp32 between steps).
//
// The rule for integers, which every command here follows: an element's value is exact (int64: its bits
// sign-extended or zero-extended from its width as its type says); sums and products are exact in int64
// (a conv's, a pooling's, requantisation's x * multiplier; satAdd/satMul where a fuzzed field could reach
// its limits); a result is written once, at the result type's width: wrapped by add, sub and mul
// (arithmetic modulo 2^width), saturated to the type's range everywhere else (adds, subs, shifts, casts,
// conv, pooling, requantisation). Where a value is divided by a power of two it is rounded by the command's
// round mode (roundsUp: the seven modes of TPU-MLIR's rounding_mode_t), as the float -> integer cast rounds;
// arith.ashift rounds half up (sim::roundingRightShift, mode 5). A modelling choice mirroring TPU-MLIR's
// reference (lib/Support/MathUtils.cpp applyMultiplierAndRShift: the product in int64, then a right shift
// rounded by the round mode, then saturation) and this project's BM1684 model, the BM1684X's integer
// datapath not being public.
enum class Num : uint8_t { F32, F16, BF16, S8, U8, S16, U16, S32, U32 };

// Each type's precision code, sign and width, in Num's order.
struct NumType {
  Num num;
  unsigned prec;
  bool isSigned;
  unsigned bits;
  const char *name;
};
constexpr NumType kNums[] = {
    {Num::F32, 2, true, 32, "fp32"},    {Num::F16, 1, true, 16, "fp16"},  {Num::BF16, 5, true, 16, "bf16"},
    {Num::S8, 0, true, 8, "int8"},      {Num::U8, 0, false, 8, "uint8"},  {Num::S16, 3, true, 16, "int16"},
    {Num::U16, 3, false, 16, "uint16"}, {Num::S32, 4, true, 32, "int32"}, {Num::U32, 4, false, 32, "uint32"},
};
const NumType &numType(Num n) { return kNums[size_t(n)]; }

bool isFloat(Num n) { return n == Num::F32 || n == Num::F16 || n == Num::BF16; }
const char *numName(Num n) { return numType(n).name; }

Result<Num> numOf(const char *role, const Operand &v) {
  const bool isSigned = v.type.sign != memory::bm1684x::DataType::Sign::Unsigned;
  for (const NumType &t : kNums)
    if (t.prec == v.type.prec && (isFloat(t.num) || t.isSigned == isSigned)) return t.num;
  return makeError(role, " ", v.name(), " is ", v.type.name(),
                   ": fp32, fp16, bf16 or an 8-, 16- or 32-bit integer only so far");
}

// The type of a view that must hold floats (sfu, depthwise), or integers (requantisation).
Result<Num> floatNumOf(const char *role, const Operand &v) {
  if (v.type.isFloat()) return numOf(role, v);
  return makeError(role, " ", v.name(), " is ", v.type.name(), ": fp32, fp16 or bf16 only so far");
}
Result<Num> intNumOf(const char *role, const Operand &v) {
  if (v.type.prec == 0 || v.type.prec == 3 || v.type.prec == 4) return numOf(role, v);
  return makeError(role, " ", v.name(), " is ", v.type.name(), ": an 8-, 16- or 32-bit integer only so far");
}
Status floatsOnly(std::initializer_list<std::pair<const char *, const Operand *>> views) {
  for (auto [role, v] : views) TPU_RETURN_IF_ERROR(floatNumOf(role, *v).status());
  return Status::ok();
}

// A float element's value, widened exactly (its bits in the low 16 bits for fp16 and bf16).
float widen(uint64_t bits, Num n) {
  return n == Num::F16    ? f16ToFloat(uint16_t(bits))
         : n == Num::BF16 ? bf16ToFloat(uint16_t(bits))
                          : sim::bitsFloat(uint32_t(bits));
}
// A computed value as an element of float type n: rounded once (fp32: its bits).
uint32_t rounded(float v, Num n) {
  return n == Num::F16 ? floatToF16(v) : n == Num::BF16 ? floatToBf16(v) : sim::floatBits(v);
}
// A selected element of type `from` written as type `to`: its bits when the types are one, else converted by
// the rule (only float types differ here: the callers refuse an integer with another type).
uint32_t selected(uint32_t bits, Num from, Num to) { return from == to ? bits : rounded(widen(bits, from), to); }

// An integer as an fp32 from which floatToF16 / floatToBf16 round as they would round the integer itself,
// so that an int32 -> fp16/bf16 cast rounds once from the exact integer. Up to 24 significant bits the
// integer is exact in fp32. Beyond, it is cut to 24 significant bits with the cut-off bits folded into the
// last kept one ("round to odd": that bit set when any cut-off bit is); a value so cut lies strictly
// between the same two numbers of 22 or fewer significant bits as the integer, and on a tie of them only
// when the integer is, so rounding it to nearest-even at 11 (fp16) or 8 (bf16) bits gives the integer's
// rounding (Boldo and Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms using
// rounding to odd", 2008: two spare bits suffice). fp16's overflow bound 65520 is below 2^24, where both
// are exact. (int -> fp32 -> bf16 would round twice: 2^24 + 2^16 + 1 goes to 2^24 + 2^16, a tie, then to
// 2^24, where the integer rounds to 2^24 + 2^17.)
float forNarrowing(int64_t v) {
  uint64_t mag = v < 0 ? uint64_t(0) - uint64_t(v) : uint64_t(v);
  unsigned bits = 0;
  while (bits < 64 && (mag >> bits)) ++bits;
  if (bits > 24) {
    const unsigned cut = bits - 24;
    const uint64_t kept = (mag >> cut) | ((mag & ((uint64_t(1) << cut) - 1)) != 0);
    mag = kept << cut;
  }
  const float f = float(mag); // exact: at most 24 significant bits
  return v < 0 ? -f : f;
}

// An integer element's value: its type's width of bits (readWord zero-extends them into a word), sign- or
// zero-extended as the type says; the type's range; and a value saturated to it, as a word whose low bytes
// the write keeps.
int64_t valueOf(uint32_t bits, Num n) {
  const NumType &t = numType(n);
  return t.isSigned ? sim::signExtend(bits, t.bits) : int64_t(bits & ((uint64_t(1) << t.bits) - 1));
}
sim::IntRange rangeOf(Num n) {
  const NumType &t = numType(n);
  const int64_t span = int64_t(1) << t.bits;
  return t.isSigned ? sim::IntRange{-span / 2, span / 2 - 1} : sim::IntRange{0, span - 1};
}
uint32_t saturated(int64_t v, Num n) { return uint32_t(sim::saturate(v, rangeOf(n))); }

// Element `at` of a view of 32-, 16- or 8-bit elements, as its bits zero-extended into a word (a 16-bit
// element's in the low half, an 8-bit one's in the low byte); a view of extent 1 along a dimension is
// broadcast along it.
Result<uint32_t> readWord(const Memories &m, const Operand &v, const Index &at) {
  Index i = at;
  // Lanes work in parallel, each on its own memory: a local view broadcast along c (c stride 0) gives each
  // lane the word at the same offset of its own memory, so the channel still picks the lane.
  for (size_t d = 0; d < 4; ++d)
    if (v.shape[d] == 1 && !(d == 1 && v.space == Space::Lmem && v.stride)) i[d] = 0;
  uint32_t bits = 0;
  TPU_RETURN_IF_ERROR(m.read(v, i, &bits));
  return bits;
}

// The elementwise loop of arith, cmp, sfu and quant: for every index of out's shape, the inputs' words there
// (as readWord reads them) and fn(words, index) written to out (the word's low bytes, as many as out's type
// is wide).
using Words = std::array<uint32_t, 4>;
template <typename Fn>
Status elementwise(Memories &m, const Operand &out, std::initializer_list<const Operand *> inputs, Fn &&fn) {
  Words words{};
  return forEach(out.shape, [&](const Index &at) -> Status {
    size_t k = 0;
    for (const Operand *v : inputs) {
      TPU_ASSIGN_OR_RETURN(words[k++], readWord(m, *v, at));
    }
    const uint32_t r = fn(words, at);
    return m.write(out, at, &r);
  });
}

// The round modes of TPU-MLIR's rounding_mode_t for the BM1684X (tpu_defs.h), one rule for every rounding
// to an integer here (casts from floats, divisions by powers of two): whether the value floor + f, 0 <= f <
// 1, rounds to floor + 1, f given by its comparison with one half (`half`: -1 below, 0 equal, 1 above) and
// whether it is 0. 0 half to even, 1 half away from zero, 2 towards zero, 3 down, 4 up, 5 half up, 6 half
// down.
constexpr unsigned kRoundModes = 7;
bool roundsUp(int64_t floor, int half, bool exact, unsigned mode) {
  switch (mode) {
  case 0:
    return half > 0 || (half == 0 && (floor & 1));
  case 1:
    return half > 0 || (half == 0 && floor >= 0);
  case 2:
    return !exact && floor < 0;
  case 4:
    return !exact;
  case 5:
    return half >= 0;
  case 6:
    return half > 0;
  default: // 3: down
    return false;
  }
}

// fp32 -> integer under round mode `mode`, then saturated to r; NaN -> 0.
int64_t roundToInt(float x, unsigned mode, sim::IntRange r) {
  if (std::isnan(x)) return 0;
  const double d = x, down = std::floor(d), frac = d - down; // exact: a float's fraction fits a double
  // A floor beyond r saturates whatever the rounding: held just outside r, it fits an int64.
  const int64_t floor = int64_t(std::clamp(down, double(r.lo) - 1, double(r.hi)));
  const int half = frac < 0.5 ? -1 : frac == 0.5 ? 0 : 1; // an infinity's frac is NaN: above, and saturated
  return sim::saturate(floor + roundsUp(floor, half, frac == 0, mode), r);
}

// v * 2^shift: shifted left (saturating at the int64 limits) for shift >= 0; for shift < 0, v / 2^-shift
// rounded by round mode `mode` from the exact quotient (TPU-MLIR's applyMultiplierAndRShift's shift, at any
// round mode). Mode 5 is sim::roundingRightShift.
int64_t shifted(int64_t v, int64_t shift, unsigned mode) {
  if (shift >= 0) return sim::satShl(v, unsigned(std::min<int64_t>(shift, 64)));
  // Past 2^100 every |v| < 2^63 lies as far between two integers as at 2^100: the quotient's floor and its
  // fraction's comparison with one half no longer change.
  const unsigned n = unsigned(std::min<int64_t>(-shift, 100));
  // The remainder is v's low n bits (two's complement: v - floor * 2^n, without shifting a negative floor).
  const __int128 wide = v, floor = wide >> n, rest = wide & ((__int128(1) << n) - 1), half = __int128(1) << (n - 1);
  return int64_t(floor) + roundsUp(int64_t(floor), rest < half ? -1 : rest == half ? 0 : 1, rest == 0, mode);
}

// Elementwise arithmetic (arith.*) on floats (fp32, fp16, bf16, in any mix of operand and result types) or
// integers (int8, int16, int32, signed or unsigned: every operand and the result of one type); cast between
// any two distinct types. A modelling choice mirroring this project's BM1684 model (arith/IntArith.h, the
// compiler's runKernel), the BM1684X's exact results not being public: floats by the rule above (fp32 as
// IEEE single); integers by theirs, at the type's width: add/sub/mul wrapping, adds/subs saturating,
// and/or/xor bitwise, max/min/copy selecting; the shifts by opd1's value read as a signed integer of the
// type's width (a uint8 0xff shifts right by 1), ashift saturating left (sim::satShl) and rounding half up
// right (sim::roundingRightShift), logicShift shifting zeros in (by the width or more: 0). cast: integer to
// integer saturating; float to integer rounding as opd2_n_str says (roundToInt), then saturating (NaN 0);
// to a float to nearest even (from an integer: once, from the exact value).
struct ArithTypes {
  Num a, b, out;      // opd0's, opd1's (opd0's for the unary ones) and the result's
  unsigned roundMode; // cast from a float to an integer
};
using ArithFn = uint32_t (*)(uint32_t a, uint32_t b, const ArithTypes &t);

float lhs(uint32_t a, const ArithTypes &t) { return widen(a, t.a); }
float rhs(uint32_t b, const ArithTypes &t) { return widen(b, t.b); }
uint32_t multiply(uint32_t a, uint32_t b, const ArithTypes &t) {
  return isFloat(t.a) ? rounded(lhs(a, t) * rhs(b, t), t.out) : a * b;
}
uint32_t addWrapping(uint32_t a, uint32_t b, const ArithTypes &t) {
  return isFloat(t.a) ? rounded(lhs(a, t) + rhs(b, t), t.out) : a + b;
}
uint32_t subtractWrapping(uint32_t a, uint32_t b, const ArithTypes &t) {
  return isFloat(t.a) ? rounded(lhs(a, t) - rhs(b, t), t.out) : a - b;
}
// a > b, a of type na and b of nb (both floats, or one int32 type): floats compared widened (a NaN compares
// false, -0 equals +0).
bool above(uint32_t a, Num na, uint32_t b, Num nb) {
  return isFloat(na) ? widen(a, na) > widen(b, nb) : valueOf(a, na) > valueOf(b, nb);
}
bool greater(uint32_t a, uint32_t b, Num n) { return above(a, n, b, n); }
uint32_t maximum(uint32_t a, uint32_t b, const ArithTypes &t) {
  return above(a, t.a, b, t.b) ? selected(a, t.a, t.out) : selected(b, t.b, t.out);
}
uint32_t minimum(uint32_t a, uint32_t b, const ArithTypes &t) {
  return above(b, t.b, a, t.a) ? selected(a, t.a, t.out) : selected(b, t.b, t.out);
}
// The shift amount is opd1's value as a signed integer of its type's width: left when >= 0, else right.
int64_t shiftAmount(uint32_t b, const ArithTypes &t) { return sim::signExtend(b, numType(t.b).bits); }
uint32_t logicShift(uint32_t a, uint32_t b, const ArithTypes &t) {
  const int64_t s = shiftAmount(b, t), width = numType(t.a).bits;
  return s >= width || s <= -width ? 0 : s >= 0 ? a << s : a >> -s; // a zero-extended: zeros come in
}
uint32_t arithmeticShift(uint32_t a, uint32_t b, const ArithTypes &t) {
  const int64_t s = shiftAmount(b, t), v = valueOf(a, t.a);
  return saturated(s >= 0 ? sim::satShl(v, unsigned(s)) : sim::roundingRightShift(v, unsigned(-s)), t.a);
}
uint32_t bitAnd(uint32_t a, uint32_t b, const ArithTypes &) { return a & b; }
uint32_t bitOr(uint32_t a, uint32_t b, const ArithTypes &) { return a | b; }
uint32_t bitXor(uint32_t a, uint32_t b, const ArithTypes &) { return a ^ b; }
// The chip divides by iterating on a reciprocal (TPU-MLIR's kernel API gives div a num_iter, opd2_n_str + 1
// here): IEEE division, whatever the count, so the last bits may differ from the chip's.
uint32_t divide(uint32_t a, uint32_t b, const ArithTypes &t) { return rounded(lhs(a, t) / rhs(b, t), t.out); }
uint32_t convert(uint32_t a, uint32_t, const ArithTypes &t) {
  if (!isFloat(t.a) && !isFloat(t.out)) return saturated(valueOf(a, t.a), t.out);
  if (isFloat(t.a))
    return isFloat(t.out) ? rounded(lhs(a, t), t.out) : uint32_t(roundToInt(lhs(a, t), t.roundMode, rangeOf(t.out)));
  if (t.out == Num::F32) return rounded(static_cast<float>(valueOf(a, t.a)), t.out); // nearest even, once
  return rounded(forNarrowing(valueOf(a, t.a)), t.out);
}
uint32_t addSaturating(uint32_t a, uint32_t b, const ArithTypes &t) {
  return saturated(valueOf(a, t.a) + valueOf(b, t.a), t.a);
}
uint32_t subtractSaturating(uint32_t a, uint32_t b, const ArithTypes &t) {
  return saturated(valueOf(a, t.a) - valueOf(b, t.a), t.a);
}
uint32_t copy(uint32_t a, uint32_t, const ArithTypes &t) { return selected(a, t.a, t.out); }

enum : uint8_t { kOnFloat = 1, kOnInt = 2 };
struct ArithOp {
  int sub;
  unsigned inputs; // operands read: opd0, or opd0 and opd1
  uint8_t on;      // the input types it is modelled on
  ArithFn fn;
};
constexpr ArithOp kArithOps[] = {
    {0, 2, kOnFloat | kOnInt, multiply},         // mul
    {2, 2, kOnFloat | kOnInt, addWrapping},      // add
    {3, 2, kOnFloat | kOnInt, subtractWrapping}, // sub
    {4, 2, kOnFloat | kOnInt, maximum},          // max
    {5, 2, kOnFloat | kOnInt, minimum},          // min
    {6, 2, kOnInt, logicShift},                  // logicShift
    {7, 2, kOnInt, bitAnd},                      // and
    {8, 2, kOnInt, bitOr},                       // or
    {9, 2, kOnInt, bitXor},                      // xor
    {12, 2, kOnFloat, divide},                   // div
    {14, 1, kOnFloat | kOnInt, convert},         // cast
    {15, 2, kOnInt, addSaturating},              // adds
    {16, 2, kOnInt, subtractSaturating},         // subs
    {19, 1, kOnFloat | kOnInt, copy},            // copy
    {21, 2, kOnInt, arithmeticShift},            // ashift
};
constexpr uint64_t arithSubTypes() {
  uint64_t bits = 0;
  for (const ArithOp &op : kArithOps) bits |= 1ull << op.sub;
  return bits;
}

Status arith(Memories &m, const Command &c, const Operands &ops) {
  enum { Div = 12, Cast = 14, Adds = 15, Subs = 16 };
  const int sub = c.op().sub;
  const ArithOp *op = nullptr;
  for (const ArithOp &o : kArithOps)
    if (o.sub == sub) op = &o;
  if (!op) return makeError("not executed yet"); // kFamilies lists only kArithOps' sub-types
  if (ops.operands.size() < op->inputs)
    return makeError("tsk_opd_num = ", c.get("tsk_opd_num"), " gives too few operands");
  TPU_RETURN_IF_ERROR(unmodelled(c, {"res_add", "relu"}));
  const Operand &out = ops.results[0], &a = ops.operands[0], &b = ops.operands[op->inputs - 1];
  ArithTypes t{};
  TPU_ASSIGN_OR_RETURN(t.out, numOf("result", out));
  TPU_ASSIGN_OR_RETURN(t.a, numOf("operand", a));
  TPU_ASSIGN_OR_RETURN(t.b, numOf("operand", b));
  if (sub != Cast)
    for (const Operand *v : {&a, &b})
      if (!(v->type == out.type) && !(v->type.isFloat() && out.type.isFloat()))
        return makeError("operand ", v->name(), " is ", v->type.name(), ", the result ", out.type.name(),
                         ": operands and result of one type only, or all floats");
  if (!(op->on & (isFloat(t.a) ? kOnFloat : kOnInt)))
    return makeError(a.type.name(), " operands are not modelled (",
                     op->on == kOnFloat ? "fp32, fp16 or bf16" : "integers", " only)");
  // opd2_n_str: cast's round mode, div's iteration count - 1; set on any other, an error.
  const uint64_t mode = c.get("opd2_n_str");
  if (sub == Cast) {
    if (t.a == t.out) return makeError("a cast from ", a.type.name(), " to ", out.type.name(), " is not modelled");
    const bool toInt = !isFloat(t.out); // from an integer the mode is moot: nothing rounds
    if (toInt ? mode >= kRoundModes : mode != 0)
      return makeError("round mode ", mode, " is not modelled",
                       toInt ? "" : std::string(" to ") + numName(t.out) + " (0 only)");
    t.roundMode = unsigned(mode);
  } else if (mode && sub != Div) {
    return makeError("round mode ", mode, " is not modelled");
  }
  if (ops.operands.size() > 2) { // adds/subs: a right shift of the result, modelled when the constant 0
    const Operand &shift = ops.operands[2];
    if (sub != Adds && sub != Subs) return makeError("a third operand (tsk_opd_num = 3) is not modelled");
    if (shift.space != Space::Const || shift.constValue() != 0)
      return makeError("a right shift by ", shift.name(), " is not modelled (the constant 0 only)");
  }
  const ArithFn fn = op->fn;
  return elementwise(m, out, {&a, &b}, [&](const Words &w, const Index &) { return fn(w[0], w[1], t); });
}

// Compare and select (cmp.sel_gt, sel_eq, sel_lt): res0 = opd0 OP opd1 ? opd2 : opd3, opd0 and opd1 compared
// in their type (floats widened to fp32: a NaN compares false, -0 equals +0; int32 signed or unsigned), the
// chosen element written as `selected` writes it (its bits: the views give opd2, opd3 and res0 one type). A
// modelling choice mirroring the BM1684 model's selects (the compiler's runKernel), the BM1684X's exact
// results not being public. gt_and_sel and lt_and_sel are not executed yet.
bool equal(uint32_t a, uint32_t b, Num n) { return isFloat(n) ? widen(a, n) == widen(b, n) : a == b; }
bool less(uint32_t a, uint32_t b, Num n) { return greater(b, a, n); }
struct Comparison {
  int sub;
  bool (*holds)(uint32_t a, uint32_t b, Num n);
};
constexpr Comparison kComparisons[] = {{23, greater}, {24, equal}, {26, less}};

Status compareSelect(Memories &m, const Command &c, const Operands &ops) {
  const Comparison *cmp = nullptr;
  for (const Comparison &k : kComparisons)
    if (k.sub == c.op().sub) cmp = &k;
  if (!cmp || ops.results.size() != 1) return makeError("not executed yet");
  TPU_RETURN_IF_ERROR(unmodelled(c, {"res_add", "relu"}));
  const Operand &out = ops.results[0], &a = ops.operands[0], &b = ops.operands[1];
  const Operand &ifTrue = ops.operands[2], &ifFalse = ops.operands[3];
  TPU_ASSIGN_OR_RETURN(const Num n, numOf("operand", a));
  for (auto [role, v] : {std::pair{"operand", &b}, {"result", &out}, {"operand", &ifTrue}, {"operand", &ifFalse}})
    TPU_RETURN_IF_ERROR(numOf(role, *v).status());
  const Num outNum = *numOf("result", out), trueNum = *numOf("operand", ifTrue), falseNum = *numOf("operand", ifFalse);
  for (const Operand *v : {&ifTrue, &ifFalse})
    if (!(v->type == out.type) && !(v->type.isFloat() && out.type.isFloat()))
      return makeError("operand ", v->name(), " is ", v->type.name(), ", the result ", out.type.name(),
                       ": selected values of the result's type only, or all floats");
  return elementwise(m, out, {&a, &b, &ifTrue, &ifFalse}, [&](const Words &w, const Index &) {
    return cmp->holds(w[0], w[1], n) ? selected(w[2], trueNum, outNum) : selected(w[3], falseNum, outNum);
  });
}

// SFU on floats (fp32, fp16, bf16; the input and the result each of its own). taylor and taylor_4x: a
// polynomial in x whose opd1_n coefficients (of the input's type, as the table's view says), lowest power
// first, each lane holds from opd1_addr's offset for its own channels; evaluated in fp32 by Horner from the
// highest term, rounding the product and the sum (two roundings per term), the result rounded once to its
// type. rsqrt: 1 / sqrt(x) in fp32 (a rounded sqrt, a rounded divide), whatever the iteration count in
// opd2_n_str (TPU-MLIR's rsqrt_n - 1), then rounded to the result's type; the chip's SFU result may differ
// in the last bits. A modelling choice mirroring the compiler's runKernel, the BM1684X's exact results not
// being public.
Status sfu(Memories &m, const Command &c, const Operands &ops) {
  enum { Rsqrt = 17 };
  const Operand &out = ops.results[0], &in = ops.operands[0];
  TPU_ASSIGN_OR_RETURN(const Num outNum, floatNumOf("result", out));
  TPU_ASSIGN_OR_RETURN(const Num inNum, floatNumOf("input", in));
  if (c.op().sub == Rsqrt)
    return elementwise(m, out, {&in}, [&](const Words &w, const Index &) {
      const float root = std::sqrt(widen(w[0], inNum));
      return rounded(1.0f / root, outNum);
    });
  TPU_RETURN_IF_ERROR(unmodelled(c, {"opd2_n_str"}));
  const Operand &table = ops.operands[1];
  TPU_ASSIGN_OR_RETURN(const Num tableNum, floatNumOf("coefficient table", table));
  if (in.space != Space::Lmem || table.space != Space::Lmem)
    return makeError("an input or coefficient table outside local memory is not modelled");
  // The tables of the lanes the input's channels are in, each read once: lane L's is the table view's
  // channel (L - the table's lane).
  const uint64_t terms = c.get("opd1_n"), inLane = in.address / map::kLaneBytes;
  const uint64_t tableLane = table.address / map::kLaneBytes;
  std::vector<float> coef(map::kLanes * terms);
  for (uint64_t ch = 0; ch < std::min<uint64_t>(in.shape[1], map::kLanes); ++ch) {
    const uint64_t lane = (inLane + ch) % map::kLanes;
    for (uint64_t k = 0; k < terms; ++k) {
      uint32_t word = 0;
      TPU_RETURN_IF_ERROR(m.read(table, {0, (lane + map::kLanes - tableLane) % map::kLanes, 0, k}, &word));
      coef[lane * terms + k] = widen(word, tableNum);
    }
  }
  return elementwise(m, out, {&in}, [&](const Words &w, const Index &at) {
    const float x = widen(w[0], inNum), *k = &coef[(inLane + at[1]) % map::kLanes * terms];
    float v = 0;
    for (uint64_t t = terms; t-- > 0;) {
      const float product = v * x;
      v = product + k[t];
    }
    return rounded(v, outNum);
  });
}

// The element types the window commands (conv, pooling, depthwise) compute on: T = float, floats widened to
// fp32 (the float rule); T = int64_t, integers exact (the integer rule).
template <typename T> Result<Num> windowNumOf(const char *role, const Operand &v) {
  if constexpr (std::is_integral_v<T>)
    return intNumOf(role, v);
  else
    return floatNumOf(role, v);
}
template <typename T> T valueAs(uint32_t bits, Num n) {
  if constexpr (std::is_integral_v<T>)
    return valueOf(bits, n);
  else
    return widen(bits, n);
}

// The sliding window of conv and pooling/depthwise, per axis (0 height, 1 width): the kernel, its stride and
// dilation, the input's step (zeros inserted between its elements, for deconvolution), the padding before
// it and the dilated input's extent; and the value the padding reads as (the constant opd3, of the input's
// type as its view says: an 8-bit one's low 8 bits, sign-extended when signed).
template <typename T> struct Window {
  std::array<uint64_t, 2> kernel, stride, dilation, inputStep, padBefore, inputSpan;
  T pad = 0;
};

template <typename T>
Result<Window<T>> windowOf(const Command &c, const Operand &in, const Operand &out, const Operand &padValue) {
  TPU_RETURN_IF_ERROR(unmodelled(c, {"pad_mode", "kernel_rotate"}));
  if (padValue.space != Space::Const) return makeError("a pad value in memory (opd3_const = 0) is not modelled");
  TPU_ASSIGN_OR_RETURN(const Num padNum, windowNumOf<T>("pad value", padValue));
  Window<T> w;
  w.pad = valueAs<T>(uint32_t(padValue.address), padNum);
  const char *axes[2] = {"height", "width"};
  const char *kernel[2] = {"opd1_h", "opd1_w"}, *stride[2] = {"res_op_y_str", "res_op_x_str"};
  const char *dilation[2] = {"opd1_y_ins0", "opd1_x_ins0"}, *inserted[2] = {"opd0_y_ins0", "opd0_x_ins0"};
  const char *before[2] = {"opd0_up_pad", "opd0_lf_pad"}, *after[2] = {"opd0_dn_pad", "opd0_rt_pad"};
  for (size_t d = 0; d < 2; ++d) {
    w.kernel[d] = c.get(kernel[d]), w.stride[d] = c.get(stride[d]);
    w.dilation[d] = c.get(dilation[d]) + 1, w.inputStep[d] = c.get(inserted[d]) + 1;
    w.padBefore[d] = c.get(before[d]);
    if (!w.kernel[d]) return makeError(kernel[d], " = 0: an empty kernel");
    if (!w.stride[d]) return makeError(stride[d], " = 0 is no stride");
    const uint64_t extent = in.shape[2 + d];
    if (!extent) return makeError("the input's ", axes[d], " is 0");
    w.inputSpan[d] = (extent - 1) * w.inputStep[d] + 1;
    const uint64_t padded = w.inputSpan[d] + w.padBefore[d] + c.get(after[d]);
    const uint64_t span = (w.kernel[d] - 1) * w.dilation[d] + 1;
    if (span > padded) return makeError("the kernel's ", axes[d], " ", span, " exceeds the padded input's ", padded);
    const uint64_t want = (padded - span) / w.stride[d] + 1;
    if (out.shape[2 + d] != want)
      return makeError("output ", axes[d], " ", out.shape[2 + d], " is not (padded input ", padded, " - kernel ", span,
                       ") / stride ", w.stride[d], " + 1 = ", want);
  }
  return w;
}

// Along each axis, for output position o and kernel tap k (entry o * kernel + k), what the tap reads: input
// element index >= 0, kPadTap for the padding, or kInsertedTap for a zero inserted between elements.
constexpr int64_t kPadTap = -1, kInsertedTap = -2;
using TapTables = std::array<std::vector<int64_t>, 2>;
template <typename T> TapTables tapTables(const Window<T> &w, const Operand &out) {
  TapTables taps;
  for (size_t d = 0; d < 2; ++d)
    for (uint64_t o = 0; o < out.shape[2 + d]; ++o)
      for (uint64_t k = 0; k < w.kernel[d]; ++k) {
        const int64_t p = int64_t(o * w.stride[d] + k * w.dilation[d]) - int64_t(w.padBefore[d]);
        taps[d].push_back(p < 0 || uint64_t(p) >= w.inputSpan[d] ? kPadTap
                          : uint64_t(p) % w.inputStep[d]         ? kInsertedTap
                                                                 : int64_t(uint64_t(p) / w.inputStep[d]));
      }
  return taps;
}

// A view's elements in (n, c, h, w) order as values of T (valueAs), each read (and range-checked) once: the
// window commands then compute on host arrays.
template <typename T> Result<std::vector<T>> gather(const Memories &m, const char *role, const Operand &v) {
  TPU_ASSIGN_OR_RETURN(const Num n, windowNumOf<T>(role, v));
  std::vector<T> values;
  values.reserve(size_t(v.shape[0] * v.shape[1] * v.shape[2] * v.shape[3]));
  TPU_RETURN_IF_ERROR(forEach(v.shape, [&](const Index &at) -> Status {
    uint32_t bits = 0;
    TPU_RETURN_IF_ERROR(m.read(v, at, &bits));
    values.push_back(valueAs<T>(bits, n));
    return Status::ok();
  }));
  return values;
}

// Calls fn(kh, kw, x) for the window of output position (oh, ow) over one input plane (`plane`, h x w
// elements), in (kh, kw) order, x being what the tap reads: the input element, 0 for an inserted zero, or
// the pad value.
template <typename T, typename Fn>
void forEachTap(const T *plane, uint64_t width, const Window<T> &w, const TapTables &taps, uint64_t oh, uint64_t ow,
                Fn &&fn) {
  const int64_t *rows = &taps[0][oh * w.kernel[0]], *cols = &taps[1][ow * w.kernel[1]];
  for (uint64_t kh = 0; kh < w.kernel[0]; ++kh)
    for (uint64_t kw = 0; kw < w.kernel[1]; ++kw) {
      const int64_t y = rows[kh], x = cols[kw];
      const T value = y == kPadTap || x == kPadTap             ? w.pad
                      : y == kInsertedTap || x == kInsertedTap ? T(0)
                                                               : plane[uint64_t(y) * width + uint64_t(x)];
      fn(kh, kw, value);
    }
}

// conv.normal: each output is its window's taps times the weights summed over the input channels, plus the
// bias, plus (res_add) what the output held. A modelling choice, the chip's order not being public: one
// accumulator from 0, the products added in (ic, kh, kw) order, then the bias, then the old output.
//
// On floats: the accumulator fp32; on fp16 and bf16 the same in fp32 (the numerics' rule), the sum rounded
// once to the output's type. The input and the weights are of opd0_prec (16-bit weights in the Ic32 layout,
// 32-bit in Ic1); the bias of the type its view gives (fp32 for every float conv: TPU-MLIR's sCONV reading
// types opd2 f32 unless the input is 8-bit, and its BM1684X lowering keeps an fp16/bf16 conv's bias fp32;
// the short form has no opd2_prec); the output of res0_prec.
//
// On 8-bit integers (opd0_prec 0) and 16-bit ones (3): the input int8/uint8 or int16/uint16 (opd0_sign), the
// weights of its width (opd1_sign) in the Ic64 (8-bit) or Ic32 (16-bit) layout, the pad value of the input's
// type; the accumulator int64, exact (the integer rule). There is
// no bias: opd2 is the kernel's zero point per input channel (the view's 8-bit opd2), modelled only as the
// constant 0 (opd2_const = 1, opd2_addr = 0). The output is int32 (res0_prec 4), signed whatever the view's
// sign (it calls the output unsigned when every input is): the sum plus, with res_add, the int32 it held,
// saturated once to int32. Requantisation is a separate command (quant.rq1).
template <typename T>
T convSum(const std::vector<T> &x, const std::vector<T> &k, const Window<T> &w, const TapTables &taps,
          const Operand &in, const Index &at) {
  const uint64_t ic = in.shape[1], plane = in.shape[2] * in.shape[3], kernel = w.kernel[0] * w.kernel[1];
  T acc = 0;
  for (uint64_t i = 0; i < ic; ++i) {
    const T *kernelOf = &k[(at[1] * ic + i) * kernel];
    forEachTap(&x[(at[0] * ic + i) * plane], in.shape[3], w, taps, at[2], at[3],
               [&](uint64_t kh, uint64_t kw, T v) { acc += v * kernelOf[kh * w.kernel[1] + kw]; });
  }
  return acc;
}

template <typename T> Status convOn(Memories &m, const Command &c, const Operands &ops) {
  constexpr bool isInt = std::is_integral_v<T>;
  const Operand &out = ops.results[0], &in = ops.operands[0], &weight = ops.operands[1], &bias = ops.operands[2];
  Num outNum = Num::S32;
  if constexpr (isInt) {
    if (in.type.prec != 0 && in.type.prec != 3)
      return makeError("input ", in.name(), " is ", in.type.name(), ": 8- or 16-bit integers only");
    if (out.type.prec != 4)
      return makeError("output ", out.name(), " is ", out.type.name(), ": int32 only for an integer conv");
    TPU_RETURN_IF_ERROR(intNumOf("weight", weight).status());
    if (!c.get("opd2_const") || c.get("opd2_addr"))
      return makeError("a kernel zero point (opd2_const = ", c.get("opd2_const"), ", opd2_addr = ", c.get("opd2_addr"),
                       ") is not modelled (the constant 0 only)");
  } else {
    TPU_ASSIGN_OR_RETURN(outNum, floatNumOf("output", out));
    TPU_RETURN_IF_ERROR(floatsOnly({{"input", &in}, {"weight", &weight}, {"bias", &bias}}));
  }
  TPU_RETURN_IF_ERROR(unmodelled(c, {"relu"}));
  TPU_ASSIGN_OR_RETURN(const Window<T> w, windowOf<T>(c, in, out, ops.operands[3]));
  TPU_ASSIGN_OR_RETURN(const std::vector<T> x, gather<T>(m, "input", in));
  TPU_ASSIGN_OR_RETURN(const std::vector<T> k, gather<T>(m, "weight", weight));
  std::vector<T> b(out.shape[1], T(0));
  if constexpr (!isInt) {
    TPU_ASSIGN_OR_RETURN(b, gather<T>(m, "bias", bias));
  }
  const auto taps = tapTables(w, out);
  const bool accumulate = c.get("res_add");
  return forEach(out.shape, [&](const Index &at) -> Status {
    T r = convSum(x, k, w, taps, in, at) + b[at[1]];
    if (accumulate) {
      uint32_t old = 0;
      TPU_RETURN_IF_ERROR(m.read(out, at, &old));
      r = valueAs<T>(old, outNum) + r;
    }
    uint32_t bits = 0;
    if constexpr (isInt)
      bits = saturated(r, outNum);
    else
      bits = rounded(r, outNum);
    return m.write(out, at, &bits);
  });
}

// The input's type picks the datapath: integers, else floats (which refuse the other types).
Status conv(Memories &m, const Command &c, const Operands &ops) {
  return ops.operands[0].type.isFloat() ? convOn<float>(m, c, ops) : convOn<int64_t>(m, c, ops);
}

// Pooling and depthwise conv, channel by channel over the window: max; the sum times avg's multiplier (the
// constant in opd1, e.g. 1/(kh*kw)); or the taps times the channel's weights plus its bias, clamped at 0 by
// depthwiserelu. Sums run in (kh, kw) order from 0 (a modelling choice, as conv's); padding counts as the
// pad value everywhere.
//
// On floats (all four): by the numerics' rule, taps, weights, bias and multiplier widened, everything in
// fp32, each result rounded once to res0_prec. Types: the input, and depthwise's weights and bias, of
// opd0_prec (their views; TPU-MLIR's sPorD reading types opd1 and a float opd2 with opd0_prec). The
// multiplier has no view (avg reads only opd0 and opd3 there): a modelling choice, it is taken of opd0_prec
// too, in the low 16 bits of opd1_addr for fp16/bf16, as the view of opd1 in this command's other forms
// says and as TPU-MLIR's kernel API passes it (tpu_bdc_fp_avg_pool2d: one data_type_t for the command, the
// scale a scalar_t of it); on fp32 it is the fp32 constant it was.
//
// On integers (the integer rule): depthwise (+ relu) on int8/uint8 with 8-bit weights (opd1_sign) and an
// int32 bias (the view's), the exact sum of the taps times the weights plus the bias, into an int32
// result only (no shift: res1_addr 0). max on int8/uint8/int16/uint16, the
// largest tap (the pad value among them), the result of the input's type. avg on int8/uint8: the exact sum
// of the taps times the multiplier, the constant in opd1_addr's low 8 bits (int8 when opd1_sign is set,
// else uint8), divided by 2^shift with the shift in res1_addr's low byte read as int8 (TPU-MLIR's sPorD
// converter: shift = np.uint32([reg.res1_addr]).view(np.int8)[0]; a negative one, or bits above the low
// byte, are not modelled), rounded by round mode opd2_n_str (roundsUp's seven), saturated to the result's
// type (res0_prec 0, 3 or 4, signed as the view says). A modelling choice following TPU-MLIR's
// applyMultiplierAndRShift (the product, then the rounded shift, then saturation).
template <typename T> Status poolOn(Memories &m, const Command &c, const Operands &ops) {
  enum { Depthwise = 0, Avg = 1, DepthwiseRelu = 2, Max = 4 };
  constexpr bool isInt = std::is_integral_v<T>;
  const int sub = c.op().sub;
  const bool depthwise = sub == Depthwise || sub == DepthwiseRelu;
  const Operand &out = ops.results[0], &in = ops.operands[0];
  TPU_ASSIGN_OR_RETURN(const Num outNum, windowNumOf<T>("output", out));
  TPU_ASSIGN_OR_RETURN(const Num inNum, windowNumOf<T>("input", in));
  TPU_RETURN_IF_ERROR(unmodelled(c, {"res_add", "relu"}));
  if (sub == Avg && !c.get("opd1_const"))
    return makeError("an average's multiplier in memory (opd1_const = 0) is not modelled");
  T avgMultiplier = 0;
  int64_t avgShift = 0;
  unsigned roundMode = 0;
  if constexpr (isInt) {
    if (depthwise) {
      if (in.type.prec != 0)
        return makeError("input ", in.name(), " is ", in.type.name(), ": 8-bit only for depthwise");
      if (out.type.prec != 4)
        return makeError("output ", out.name(), " is ", out.type.name(), ": int32 only for an 8-bit depthwise");
      if (uint64_t shift = c.get("res1_addr")) return makeError("a shift (res1_addr = ", shift, ") is not modelled");
    }
    if (sub == Max && !(out.type == in.type))
      return makeError("output ", out.name(), " is ", out.type.name(), ", the input ", in.type.name(),
                       ": max pooling keeps the input's type");
    if (sub == Avg) {
      if (in.type.prec != 0) return makeError("input ", in.name(), " is ", in.type.name(), ": 8-bit only for avg");
      const uint64_t shiftField = c.get("res1_addr");
      avgMultiplier = c.get("opd1_sign") ? sim::signExtend(c.get("opd1_addr"), 8) : T(c.get("opd1_addr") & 0xff);
      avgShift = sim::signExtend(shiftField, 8);
      roundMode = unsigned(c.get("opd2_n_str"));
      if (avgShift < 0) return makeError("a negative shift (res1_addr's low byte: ", avgShift, ") is not modelled");
      if (shiftField >> 8) return makeError("res1_addr = ", shiftField, ": bits above its low byte are not modelled");
      if (roundMode >= kRoundModes) return makeError("round mode ", roundMode, " is not modelled");
    }
  } else {
    if (depthwise) TPU_RETURN_IF_ERROR(floatsOnly({{"weight", &ops.operands[1]}, {"bias", &ops.operands[2]}}));
    avgMultiplier = widen(c.get("opd1_addr"), inNum);
  }
  TPU_ASSIGN_OR_RETURN(const Window<T> w, windowOf<T>(c, in, out, ops.operands.back()));
  TPU_ASSIGN_OR_RETURN(const std::vector<T> x, gather<T>(m, "input", in));
  std::vector<T> k, b;
  if (depthwise) {
    TPU_ASSIGN_OR_RETURN(k, gather<T>(m, "weight", ops.operands[1]));
    TPU_ASSIGN_OR_RETURN(b, gather<T>(m, "bias", ops.operands[2]));
  }
  const auto taps = tapTables(w, out);
  const uint64_t channels = in.shape[1], plane = in.shape[2] * in.shape[3], kernel = w.kernel[0] * w.kernel[1];
  return forEach(out.shape, [&](const Index &at) -> Status {
    // Max starts below every value; a float NaN in the window is skipped (the chip's handling is unknown).
    T acc = sub == Max ? std::numeric_limits<T>::lowest() : T(0);
    if constexpr (!isInt)
      if (sub == Max) acc = -std::numeric_limits<float>::infinity();
    const T *kernelOf = depthwise ? &k[at[1] * kernel] : nullptr;
    forEachTap(&x[(at[0] * channels + at[1]) * plane], in.shape[3], w, taps, at[2], at[3],
               [&](uint64_t kh, uint64_t kw, T v) {
                 if (sub == Max)
                   acc = v > acc ? v : acc;
                 else if (sub == Avg)
                   acc += v;
                 else
                   acc += v * kernelOf[kh * w.kernel[1] + kw];
               });
    uint32_t bits = 0;
    if constexpr (isInt) {
      int64_t r = sub == Avg ? shifted(sim::satMul(acc, avgMultiplier), -avgShift, roundMode) : acc;
      if (depthwise) r = sim::satAdd(r, b[at[1]]);
      if (sub == DepthwiseRelu) r = sim::relu(r);
      bits = saturated(r, outNum);
    } else {
      float r = acc;
      if (sub == Avg) r = acc * avgMultiplier;
      if (depthwise) r = acc + b[at[1]];
      if (sub == DepthwiseRelu) r = r > 0 ? r : 0.0f;
      bits = rounded(r, outNum);
    }
    return m.write(out, at, &bits);
  });
}

// The input's type picks the datapath: integers, else floats (which refuse the other types).
Status poolOrDepthwise(Memories &m, const Command &c, const Operands &ops) {
  return ops.operands[0].type.isFloat() ? poolOn<float>(m, c, ops) : poolOn<int64_t>(m, c, ops);
}

// quant.rq1, requantisation by a multiplier and a shift: per channel c, res0 = saturate(zp + x * 2^shift)
// with the product x * multiplier in int64 (the integer rule), shifted by shifted(): left saturating for
// shift >= 0, for shift < 0 divided by 2^-shift and rounded by round mode opd2_n_str from the exact
// quotient; zp added, saturated to the result's type. The input an 8-, 16- or 32-bit integer of its sign
// (opd0_prec, opd0_sign), the result of res0_prec (0, 3 or 4) signed as opd2_sign. The parameters: with
// opd1_const = 1 constants for every channel (multiplier opd1_addr as int32; shift opd2_addr's low byte as
// int8; zero point bits 8..23 of opd2_addr as int16, signed whatever opd2_sign), else three 32-bit words per
// channel from opd1_addr in the channel's lane, 64 bytes per lane row (the aligned layout of the view:
// multiplier, shift, zero point, int32 each; a shift outside int8 or a zero point outside int16 is not
// modelled). A modelling choice
// following TPU-MLIR's reference for it (lib/Support/MathUtils.cpp applyMultiplierAndRShift: the product in
// int64, then the rounded right shift; the zero point after, then saturation), the BM1684X's datapath not
// being public. rq0 (fp32 scale) and the dequantisations are not executed yet.
Status requant(Memories &m, const Command &c, const Operands &ops) {
  const Operand &out = ops.results[0], &in = ops.operands[0];
  TPU_ASSIGN_OR_RETURN(const Num outNum, intNumOf("result", out));
  TPU_ASSIGN_OR_RETURN(const Num inNum, intNumOf("input", in));
  TPU_RETURN_IF_ERROR(unmodelled(c, {"res_add", "relu"}));
  const unsigned mode = unsigned(c.get("opd2_n_str"));
  if (mode >= kRoundModes) return makeError("round mode ", mode, " is not modelled");
  // Each channel's parameters, read (and checked) once.
  struct Params {
    int64_t multiplier, shift, zeroPoint;
  };
  const bool isConst = c.get("opd1_const");
  std::vector<Params> params(out.shape[1]);
  for (uint64_t ch = 0; ch < out.shape[1]; ++ch) {
    std::array<int64_t, 3> p{};
    for (size_t k = 0; k < 3; ++k) {
      const Operand &v = ops.operands[1 + k];
      TPU_ASSIGN_OR_RETURN(const Num n, intNumOf("parameter", v));
      TPU_ASSIGN_OR_RETURN(const uint32_t word, readWord(m, v, {0, ch, 0, 0}));
      p[k] = valueOf(word, n);
    }
    if (isConst) p[2] = int16_t(p[2]); // the packed zero point is int16 whatever its view's sign
    if (p[1] < -128 || p[1] > 127 || p[2] < -32768 || p[2] > 32767)
      return makeError("channel ", ch, ": shift ", p[1], " or zero point ", p[2],
                       " outside int8 / int16 is not modelled");
    params[ch] = {p[0], p[1], p[2]};
  }
  return elementwise(m, out, {&in}, [&](const Words &w, const Index &at) {
    const Params &p = params[at[1]];
    const int64_t scaled = shifted(valueOf(w[0], inNum) * p.multiplier, p.shift, mode);
    return saturated(sim::satAdd(p.zeroPoint, scaled), outNum);
  });
}

// sg.pe_s_gather_d1coor, a per-lane table lookup: for every n, c, w, res0[n][c][0][w] = opd0[0][c][0][i] with
// i = opd1[n][c][0][w], each lane reading its own channel's table (the views of Operands.h: the table
// (1, c, 1, opd0_w), the index (n, c, 1, opd1_w), the result (n, c, 1, res0_w)). The index is read as an
// unsigned integer of opd1_prec (8, 16 or 32 bits); the table's element is copied bit for bit to the
// result, both of one precision (8, 16 or 32 bits, integer or float alike). A modelling choice, the chip's
// exact behaviour not being public: it is the operation TPU-MLIR's kernel API names tpu_bdc_w_gather(output,
// param, index, shape, param_w, dtype, index_dtype). Modelled only with res0_h = opd0_h = 1 and opd1_w =
// res0_w; an index >= opd0_w is an error naming it and its position (the chip's out-of-range behaviour, and
// the fill with a constant that TPU-MLIR's _exception variants ask by opd2_const / opd3_const, are not
// modelled: those fields set are errors).
Status laneGather(Memories &m, const Command &c, const Operands &ops) {
  const Operand &out = ops.results[0], &table = ops.operands[0], &index = ops.operands[1];
  if (c.get("opd2_const") || c.get("opd3_const"))
    return makeError("opd2_const = ", c.get("opd2_const"), ", opd3_const = ", c.get("opd3_const"),
                     ": filling out-of-range positions with a constant is not modelled");
  for (auto [field, value] : {std::pair{"res0_h", out.shape[2]}, {"opd0_h", table.shape[2]}})
    if (value != 1) return makeError(field, " = ", value, " is not modelled (1 only)");
  if (index.shape[3] != out.shape[3])
    return makeError("opd1_w = ", index.shape[3], " differs from res0_w = ", out.shape[3], ": not modelled");
  if (out.type.prec != table.type.prec)
    return makeError("result ", out.name(), " is ", out.type.name(), ", the table ", table.type.name(),
                     ": a gather copies the table's elements (one precision)");
  TPU_ASSIGN_OR_RETURN(const uint64_t bytes, elementBytes(out));
  (void)bytes;
  if (index.type.prec != 0 && index.type.prec != 3 && index.type.prec != 4)
    return makeError("index ", index.name(), " is ", index.type.name(), ": an 8-, 16- or 32-bit integer only");
  const uint64_t entries = table.shape[3];
  return forEach(out.shape, [&](const Index &at) -> Status {
    uint32_t i = 0, bits = 0;
    TPU_RETURN_IF_ERROR(m.read(index, at, &i));
    if (i >= entries)
      return makeError("index ", i, " at (", at[0], ", ", at[1], ", 0, ", at[3],
                       ") is outside the table's opd0_w = ", entries, " entries");
    TPU_RETURN_IF_ERROR(m.read(table, {0, at[1], 0, i}, &bits));
    return m.write(out, at, &bits);
  });
}

// The command families executed: engine, type, the sub-types (bit s for sub-type s) and what runs them.
struct Family {
  isa::Engine engine;
  unsigned type;
  uint64_t subs;
  Status (*run)(Memories &, const Command &, const Operands &);
};
constexpr uint64_t subTypes(std::initializer_list<int> subs) {
  uint64_t bits = 0;
  for (int s : subs) bits |= 1ull << s;
  return bits;
}
constexpr Family kFamilies[] = {
    {isa::Engine::Gdma, 0, ~0ull, tensorDma},
    {isa::Engine::Tiu, 0, subTypes({0}), conv},
    {isa::Engine::Tiu, 1, subTypes({0, 1, 2, 4}), poolOrDepthwise},
    {isa::Engine::Tiu, 3, arithSubTypes(), arith},
    {isa::Engine::Tiu, 4, subTypes({1}), requant},
    {isa::Engine::Tiu, 6, subTypes({5}), laneGather},
    {isa::Engine::Tiu, 9, subTypes({12, 13, 17}), sfu},
    {isa::Engine::Tiu, 13, subTypes({23, 24, 26}), compareSelect},
};

} // namespace

Status execute(Memories &m, const Command &c) {
  if (c.op().isSys()) return Status::ok();
  const int sub = c.op().sub;
  const Family *family = nullptr;
  for (const Family &f : kFamilies)
    if (f.engine == c.op().engine && f.type == c.op().type && sub >= 0 && sub < 64 && ((f.subs >> sub) & 1))
      family = &f;
  if (!family) return makeError(c.op().mnemonic, " is not executed yet");
  auto ops = memory::bm1684x::operandsOf(c);
  if (!ops) return ops.status();
  Status st = family->run(m, c, *ops);
  return st ? st : st.prefix(std::string(c.op().mnemonic));
}

Status run(Memories &m, const std::vector<Command> &tiu, const std::vector<Command> &dma) {
  auto order = isa::bm1684x::programOrder(tiu, dma);
  if (!order) return order.status();
  for (const isa::OrderedCommand &o : *order) {
    const bool isTiu = o.engine == isa::Engine::Tiu;
    const Command &c = isTiu ? tiu[o.index] : dma[o.index];
    Status st = execute(m, c);
    if (!st)
      return st.prefix(std::string(isTiu ? "TIU" : "DMA") + " command " + std::to_string(o.index) +
                       (c.hasIds() ? std::string(isTiu ? " (%B" : " (%D") + std::to_string(c.id()) + ")" : ""));
  }
  return Status::ok();
}

} // namespace tpu::sim::bm1684x
