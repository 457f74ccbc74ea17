// The fp32 function library of the TIU (FloatKernels.h): a small builder
// that writes recipes as expressions over virtual values and allocates them
// to registers, the recipes, the reference interpreter and the emitter.
#include "compiler/Backend/FloatKernels.h"
#include "compiler/Backend/Emit.h"
#include "compiler/Backend/QuantRef.h"

#include "arith/IntArith.h"
#include "isa/GdmaCommand.h"

#include <cassert>
#include <cmath>
#include <limits>
#include <map>

namespace tpu::backend {

using isa::EuOp;
using Operand = KernelProgram::Operand;
using Step = KernelProgram::Step;

uint32_t KernelProgram::polyOffset(size_t p) const {
  uint32_t o = 0;
  for (size_t i = 0; i < p && i < polys.size(); ++i) o += uint32_t(polys[i].size());
  return o;
}

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// ---------------------------------------------------------------------------
// Recipes are written over virtual values (V); finish() maps them to
// registers (linear scan: a register is free after its value's last read,
// and a step may write over a value it reads last, element for element).
struct V {
  int id = -1;
  bool asInt = false;
};
// An operand: a value, or an fp32 / int32 constant.
struct A {
  A() = default;
  A(V v) : kind(Operand::Reg), v(v) {}
  static A f(float x) {
    A a;
    a.kind = Operand::F32, a.bits = sim::floatBits(x);
    return a;
  }
  static A i(int64_t x) {
    A a;
    a.kind = Operand::I32, a.bits = uint32_t(int32_t(x));
    return a;
  }
  Operand::Kind kind = Operand::None;
  V v;
  uint32_t bits = 0;
};
A f(float x) { return A::f(x); }
A i(int64_t x) { return A::i(x); }
V asInt(V v) { return {v.id, true}; }
V asFloat(V v) { return {v.id, false}; }

class Recipe {
public:
  explicit Recipe(unsigned inputs) : inputs_(inputs) {}
  V in(unsigned k) const { return {int(k), false}; }

  V op(EuOp eu, bool dstInt, A a, A b = {}, A c = {}, A d = {}, bool logical = false) {
    Pending s;
    s.eu = eu, s.dstInt = dstInt, s.ops = {a, b, c, d}, s.logical = logical;
    s.dst = int(values_++);
    steps_.push_back(s);
    return {s.dst, dstInt};
  }
  // fp32
  V add(A a, A b) { return op(EuOp::Add, false, a, b); }
  V sub(A a, A b) { return op(EuOp::Sub, false, a, b); }
  V mul(A a, A b) { return op(EuOp::Mul, false, a, b); }
  V div(A a, A b) { return op(EuOp::Divide, false, a, b); }
  V max(A a, A b) { return op(EuOp::Max, false, a, b); }
  V min(A a, A b) { return op(EuOp::Min, false, a, b); }
  V rsqrt(A a) { return op(EuOp::Rsqrt, false, a); }
  // a > b ? c : d. opd3 shares opd2's layout: d is a constant or, like c,
  // a register of the result's shape (inputs are copied into one).
  V selectGt(A a, A b, A c, A d) { return op(EuOp::SelectGt, false, a, b, owned(c), owned(d)); }
  V selectEq(A a, A b, A c, A d) { return op(EuOp::SelectEq, false, a, b, owned(c), owned(d)); }
  V select(A cond, A t, A e) { return op(EuOp::Select, false, cond, t, e); } // cond != 0 ? t : e
  V toInt(A a) { return op(EuOp::Fp32ToInt, true, a); } // round half to even, saturated
  V toFloat(A a) { return op(EuOp::Copy, false, a); }   // int32 -> fp32
  V copy(A a) { return op(EuOp::Copy, false, a); }
  // Horner over `coef` (lowest term first) at x.
  V taylor(V x, std::vector<float> coef) {
    V r = op(EuOp::Taylor, false, x);
    steps_.back().poly = uint8_t(polys_.size());
    polys_.push_back(std::move(coef));
    return r;
  }
  // int32 on the same bytes
  V iadd(A a, A b) { return op(EuOp::Add, true, a, b); }
  V isub(A a, A b) { return op(EuOp::Sub, true, a, b); }
  V imin(A a, A b) { return op(EuOp::Min, true, a, b); }
  V iand(A a, A b) { return op(EuOp::And, true, a, b); }
  V ior(A a, A b) { return op(EuOp::Or, true, a, b); }
  V ixor(A a, A b) { return op(EuOp::Xor, true, a, b); }
  V shl(A a, int s) { return op(EuOp::Shift, true, a, i(s)); }                // arithmetic
  V lshr(A a, int s) { return op(EuOp::Shift, true, a, i(-s), {}, {}, true); } // logical
  V lshl(A a, int s) { return op(EuOp::Shift, true, a, i(s), {}, {}, true); }   // logical: wraps

