// trmm and trsm on top of gemm.
//
// Both walk B in blocks of nb rows (side left) or columns (side right) in the order that
// keeps the blocks they still read unmodified:
//   trmm: new B_i = alpha*(op(A)_ii*B_i + op(A)_i,rest*B_rest), the rest not yet overwritten;
//         the diagonal block is expanded to a full triangle and multiplied by gemm.
//   trsm: rhs_i = alpha*B_i - op(A)_i,done*X_done (one gemm; side right: each solved block
//         updates all later ones instead), then op(A)_ii*X_i = rhs_i:
//         with many right-hand sides X_i = inv(op(A)_ii)*rhs_i, one more gemm (the nb x nb
//         inverse costs nb^3/6 once per block); with few, substitution, whose columns (rows)
//         of B are independent and split across threads.
// op(A) is "effectively upper" when A is upper and op = N, or A is lower and op = T/C.
#include <cmath>
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
      copy_matrix(nb, n, out.data(), nb, B + d0, ldb);
    } else {
      out.resize(size_t(m * nb));
      gemm<T>(h, Op::N, A.op, m, nb, nb, alpha, B + d0 * ldb, ldb, diag.data(), nb, T(0), out.data(), m);
      const index_t c0 = eu ? 0 : d1, c1 = eu ? d0 : n;  // the other columns of B feeding block d
      if (c1 > c0) gemm<T>(h, Op::N, A.op, m, nb, c1 - c0, alpha, B + c0 * ldb, ldb, A.block(c0, d0), A.lda, T(1), out.data(), m);
      copy_matrix(m, nb, out.data(), m, B + d0 * ldb, ldb);
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

// The inverse of the diagonal block op(A)_dd (nb x nb, column-major, zero outside its
// triangle) into inv, column by column of op(A)_dd: once pivot p of every column of the
// inverse is final, it is divided by the pivot and its multiple of op(A)_dd's column p is
// taken from the entries below (lower) or above (upper) — independent updates down
// contiguous columns. (Each entry as a dot product of what came before, one dependent
// multiply-add after another, was a third of a 256 x 256 strsm.) The block is first copied
// with op, conjugation and the unit diagonal applied, so the loops read a dense array.
template <class T>
void invert_diagonal_block(const TriangularA<T>& A, index_t d0, index_t nb, std::vector<T>& dense, T* inv) {
  const bool eu = A.effectively_upper();
  dense.assign(size_t(nb * nb), T(0));
  for (index_t j = 0; j < nb; ++j)
    for (index_t i = eu ? 0 : j; i <= (eu ? j : nb - 1); ++i)
      dense[size_t(i + j * nb)] = (A.unit && i == j) ? T(1) : A.op_at(d0 + i, d0 + j);
  for (index_t k = 0; k < nb * nb; ++k) inv[k] = T(0);
  for (index_t j = 0; j < nb; ++j) inv[j + j * nb] = T(1);
  for (index_t s = 0; s < nb; ++s) {
    const index_t p = eu ? nb - 1 - s : s;
    const T pivot = dense[size_t(p + p * nb)];
    const T* __restrict column = dense.data() + p * nb;
    // Columns j of the inverse with a nonzero entry p: j <= p (lower) or j >= p (upper).
    for (index_t j = eu ? p : 0; j < (eu ? nb : p + 1); ++j) {
      T* __restrict y = inv + j * nb;
      const T yp = y[p] / pivot;
      y[p] = yp;
      if (eu)
        for (index_t i = 0; i < p; ++i) y[i] -= column[i] * yp;
      else
        for (index_t i = p + 1; i < nb; ++i) y[i] -= column[i] * yp;
    }
  }
}

// Right-hand sides from which the diagonal blocks are solved through their inverse: then the
// inverse's nb^3/6 scalar steps cost less than nb^2/2 per right-hand side by substitution,
// and the product runs on the GEMM kernels (1024 x 1024 strsm: 10x faster than by
// substitution alone).
inline constexpr index_t trsm_inverse_min_rhs = 16;

template <class T>
bool finite(T v) {
  if constexpr (is_complex_v<T>) return std::isfinite(v.real()) && std::isfinite(v.imag());
  else return std::isfinite(v);
}

template <class T>
bool all_finite(index_t rows, index_t cols, const T* a, index_t lda) {
  for (index_t j = 0; j < cols; ++j)
    for (index_t i = 0; i < rows; ++i)
      if (!finite(a[i + j * lda])) return false;
  return true;
}

// X = inv(op(A)_dd) * X (left, X nb x other) or X * inv(op(A)_dd) (right, X other x nb), in
// place through the scratch `product`. Returns false, having changed nothing, when the inverse
// or X holds an Inf or NaN: the full-square product would spread it through the zeros of the
// inverse's other triangle (0 * NaN) to entries that substitution leaves finite, so those
// blocks are solved by substitution.
template <class T>
bool solve_by_inverse(const Handle& h, Side side, const TriangularA<T>& A, index_t d0, index_t nb, index_t other,
                      T* X, index_t ldb, std::vector<T>& dense, std::vector<T>& inv, std::vector<T>& product) {
  const index_t rows = side == Side::left ? nb : other, cols = side == Side::left ? other : nb;
  if (!all_finite(rows, cols, X, ldb)) return false;
  inv.resize(size_t(nb * nb));
  invert_diagonal_block(A, d0, nb, dense, inv.data());
  if (!all_finite(nb, nb, inv.data(), nb)) return false;
  product.resize(size_t(nb * other));
  if (side == Side::left)
    gemm<T>(h, Op::N, Op::N, nb, other, nb, T(1), inv.data(), nb, X, ldb, T(0), product.data(), nb);
  else
    gemm<T>(h, Op::N, Op::N, other, nb, nb, T(1), X, ldb, inv.data(), nb, T(0), product.data(), other);
  copy_matrix(rows, cols, product.data(), rows, X, ldb);
  return true;
}

template <class T>
void triangular_solve(const Handle& h, Side side, const TriangularA<T>& A, index_t m, index_t n, T alpha, T* B,
                      index_t ldb) {
  const bool left = side == Side::left;
  const index_t na = left ? m : n;
  const bool eu = A.effectively_upper();
  // Left: upper solves from the bottom; right: upper solves from the left.
  const bool forward = left != eu;
  const index_t other = left ? n : m;
  std::vector<T> dense, inv, product;
  if (!left) scale_matrix(m, n, alpha, B, ldb);
  auto solve_block = [&](index_t d0, index_t nb, T* X) {
    if (other >= trsm_inverse_min_rhs && solve_by_inverse(h, side, A, d0, nb, other, X, ldb, dense, inv, product))
      return;
    solve_diagonal_block(h, side, A, d0, nb, other, X, ldb);
  };
  for_each_block(na, forward, [&](index_t d0, index_t nb) {
    const index_t d1 = d0 + nb;
    if (left) {
      const index_t r0 = forward ? 0 : d1, r1 = forward ? d0 : m;  // rows already solved
      if (r1 > r0) gemm<T>(h, A.op, Op::N, nb, n, r1 - r0, T(-1), A.block(d0, r0), A.lda, B + r0, ldb, alpha, B + d0, ldb);
      else scale_matrix(nb, n, alpha, B + d0, ldb);
      solve_block(d0, nb, B + d0);
    } else {
      // Right side, right-looking: B was scaled by alpha first; the solved columns then update
      // all the columns still to solve at once, so each solved block is packed once (gathering
      // all solved columns again for every block, left-looking, was 15% of a 1024^2 strsm).
      solve_block(d0, nb, B + d0 * ldb);
      const index_t u0 = forward ? d1 : 0, u1 = forward ? n : d0;  // columns still to solve
      if (u1 > u0)
        gemm<T>(h, Op::N, A.op, m, u1 - u0, nb, T(-1), B + d0 * ldb, ldb, A.block(d0, u0), A.lda, T(1), B + u0 * ldb, ldb);
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
