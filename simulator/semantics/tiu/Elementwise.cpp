// Element-wise commands: ar, md_scalar, md_sfu, md_linear, md_cmp and vc
// (vector correlation: opd0 broadcast along w, opd1 along n, c and h), one eu
// op over whole rows (runElementwise).
#include "simulator/semantics/tiu/TiuClasses.h"
#include "simulator/semantics/tiu/TiuSupport.h"

#include <cmath>
#include <vector>

namespace tpu::sim::tiu {

using namespace isa;

namespace {

// Which inputs an eu op reads.
struct Arity {
  bool a, b, c, d; // opd0, opd1, opd2, opd3
};
Arity arityOf(EuOp e, TiuTask task) {
  switch (e) {
  case EuOp::Copy: case EuOp::Fp32ToInt: case EuOp::IntNormalize: case EuOp::Fp32Normalize:
  case EuOp::Rsqrt:
    return {true, false, false, false};
  case EuOp::AddTree: case EuOp::Select: return {true, true, true, false};
  case EuOp::SelectGt: case EuOp::SelectEq: case EuOp::CmpSelect: return {true, true, true, true};
  case EuOp::Mac: return {true, true, task == TiuTask::MdLinear, false};
  default: return {true, true, false, false};
  }
}

bool isBitwise(EuOp e) { return e == EuOp::And || e == EuOp::Or || e == EuOp::Xor; }
bool needsFloat(EuOp e) {
  return e == EuOp::Divide || e == EuOp::Taylor || e == EuOp::Fp32ToInt || e == EuOp::Fp32Normalize ||
         e == EuOp::Rsqrt;
}
bool needsInt(EuOp e) { return isBitwise(e) || e == EuOp::Shift || e == EuOp::IntNormalize; }

// Leading redundant sign bits of v as a `bits`-bit integer.
int64_t redundantSignBits(int64_t v, unsigned bits) {
  int64_t n = 0;
  for (int b = int(bits) - 2; b >= 0 && ((v >> b) & 1) == ((v >> (bits - 1)) & 1); --b) ++n;
  return n;
}

struct ElementwiseJob {
  EuOp eu;
  LocalTensor res0, res1, a, b, c, d;
  Arity arity;
  bool hasRes1 = false, isFloat = false, relu = false, logicalShift = false;
  uint32_t rshift = 0;
  uint32_t taylorTerms = 0;
  Shape4 aMask{1, 1, 1, 1}, bMask{1, 1, 1, 1}; // vc: 0 = broadcast index along that dim
};

int64_t shiftBy(int64_t a, int64_t b) {
  int64_t s = std::clamp<int64_t>(b, -63, 62);
  return s >= 0 ? satShl(a, unsigned(s)) : roundingRightShift(a, unsigned(-s));
}

// The ops whose row is the same expression in both domains (the integer
// domain saturates in the write-back, not here). Returns false for the others.
template <class T>
bool sameRowOp(EuOp eu, size_t W, const T *a, const T *b, const T *c, const T *d, T *r, T *r1) {
  switch (eu) {
  case EuOp::Add: for (size_t i = 0; i < W; ++i) r[i] = a[i] + b[i]; break;
  case EuOp::Sub: for (size_t i = 0; i < W; ++i) r[i] = a[i] - b[i]; break;
  case EuOp::Max: for (size_t i = 0; i < W; ++i) r[i] = std::max(a[i], b[i]); break;
  case EuOp::Min: for (size_t i = 0; i < W; ++i) r[i] = std::min(a[i], b[i]); break;
  case EuOp::SelectGt: for (size_t i = 0; i < W; ++i) r[i] = a[i] > b[i] ? c[i] : d[i]; break;
  case EuOp::SelectEq: for (size_t i = 0; i < W; ++i) r[i] = a[i] == b[i] ? c[i] : d[i]; break;
  case EuOp::AddTree: for (size_t i = 0; i < W; ++i) r[i] = a[i] + b[i] + c[i]; break;
  case EuOp::Cmp: for (size_t i = 0; i < W; ++i) r[i] = a[i] > b[i] ? T(1) : T(0); break;
  case EuOp::Select: for (size_t i = 0; i < W; ++i) r[i] = a[i] != T(0) ? b[i] : c[i]; break;
  case EuOp::CmpSelect:
    for (size_t i = 0; i < W; ++i) {
      r[i] = a[i] > b[i] ? a[i] : b[i];
      r1[i] = a[i] > b[i] ? c[i] : d[i];
    }
    break;
  default: return false;
  }
  return true;
}

// One row of an integer-domain op: r = eu(a, b, c, d, old). Returns whether r
// keeps its low bits (bitwise) instead of the saturating write-back.
bool intRowOp(const ElementwiseJob &j, size_t W, const int64_t *a, const int64_t *b, const int64_t *c,
              const int64_t *d, const int64_t *old, int64_t *r, int64_t *r1) {
  if (sameRowOp(j.eu, W, a, b, c, d, r, r1)) return false;
  const unsigned aBits = 8 * j.a.elemBytes;
  switch (j.eu) {
  case EuOp::Mul: for (size_t i = 0; i < W; ++i) r[i] = satMul(a[i], b[i]); break;
  case EuOp::Mac:
    for (size_t i = 0; i < W; ++i) r[i] = satAdd(satMul(a[i], b[i]), j.arity.c ? c[i] : old[i]);
    break;
  case EuOp::Shift:
    if (!j.logicalShift) {
      for (size_t i = 0; i < W; ++i) r[i] = shiftBy(a[i], b[i]);
      break;
    }
    for (size_t i = 0; i < W; ++i) {
      uint64_t bits = uint64_t(a[i]) & (aBits >= 64 ? ~0ull : (1ull << aBits) - 1);
      int64_t s = std::clamp<int64_t>(b[i], -63, 62);
      r[i] = int64_t(s >= 0 ? bits << s : bits >> -s);
    }
    return true;
  case EuOp::And: for (size_t i = 0; i < W; ++i) r[i] = a[i] & b[i]; return true;
  case EuOp::Or: for (size_t i = 0; i < W; ++i) r[i] = a[i] | b[i]; return true;
  case EuOp::Xor: for (size_t i = 0; i < W; ++i) r[i] = a[i] ^ b[i]; return true;
  case EuOp::IntNormalize: for (size_t i = 0; i < W; ++i) r[i] = redundantSignBits(a[i], aBits); break;
  case EuOp::Copy: std::copy(a, a + W, r); break;
  case EuOp::SquareSum: for (size_t i = 0; i < W; ++i) r[i] = satMul(a[i] + b[i], a[i] + b[i]); break;
  case EuOp::SquareDiff: for (size_t i = 0; i < W; ++i) r[i] = satMul(a[i] - b[i], a[i] - b[i]); break;
  default: break; // excluded by validation
  }
  return false;
}

// One row of an fp32-domain op. fp32_normalize writes integers to ri and
// returns true; everything else writes r.
bool floatRowOp(const ElementwiseJob &j, size_t W, const float *a, const float *b, const float *c, const float *d,
                const float *old, const float *coef, float *r, float *r1, int64_t *ri) {
  if (sameRowOp(j.eu, W, a, b, c, d, r, r1)) return false;
  switch (j.eu) {
  case EuOp::Mul: for (size_t i = 0; i < W; ++i) r[i] = a[i] * b[i]; break;
  case EuOp::Mac:
    for (size_t i = 0; i < W; ++i) r[i] = a[i] * b[i] + (j.arity.c ? c[i] : old[i]);
    break;
  case EuOp::Divide: for (size_t i = 0; i < W; ++i) r[i] = a[i] / b[i]; break;
  case EuOp::Taylor: // Horner, highest term first: coefficient t of this channel is coef[t]
    for (size_t i = 0; i < W; ++i) {
      float v = 0.0f;
      for (uint32_t t = j.taylorTerms; t-- > 0;) v = v * a[i] + coef[t];
      r[i] = v;
    }
    break;
  case EuOp::Fp32ToInt: case EuOp::Copy: std::copy(a, a + W, r); break;
  case EuOp::Fp32Normalize:
    for (size_t i = 0; i < W; ++i) {
      int e = 0;
      std::frexp(a[i], &e);
      ri[i] = a[i] == 0.0f ? 0 : e - 1;
    }
    return true;
  case EuOp::Rsqrt: for (size_t i = 0; i < W; ++i) r[i] = 1.0f / std::sqrt(a[i]); break;
  case EuOp::SquareSum: for (size_t i = 0; i < W; ++i) r[i] = (a[i] + b[i]) * (a[i] + b[i]); break;
  case EuOp::SquareDiff: for (size_t i = 0; i < W; ++i) r[i] = (a[i] - b[i]) * (a[i] - b[i]); break;
  default: break; // excluded by validation
  }
  return false;
}

// Integer ops whose operands and result fit int32 and whose exact results
// fit int32 run in 32 bits (narrowRowOp), which vectorizes: the same values
// as intRowOp, which never saturates there. Sums of int32 operands are
// checked per row; a row that overflows is redone in 64 bits.
bool fitsInt32Values(const LocalTensor &t) { return t.elemBytes <= 2 || (t.elemBytes == 4 && t.isSigned); }
uint64_t maxMagnitude(const LocalTensor &t) {
  return t.elemBytes == 1 ? (t.isSigned ? 128 : 255) : (t.isSigned ? 32768 : 65535);
}
bool fitsNarrowOp(const ElementwiseJob &j) {
  if (j.isFloat || j.hasRes1 || j.res0.isFloat() || !fitsInt32Values(j.res0) || !fitsInt32Values(j.a)) return false;
  switch (j.eu) {
  case EuOp::Copy: return true;
  case EuOp::Add: case EuOp::Sub: case EuOp::Max: case EuOp::Min: return fitsInt32Values(j.b);
  case EuOp::Mul:
    return j.a.elemBytes <= 2 && j.b.elemBytes <= 2 && maxMagnitude(j.a) * maxMagnitude(j.b) < (uint64_t(1) << 31);
  default: return false;
  }
}
// Returns false when a sum or difference overflowed int32 (r is then unused).
TPU_MULTIVERSION bool narrowRowOp(EuOp eu, size_t W, const int32_t *__restrict a, const int32_t *__restrict b,
                                  int32_t *__restrict r) {
  uint32_t overflow = 0;
  switch (eu) {
  case EuOp::Mul: for (size_t i = 0; i < W; ++i) r[i] = a[i] * b[i]; break;
  case EuOp::Add:
    for (size_t i = 0; i < W; ++i) {
      const uint32_t x = uint32_t(a[i]), y = uint32_t(b[i]), z = x + y;
      overflow |= (x ^ z) & (y ^ z);
      r[i] = int32_t(z);
    }
    break;
  case EuOp::Sub:
    for (size_t i = 0; i < W; ++i) {
      const uint32_t x = uint32_t(a[i]), y = uint32_t(b[i]), z = x - y;
      overflow |= (x ^ y) & (x ^ z);
      r[i] = int32_t(z);
    }
    break;
  case EuOp::Max: for (size_t i = 0; i < W; ++i) r[i] = std::max(a[i], b[i]); break;
  case EuOp::Min: for (size_t i = 0; i < W; ++i) r[i] = std::min(a[i], b[i]); break;
  default: std::copy(a, a + W, r); break; // Copy (fitsNarrowOp)
  }
  return !(overflow >> 31);
}

// Row buffers of one domain, sized on first use: a command allocates (and
// zeroes) only the ones its rows take.
template <class V> struct RowBuffers {
  std::vector<V> a, b, c, d, old, r, r1;
  RowBuffers &sized(size_t W) {
    if (a.size() < W)
      for (std::vector<V> *v : {&a, &b, &c, &d, &old, &r, &r1}) v->resize(W);
    return *this;
  }
};

// Bytes [first, end) an operand of shape S spans in its lane (strides are unsigned).
std::pair<uint64_t, uint64_t> laneSpan(const LocalTensor &t, const Shape4 &S) {
  return {t.laneOffset, t.offset(S.n - 1, S.c - 1, S.h - 1, S.w - 1) + t.elemBytes};
}
bool sameLayout(const LocalTensor &x, const LocalTensor &y) {
  return x.laneOffset == y.laneOffset && x.npuOffset == y.npuOffset && x.stride == y.stride &&
         x.elemBytes == y.elemBytes;
}
// Can the rows of every (n, c) run as one row of h * w elements? Each
// operand's rows must continue one another, and no result may overlap
// another operand except element for element (then the order of rows
// cannot change what is read).
bool rowsMerge(const ElementwiseJob &j) {
  const Shape4 &S = j.res0.shape;
  const Shape4 whole{1, 1, 1, 1};
  if (S.h < 2 || j.eu == EuOp::Taylor || !(j.aMask == whole) || !(j.bMask == whole)) return false;
  std::vector<const LocalTensor *> inputs{&j.a}, results{&j.res0};
  if (j.arity.b) inputs.push_back(&j.b);
  if (j.arity.c) inputs.push_back(&j.c);
  if (j.arity.d) inputs.push_back(&j.d);
  if (j.hasRes1) results.push_back(&j.res1);
  auto continuous = [&](const LocalTensor *t) { return t->isConst || t->stride.h == uint64_t(t->stride.w) * S.w; };
  auto apart = [&](const LocalTensor *x, const LocalTensor *y) {
    if (x->isConst || y->isConst) return true;
    const auto [x0, x1] = laneSpan(*x, S);
    const auto [y0, y1] = laneSpan(*y, S);
    return x1 <= y0 || y1 <= x0;
  };
  for (const LocalTensor *r : results) {
    if (!continuous(r)) return false;
    for (const LocalTensor *t : inputs)
      if (!continuous(t) || !(apart(r, t) || sameLayout(*r, *t))) return false;
  }
  return results.size() == 1 || apart(results[0], results[1]);
}

void runElementwise(const ElementwiseJob &j, LocalMemory &mem) {
  const Shape4 &am = j.aMask, &bm = j.bMask;
  const bool merge = rowsMerge(j);
  const Shape4 S = merge ? Shape4{j.res0.shape.n, j.res0.shape.c, 1, j.res0.shape.h * j.res0.shape.w} : j.res0.shape;
  const size_t W = S.w;
  const bool readsOld = j.eu == EuOp::Mac && !j.arity.c;
  const bool narrow = fitsNarrowOp(j);
  const IntRange resRange = intRange(j.res0.prec, j.res0.isSigned);
  RowBuffers<int64_t> int64Rows;
  RowBuffers<int32_t> int32Rows;
  RowBuffers<float> floatRows;
  std::vector<int64_t> itmp;
  std::vector<float> ftmp, coef(j.taylorTerms);
  for (uint32_t n = 0; n < S.n; ++n)
    for (uint32_t c = 0; c < S.c; ++c)
      for (uint32_t h = 0; h < S.h; ++h) {
        const uint32_t an = n * am.n, ac = c * am.c, ah = h * am.h, bn = n * bm.n, bc = c * bm.c, bh = h * bm.h;
        if (j.isFloat) {
          floatRows.sized(W), itmp.resize(W), ftmp.resize(W);
          loadRow(j.a, mem, an, ac, ah, am.w == 0, W, floatRows.a.data());
          if (j.eu == EuOp::Taylor) loadRow(j.b, mem, 0, c, 0, false, j.taylorTerms, coef.data());
          else if (j.arity.b) loadRow(j.b, mem, bn, bc, bh, bm.w == 0, W, floatRows.b.data());
          if (j.arity.c) loadRow(j.c, mem, n, c, h, false, W, floatRows.c.data());
          if (j.arity.d) loadRow(j.d, mem, n, c, h, false, W, floatRows.d.data());
          if (readsOld) loadRow(j.res0, mem, n, c, h, false, W, floatRows.old.data());
          if (floatRowOp(j, W, floatRows.a.data(), floatRows.b.data(), floatRows.c.data(), floatRows.d.data(),
                         floatRows.old.data(), coef.data(), floatRows.r.data(), floatRows.r1.data(), itmp.data())) {
            writeIntRow(j.res0, mem, n, c, h, W, itmp.data(), 0, false, ftmp);
            continue;
          }
          if (j.hasRes1) writeFloatRow(j.res1, mem, n, c, h, W, floatRows.r1.data(), false, itmp);
          writeFloatRow(j.res0, mem, n, c, h, W, floatRows.r.data(), j.relu, itmp);
          continue;
        }
        if (narrow) {
          int32Rows.sized(W);
          loadRow(j.a, mem, an, ac, ah, am.w == 0, W, int32Rows.a.data());
          if (j.arity.b) loadRow(j.b, mem, bn, bc, bh, bm.w == 0, W, int32Rows.b.data());
          if (narrowRowOp(j.eu, W, int32Rows.a.data(), int32Rows.b.data(), int32Rows.r.data())) {
            requantizeRow32(int32Rows.r.data(), W, j.rshift, j.relu, int32_t(resRange.lo), int32_t(resRange.hi));
            storeIntRow(j.res0, mem, n, c, h, W, int32Rows.r.data());
            continue;
          }
        }
        int64Rows.sized(W), ftmp.resize(W);
        loadRow(j.a, mem, an, ac, ah, am.w == 0, W, int64Rows.a.data());
        if (j.arity.b) loadRow(j.b, mem, bn, bc, bh, bm.w == 0, W, int64Rows.b.data());
        if (j.arity.c) loadRow(j.c, mem, n, c, h, false, W, int64Rows.c.data());
        if (j.arity.d) loadRow(j.d, mem, n, c, h, false, W, int64Rows.d.data());
        if (readsOld) loadRow(j.res0, mem, n, c, h, false, W, int64Rows.old.data());
        bool wrap = intRowOp(j, W, int64Rows.a.data(), int64Rows.b.data(), int64Rows.c.data(), int64Rows.d.data(),
                             int64Rows.old.data(), int64Rows.r.data(), int64Rows.r1.data());
        if (j.hasRes1) writeIntRow(j.res1, mem, n, c, h, W, int64Rows.r1.data(), 0, false, ftmp);
        if (wrap)
          storeIntRow(j.res0, mem, n, c, h, W, int64Rows.r.data());
        else
          writeIntRow(j.res0, mem, n, c, h, W, int64Rows.r.data(), j.rshift, j.relu, ftmp);
      }
}

} // namespace

Status execElementwise(const HwConfig &cfg, LocalMemory &mem, const Elementwise &s, TiuTask task) {
  ElementwiseJob j;
  j.eu = s.eu;
  j.arity = arityOf(s.eu, task);
  j.relu = s.relu, j.rshift = s.rshift, j.logicalShift = s.logicalShift;
  const std::string_view cls = tiuTaskName(task);
  if (task == TiuTask::MdScalar && !s.opd1.isConst)
    return makeError("opt_opd1_const = 0: md_scalar needs a constant opd1");
  TRY_RESOLVE(res0, resolveLocal(cfg, s.res0, "res0"));
  j.res0 = res0;
  TPU_RETURN_IF_ERROR(checkWork(cfg, res0.shape.count(), s.eu == EuOp::Taylor ? s.opd1.shape.w : 1, "res0"));
  const Shape4 S = res0.shape;
  Shape4 aShape = S, bShape = S;
  if (task == TiuTask::VecCorr) {
    aShape = {S.n, S.c, S.h, 1}, bShape = {1, 1, 1, S.w};
    j.aMask = {1, 1, 1, 0}, j.bMask = {0, 0, 0, 1};
  }
  TRY_RESOLVE(a, resolveLocal(cfg, s.opd0, aShape, "opd0"));
  j.a = a;
  std::vector<std::pair<const LocalTensor *, const char *>> domainOps{{&j.a, "opt_opd0_prec"}};
  if (s.eu == EuOp::Taylor) {
    if (s.opd1.isConst) return makeError("opt_opd1_const = 1: taylor reads a coefficient table from opd1");
    j.taylorTerms = s.opd1.shape.w;
    TRY_RESOLVE(b, resolveLocal(cfg, s.opd1, Shape4{1, S.c, 1, s.opd1.shape.w}, "opd1"));
    if (!b.isFloat()) return makeError("opt_opd1_prec = ", precName(b.prec), ": taylor coefficients are fp32");
    j.b = b;
  } else if (j.arity.b) {
    TRY_RESOLVE(b, resolveLocal(cfg, s.opd1, bShape, "opd1"));
    j.b = b;
    domainOps.push_back({&j.b, "opt_opd1_prec"});
  }
  if (j.arity.c) {
    TRY_RESOLVE(c, resolveLocal(cfg, s.opd2, S, "opd2"));
    j.c = c;
    domainOps.push_back({&j.c, "opt_opd2_prec"});
  }
  if (j.arity.d) {
    LocalOperand d = s.opd2;
    d.isConst = s.opd3Const;
    (d.isConst ? d.constValue : d.addr) = s.opd3Addr;
    TRY_RESOLVE(dt, resolveLocal(cfg, d, S, "opd3"));
    j.d = dt;
    domainOps.push_back({&j.d, "opt_opd2_prec (opd3)"});
  }
  // Conversions change domain; everything else computes in the inputs' domain.
  bool isFloat = j.a.isFloat();
  for (const auto &[t, field] : domainOps)
    if (t->isFloat() != isFloat)
      return makeError(cls, ".", euOpName(s.eu), ": ", field, " = ", precName(t->prec),
                       " mixes fp32 and integer inputs (opt_opd0_prec = ", precName(j.a.prec), ")");
  if (s.eu != EuOp::Copy && s.eu != EuOp::Fp32ToInt && s.eu != EuOp::Fp32Normalize &&
      res0.isFloat() != isFloat)
    return makeError(cls, ".", euOpName(s.eu), ": opt_res0_prec = ", precName(res0.prec),
                     " but the inputs are ", isFloat ? "fp32" : "integer");
  if (needsFloat(s.eu) && !isFloat)
    return makeError(cls, ".", euOpName(s.eu), " needs fp32 inputs (opt_opd0_prec = ", precName(j.a.prec), ")");
  if (needsInt(s.eu) && isFloat)
    return makeError(cls, ".", euOpName(s.eu), " needs integer inputs (opt_opd0_prec = fp32)");
  if ((s.eu == EuOp::Fp32ToInt || s.eu == EuOp::Fp32Normalize) && res0.isFloat())
    return makeError(cls, ".", euOpName(s.eu), " writes an integer (opt_res0_prec = fp32)");
  j.isFloat = isFloat;
  if (s.eu == EuOp::CmpSelect) {
    LocalOperand r1 = s.res0;
    r1.addr = s.res1Addr;
    TRY_RESOLVE(res1, resolveLocal(cfg, r1, "res1"));
    j.res1 = res1;
    j.hasRes1 = true;
  }
  runElementwise(j, mem);
  return Status::ok();
}

} // namespace tpu::sim::tiu