  KernelProgram finish(V result);

private:
  struct Pending {
    EuOp eu;
    bool dstInt, logical;
    std::array<A, 4> ops;
    int dst;
    uint8_t poly = 0;
  };
  bool isInput(const A &a) const { return a.kind == Operand::Reg && a.v.id < int(inputs_); }
  A owned(A a) { return isInput(a) ? A(copy(a)) : a; }

  unsigned inputs_;
  unsigned values_ = inputs_;
  std::vector<Pending> steps_;
  std::vector<std::vector<float>> polys_;
};

KernelProgram Recipe::finish(V result) {
  KernelProgram p;
  p.inputs = inputs_;
  p.polys = polys_;
  const size_t n = steps_.size();
  std::vector<size_t> lastRead(values_, 0);
  for (size_t s = 0; s < n; ++s)
    for (const A &a : steps_[s].ops)
      if (a.kind == Operand::Reg) lastRead[size_t(a.v.id)] = s;
  lastRead[size_t(result.id)] = n;
  size_t resultDef = n;
  for (size_t s = 0; s < n; ++s)
    if (steps_[s].dst == result.id) resultDef = s;
  // Physical registers: 0 the result, 1..inputs the inputs, then temps.
  std::vector<int> reg(values_, -1);
  for (unsigned k = 0; k < inputs_; ++k) reg[k] = int(1 + k);
  std::vector<int> holder; // per temp / result register: the value in it, -1 free
  holder.push_back(-1);    // register 0
  auto regOfSlot = [&](size_t slot) { return slot == 0 ? 0 : int(inputs_ + slot); };
  for (size_t s = 0; s < n; ++s) {
    Pending &st = steps_[s];
    // Values read for the last time here free their registers first.
    for (size_t slot = 0; slot < holder.size(); ++slot)
      if (holder[slot] >= 0 && lastRead[size_t(holder[slot])] <= s) holder[slot] = -1;
    size_t slot = SIZE_MAX;
    if (st.dst == result.id) {
      assert(holder[0] < 0);
      slot = 0;
    } else {
      // The result register only for values dead by the result's step.
      if (holder[0] < 0 && lastRead[size_t(st.dst)] <= resultDef) slot = 0;
      for (size_t k = 1; k < holder.size() && slot == SIZE_MAX; ++k)
        if (holder[k] < 0) slot = k;
      if (slot == SIZE_MAX) slot = holder.size(), holder.push_back(-1);
    }
    holder[slot] = st.dst;
    reg[size_t(st.dst)] = regOfSlot(slot);
  }
  p.temps = unsigned(holder.size() - 1);
  for (const Pending &st : steps_) {
    Step out;
    out.eu = st.eu, out.dstInt = st.dstInt, out.logical = st.logical, out.poly = st.poly;
    out.dst = uint8_t(reg[size_t(st.dst)]);
    Operand *dst[4] = {&out.a, &out.b, &out.c, &out.d};
    for (size_t k = 0; k < 4; ++k) {
      const A &a = st.ops[k];
      dst[k]->kind = a.kind, dst[k]->bits = a.bits;
      if (a.kind == Operand::Reg) dst[k]->reg = uint8_t(reg[size_t(a.v.id)]), dst[k]->asInt = a.v.asInt;
    }
    p.steps.push_back(out);
  }
  return p;
}

// ---------------------------------------------------------------------------
// The recipes. Constants are fp32; "exact" products below rely on the few
// significant bits of the *_HI parts (Cody-Waite range reduction).
constexpr float kLog2e = 1.44269504f;
constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f; // ln 2 = hi + lo, hi has 9 bits
constexpr float kPiA = 3.140625f, kPiB = 9.67741012573242188e-4f, kPiC = -8.74227766e-8f;
constexpr float kExpHi = 88.7228317f, kExpLo = -87.3365479f; // ln(FLT_MAX), ln(FLT_MIN)

std::vector<float> series(unsigned terms, double (*coef)(unsigned k)) {
  std::vector<float> c(terms);
  for (unsigned k = 0; k < terms; ++k) c[k] = float(coef(k));
  return c;
}
double factorial(unsigned k) { return k == 0 ? 1.0 : k * factorial(k - 1); }

// exp(x): n = round(x log2 e) (at most 127), r = x - n ln 2 in two parts,
// exp(r) by 10 Taylor terms (|r| <= 0.69, error < 1e-8), times 2^n built as
// the bits (n + 127) << 23. Above ln(FLT_MAX): inf; below ln(FLT_MIN): 0.
V expOf(Recipe &R, V x) {
  V c = R.min(R.max(x, f(kExpLo)), f(kExpHi));
  V n = R.imin(R.toInt(R.mul(c, f(kLog2e))), i(127));
  V nf = R.toFloat(n);
  V r = R.sub(R.sub(c, R.mul(nf, f(kLn2Hi))), R.mul(nf, f(kLn2Lo)));
  V p = R.taylor(r, series(10, [](unsigned k) { return 1.0 / factorial(k); }));
  V pow2 = R.iadd(R.shl(n, 23), i(0x3F800000));
  V y = R.mul(p, asFloat(pow2));
  y = R.selectGt(f(kExpHi), x, y, f(kInf));
  return R.selectGt(x, f(kExpLo), y, f(0.0f));
}

// log(x), x > 0 normal: x = 2^k m with m in [sqrt(2)/2, sqrt(2)) by integer
// arithmetic on the bits (bits + 0x3F800000 - 0x3F3504F3 moves the
// boundary), log m = 2 atanh(s) with s = (m - 1) / (m + 1), |s| < 0.172, as
// s * P(s^2) with 7 terms (error < 1e-10); + k ln 2 in two parts. 0 gives
// -inf, a negative x NaN.
V logOf(Recipe &R, V x) {
  V ix = R.iadd(asInt(x), i(0x3F800000 - 0x3F3504F3));
  V kf = R.toFloat(R.isub(R.lshr(ix, 23), i(127)));
  V m = asFloat(R.iadd(R.iand(ix, i(0x007FFFFF)), i(0x3F3504F3)));
  V s = R.div(R.sub(m, f(1.0f)), R.add(m, f(1.0f)));
  V ls = R.mul(s, R.taylor(R.mul(s, s), series(7, [](unsigned k) { return 2.0 / (2 * k + 1); })));
  V y = R.add(R.mul(kf, f(kLn2Hi)), R.add(ls, R.mul(kf, f(kLn2Lo))));
  y = R.selectGt(x, f(0.0f), y, f(std::numeric_limits<float>::quiet_NaN()));
  return R.select(x, y, f(-kInf));
}

// log(1 + u) for u in [0, 1]: 2 atanh(u / (2 + u)), 8 terms (error < 1e-9).
V log1pOf(Recipe &R, V u) {
  V s = R.div(u, R.add(u, f(2.0f)));
  return R.mul(s, R.taylor(R.mul(s, s), series(8, [](unsigned k) { return 2.0 / (2 * k + 1); })));
}

V absOf(Recipe &R, V x) { return asFloat(R.iand(asInt(x), i(0x7FFFFFFF))); }
V signBit(Recipe &R, V x) { return R.iand(asInt(x), i(INT32_MIN)); }
// |v| with the sign of the bits in `sign` (v >= 0).
V withSign(Recipe &R, V v, V sign) { return asFloat(R.ior(asInt(v), sign)); }

// expm1(x): exp(x) - 1, below |x| = ln2/2 x * P(x) (9 terms) instead of the
// cancelling difference.
V expm1Of(Recipe &R, V x) {
  V big = R.sub(expOf(R, x), f(1.0f));
  V small = R.mul(x, R.taylor(x, series(9, [](unsigned k) { return 1.0 / factorial(k + 1); })));
  return R.selectGt(absOf(R, x), f(0.3466f), big, small);
}

// tanh: below |x| = 0.55 x * P(x^2) (9 Taylor terms, error < 1e-8); above,
// 1 - 2 / (exp(2|x|) + 1) with x's sign.
V tanhOf(Recipe &R, V x) {
  static const std::vector<float> c = {1.0f, -1.0f / 3, 2.0f / 15, -17.0f / 315, 62.0f / 2835, -1382.0f / 155925,
                                       21844.0f / 6081075, -929569.0f / 638512875, 6404582.0f / 10854718875.0f};
  V small = R.mul(x, R.taylor(R.mul(x, x), c));
  V a = absOf(R, x);
  V big = R.sub(f(1.0f), R.div(f(2.0f), R.add(expOf(R, R.mul(a, f(2.0f))), f(1.0f))));
  return R.selectGt(a, f(0.55f), withSign(R, big, signBit(R, x)), small);
}

V sigmoidOf(Recipe &R, V x) { return R.div(f(1.0f), R.add(expOf(R, R.mul(x, f(-1.0f))), f(1.0f))); }

// erf for |x| < 0.5: the Maclaurin series x * P(x^2), 8 terms (error < 1e-9).
V erfSmallOf(Recipe &R, V x) {
  return R.mul(x, R.taylor(R.mul(x, x), series(8, [](unsigned k) {
                             return (k % 2 ? -1.0 : 1.0) * 2.0 / std::sqrt(M_PI) / (factorial(k) * (2 * k + 1));
                           })));
}
// erfc(a), a >= 0: Numerical Recipes' erfcc, t exp(-a^2 + P(t)) with
// t = 1 / (1 + a/2) and 10 Chebyshev-fitted terms (relative error < 1.2e-7
// everywhere), so 1 + erf(x) of a negative x keeps its precision too.
V erfcOf(Recipe &R, V a) {
  V t = R.div(f(1.0f), R.add(R.mul(a, f(0.5f)), f(1.0f)));
  V p = R.taylor(t, {-1.26551223f, 1.00002368f, 0.37409196f, 0.09678418f, -0.18628806f, 0.27886807f, -1.13520398f,
                     1.48851587f, -0.82215223f, 0.17087277f});
  return R.mul(t, expOf(R, R.sub(p, R.mul(a, a))));
}
V erfOf(Recipe &R, V x) {
  V a = absOf(R, x);
  V big = withSign(R, R.sub(f(1.0f), erfcOf(R, a)), signBit(R, x));
  return R.selectGt(a, f(0.5f), big, erfSmallOf(R, x));
}
// gelu = x/2 (1 + erf(u)), u = x / sqrt(2); 1 + erf(u) is erfc(-u) for
// u <= -0.5 and 2 - erfc(u) for u >= 0.5.
V geluOf(Recipe &R, V x) {
  V u = R.mul(x, f(float(M_SQRT1_2)));
  V a = absOf(R, u);
  V ec = erfcOf(R, a);
  V big = R.selectGt(u, f(0.0f), R.sub(f(2.0f), ec), ec);
  V h = R.selectGt(a, f(0.5f), big, R.add(erfSmallOf(R, u), f(1.0f)));
  return R.mul(R.mul(x, f(0.5f)), h);
}

// round half to even through fp32_to_int; |x| >= 2^23 is already integral.
V roundOf(Recipe &R, V x) {
  V r = R.toFloat(R.toInt(x));
  return R.selectGt(absOf(R, x), f(8388608.0f), x, r);
}

// sin / cos: n = round(x / pi), r = x - n pi in three parts (|r| <= pi/2),
// the Taylor series of sin (r * P(r^2), 8 terms) or cos (P(r^2), 9 terms),
// negated for odd n (bit 0 of n moved to the sign bit).
V sinCosOf(Recipe &R, V x, bool isCos) {
  V n = R.toInt(R.mul(x, f(float(1.0 / M_PI))));
  V nf = R.toFloat(n);
  V r = R.sub(R.sub(R.sub(x, R.mul(nf, f(kPiA))), R.mul(nf, f(kPiB))), R.mul(nf, f(kPiC)));
  V z = R.mul(r, r);
  V p = isCos ? R.taylor(z, series(9, [](unsigned k) { return (k % 2 ? -1.0 : 1.0) / factorial(2 * k); }))
              : R.mul(r, R.taylor(z, series(8, [](unsigned k) { return (k % 2 ? -1.0 : 1.0) / factorial(2 * k + 1); })));
  V odd = R.lshl(R.iand(n, i(1)), 31);
  return asFloat(R.ixor(asInt(p), odd));
}

using RecipeFn = V (*)(Recipe &, V x, float a, float b);
struct UnaryRecipe {
  kernels::UnaryKind kind;
  const char *name;
  RecipeFn fn; // null: no fp32 recipe (the name is still the attribute's)
};

// The table of compositions. Sigmoid, HardSigmoid, HardSwish, Relu,
// LeakyRelu and Clip have back-end kinds of their own.
const std::vector<UnaryRecipe> &recipes() {
  using K = kernels::UnaryKind;
  static const std::vector<UnaryRecipe> t = {
      {K::Exp, "exp", [](Recipe &R, V x, float, float) { return expOf(R, x); }},
      {K::Log, "log", [](Recipe &R, V x, float, float) { return logOf(R, x); }},
      // sqrt = x * rsqrt(x), 0 for x = 0 (where rsqrt is inf).
      {K::Sqrt, "sqrt", [](Recipe &R, V x, float, float) { return R.select(x, R.mul(x, R.rsqrt(x)), f(0.0f)); }},
      {K::Rsqrt, "rsqrt", [](Recipe &R, V x, float, float) { return R.rsqrt(x); }},
      {K::Reciprocal, "reciprocal", [](Recipe &R, V x, float, float) { return R.div(f(1.0f), x); }},
      {K::Abs, "abs", [](Recipe &R, V x, float, float) { return absOf(R, x); }},
      {K::Neg, "neg", [](Recipe &R, V x, float, float) { return R.mul(x, f(-1.0f)); }},
      {K::Sign, "sign", [](Recipe &R, V x, float, float) {
         return R.sub(R.selectGt(x, f(0.0f), f(1.0f), f(0.0f)), R.selectGt(f(0.0f), x, f(1.0f), f(0.0f)));
       }},
      {K::Round, "round", [](Recipe &R, V x, float, float) { return roundOf(R, x); }},
      {K::Floor, "floor", [](Recipe &R, V x, float, float) {
         V r = roundOf(R, x);
         return R.selectGt(r, x, R.sub(r, f(1.0f)), r);
       }},
      {K::Ceil, "ceil", [](Recipe &R, V x, float, float) {
         V r = roundOf(R, x);
         return R.selectGt(x, r, R.add(r, f(1.0f)), r);
       }},
      {K::Tanh, "tanh", [](Recipe &R, V x, float, float) { return tanhOf(R, x); }},
      {K::SiLU, "silu", [](Recipe &R, V x, float, float) { return R.mul(x, sigmoidOf(R, x)); }},
      {K::Erf, "erf", [](Recipe &R, V x, float, float) { return erfOf(R, x); }},
      {K::Gelu, "gelu", [](Recipe &R, V x, float, float) { return geluOf(R, x); }},
      // softplus = max(x, 0) + log1p(exp(-|x|)): no overflow, no cancellation.
      {K::Softplus, "softplus", [](Recipe &R, V x, float, float) {
         V e = expOf(R, asFloat(R.ior(asInt(x), i(INT32_MIN))));
         return R.add(R.max(x, f(0.0f)), log1pOf(R, e));
       }},
      {K::Softsign, "softsign", [](Recipe &R, V x, float, float) { return R.div(x, R.add(absOf(R, x), f(1.0f))); }},
      // mish = x * tanh(log(1 + e^x)) = x * n / (n + 2), n = e^x (e^x + 2); e^x of min(x, 20).
      {K::Mish, "mish", [](Recipe &R, V x, float, float) {
         V e = expOf(R, R.min(x, f(20.0f)));
         V n = R.mul(e, R.add(e, f(2.0f)));
         return R.mul(x, R.div(n, R.add(n, f(2.0f))));
       }},
      // elu = max(x, 0) + alpha * expm1(min(x, 0)); selu = gamma * elu.
      {K::Elu, "elu", [](Recipe &R, V x, float a, float) {
         return R.add(R.max(x, f(0.0f)), R.mul(expm1Of(R, R.min(x, f(0.0f))), f(a)));
       }},
      {K::Selu, "selu", [](Recipe &R, V x, float a, float b) {
         return R.mul(R.add(R.max(x, f(0.0f)), R.mul(expm1Of(R, R.min(x, f(0.0f))), f(a))), f(b));
       }},
      {K::Sin, "sin", [](Recipe &R, V x, float, float) { return sinCosOf(R, x, false); }},
      {K::Cos, "cos", [](Recipe &R, V x, float, float) { return sinCosOf(R, x, true); }},
      {K::Sigmoid, "sigmoid", nullptr},
      {K::HardSigmoid, "hard_sigmoid", nullptr},
      {K::HardSwish, "hard_swish", nullptr},
      {K::Relu, "relu", nullptr},
      {K::LeakyRelu, "leaky_relu", nullptr},
      {K::Clip, "clip", nullptr},
      {K::Identity, "identity", nullptr},
  };
  return t;
}

const UnaryRecipe *recipeOf(kernels::UnaryKind kind) {
  for (const UnaryRecipe &r : recipes())
    if (r.kind == kind) return &r;
  return nullptr;
}

// ---------------------------------------------------------------------------
// The reference: each step on one element with the simulator's arithmetic
// (simulator/semantics/tiu/Elementwise.cpp): fp32 steps in IEEE single, one
// rounding per command; integer steps exact, saturated to int32 on write
// (bitwise ops and logical shifts keep the low 32 bits); fp32 -> int rounds
// half to even.
struct Cell {
  uint32_t bits = 0;
  float f() const { return sim::bitsFloat(bits); }
  int64_t i() const { return int64_t(int32_t(bits)); }
};
constexpr sim::IntRange kInt32{INT32_MIN, INT32_MAX};

} // namespace

