// symm and hemm on top of gemm. The order of the symmetric A is halved recursively
// (split_point): A = [A11 A12; A21 A22] gives C_1 = A11*B_1 + A12*B_2 and C_2 = A21*B_1 +
// A22*B_2 (side left), two symmetric halves and two gemm calls with the off-diagonal blocks,
// one of them read from the other triangle (op T, or C for hemm). The nb x nb diagonal leaves
// are expanded to full matrices (one small gemm each).
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
  const bool left = side == Side::left;
  // C_d := alpha*A_dd*B_d + beta*C_d (left; right: B_d*A_dd), A_dd the expanded diagonal leaf.
  auto leaf = [&](index_t d0, index_t nb) {
    sa.expand_diagonal(d0, nb, diag);
    if (left) gemm<T>(h, Op::N, Op::N, nb, n, nb, alpha, diag.data(), nb, B + d0, ldb, beta, C + d0, ldc);
    else gemm<T>(h, Op::N, Op::N, m, nb, nb, alpha, B + d0 * ldb, ldb, diag.data(), nb, beta, C + d0 * ldc, ldc);
  };
  // C_x += alpha*A_xy*B_y (right: B_y*A_yx) for the halves x != y, A_xy off the diagonal.
  auto couple = [&](index_t x0, index_t x_len, index_t y0, index_t y_len) {
    if (left) {
      auto [p, op] = sa.block(x0, x0 + x_len, y0, y0 + y_len);
      gemm<T>(h, op, Op::N, x_len, n, y_len, alpha, p, lda, B + y0, ldb, T(1), C + x0, ldc);
    } else {
      auto [p, op] = sa.block(y0, y0 + y_len, x0, x0 + x_len);
      gemm<T>(h, Op::N, op, m, x_len, y_len, alpha, B + y0 * ldb, ldb, p, lda, T(1), C + x0 * ldc, ldc);
    }
  };
  // Halved recursively (split_point): each half is its own symmetric product plus one gemm
  // with the off-diagonal block.
  auto range = [&](auto&& self, index_t d0, index_t len) -> void {
    halve_triangle(d0, len, leaf, [&](index_t lo0, index_t lo_len, index_t hi0, index_t hi_len) {
      self(self, lo0, lo_len);
      couple(lo0, lo_len, hi0, hi_len);
      self(self, hi0, hi_len);
      couple(hi0, hi_len, lo0, lo_len);
    });
  };
  range(range, index_t(0), left ? m : n);
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
