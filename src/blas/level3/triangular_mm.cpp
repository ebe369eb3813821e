// trmm and trsm on top of gemm.
//
// Both walk B in blocks of nb rows (side left) or columns (side right) in the order that
// keeps the blocks they still read unmodified:
//   trmm: new B_i = alpha*(op(A)_ii*B_i + op(A)_i,rest*B_rest), the rest not yet overwritten;
//         the diagonal block is expanded to a full triangle and multiplied by gemm.
//   trsm: rhs_i = alpha*B_i - op(A)_i,done*X_done (one gemm), then a small substitution
//         kernel solves op(A)_ii*X_i = rhs_i; columns (rows) of B are independent there and
//         are split across threads.
// op(A) is "effectively upper" when A is upper and op = N, or A is lower and op = T/C.
#include <vector>

#include "../common/blocking.hpp"
#include "../common/checks.hpp"
#include "../common/parallel.hpp"
#include "strata/blas/level3.hpp"

namespace strata::blas {

namespace {

using namespace detail;

template <class T>
struct TriangularA {
  const T* a;
  index_t lda;
  bool upper;
  Op op;
  bool unit;

  bool effectively_upper() const { return upper == (op == Op::N); }
  // Block op(A)[r0:, c0:] as a gemm operand (pointer, op).
  const T* block(index_t r0, index_t c0) const { return op == Op::N ? a + r0 + c0 * lda : a + c0 + r0 * lda; }
  // Element (i, j) of op(A).
  T op_at(index_t i, index_t j) const {
    return op == Op::N ? a[i + j * lda] : conj_if(op == Op::C, a[j + i * lda]);
  }
  // Diagonal block A[d0:d0+nb, d0:d0+nb] as a full matrix: its triangle, zeros, unit diagonal if asked.
  void expand_diagonal(index_t d0, index_t nb, std::vector<T>& out) const {
    out.assign(size_t(nb * nb), T(0));
    for (index_t j = 0; j < nb; ++j)
      for (index_t i = upper ? 0 : j; i <= (upper ? j : nb - 1); ++i)
        out[size_t(i + j * nb)] = (unit && i == j) ? T(1) : a[(d0 + i) + (d0 + j) * lda];
  }
};

void check_triangular(Side side, Uplo uplo, Op transa, Diag diag, index_t m, index_t n, index_t lda, index_t ldb) {
  check_side(side);
  check_uplo(uplo);
  check_op(transa, "transa");
  check_diag(diag);
  check_dim(m, "m");
  check_dim(n, "n");
  check_ld(lda, side == Side::left ? m : n, "lda");
  check_ld(ldb, m, "ldb");
}

// Visits the diagonal blocks [d0, d0+nb) of an order-na matrix, forwards or backwards.
template <class Fn>
void for_each_block(index_t na, bool forward, Fn&& fn) {
  const index_t count = (na + level3_block - 1) / level3_block;
  for (index_t b = 0; b < count; ++b) {
    const index_t d0 = (forward ? b : count - 1 - b) * level3_block;
    fn(d0, std::min(level3_block, na - d0));
  }
}

template <class T>
void triangular_multiply(const Handle& h, Side side, const TriangularA<T>& A, index_t m, index_t n, T alpha, T* B,
                         index_t ldb) {
  const bool left = side == Side::left;
  const index_t na = left ? m : n;
  const bool eu = A.effectively_upper();
  std::vector<T> diag, out;
  // Left: rows below (eu) or above are still old when visiting forwards (eu) or backwards.
  // Right: columns before (eu) or after; visit backwards (eu) or forwards.
  for_each_block(na, left == eu, [&](index_t d0, index_t nb) {
    const index_t d1 = d0 + nb;
    A.expand_diagonal(d0, nb, diag);
    if (left) {
      out.resize(size_t(nb * n));
      gemm<T>(h, A.op, Op::N, nb, n, nb, alpha, diag.data(), nb, B + d0, ldb, T(0), out.data(), nb);
      const index_t r0 = eu ? d1 : 0, r1 = eu ? m : d0;  // the other rows op(A)_d reads
      if (r1 > r0) gemm<T>(h, A.op, Op::N, nb, n, r1 - r0, alpha, A.block(d0, r0), A.lda, B + r0, ldb, T(1), out.data(), nb);
      for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < nb; ++i) B[(d0 + i) + j * ldb] = out[size_t(i + j * nb)];
    } else {
      out.resize(size_t(m * nb));
      gemm<T>(h, Op::N, A.op, m, nb, nb, alpha, B + d0 * ldb, ldb, diag.data(), nb, T(0), out.data(), m);
      const index_t c0 = eu ? 0 : d1, c1 = eu ? d0 : n;  // the other columns of B feeding block d
      if (c1 > c0) gemm<T>(h, Op::N, A.op, m, nb, c1 - c0, alpha, B + c0 * ldb, ldb, A.block(c0, d0), A.lda, T(1), out.data(), m);
      for (index_t j = 0; j < nb; ++j)
        for (index_t i = 0; i < m; ++i) B[i + (d0 + j) * ldb] = out[size_t(i + j * m)];
    }
  });
}

// Substitution on one diagonal block: op(A)_dd * X = R (left, X is nb x n) or
// X * op(A)_dd = R (right, X is m x nb), in place.
template <class T>
void solve_diagonal_block(const Handle& h, Side side, const TriangularA<T>& A, index_t d0, index_t nb, index_t other,
                          T* X, index_t ldb) {
  const bool eu = A.effectively_upper();
  auto d = [&](index_t i, index_t j) { return A.op_at(d0 + i, d0 + j); };
  if (side == Side::left) {
    parallel_ranges(h, other, other * nb * nb, [&](index_t c0, index_t c1) {
      for (index_t c = c0; c < c1; ++c) {
        T* x = X + c * ldb;
        for (index_t s = 0; s < nb; ++s) {
          const index_t i = eu ? nb - 1 - s : s;
          T v = x[i];
          const index_t p0 = eu ? i + 1 : 0, p1 = eu ? nb : i;  // the already solved entries
          for (index_t p = p0; p < p1; ++p) v -= d(i, p) * x[p];
          x[i] = A.unit ? v : v / d(i, i);
        }
      }
    });
  } else {
    parallel_ranges(h, other, other * nb * nb, [&](index_t r0, index_t r1) {
      for (index_t r = r0; r < r1; ++r) {
        T* x = X + r;  // row r of the block, stride ldb
        for (index_t s = 0; s < nb; ++s) {
          const index_t j = eu ? s : nb - 1 - s;
          T v = x[j * ldb];
          const index_t p0 = eu ? 0 : j + 1, p1 = eu ? j : nb;  // the already solved entries
          for (index_t p = p0; p < p1; ++p) v -= x[p * ldb] * d(p, j);
          x[j * ldb] = A.unit ? v : v / d(j, j);
        }
      }
    });
  }
}

template <class T>
void triangular_solve(const Handle& h, Side side, const TriangularA<T>& A, index_t m, index_t n, T alpha, T* B,
                      index_t ldb) {
  const bool left = side == Side::left;
  const index_t na = left ? m : n;
  const bool eu = A.effectively_upper();
  // Left: upper solves from the bottom; right: upper solves from the left.
  const bool forward = left != eu;
  for_each_block(na, forward, [&](index_t d0, index_t nb) {
    const index_t d1 = d0 + nb;
    if (left) {
      const index_t r0 = forward ? 0 : d1, r1 = forward ? d0 : m;  // rows already solved
      if (r1 > r0) gemm<T>(h, A.op, Op::N, nb, n, r1 - r0, T(-1), A.block(d0, r0), A.lda, B + r0, ldb, alpha, B + d0, ldb);
      else scale_matrix(nb, n, alpha, B + d0, ldb);
      solve_diagonal_block(h, side, A, d0, nb, n, B + d0, ldb);
    } else {
      const index_t c0 = forward ? 0 : d1, c1 = forward ? d0 : n;  // columns already solved
      if (c1 > c0)
        gemm<T>(h, Op::N, A.op, m, nb, c1 - c0, T(-1), B + c0 * ldb, ldb, A.block(c0, d0), A.lda, alpha, B + d0 * ldb, ldb);
      else scale_matrix(m, nb, alpha, B + d0 * ldb, ldb);
      solve_diagonal_block(h, side, A, d0, nb, m, B + d0 * ldb, ldb);
    }
  });
}

}  // namespace