std::optional<KernelProgram> unaryKernel(kernels::UnaryKind kind, float a, float b) {
  const UnaryRecipe *r = recipeOf(kind);
  if (!r || !r->fn) return std::nullopt;
  Recipe R(1);
  V y = r->fn(R, R.in(0), a, b);
  return R.finish(y);
}

bool hasUnaryRecipe(kernels::UnaryKind kind, float a, float b) { return unaryKernel(kind, a, b).has_value(); }

const KernelProgram &powKernel() {
  static const KernelProgram p = [] {
    Recipe R(2);
    V a = R.in(0), b = R.in(1);
    V e = expOf(R, R.mul(b, logOf(R, absOf(R, a))));
    // The sign: a < 0 and b odd (bit 0 of round(b)).
    V odd = R.lshl(R.iand(R.toInt(b), i(1)), 31);
    V y = asFloat(R.ixor(asInt(e), R.iand(odd, signBit(R, a))));
    return R.finish(R.select(b, y, f(1.0f)));
  }();
  return p;
}

const KernelProgram &sigmoidKernel() {
  static const KernelProgram p = [] {
    using S = SigmoidRecipe;
    Recipe R(1);
    V t = R.min(R.max(R.in(0), f(-S::kClamp)), f(S::kClamp));
    t = R.mul(t, f(-1.0f / float(1u << S::kSquarings)));
    V e = R.taylor(t, std::vector<float>(S::expCoefficients().begin(), S::expCoefficients().end()));
    for (unsigned k = 0; k < S::kSquarings; ++k) e = R.mul(e, e);
    return R.finish(R.div(f(1.0f), R.add(e, f(1.0f))));
  }();
  return p;
}

