// gemv and gbmv: y := alpha*op(A)*x + beta*y for general full and band matrices.
// op = N walks columns doing axpy on row ranges (threads split the rows); op = T/C computes
// one dot product per output (threads split the outputs). Either way each y element is
// produced by the same operations in the same order for any thread count.
#include "../common/checks.hpp"
#include "../common/dense_vector.hpp"
#include "../common/parallel.hpp"
#include "../kernels/vec_kernels.hpp"
#include "strata/blas/level2.hpp"

namespace strata::blas {

namespace {

using namespace detail;

// A general band matrix (full = band with kl = m-1, ku = n-1): column j stores rows
// [first(j), last(j)] contiguously starting at col(j).
template <class T>
struct BandView {
  const T* a;
  index_t m, lda, kl, ku;
  bool full;
  index_t first(index_t j) const { return std::max<index_t>(0, j - ku); }
  index_t last(index_t j) const { return std::min(m - 1, j + kl); }
  const T* col(index_t j) const { return full ? a + j * lda + first(j) : a + (ku + first(j) - j) + j * lda; }
};

template <class T>
void general_mv(const Handle& h, Op trans, index_t m, index_t n, const BandView<T>& A, T alpha, const T* x,
                index_t incx, T beta, T* y, index_t incy) {
  const bool notrans = trans == Op::N;
  const index_t lenx = notrans ? n : m, leny = notrans ? m : n;
  scale_vector(leny, beta, y, incy);
  if (alpha == T(0)) return;
  DenseInput<T> xv(x, lenx, incx);
  DenseVector<T> yv(y, leny, incy);
  const auto& k = vec_kernels<T>(h.isa());
  const T* xd = xv.data();
  T* yd = yv.data();
  const index_t work = m * std::min(n, A.kl + A.ku + 1);
  if (notrans) {
    // Rows in blocks: every y_i still sums its columns in order j = 0..n-1. A full matrix
    // goes four columns per pass (axpy4: y is read and written once per four columns).
    parallel_ranges(h, m, work, [&](index_t r0, index_t r1) {
      index_t j = 0;
      if (A.full)
        for (; j + 4 <= n; j += 4) {
          const T al[4] = {alpha * xd[j], alpha * xd[j + 1], alpha * xd[j + 2], alpha * xd[j + 3]};
          const T* cols[4] = {A.col(j) + r0, A.col(j + 1) + r0, A.col(j + 2) + r0, A.col(j + 3) + r0};
          k.axpy4(r1 - r0, al, cols, yd + r0);
        }
      for (; j < n; ++j) {
        const index_t lo = std::max(r0, A.first(j)), hi = std::min(r1 - 1, A.last(j));
        if (lo > hi) continue;
        k.axpy(hi - lo + 1, alpha * xd[j], A.col(j) + (lo - A.first(j)), yd + lo);
      }
    });
  } else {
    auto dot = trans == Op::C ? k.dotc : k.dotu;
    auto dot4 = trans == Op::C ? k.dotc4 : k.dotu4;
    auto single = [&](index_t j) {
      const index_t lo = A.first(j), hi = A.last(j);
      if (lo > hi) return;
      yd[j] += alpha * dot(hi - lo + 1, A.col(j), xd + lo);
    };
    if (!A.full) {
      parallel_ranges(h, n, work, [&](index_t j0, index_t j1) {
        for (index_t j = j0; j < j1; ++j) single(j);
      });
    } else {
      // A full matrix four columns at a time: four streams of A against one pass over x (one
      // column at a time, sgemv T ran at 0.67x OpenBLAS). Threads split whole groups of four,
      // so which kernel computes column j (the four-column one, or the single dot for the last
      // n mod 4) depends on j and n only: the same bits for any thread count (the two kernels
      // may round differently where the compiler fuses multiply-adds differently).
      parallel_ranges(h, (n + 3) / 4, work, [&](index_t g0, index_t g1) {
        for (index_t g = g0; g < g1; ++g) {
          const index_t j = 4 * g;
          if (j + 4 > n) {
            for (index_t c = j; c < n; ++c) single(c);
            continue;
          }
          const T* cols[4] = {A.col(j), A.col(j + 1), A.col(j + 2), A.col(j + 3)};
          T d[4];
          dot4(m, cols, xd, d);
          for (int c = 0; c < 4; ++c) yd[j + c] += alpha * d[c];
        }
      });
    }
  }
  yv.store();
}

}  // namespace

template <class T>
void gemv(const Handle& h, Op trans, index_t m, index_t n, T alpha, const T* A, index_t lda, const T* x,
          index_t incx, T beta, T* y, index_t incy) {
  check_op(trans, "trans");
  check_dim(m, "m");
  check_dim(n, "n");
  check_ld(lda, m, "lda");
  check_inc(incx, "incx");
  check_inc(incy, "incy");
  if (m == 0 || n == 0 || (alpha == T(0) && beta == T(1))) return;
  general_mv(h, trans, m, n, BandView<T>{A, m, lda, m - 1, n - 1, true}, alpha, x, incx, beta, y, incy);
}

template <class T>
void gbmv(const Handle& h, Op trans, index_t m, index_t n, index_t kl, index_t ku, T alpha, const T* A,
          index_t lda, const T* x, index_t incx, T beta, T* y, index_t incy) {
  check_op(trans, "trans");
  check_dim(m, "m");
  check_dim(n, "n");
  check_dim(kl, "kl");
  check_dim(ku, "ku");
  check_arg(lda >= kl + ku + 1, "lda", [&] { return "must be >= kl + ku + 1"; });
  check_inc(incx, "incx");
  check_inc(incy, "incy");
  if (m == 0 || n == 0 || (alpha == T(0) && beta == T(1))) return;
  general_mv(h, trans, m, n, BandView<T>{A, m, lda, kl, ku, false}, alpha, x, incx, beta, y, incy);
}

#define STRATA_INSTANTIATE(T)                                                                              \
  template void gemv<T>(const Handle&, Op, index_t, index_t, T, const T*, index_t, const T*, index_t, T, T*, \
                        index_t);                                                                          \
  template void gbmv<T>(const Handle&, Op, index_t, index_t, index_t, index_t, T, const T*, index_t, const T*, \
                        index_t, T, T*, index_t);
STRATA_INSTANTIATE(float)
STRATA_INSTANTIATE(double)
STRATA_INSTANTIATE(c64)
STRATA_INSTANTIATE(c128)
#undef STRATA_INSTANTIATE

}  // namespace strata::blas