template <class T>
void trmm(const Handle& h, Side side, Uplo uplo, Op transa, Diag diag, index_t m, index_t n, T alpha, const T* A,
          index_t lda, T* B, index_t ldb) {
  check_triangular(side, uplo, transa, diag, m, n, lda, ldb);
  if (m == 0 || n == 0) return;
  if (alpha == T(0)) {
    scale_matrix(m, n, T(0), B, ldb);
    return;
  }
  triangular_multiply(h, side, TriangularA<T>{A, lda, uplo == Uplo::upper, transa, diag == Diag::unit}, m, n, alpha, B, ldb);
}

template <class T>
void trsm(const Handle& h, Side side, Uplo uplo, Op transa, Diag diag, index_t m, index_t n, T alpha, const T* A,
          index_t lda, T* B, index_t ldb) {
  check_triangular(side, uplo, transa, diag, m, n, lda, ldb);
  if (m == 0 || n == 0) return;
  if (alpha == T(0)) {
    scale_matrix(m, n, T(0), B, ldb);
    return;
  }
  triangular_solve(h, side, TriangularA<T>{A, lda, uplo == Uplo::upper, transa, diag == Diag::unit}, m, n, alpha, B, ldb);
}

#define STRATA_INSTANTIATE(T)                                                                                       \
  template void trmm<T>(const Handle&, Side, Uplo, Op, Diag, index_t, index_t, T, const T*, index_t, T*, index_t); \
  template void trsm<T>(const Handle&, Side, Uplo, Op, Diag, index_t, index_t, T, const T*, index_t, T*, index_t);
STRATA_INSTANTIATE(float)
STRATA_INSTANTIATE(double)
STRATA_INSTANTIATE(c64)
STRATA_INSTANTIATE(c128)
#undef STRATA_INSTANTIATE

}  // namespace strata::blas