const KernelProgram &preluKernel() {
  static const KernelProgram p = [] {
    Recipe R(2);
    V a = R.in(0);
    return R.finish(R.add(R.max(a, f(0.0f)), R.mul(R.min(a, f(0.0f)), R.in(1))));
  }();
  return p;
}

const KernelProgram &compareKernel(bool isGreater, bool isLess) {
  auto make = [](int which) {
    Recipe R(2);
    V a = R.in(0), b = R.in(1);
    return R.finish(which == 0   ? R.selectGt(a, b, f(1.0f), f(0.0f))
                    : which == 1 ? R.selectGt(b, a, f(1.0f), f(0.0f))
                                 : R.selectEq(a, b, f(1.0f), f(0.0f)));
  };
  static const std::array<KernelProgram, 3> kernels{make(0), make(1), make(2)};
  return kernels[isGreater ? 0 : isLess ? 1 : 2];
}

const KernelProgram &whereKernel() {
  static const KernelProgram p = [] {
    Recipe R(3);
    return R.finish(R.select(R.in(0), R.in(1), R.in(2)));
  }();
  return p;
}

float runKernel(const KernelProgram &p, const float *in) {
  std::array<Cell, 64> reg{};
  assert(1 + p.inputs + p.temps <= reg.size());
  for (unsigned k = 0; k < p.inputs; ++k) reg[1 + k].bits = sim::floatBits(in[k]);
  auto val = [&](const Operand &o) {
    Cell c;
    c.bits = o.kind == Operand::Reg ? reg[o.reg].bits : o.bits;
    return c;
  };
  for (const Step &s : p.steps) {
    const Cell a = val(s.a), b = val(s.b), c = val(s.c), d = val(s.d);
    const bool isFloat = !(s.a.kind == Operand::Reg ? s.a.asInt : s.a.kind == Operand::I32);
    Cell r;
    if (isFloat) {
      const float x = a.f(), y = b.f();
      float v = 0.0f;
      switch (s.eu) {
      case EuOp::Add: v = x + y; break;
      case EuOp::Sub: v = x - y; break;
      case EuOp::Mul: v = x * y; break;
      case EuOp::Divide: v = x / y; break;
      case EuOp::Max: v = std::max(x, y); break;
      case EuOp::Min: v = std::min(x, y); break;
      case EuOp::Rsqrt: v = 1.0f / std::sqrt(x); break;
      case EuOp::SelectGt: v = x > y ? c.f() : d.f(); break;
      case EuOp::SelectEq: v = x == y ? c.f() : d.f(); break;
      case EuOp::Select: v = x != 0.0f ? y : c.f(); break;
      case EuOp::Taylor: {
        const std::vector<float> &coef = p.polys[s.poly];
        for (size_t t = coef.size(); t-- > 0;) {
          float m = v * x;
          v = m + coef[t];
        }
        break;
      }
      default: v = x; break; // Copy, Fp32ToInt
      }
      r.bits = s.dstInt ? uint32_t(int32_t(sim::fp32ToInt(v, kInt32))) : sim::floatBits(v);
    } else {
      const int64_t x = a.i(), y = b.i();
      int64_t v = 0;
      bool wraps = false;
      switch (s.eu) {
      case EuOp::Add: v = x + y; break;
      case EuOp::Sub: v = x - y; break;
      case EuOp::Min: v = std::min(x, y); break;
      case EuOp::Max: v = std::max(x, y); break;
      case EuOp::And: v = x & y, wraps = true; break;
      case EuOp::Or: v = x | y, wraps = true; break;
      case EuOp::Xor: v = x ^ y, wraps = true; break;
      case EuOp::Shift:
        if (s.logical) {
          const uint64_t u = uint64_t(x) & 0xFFFFFFFFull;
          v = int64_t(y >= 0 ? u << y : u >> -y), wraps = true;
        } else {
          v = y >= 0 ? sim::satShl(x, unsigned(y)) : sim::roundingRightShift(x, unsigned(-y));
        }
        break;
      default: v = x; break; // Copy
      }
      if (!s.dstInt) r.bits = sim::floatBits(float(v));
      else r.bits = wraps ? uint32_t(v) : uint32_t(int32_t(sim::saturate(v, kInt32)));
    }
    reg[s.dst] = r;
  }
  return reg[KernelProgram::kResult].f();
}

