#include "simulator/semantics/bm1684x/Executor.h"

#include "arith/IntArith.h"
#include "isa/bm1684x/MemoryMap.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>
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
  if (v.layout == memory::bm1684x::LocalLayout::Ic1 && v.space == Space::Lmem) {
    // 32-bit conv weights (oc, ic, kh, kw): output channel oc in its lane, its ic*kh*kw packed.
    uint64_t lane0 = v.address / map::kLaneBytes, channel = lane0 + at[0];
    auto [oc, ic, kh, kw] = v.shape;
    (void)oc;
    uint64_t elements = channel / map::kLanes * ic * kh * kw + (at[1] * kh + at[2]) * kw + at[3];
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

// Each view, named by its role, must hold fp32: the only type executed so far.
Status fp32Only(std::initializer_list<std::pair<const char *, const Operand *>> views) {
  for (auto [role, v] : views)
    if (v->type.prec != 2) return makeError(role, " ", v->name(), " is ", v->type.name(), ": fp32 only so far");
  return Status::ok();
}

// Fields whose effect is not modelled: an error when set.
Status unmodelled(const Command &c, std::initializer_list<const char *> fields) {
  for (const char *f : fields)
    if (uint64_t v = c.get(f)) return makeError(f, " = ", v, " is not modelled");
  return Status::ok();
}

float floatOf(uint64_t bits) {
  uint32_t b = uint32_t(bits);
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
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

// The element types the elementwise families (arith, cmp, sfu) execute: fp32, and int32 signed or unsigned
// (a signless int32, whose bits are only copied, counts as signed).
enum class Num : uint8_t { F32, S32, U32 };

Result<Num> numOf(const char *role, const Operand &v) {
  if (v.type.prec == 2) return Num::F32;
  if (v.type.prec == 4) return v.type.sign == memory::bm1684x::DataType::Sign::Unsigned ? Num::U32 : Num::S32;
  return makeError(role, " ", v.name(), " is ", v.type.name(), ": fp32 or int32 only so far");
}

float asFloat(uint32_t bits) { return sim::bitsFloat(bits); }
uint32_t bitsOf(float f) { return sim::floatBits(f); }
// An int32 element's value, signed or unsigned as its type says; and a value saturated to that type.
int64_t valueOf(uint32_t bits, Num n) { return n == Num::U32 ? int64_t(bits) : int64_t(int32_t(bits)); }
sim::IntRange rangeOf(Num n) {
  return n == Num::U32 ? sim::IntRange{0, UINT32_MAX} : sim::IntRange{INT32_MIN, INT32_MAX};
}
uint32_t saturated(int64_t v, Num n) { return uint32_t(sim::saturate(v, rangeOf(n))); }

// Element `at` of a view of 32-bit elements, as its bits; a view of extent 1 along a dimension is broadcast
// along it.
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

// The elementwise loop of arith, cmp and sfu: for every index of out's shape, the inputs' words there (as
// readWord reads them) and fn(words, index) written to out, a 32-bit view.
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

// fp32 -> integer under a rounding mode of TPU-MLIR's rounding_mode_t for the BM1684X (tpu_defs.h): 0 half
// to even, 1 half away from zero, 2 towards zero, 3 down, 4 up, 5 half up, 6 half down; then saturated to r,
// NaN -> 0.
int64_t roundToInt(float x, unsigned mode, sim::IntRange r) {
  if (std::isnan(x)) return 0;
  const double d = x, down = std::floor(d), frac = d - down; // exact: a float's fraction fits a double
  double v = down;
  switch (mode) {
  case 0:
    v = frac > 0.5 || (frac == 0.5 && std::fmod(down, 2.0) != 0) ? down + 1 : down;
    break;
  case 1:
    v = frac > 0.5 || (frac == 0.5 && d > 0) ? down + 1 : down;
    break;
  case 2:
    v = std::trunc(d);
    break;
  case 4:
    v = std::ceil(d);
    break;
  case 5:
    v = frac >= 0.5 ? down + 1 : down;
    break;
  case 6:
    v = frac > 0.5 ? down + 1 : down;
    break;
  default: // 3: down
    break;
  }
  return v <= double(r.lo) ? r.lo : v >= double(r.hi) ? r.hi : int64_t(v);
}

// Elementwise arithmetic (arith.*) on fp32 or int32, every operand and the result of one type (cast: fp32 to
// int32 or back). A modelling choice mirroring this project's BM1684 model (arith/IntArith.h, the compiler's
// runKernel), the BM1684X's exact results not being public: fp32 as IEEE single; int32 add/sub/mul wrapping,
// adds/subs saturating to the type, ashift saturating left (sim::satShl) and rounding half up right
// (sim::roundingRightShift), logicShift's zeros shifted in; cast rounding as opd2_n_str says and saturating.
struct ArithTypes {
  Num in, out;
  unsigned roundMode; // cast from fp32
};
using ArithFn = uint32_t (*)(uint32_t a, uint32_t b, const ArithTypes &t);

uint32_t multiply(uint32_t a, uint32_t b, const ArithTypes &t) {
  return t.in == Num::F32 ? bitsOf(asFloat(a) * asFloat(b)) : a * b;
}
uint32_t addWrapping(uint32_t a, uint32_t b, const ArithTypes &t) {
  return t.in == Num::F32 ? bitsOf(asFloat(a) + asFloat(b)) : a + b;
}
uint32_t subtractWrapping(uint32_t a, uint32_t b, const ArithTypes &t) {
  return t.in == Num::F32 ? bitsOf(asFloat(a) - asFloat(b)) : a - b;
}
bool greater(uint32_t a, uint32_t b, Num n) {
  return n == Num::F32 ? asFloat(a) > asFloat(b) : valueOf(a, n) > valueOf(b, n);
}
uint32_t maximum(uint32_t a, uint32_t b, const ArithTypes &t) { return greater(a, b, t.in) ? a : b; }
uint32_t minimum(uint32_t a, uint32_t b, const ArithTypes &t) { return greater(b, a, t.in) ? a : b; }
// The shift amount is opd1's value as a signed int32: left when >= 0, else right.
uint32_t logicShift(uint32_t a, uint32_t b, const ArithTypes &) {
  const int64_t s = int32_t(b);
  return s >= 32 || s <= -32 ? 0 : s >= 0 ? a << s : a >> -s;
}
uint32_t arithmeticShift(uint32_t a, uint32_t b, const ArithTypes &t) {
  const int64_t s = int32_t(b), v = valueOf(a, t.in);
  return saturated(s >= 0 ? sim::satShl(v, unsigned(s)) : sim::roundingRightShift(v, unsigned(-s)), t.in);
}
uint32_t bitAnd(uint32_t a, uint32_t b, const ArithTypes &) { return a & b; }
uint32_t bitOr(uint32_t a, uint32_t b, const ArithTypes &) { return a | b; }
uint32_t bitXor(uint32_t a, uint32_t b, const ArithTypes &) { return a ^ b; }
// The chip divides by iterating on a reciprocal (TPU-MLIR's kernel API gives div a num_iter, opd2_n_str + 1
// here): IEEE division, whatever the count, so the last bits may differ from the chip's.
uint32_t divide(uint32_t a, uint32_t b, const ArithTypes &) { return bitsOf(asFloat(a) / asFloat(b)); }
uint32_t convert(uint32_t a, uint32_t, const ArithTypes &t) {
  return t.in == Num::F32 ? uint32_t(roundToInt(asFloat(a), t.roundMode, rangeOf(t.out)))
                          : bitsOf(static_cast<float>(valueOf(a, t.in))); // nearest even
}
uint32_t addSaturating(uint32_t a, uint32_t b, const ArithTypes &t) {
  return saturated(valueOf(a, t.in) + valueOf(b, t.in), t.in);
}
uint32_t subtractSaturating(uint32_t a, uint32_t b, const ArithTypes &t) {
  return saturated(valueOf(a, t.in) - valueOf(b, t.in), t.in);
}
uint32_t copyBits(uint32_t a, uint32_t, const ArithTypes &) { return a; }

enum : uint8_t { kOnF32 = 1, kOnInt32 = 2 };
struct ArithOp {
  int sub;
  unsigned inputs; // operands read: opd0, or opd0 and opd1
  uint8_t on;      // the input types it is modelled on
  ArithFn fn;
};
constexpr ArithOp kArithOps[] = {
    {0, 2, kOnF32 | kOnInt32, multiply},         // mul
    {2, 2, kOnF32 | kOnInt32, addWrapping},      // add
    {3, 2, kOnF32 | kOnInt32, subtractWrapping}, // sub
    {4, 2, kOnF32 | kOnInt32, maximum},          // max
    {5, 2, kOnF32 | kOnInt32, minimum},          // min
    {6, 2, kOnInt32, logicShift},                // logicShift
    {7, 2, kOnInt32, bitAnd},                    // and
    {8, 2, kOnInt32, bitOr},                     // or
    {9, 2, kOnInt32, bitXor},                    // xor
    {12, 2, kOnF32, divide},                     // div
    {14, 1, kOnF32 | kOnInt32, convert},         // cast
    {15, 2, kOnInt32, addSaturating},            // adds
    {16, 2, kOnInt32, subtractSaturating},       // subs
    {19, 1, kOnF32 | kOnInt32, copyBits},        // copy
    {21, 2, kOnInt32, arithmeticShift},          // ashift
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
  TPU_ASSIGN_OR_RETURN(t.in, numOf("operand", a));
  TPU_RETURN_IF_ERROR(numOf("operand", b).status());
  if (sub != Cast)
    for (const Operand *v : {&a, &b})
      if (!(v->type == out.type))
        return makeError("operand ", v->name(), " is ", v->type.name(), ", the result ", out.type.name(),
                         ": operands and result of one type only");
  if (!(op->on & (t.in == Num::F32 ? kOnF32 : kOnInt32)))
    return makeError(a.type.name(), " operands are not modelled (", op->on == kOnF32 ? "fp32" : "int32", " only)");
  // opd2_n_str: cast's round mode, div's iteration count - 1; set on any other, an error.
  const uint64_t mode = c.get("opd2_n_str");
  if (sub == Cast) {
    if ((t.in == Num::F32) == (t.out == Num::F32))
      return makeError("a cast from ", a.type.name(), " to ", out.type.name(), " is not modelled");
    if (mode > 6 || (t.in != Num::F32 && mode != 0))
      return makeError("round mode ", mode, " is not modelled", t.in == Num::F32 ? "" : " to fp32 (0 only)");
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
// in their type (fp32: a NaN compares false, -0 equals +0; int32 signed or unsigned), the chosen bits copied
// (fp32 or int32). A modelling choice mirroring the BM1684 model's selects (the compiler's runKernel), the
// BM1684X's exact results not being public. gt_and_sel and lt_and_sel are not executed yet.
bool equal(uint32_t a, uint32_t b, Num n) { return n == Num::F32 ? asFloat(a) == asFloat(b) : a == b; }
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
  return elementwise(m, out, {&a, &b, &ifTrue, &ifFalse},
                     [&](const Words &w, const Index &) { return cmp->holds(w[0], w[1], n) ? w[2] : w[3]; });
}

// SFU on fp32. taylor and taylor_4x: a polynomial in x whose opd1_n fp32 coefficients, lowest power first,
// each lane holds from opd1_addr's offset for its own channels; evaluated by Horner from the highest term,
// rounding the product and the sum (two roundings per term). rsqrt: 1 / sqrt(x) in fp32, whatever the
// iteration count in opd2_n_str (TPU-MLIR's rsqrt_n - 1); the chip's SFU result may differ in the last bits.
// A modelling choice mirroring the compiler's runKernel, the BM1684X's exact results not being public.
Status sfu(Memories &m, const Command &c, const Operands &ops) {
  enum { Rsqrt = 17 };
  const Operand &out = ops.results[0], &in = ops.operands[0];
  TPU_RETURN_IF_ERROR(fp32Only({{"result", &out}, {"input", &in}}));
  if (c.op().sub == Rsqrt)
    return elementwise(m, out, {&in},
                       [](const Words &w, const Index &) { return bitsOf(1.0f / std::sqrt(asFloat(w[0]))); });
  TPU_RETURN_IF_ERROR(unmodelled(c, {"opd2_n_str"}));
  const Operand &table = ops.operands[1];
  if (in.space != Space::Lmem || table.space != Space::Lmem)
    return makeError("an input or coefficient table outside local memory is not modelled");
  // The tables of the lanes the input's channels are in, each read once: lane L's is the table view's
  // channel (L - the table's lane).
  const uint64_t terms = c.get("opd1_n"), inLane = in.address / map::kLaneBytes;
  const uint64_t tableLane = table.address / map::kLaneBytes;
  std::vector<float> coef(map::kLanes * terms);
  for (uint64_t ch = 0; ch < std::min<uint64_t>(in.shape[1], map::kLanes); ++ch) {
    const uint64_t lane = (inLane + ch) % map::kLanes;
    for (uint64_t k = 0; k < terms; ++k)
      TPU_RETURN_IF_ERROR(
          m.read(table, {0, (lane + map::kLanes - tableLane) % map::kLanes, 0, k}, &coef[lane * terms + k]));
  }
  return elementwise(m, out, {&in}, [&](const Words &w, const Index &at) {
    const float x = asFloat(w[0]), *k = &coef[(inLane + at[1]) % map::kLanes * terms];
    float v = 0;
    for (uint64_t t = terms; t-- > 0;) {
      const float product = v * x;
      v = product + k[t];
    }
    return bitsOf(v);
  });
}

// The sliding window of conv and pooling/depthwise, per axis (0 height, 1 width): the kernel, its stride and
// dilation, the input's step (zeros inserted between its elements, for deconvolution), the padding before
// it and the dilated input's extent; and the value the padding reads as.
struct Window {
  std::array<uint64_t, 2> kernel, stride, dilation, inputStep, padBefore, inputSpan;
  float pad = 0;
};

Result<Window> windowOf(const Command &c, const Operand &in, const Operand &out, const Operand &padValue) {
  TPU_RETURN_IF_ERROR(unmodelled(c, {"pad_mode", "kernel_rotate"}));
  if (padValue.space != Space::Const) return makeError("a pad value in memory (opd3_const = 0) is not modelled");
  Window w;
  w.pad = floatOf(padValue.address);
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
std::array<std::vector<int64_t>, 2> tapTables(const Window &w, const Operand &out) {
  std::array<std::vector<int64_t>, 2> taps;
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

// A view's elements in (n, c, h, w) order, each read (and range-checked) once: the window commands then
// compute on host arrays.
Result<std::vector<float>> gather(const Memories &m, const Operand &v) {
  std::vector<float> values;
  values.reserve(size_t(v.shape[0] * v.shape[1] * v.shape[2] * v.shape[3]));
  TPU_RETURN_IF_ERROR(forEach(v.shape, [&](const Index &at) -> Status {
    float x = 0;
    TPU_RETURN_IF_ERROR(m.read(v, at, &x));
    values.push_back(x);
    return Status::ok();
  }));
  return values;
}

// Calls fn(kh, kw, x) for the window of output position (oh, ow) over one input plane (`plane`, h x w
// elements), in (kh, kw) order, x being what the tap reads: the input element, 0 for an inserted zero, or
// the pad value.
template <typename Fn>
void forEachTap(const float *plane, uint64_t width, const Window &w, const std::array<std::vector<int64_t>, 2> &taps,
                uint64_t oh, uint64_t ow, Fn &&fn) {
  const int64_t *rows = &taps[0][oh * w.kernel[0]], *cols = &taps[1][ow * w.kernel[1]];
  for (uint64_t kh = 0; kh < w.kernel[0]; ++kh)
    for (uint64_t kw = 0; kw < w.kernel[1]; ++kw) {
      const int64_t y = rows[kh], x = cols[kw];
      const float value = y == kPadTap || x == kPadTap             ? w.pad
                          : y == kInsertedTap || x == kInsertedTap ? 0.0f
                                                                   : plane[uint64_t(y) * width + uint64_t(x)];
      fn(kh, kw, value);
    }
}

// conv.normal: each output is its window's taps times the weights summed over the input channels, plus the
// bias, plus (res_add) what the output held. A modelling choice, the chip's order not being public: one fp32
// accumulator from 0, the products added in (ic, kh, kw) order, then the bias, then the old output.
Status conv(Memories &m, const Command &c, const Operands &ops) {
  const Operand &out = ops.results[0], &in = ops.operands[0], &weight = ops.operands[1], &bias = ops.operands[2];
  TPU_RETURN_IF_ERROR(fp32Only({{"output", &out}, {"input", &in}, {"weight", &weight}, {"bias", &bias}}));
  TPU_RETURN_IF_ERROR(unmodelled(c, {"relu"}));
  TPU_ASSIGN_OR_RETURN(const Window w, windowOf(c, in, out, ops.operands[3]));
  TPU_ASSIGN_OR_RETURN(const std::vector<float> x, gather(m, in));
  TPU_ASSIGN_OR_RETURN(const std::vector<float> k, gather(m, weight));
  TPU_ASSIGN_OR_RETURN(const std::vector<float> b, gather(m, bias));
  const auto taps = tapTables(w, out);
  const bool accumulate = c.get("res_add");
  const uint64_t ic = in.shape[1], plane = in.shape[2] * in.shape[3], kernel = w.kernel[0] * w.kernel[1];
  return forEach(out.shape, [&](const Index &at) -> Status {
    float acc = 0;
    for (uint64_t i = 0; i < ic; ++i) {
      const float *kernelOf = &k[(at[1] * ic + i) * kernel];
      forEachTap(&x[(at[0] * ic + i) * plane], in.shape[3], w, taps, at[2], at[3],
                 [&](uint64_t kh, uint64_t kw, float v) { acc += v * kernelOf[kh * w.kernel[1] + kw]; });
    }
    float r = acc + b[at[1]];
    if (accumulate) {
      float old = 0;
      TPU_RETURN_IF_ERROR(m.read(out, at, &old));
      r = old + r;
    }
    return m.write(out, at, &r);
  });
}

// Pooling and depthwise conv, channel by channel over the window: max; the sum times avg's multiplier (the
// fp32 constant in opd1, e.g. 1/(kh*kw)); or the taps times the channel's weights plus its bias, clamped at 0
// by depthwiserelu. Sums run in (kh, kw) order from 0 (a modelling choice, as conv's); padding counts as the
// pad value everywhere.
Status poolOrDepthwise(Memories &m, const Command &c, const Operands &ops) {
  enum { Depthwise = 0, Avg = 1, DepthwiseRelu = 2, Max = 4 };
  const int sub = c.op().sub;
  const bool depthwise = sub == Depthwise || sub == DepthwiseRelu;
  const Operand &out = ops.results[0], &in = ops.operands[0];
  TPU_RETURN_IF_ERROR(fp32Only({{"output", &out}, {"input", &in}}));
  if (depthwise) TPU_RETURN_IF_ERROR(fp32Only({{"weight", &ops.operands[1]}, {"bias", &ops.operands[2]}}));
  TPU_RETURN_IF_ERROR(unmodelled(c, {"res_add", "relu"}));
  if (sub == Avg && !c.get("opd1_const"))
    return makeError("an average's multiplier in memory (opd1_const = 0) is not modelled");
  const float avgMultiplier = floatOf(c.get("opd1_addr"));
  TPU_ASSIGN_OR_RETURN(const Window w, windowOf(c, in, out, ops.operands.back()));
  TPU_ASSIGN_OR_RETURN(const std::vector<float> x, gather(m, in));
  std::vector<float> k, b;
  if (depthwise) {
    TPU_ASSIGN_OR_RETURN(k, gather(m, ops.operands[1]));
    TPU_ASSIGN_OR_RETURN(b, gather(m, ops.operands[2]));
  }
  const auto taps = tapTables(w, out);
  const uint64_t channels = in.shape[1], plane = in.shape[2] * in.shape[3], kernel = w.kernel[0] * w.kernel[1];
  return forEach(out.shape, [&](const Index &at) -> Status {
    // Max starts below every number; a NaN in the window is skipped (the chip's handling is unknown).
    float acc = sub == Max ? -std::numeric_limits<float>::infinity() : 0.0f;
    const float *kernelOf = depthwise ? &k[at[1] * kernel] : nullptr;
    forEachTap(&x[(at[0] * channels + at[1]) * plane], in.shape[3], w, taps, at[2], at[3],
               [&](uint64_t kh, uint64_t kw, float v) {
                 if (sub == Max)
                   acc = v > acc ? v : acc;
                 else if (sub == Avg)
                   acc += v;
                 else
                   acc += v * kernelOf[kh * w.kernel[1] + kw];
               });
    float r = acc;
    if (sub == Avg) r = acc * avgMultiplier;
    if (depthwise) r = acc + b[at[1]];
    if (sub == DepthwiseRelu) r = r > 0 ? r : 0.0f;
    return m.write(out, at, &r);
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
