// symm and hemm on top of gemm: the symmetric (Hermitian) A is expanded to a full matrix —
// the stored triangle column by column as it lies, the other gathered from the stored rows,
// conjugated for hemm, the diagonal's imaginary parts dropped — and the product is one gemm,
// each operand packed once and C written once. (Per 64-row block of C, three gemm calls on
// the stored panels and the expanded diagonal block ran at 0.86-0.96x of OpenBLAS; one gemm
// on the expansion, 0.98x.) The expansion lives in the calling thread's kept staging buffer up
// to 64 MiB (A of order ~4096 in f32) and is allocated per call beyond.
#include <cstring>

#include "../common/blocking.hpp"
#include "../common/checks.hpp"
#include "strata/blas/level3.hpp"
#include "strata/core/memory.hpp"
#include "strata/tile/workspace.hpp"

namespace strata::blas {

namespace {

using namespace detail;

// The order-na A (stored triangle `upper`/lower) as a full matrix of leading dimension na.
template <class T, bool Herm>
void expand_symmetric(const T* a, index_t lda, bool upper, index_t na, T* out) {
  for (index_t j = 0; j < na; ++j) {
    T* col = out + j * na;
    const index_t s0 = upper ? 0 : j, s1 = upper ? j + 1 : na;  // stored rows of column j
    std::memcpy(col + s0, a + s0 + j * lda, sizeof(T) * std::size_t(s1 - s0));
    const index_t m0 = upper ? j + 1 : 0, m1 = upper ? na : j;  // mirrored rows
    for (index_t i = m0; i < m1; ++i) col[i] = conj_if(Herm, a[j + i * lda]);
    if (Herm) col[j] = T(real_part(col[j]));
  }
}

template <class T, bool Herm>
void symmetric_mm(const Handle& h, Side side, Uplo uplo, index_t m, index_t n, T alpha, const T* A, index_t lda,
                  const T* B, index_t ldb, T beta, T* C, index_t ldc) {
  check_side(side);
  check_uplo(uplo);
  check_dim(m, "m");
  check_dim(n, "n");
  check_ld(lda, side == Side::left ? m : n, "lda");
  check_ld(ldb, m, "ldb");
  check_ld(ldc, m, "ldc");
  if (m == 0 || n == 0 || (alpha == T(0) && beta == T(1))) return;
  if (alpha == T(0)) {
    scale_matrix(m, n, beta, C, ldc);
    return;
  }
  const index_t na = side == Side::left ? m : n;  // order of A
  const std::size_t bytes = std::size_t(na * na) * sizeof(T);
  AlignedArray<T> owned;
  T* full;
  if (bytes <= (std::size_t(64) << 20)) {
    full = static_cast<T*>(tile::thread_pack_buffer(3).get(bytes));
  } else {
    owned = make_aligned<T>(std::size_t(na * na));
    full = owned.get();
  }
  expand_symmetric<T, Herm>(A, lda, uplo == Uplo::upper, na, full);
  if (side == Side::left) gemm<T>(h, Op::N, Op::N, m, n, m, alpha, full, m, B, ldb, beta, C, ldc);
  else gemm<T>(h, Op::N, Op::N, m, n, n, alpha, B, ldb, full, n, beta, C, ldc);
}

}  // namespace

template <class T>
void symm(const Handle& h, Side side, Uplo uplo, index_t m, index_t n, T alpha, const T* A, index_t lda, const T* B,
          index_t ldb, T beta, T* C, index_t ldc) {
  symmetric_mm<T, false>(h, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc);
}

template <class T>
void hemm(const Handle& h, Side side, Uplo uplo, index_t m, index_t n, T alpha, const T* A, index_t lda, const T* B,
          index_t ldb, T beta, T* C, index_t ldc) {
  symmetric_mm<T, true>(h, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc);
}

#define STRATA_INSTANTIATE(name, T)                                                                         \
  template void name<T>(const Handle&, Side, Uplo, index_t, index_t, T, const T*, index_t, const T*, index_t, T, \
                        T*, index_t);
STRATA_INSTANTIATE(symm, float)
STRATA_INSTANTIATE(symm, double)
STRATA_INSTANTIATE(symm, c64)
STRATA_INSTANTIATE(symm, c128)
STRATA_INSTANTIATE(hemm, c64)
STRATA_INSTANTIATE(hemm, c128)
#undef STRATA_INSTANTIATE

}  // namespace strata::blas
