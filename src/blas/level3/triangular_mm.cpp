// trmm and trsm on top of gemm.
//
// Both halve the order of op(A) recursively (split_point) into the blocks
//   op(A) = [A11 A12; A21 A22], one of A12/A21 zero,
// so the off-diagonal block is one large gemm between the two halves of B, and only the
// nb x nb diagonal leaves need their own kernels. The half done first keeps what the other
// still reads unmodified:
//   trmm: new B_dep = alpha*(A_dep,dep*B_dep + A_dep,ind*B_ind) is finished before B_ind is
//         overwritten; a diagonal leaf is expanded to a full triangle and multiplied panel by
//         panel over its nonzero depth (triangle_times).
//   trsm: X_first is solved, then rhs_second = alpha*B_second - A_second,first*X_first (one
//         gemm), then X_second; a leaf op(A)_dd*X = rhs is, with many right-hand sides,
//         X = inv(op(A)_dd)*rhs, the same panel products (the nb x nb inverse costs nb^3/6
//         once per leaf); with few, substitution, whose columns (rows) of B are independent and split
//         across threads.
// op(A) is "effectively upper" when A is upper and op = N, or A is lower and op = T/C.
#include <algorithm>
#include <vector>

#include "../common/blocking.hpp"
#include "../common/checks.hpp"
#include "../common/parallel.hpp"
#include "../gemm/gemm_dispatch.hpp"
#include "../kernels/vec_kernels.hpp"
#include "strata/blas/level3.hpp"