const char *unaryName(kernels::UnaryKind kind) {
  const UnaryRecipe *r = recipeOf(kind);
  return r ? r->name : "?";
}

std::optional<kernels::UnaryKind> unaryFromName(std::string_view name) {
  for (const UnaryRecipe &r : recipes())
    if (name == r.name) return r.kind;
  return std::nullopt;
}

namespace emit {

uint16_t loadKernelCoefficients(Emitter &e, const KernelProgram &p, uint32_t offset, uint16_t wait) {
  uint16_t id = wait;
  uint32_t k = 0;
  for (const std::vector<float> &poly : p.polys)
    for (float c : poly) {
      isa::GdmaCommand g;
      g.direction = isa::GdmaDirection::S2L, g.specialFunc = isa::GdmaSpecialFunc::ConstantFill;
      g.constantValue = sim::floatBits(c);
      g.src.format = g.dst.format = isa::GdmaFormat::Fp32;
      g.src.shape = g.dst.shape = {1, e.hw.npuLanes, 1, 1};
      g.dst.addr = offset + 4 * k++, g.dst.stride = {1, 1, 1, 1};
      id = e.b->gdma(g, wait);
    }
  return id;
}

uint16_t emitKernel(Emitter &e, const KernelProgram &p, const std::vector<LocalTensor> &ins, const LocalTensor &out,
                    const std::vector<LocalTensor> &temps, uint32_t coef, uint16_t wait) {
  auto regTensor = [&](uint8_t r) -> const LocalTensor & {
    return r == KernelProgram::kResult ? out : r <= p.inputs ? ins[r - 1] : temps[r - 1 - p.inputs];
  };
  auto operand = [&](const Operand &o) {
    if (o.kind == Operand::F32) return constantF(sim::bitsFloat(o.bits));
    if (o.kind == Operand::I32) return constant(DType::I32, int32_t(o.bits));
    return regTensor(o.reg).withType(o.asInt ? DType::I32 : DType::F32).operand(e.hw);
  };
  uint16_t id = 0;
  for (const Step &s : p.steps) {
    isa::Arith c;
    c.eu = s.eu, c.logicalShift = s.logical;
    LocalTensor res = regTensor(s.dst).withType(s.dstInt ? DType::I32 : DType::F32);
    res.shape = out.shape;
    c.res0 = res.operand(e.hw);
    c.opd0 = operand(s.a), c.opd0.shape = out.shape;
    if (s.eu == EuOp::Taylor) {
      const uint32_t terms = uint32_t(p.polys[s.poly].size());
      LocalTensor t;
      t.offset = coef + 4 * p.polyOffset(s.poly), t.dtype = DType::F32, t.shape = {1, out.shape.c, 1, terms};
      t.stride = {0, 0, 0, 1};
      c.opd1 = t.operand(e.hw);
      c.opdCount = 2;
    } else {
      if (s.b.kind != Operand::None) c.opd1 = operand(s.b), c.opd1.shape = out.shape;
      if (s.c.kind != Operand::None) c.opd2 = operand(s.c);
      if (s.d.kind != Operand::None) {
        const LocalOperand d = operand(s.d);
        c.opd3Const = d.isConst, c.opd3Addr = d.isConst ? d.constValue : d.addr;
      }
      c.opdCount = uint8_t(s.reads());
    }
    id = e.b->tiu(c, wait);
  }
  return id;
}

} // namespace emit

} // namespace tpu::backend
