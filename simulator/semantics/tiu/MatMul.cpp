// Matrix commands: mm (fully connected: res0[M x N] = opd0[M x K] * opd1[K x N],
// columns j = c * W + w) and mm2 (batched: res0[b] = opd0[b] * opd1[b]).
#include "simulator/semantics/tiu/TiuClasses.h"
#include "simulator/semantics/tiu/TiuSupport.h"

#include "simulator/semantics/Scratch.h"

#include <optional>
#include <vector>

namespace tpu::sim::tiu {

using namespace isa;

namespace {

template <class T>
T loadAs(const LocalTensor &t, const LocalMemory &m, uint32_t n, uint32_t c, uint32_t h, uint32_t w) {
  if constexpr (std::is_floating_point_v<T>)
    return t.loadFloat(m, n, c, h, w);
  else
    return T(t.loadInt(m, n, c, h, w));
}

// acc[M x N] = L[M x K] * R[K x N], each summed in ascending k.
template <class T> void matmulDense(T *acc, const T *L, const T *R, size_t M, size_t K, size_t N) {
  std::fill(acc, acc + M * N, T(0));
  for (size_t m = 0; m < M; ++m)
    for (size_t k = 0; k < K; ++k) mulAddRun(acc + m * N, R + k * N, L[m * K + k], N);
}

template <class T>
void runMatMul(const MatMul &s, const LocalTensor &left, const LocalTensor &right, const LocalTensor *bias,
               const LocalTensor &out, uint32_t M, uint32_t K, LocalMemory &mem) {
  const uint32_t N = out.shape.c * out.shape.w, ow = out.shape.w, lw = left.shape.w;
  std::vector<T> lOwn, rOwn, accOwn;
  T *L = scratch<T, 4>(size_t(M) * K, lOwn), *R = scratch<T, 5>(size_t(K) * N, rOwn);
  T *acc = scratch<T, 6>(size_t(M) * N, accOwn);
  for (uint32_t m = 0; m < M; ++m)
    for (uint32_t k = 0; k < K; ++k)
      L[size_t(m) * K + k] = s.leftTranspose ? loadAs<T>(left, mem, k, m / lw, 0, m % lw)
                                             : loadAs<T>(left, mem, m, k / lw, 0, k % lw);
  if (ow >= K) {
    for (uint32_t k = 0; k < K; ++k)
      for (uint32_t c = 0; c < out.shape.c; ++c) // a row at a time (loadAs per element was most of the fc layer)
        loadRow(right, mem, k, c, 0, false, ow, &R[size_t(k) * N + size_t(c) * ow]);
  } else { // short rows (an fc layer's w = 1): a column of K at a time
    std::vector<T> col(K);
    for (uint32_t c = 0; c < out.shape.c; ++c)
      for (uint32_t w = 0; w < ow; ++w) {
        widenStrided(right, right.ptr(mem, 0, c, 0, w), size_t(right.stride.n) * right.elemBytes, K, col.data());
        for (uint32_t k = 0; k < K; ++k) R[size_t(k) * N + size_t(c) * ow + w] = col[k];
      }
  }
  matmulDense(acc, L, R, M, K, N);
  for (uint32_t m = 0; m < M; ++m)
    for (uint32_t jj = 0; jj < N; ++jj) {
      uint32_t c = jj / ow, w = jj % ow;
      T v = acc[size_t(m) * N + jj];
      if (bias) v += loadAs<T>(*bias, mem, 0, c, 0, w);
      if (s.eu == EuOp::Mac) v += loadAs<T>(out, mem, m, c, 0, w);
      if constexpr (std::is_floating_point_v<T>)
        writeFloat(mem, out, m, c, 0, w, v, s.relu);
      else
        writeInt(mem, out, m, c, 0, w, v, s.rshift, s.relu);
    }
}

template <class T>
void runMatMul2(const MatMul2 &s, const LocalTensor &left, const LocalTensor &right, const LocalTensor &out,
                LocalMemory &mem) {
  const uint32_t B = out.shape.n, M = out.shape.c, K = left.shape.w, N = out.shape.w;
  std::vector<T> lOwn, rOwn, accOwn;
  T *L = scratch<T, 4>(size_t(M) * K, lOwn), *R = scratch<T, 5>(size_t(K) * N, rOwn);
  T *acc = scratch<T, 6>(size_t(M) * N, accOwn);
  for (uint32_t b = 0; b < B; ++b) {
    for (uint32_t m = 0; m < M; ++m)
      for (uint32_t k = 0; k < K; ++k) L[size_t(m) * K + k] = loadAs<T>(left, mem, b, m, 0, k);
    for (uint32_t k = 0; k < K; ++k)
      for (uint32_t jj = 0; jj < N; ++jj) R[size_t(k) * N + jj] = loadAs<T>(right, mem, b, k, 0, jj);
    matmulDense(acc, L, R, M, K, N);
    for (uint32_t m = 0; m < M; ++m)
      for (uint32_t jj = 0; jj < N; ++jj) {
        T v = acc[size_t(m) * N + jj];
        if (s.resAdd) v += loadAs<T>(out, mem, b, m, 0, jj);
        if constexpr (std::is_floating_point_v<T>)
          writeFloat(mem, out, b, m, 0, jj, v, s.relu);
        else
          writeInt(mem, out, b, m, 0, jj, v, s.rshift, s.relu);
      }
  }
}

} // namespace

Status execMatMul(const HwConfig &cfg, LocalMemory &mem, const MatMul &s) {
  TRY_RESOLVE(left, resolveLocal(cfg, s.left, "opd0"));
  TRY_RESOLVE(right, resolveLocal(cfg, s.right, "opd1"));
  TRY_RESOLVE(out, resolveLocal(cfg, s.output, "res0"));
  TPU_RETURN_IF_ERROR(requireRowMatrices({{&left, "opd0_h"}, {&right, "opd1_h"}, {&out, "res0_h"}}, "mm"));
  if (right.shape.c != out.shape.c || right.shape.w != out.shape.w)
    return makeError("opd1 (c, w) = (", right.shape.c, ", ", right.shape.w,
                     ") differs from res0 (c, w) = (", out.shape.c, ", ", out.shape.w, ")");
  const uint32_t K = right.shape.n, M = out.shape.n;
  const uint64_t leftCols = uint64_t(left.shape.c) * left.shape.w;
  if (!s.leftTranspose) {
    if (left.shape.n != M) return makeError("opd0_n = ", left.shape.n, " differs from res0_n = ", M);
    if (leftCols < K) return makeError("opd0 holds ", leftCols, " columns (opd0_c * opd0_w) but opd1_n = ", K);
  } else {
    if (left.shape.n != K) return makeError("opd0_n = ", left.shape.n, " differs from opd1_n = ", K, " (left transposed)");
    if (leftCols < M) return makeError("opd0 holds ", leftCols, " columns (opd0_c * opd0_w) but res0_n = ", M);
  }
  TPU_RETURN_IF_ERROR(checkWork(cfg, uint64_t(M) * out.shape.c * out.shape.w, K, "res0"));
  TPU_RETURN_IF_ERROR(checkScratch(uint64_t(M) * K, "the left matrix (opd0)"));
  TPU_RETURN_IF_ERROR(checkScratch(uint64_t(K) * out.shape.c * out.shape.w, "the right matrix (opd1)"));
  std::optional<LocalTensor> bias;
  if (s.hasBias) {
    TRY_RESOLVE(b, resolveLocal(cfg, s.bias, Shape4{1, out.shape.c, 1, out.shape.w}, "opd2"));
    bias = b;
  }
  bool isFloat = false;
  if (bias)
    TPU_RETURN_IF_ERROR(sameDomain({{&left, "opt_opd0_prec"}, {&right, "opt_opd1_prec"},
                                    {&*bias, "opt_opd2_prec"}, {&out, "opt_res0_prec"}}, isFloat));
  else
    TPU_RETURN_IF_ERROR(sameDomain({{&left, "opt_opd0_prec"}, {&right, "opt_opd1_prec"},
                                    {&out, "opt_res0_prec"}}, isFloat));
  TPU_RETURN_IF_ERROR(requireNarrowInputs({{&left, "opt_opd0_prec"}, {&right, "opt_opd1_prec"}}, "mm"));
  const LocalTensor *b = bias ? &*bias : nullptr;
  // As for windows (fitsInt32): 8-bit operands, at most 16-bit bias and accumulated result.
  const bool int32Sums = left.elemBytes == 1 && right.elemBytes == 1 && (!b || b->elemBytes <= 2) &&
                         (s.eu != EuOp::Mac || out.elemBytes <= 2) && sumsFitInt32(K);
  if (isFloat)
    runMatMul<float>(s, left, right, b, out, M, K, mem);
  else if (int32Sums)
    runMatMul<int32_t>(s, left, right, b, out, M, K, mem);
  else
    runMatMul<int64_t>(s, left, right, b, out, M, K, mem);
  return Status::ok();
}

Status execMatMul2(const HwConfig &cfg, LocalMemory &mem, const MatMul2 &s) {
  TRY_RESOLVE(left, resolveLocal(cfg, s.left, "opd0"));
  TRY_RESOLVE(right, resolveLocal(cfg, s.right, "opd1"));
  TRY_RESOLVE(out, resolveLocal(cfg, s.output, "res0"));
  TPU_RETURN_IF_ERROR(requireRowMatrices({{&left, "opd0_h"}, {&right, "opd1_h"}, {&out, "res0_h"}}, "mm2"));
  if (left.shape.n != out.shape.n || right.shape.n != out.shape.n)
    return makeError("opd0_n = ", left.shape.n, ", opd1_n = ", right.shape.n, " and res0_n = ", out.shape.n,
                     " must be equal (batch)");
  if (left.shape.c != out.shape.c) return makeError("opd0_c = ", left.shape.c, " differs from res0_c = ", out.shape.c);
  if (right.shape.c != left.shape.w) return makeError("opd1_c = ", right.shape.c, " differs from opd0_w = ", left.shape.w);
  if (right.shape.w != out.shape.w) return makeError("opd1_w = ", right.shape.w, " differs from res0_w = ", out.shape.w);
  TPU_RETURN_IF_ERROR(checkWork(cfg, out.shape.count(), left.shape.w, "res0"));
  TPU_RETURN_IF_ERROR(checkScratch(uint64_t(left.shape.c) * left.shape.w, "the left matrix (opd0)"));
  TPU_RETURN_IF_ERROR(checkScratch(uint64_t(right.shape.c) * right.shape.w, "the right matrix (opd1)"));
  bool isFloat = false;
  TPU_RETURN_IF_ERROR(sameDomain({{&left, "opt_opd0_prec"}, {&right, "opt_opd1_prec"}, {&out, "opt_res0_prec"}}, isFloat));
  TPU_RETURN_IF_ERROR(requireNarrowInputs({{&left, "opt_opd0_prec"}, {&right, "opt_opd1_prec"}}, "mm2"));
  if (isFloat)
    runMatMul2<float>(s, left, right, out, mem);
  else
    runMatMul2<int64_t>(s, left, right, out, mem);
  return Status::ok();
}

} // namespace tpu::sim::tiu