namespace strata::blas {

namespace {

using namespace detail;

// Where an order-n triangular range is halved (n > level3_block):
// near the middle, on a multiple of level3_block, so the leaves stay on one nb grid. Halving
// recursively turns the off-diagonal work into a few large gemm calls (each operand packed
// once per call) instead of one thin panel per diagonal block, whose gemm repacked the whole
// other operand every time.
inline index_t split_point(index_t n) {
  return std::max(level3_block, (n / 2 + level3_block / 2) / level3_block * level3_block);
}

// Halves the range [d0, d0+len) of the triangular order at split_point, down to
// leaves of at most level3_block: `leaf(d0, nb)` handles a diagonal block, `halves(lo0,
// lo_len, hi0, hi_len)` orders the two halves (recursing through the caller) and the gemm
// that couples them.
template <class Leaf, class Halves>
void halve_triangle(index_t d0, index_t len, Leaf&& leaf, Halves&& halves) {
  if (len <= level3_block) {
    leaf(d0, len);
    return;
  }
  const index_t half = split_point(len);
  halves(d0, half, d0 + half, len - half);
}

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
  // Column by column as copies and fills (an element-wise loop with the unit test inside was
  // ~5% of a 256^2 strsm).
  void expand_diagonal(index_t d0, index_t nb, std::vector<T>& out) const {
    out.resize(size_t(nb * nb));
    for (index_t j = 0; j < nb; ++j) {
      T* o = out.data() + j * nb;
      const index_t lo = upper ? 0 : j, hi = upper ? j + 1 : nb;  // the triangle's rows
      std::fill(o, o + lo, T(0));
      std::copy(a + (d0 + lo) + (d0 + j) * lda, a + (d0 + hi) + (d0 + j) * lda, o + lo);
      std::fill(o + hi, o + nb, T(0));
      if (unit) o[j] = T(1);
    }
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

// Rows (side left) or columns (side right) of a leaf product taken per gemm call: the
// panels of a triangle hold nonzeros over 1/4, 2/4, 3/4 and all of its depth, so a product
// in four panels does 5/8 of the full square's multiply-adds.
inline constexpr index_t leaf_panel = level3_block / 4;

// Side right, the panels are columns of the product: rounded up to whole NR-column tiles of the
// GEMM kernel (AVX2's 16 x 6: 18), where 16 ran as 6 + 6 + a ragged 4 (16x3 and 16x1 kernels)
// in every panel: right-side strsm 1.02-1.12x, strmm 1.02-1.07x at 256^2-1024^2 (in one
// process against 16). Side left they are rows, already whole 16-row tiles on AVX2.
template <class T>
index_t leaf_panel_width(const Handle& h, bool left) {
  if (left) return leaf_panel;
  const index_t nr = gemm_tile_shape<T>(h).nr;
  return (leaf_panel + nr - 1) / nr * nr;
}

// out := alpha * op(M) * X (left, X nb x other) or alpha * X * op(M) (right, X other x nb), for
// an nb x nb M (column-major, ld nb, zeros outside its triangle) whose op is effectively upper
// (eu) or lower, over only the depth where op(M) is nonzero. Real types: one product whose
// micro-tiles stop at the triangle (gemm_triangular_operand_dispatch), so each panel of X is
// loaded once for all of op(M)'s rows; complex ones (whose products run on stacked real planes)
// one gemm per panel. (One full-square product was a fifth of a 1024^2 trsm or trmm, half of it
// multiplying zeros.)
template <class T>
void triangle_times(const Handle& h, bool left, bool eu, Op op, index_t nb, index_t other, T alpha, const T* M,
                    const T* X, index_t ldx, T* out, index_t ldo) {
  if constexpr (!is_complex_v<T>) {
    if (left)
      gemm_triangular_operand_dispatch<T>(h, true, eu, op, Op::N, nb, other, nb, alpha, M, nb, X, ldx, T(0), out, ldo);
    else
      gemm_triangular_operand_dispatch<T>(h, false, eu, Op::N, op, other, nb, nb, alpha, X, ldx, M, nb, T(0), out, ldo);
    return;
  }
  auto block = [&](index_t r0, index_t c0) { return op == Op::N ? M + r0 + c0 * nb : M + c0 + r0 * nb; };
  const index_t step = leaf_panel_width<T>(h, left);
  for (index_t p0 = 0; p0 < nb; p0 += step) {
    const index_t p1 = std::min(nb, p0 + step);
    if (left) {  // rows p0..p1 of op(M): nonzero in columns [p0, nb) (upper) or [0, p1)
      const index_t c0 = eu ? p0 : 0, c1 = eu ? nb : p1;
      gemm<T>(h, op, Op::N, p1 - p0, other, c1 - c0, alpha, block(p0, c0), nb, X + c0, ldx, T(0), out + p0, ldo);
    } else {  // columns p0..p1 of op(M): nonzero in rows [0, p1) (upper) or [p0, nb)
      const index_t r0 = eu ? 0 : p0, r1 = eu ? p1 : nb;
      gemm<T>(h, Op::N, op, other, p1 - p0, r1 - r0, alpha, X + r0 * ldx, ldx, block(r0, p0), nb, T(0),
              out + p0 * ldo, ldo);
    }
  }
}

// Whether the `len` reals at x are all finite: x - x is 0 for them and NaN for an Inf or NaN,
// and a NaN survives any sum. Eight independent sums the compiler can keep in one vector (a
// per-element isfinite with an early exit was a tenth of a 1024^2 strsm: every leaf scans its
// right-hand sides).
template <class R>
bool all_finite_run(const R* x, index_t len) {
  R lanes[8] = {};
  index_t i = 0;
  for (; i + 8 <= len; i += 8)
    for (int j = 0; j < 8; ++j) lanes[j] += x[i + j] - x[i + j];
  R sum = 0;
  for (; i < len; ++i) sum += x[i] - x[i];
  for (R v : lanes) sum += v;
  return sum == sum;
}

template <class T>
bool all_finite(index_t rows, index_t cols, const T* a, index_t lda) {
  using R = real_t<T>;
  constexpr index_t reals = is_complex_v<T> ? 2 : 1;  // std::complex<R> is laid out as R[2]
  for (index_t j = 0; j < cols; ++j)
    if (!all_finite_run(reinterpret_cast<const R*>(a + j * lda), rows * reals)) return false;
  return true;
}

// X := alpha * op(A)_dd * X (left, X nb x other) or alpha * X * op(A)_dd (right, X other x nb)
// in place, entry by entry over the triangle only, as the reference trmm: an Inf or NaN in X
// reaches only the entries whose sums hold it. For blocks with one (the products multiply the
// zeros of the micro-tiles the diagonal crosses, where 0 * Inf would spread it). Each entry
// reads only entries not yet overwritten: left, rows in the order that keeps the depth ahead.
template <class T>
void multiply_diagonal_block(const Handle& h, Side side, const TriangularA<T>& A, index_t d0, index_t nb,
                             index_t other, T alpha, T* X, index_t ldb) {
  const bool eu = A.effectively_upper();
  auto d = [&](index_t i, index_t j) { return A.unit && i == j ? T(1) : A.op_at(d0 + i, d0 + j); };
  if (side == Side::left) {
    parallel_ranges(h, other, other * nb * nb, [&](index_t c0, index_t c1) {
      for (index_t c = c0; c < c1; ++c) {
        T* x = X + c * ldb;
        for (index_t s = 0; s < nb; ++s) {
          const index_t i = eu ? s : nb - 1 - s;  // upper: row i reads x[i..nb), lower x[0..i]
          T v = T(0);
          for (index_t p = eu ? i : 0; p <= (eu ? nb - 1 : i); ++p)
            if (x[p] != T(0)) v += d(i, p) * x[p];
          x[i] = alpha * v;
        }
      }
    });
  } else {
    parallel_ranges(h, other, other * nb * nb, [&](index_t r0, index_t r1) {
      for (index_t r = r0; r < r1; ++r) {
        T* x = X + r;  // row r of the block, stride ldb
        for (index_t s = 0; s < nb; ++s) {
          const index_t j = eu ? nb - 1 - s : s;  // upper: column j reads x[0..j], lower x[j..nb)
          T v = T(0);
          for (index_t p = eu ? 0 : j; p <= (eu ? j : nb - 1); ++p)
            if (x[p * ldb] != T(0)) v += x[p * ldb] * d(p, j);
          x[j * ldb] = alpha * v;
        }
      }
    });
  }
}

template <class T>
void triangular_multiply(const Handle& h, Side side, const TriangularA<T>& A, index_t m, index_t n, T alpha, T* B,
                         index_t ldb) {
  const bool left = side == Side::left;
  const bool eu = A.effectively_upper();
  std::vector<T> diag, out;
  auto leaf = [&](index_t d0, index_t nb) {
    T* X = left ? B + d0 : B + d0 * ldb;
    if (!(left ? all_finite(nb, n, X, ldb) : all_finite(m, nb, X, ldb)))
      return multiply_diagonal_block(h, side, A, d0, nb, left ? n : m, alpha, X, ldb);
    A.expand_diagonal(d0, nb, diag);
    if (left) {
      out.resize(size_t(nb * n));
      triangle_times(h, true, eu, A.op, nb, n, alpha, diag.data(), B + d0, ldb, out.data(), nb);
      copy_matrix(nb, n, out.data(), nb, B + d0, ldb);
    } else {
      out.resize(size_t(m * nb));
      triangle_times(h, false, eu, A.op, nb, m, alpha, diag.data(), B + d0 * ldb, ldb, out.data(), m);
      copy_matrix(m, nb, out.data(), m, B + d0 * ldb, ldb);
    }
  };
  // The dependent half reads the other through the off-diagonal block, so it is finished
  // first: left, the top half when effectively upper (B_1 += A12*B_2), else the bottom; right,
  // the second half when effectively upper (B_2 += B_1*A12), else the first.
  auto range = [&](auto&& self, index_t d0, index_t len) -> void {
    halve_triangle(d0, len, leaf, [&](index_t lo0, index_t lo_len, index_t hi0, index_t hi_len) {
      const bool dep_is_lo = left == eu;
      const index_t dep0 = dep_is_lo ? lo0 : hi0, dep_len = dep_is_lo ? lo_len : hi_len;
      const index_t ind0 = dep_is_lo ? hi0 : lo0, ind_len = dep_is_lo ? hi_len : lo_len;
      self(self, dep0, dep_len);
      if (left)
        gemm<T>(h, A.op, Op::N, dep_len, n, ind_len, alpha, A.block(dep0, ind0), A.lda, B + ind0, ldb, T(1), B + dep0, ldb);
      else
        gemm<T>(h, Op::N, A.op, m, dep_len, ind_len, alpha, B + ind0 * ldb, ldb, A.block(ind0, dep0), A.lda, T(1),
                B + dep0 * ldb, ldb);
      self(self, ind0, ind_len);
    });
  };
  range(range, index_t(0), left ? m : n);
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

// The inverse of the stored diagonal block A_dd (nb x nb, column-major, zero outside its
// triangle, the unit diagonal applied) into inv, by the ISA's invert_triangle kernel. The op
// is left to the product: inv(op(A_dd)) = op(inv(A_dd)), as trmm's leaves multiply by op(A_dd).
template <class T>
void invert_diagonal_block(const Handle& h, const TriangularA<T>& A, index_t d0, index_t nb, std::vector<T>& dense,
                           T* inv) {
  A.expand_diagonal(d0, nb, dense);
  vec_kernels<T>(h.isa()).invert_triangle(nb, A.upper, dense.data(), inv);
}

// Right-hand sides from which the diagonal blocks are solved through their inverse: then the
// inverse's nb^3/6 scalar steps cost less than nb^2/2 per right-hand side by substitution,
// and the product runs on the GEMM kernels (1024 x 1024 strsm: 10x faster than by
// substitution alone).
inline constexpr index_t trsm_inverse_min_rhs = 16;


// X = inv(op(A)_dd) * X (left, X nb x other) or X * inv(op(A)_dd) (right, X other x nb), in
// place through the scratch `product`. Returns false, having changed nothing, when the inverse
// or X holds an Inf or NaN: the panel products would spread it through the zeros of the
// inverse's other triangle (0 * NaN) to entries that substitution leaves finite, so those
// blocks are solved by substitution.
template <class T>
bool solve_by_inverse(const Handle& h, Side side, const TriangularA<T>& A, index_t d0, index_t nb, index_t other,
                      T* X, index_t ldb, std::vector<T>& dense, std::vector<T>& inv, std::vector<T>& product) {
  const index_t rows = side == Side::left ? nb : other, cols = side == Side::left ? other : nb;
  if (!all_finite(rows, cols, X, ldb)) return false;
  inv.resize(size_t(nb * nb));
  invert_diagonal_block(h, A, d0, nb, dense, inv.data());
  if (!all_finite(nb, nb, inv.data(), nb)) return false;
  product.resize(size_t(nb * other));
  triangle_times(h, side == Side::left, A.effectively_upper(), A.op, nb, other, T(1), inv.data(), X, ldb,
                 product.data(), rows);
  copy_matrix(rows, cols, product.data(), rows, X, ldb);
  return true;
}

template <class T>
void triangular_solve(const Handle& h, Side side, const TriangularA<T>& A, index_t m, index_t n, T alpha, T* B,
                      index_t ldb) {
  const bool left = side == Side::left;
  const bool eu = A.effectively_upper();
  const index_t other = left ? n : m;
  std::vector<T> dense, inv, product;
  auto leaf_with = [&](T scale) {
    return [&, scale](index_t d0, index_t nb) {
      T* X = left ? B + d0 : B + d0 * ldb;
      if (scale != T(1)) left ? scale_matrix(nb, n, scale, X, ldb) : scale_matrix(m, nb, scale, X, ldb);
      if (other >= trsm_inverse_min_rhs && solve_by_inverse(h, side, A, d0, nb, other, X, ldb, dense, inv, product))
        return;
      solve_diagonal_block(h, side, A, d0, nb, other, X, ldb);
    };
  };
  // Solved first: left, the bottom half when effectively upper; right, the first half when
  // effectively upper. alpha scales the right-hand sides where they are first touched: the
  // first half's leaves, and the second half through the coupling gemm's beta.
  auto range = [&](auto&& self, index_t d0, index_t len, T scale) -> void {
    halve_triangle(d0, len, leaf_with(scale), [&](index_t lo0, index_t lo_len, index_t hi0, index_t hi_len) {
      const bool first_is_lo = left != eu;
      const index_t f0 = first_is_lo ? lo0 : hi0, f_len = first_is_lo ? lo_len : hi_len;
      const index_t s0 = first_is_lo ? hi0 : lo0, s_len = first_is_lo ? hi_len : lo_len;
      self(self, f0, f_len, scale);
      if (left)
        gemm<T>(h, A.op, Op::N, s_len, n, f_len, T(-1), A.block(s0, f0), A.lda, B + f0, ldb, scale, B + s0, ldb);
      else
        gemm<T>(h, Op::N, A.op, m, s_len, f_len, T(-1), B + f0 * ldb, ldb, A.block(f0, s0), A.lda, scale,
                B + s0 * ldb, ldb);
      self(self, s0, s_len, T(1));
    });
  };
  range(range, index_t(0), left ? m : n, alpha);
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
