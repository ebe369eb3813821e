// symm and hemm on top of gemm. For each block of nb rows (side left) or columns (side
// right) of C, the symmetric A is seen as three panels: the part stored as is (one gemm with
// op N), the part stored in the other triangle (one gemm with op T, or C for hemm), and the
// diagonal block, expanded to a full nb x nb matrix (one small gemm).
#include <vector>

#include "../common/blocking.hpp"
#include "../common/checks.hpp"
#include "strata/blas/level3.hpp"

namespace strata::blas {

namespace {

using namespace detail;

template <class T, bool Herm>
struct SymmetricA {
  const T* a;
  index_t lda;
  bool upper;

  // The block A[r0:r1, c0:c1] lying wholly on one side of the diagonal, as a gemm operand.
  std::pair<const T*, Op> block(index_t r0, index_t r1, index_t c0, index_t c1) const {
    const bool stored = upper ? r1 <= c0 : r0 >= c1;
    if (stored) return {a + r0 + c0 * lda, Op::N};
    return {a + c0 + r0 * lda, Herm ? Op::C : Op::T};
  }
  // The diagonal block A[d0:d0+nb, d0:d0+nb] expanded to a full matrix (leading dim nb).
  void expand_diagonal(index_t d0, index_t nb, std::vector<T>& out) const {
    out.resize(size_t(nb * nb));
    for (index_t j = 0; j < nb; ++j)
      for (index_t i = 0; i < nb; ++i) {
        const bool stored = upper ? i <= j : i >= j;
        T v = stored ? a[(d0 + i) + (d0 + j) * lda] : conj_if(Herm, a[(d0 + j) + (d0 + i) * lda]);
        if (Herm && i == j) v = T(real_part(v));
        out[size_t(i + j * nb)] = v;
      }
  }
};

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
  const SymmetricA<T, Herm> sa{A, lda, uplo == Uplo::upper};
  std::vector<T> diag;
  const index_t na = side == Side::left ? m : n;  // order of A
  for (index_t d0 = 0; d0 < na; d0 += level3_block) {
    const index_t nb = std::min(level3_block, na - d0), d1 = d0 + nb;
    sa.expand_diagonal(d0, nb, diag);
    if (side == Side::left) {
      // C[d0:d1, :] = alpha * (A[d, 0:d0] B[0:d0] + A[d,d] B[d] + A[d, d1:m] B[d1:m]) + beta * C[d]
      T* Cd = C + d0;
      gemm<T>(h, Op::N, Op::N, nb, n, nb, alpha, diag.data(), nb, B + d0, ldb, beta, Cd, ldc);
      if (d0 > 0) {
        auto [p, op] = sa.block(d0, d1, 0, d0);
        gemm<T>(h, op, Op::N, nb, n, d0, alpha, p, lda, B, ldb, T(1), Cd, ldc);
      }
      if (d1 < m) {
        auto [p, op] = sa.block(d0, d1, d1, m);
        gemm<T>(h, op, Op::N, nb, n, m - d1, alpha, p, lda, B + d1, ldb, T(1), Cd, ldc);
      }
    } else {
      // C[:, d] = alpha * (B[:, 0:d0] A[0:d0, d] + B[:, d] A[d,d] + B[:, d1:n] A[d1:n, d]) + beta * C[:, d]
      T* Cd = C + d0 * ldc;
      gemm<T>(h, Op::N, Op::N, m, nb, nb, alpha, B + d0 * ldb, ldb, diag.data(), nb, beta, Cd, ldc);
      if (d0 > 0) {
        auto [p, op] = sa.block(0, d0, d0, d1);
        gemm<T>(h, Op::N, op, m, nb, d0, alpha, B, ldb, p, lda, T(1), Cd, ldc);
      }
      if (d1 < n) {
        auto [p, op] = sa.block(d1, n, d0, d1);
        gemm<T>(h, Op::N, op, m, nb, n - d1, alpha, B + d1 * ldb, ldb, p, lda, T(1), Cd, ldc);
      }
    }
  }
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
