// y := alpha*A*x + beta*y for symmetric and Hermitian A in full, band and packed storage
// (symv sbmv spmv hemv hbmv hpmv): one column sweep over the stored triangle. Column j
// contributes alpha*x_j*A(:,j) to the rows it stores and its (conjugated) dot product with x
// to y_j, so each stored element is read once. Long sweeps are cut into column chunks that
// threads run at once, each summing into its own partial y (common/parallel.hpp).
#include "../common/checks.hpp"
#include "../common/dense_vector.hpp"
#include "../common/parallel.hpp"
#include "../common/tri_storage.hpp"
#include "../kernels/vec_kernels.hpp"
#include "strata/blas/level2.hpp"

namespace strata::blas {

namespace {

using namespace detail;

// Column pieces shorter than this are summed inline rather than by a kernel call.
inline constexpr index_t short_piece = 8;

template <class T, bool Herm>
void symmetric_mv(const Handle& h, const TriStorage<const T>& A, T alpha, const T* x, index_t incx, T beta, T* y,
                  index_t incy) {
  const index_t n = A.n;
  if (n == 0 || (alpha == T(0) && beta == T(1))) return;
  scale_vector(n, beta, y, incy);
  if (alpha == T(0)) return;
  DenseInput<T> xv(x, n, incx);
  DenseVector<T> yv(y, n, incy);
  const auto& k = vec_kernels<T>(h.isa());
  // y(lo:hi) += t1 * A(lo:hi, j) and the sum of conj?(A(i,j)) * x_i, in one pass over the column.
  auto axpy_dot = Herm ? k.axpy_dotc : k.axpy_dotu;
  const T* xd = xv.data();
  // Rows that columns [j0, j1) touch: their stored segments.
  auto rows = [&](index_t j0, index_t j1) { return std::pair{A.first(j0), A.last(j1 - 1) + 1}; };
  auto axpy_dot4 = Herm ? k.axpy_dotc4 : k.axpy_dotu4;
  auto finish = [&](index_t j, T t1, T t2, T* acc) {
    const T diag = Herm ? T(real_part(*A.at(j, j))) : *A.at(j, j);
    acc[j] += t1 * diag + alpha * t2;
  };
  // Rows [a, b) of a column stored at col (col[i] is row a + i), summed inline: the small
  // triangle among four columns (up to three entries), where a kernel call cost more than the
  // piece (n = 256: a sixth of the time).
  auto short_piece_sum = [&](const T* col, index_t a, index_t b, T t1, T& t2, T* acc) {
    for (index_t i = 0; i < b - a; ++i) {
      acc[a + i] += t1 * col[i];
      t2 += conj_if(Herm, col[i]) * xd[a + i];
    }
  };
  // Full storage, four columns j..j+3: the same operations in the same order as the general
  // block below (kernel over the shared rows, then each column's piece of the small triangle
  // among the four and its diagonal), on pointers computed once.
  auto full_block = [&](index_t j, T* acc) {
    const T* col[4];
    for (int q = 0; q < 4; ++q) col[q] = A.a + (j + q) * A.lda;  // row 0 of column j + q
    const T t1[4] = {alpha * xd[j], alpha * xd[j + 1], alpha * xd[j + 2], alpha * xd[j + 3]};
    T t2[4] = {};
    // Shared rows: [0, j) (upper) or [j + 4, n) (lower).
    const index_t lo = A.upper ? 0 : j + 4, len = A.upper ? j : n - j - 4;
    if (len > 0) {
      const T* cols[4] = {col[0] + lo, col[1] + lo, col[2] + lo, col[3] + lo};
      axpy_dot4(len, t1, cols, xd + lo, acc + lo, t2);
    }
    for (int q = 0; q < 4; ++q) {
      // Column j + q's rows inside the block: [j, j + q) above its diagonal (upper) or
      // (j + q, j + 4) below it (lower).
      const index_t a = A.upper ? j : j + q + 1, b = A.upper ? j + q : j + 4;
      short_piece_sum(col[q] + a, a, b, t1[q], t2[q], acc);
      const T diag = Herm ? T(real_part(col[q][j + q])) : col[q][j + q];  // finish's, without A.at
      acc[j + q] += t1[q] * diag + alpha * t2[q];
    }
  };
  auto columns = [&](index_t j0, index_t j1, T* acc) {
    index_t j = j0;
    // Four columns per pass over the rows they all store, the rest of each one by one.
    for (; j + 4 <= j1; j += 4) {
      if (A.storage == Storage::full) {
        full_block(j, acc);
        continue;
      }
      const FourColumns four(A, j);
      const T t1[4] = {alpha * xd[j], alpha * xd[j + 1], alpha * xd[j + 2], alpha * xd[j + 3]};
      T t2[4] = {};
      if (four.shared()) {
        const index_t lo = four.lo;
        const T* cols[4] = {A.at(lo, j), A.at(lo, j + 1), A.at(lo, j + 2), A.at(lo, j + 3)};
        axpy_dot4(four.hi - lo + 1, t1, cols, xd + lo, acc + lo, t2);
      }
      for (int q = 0; q < 4; ++q) {
        const index_t c = j + q;
        four.rest(A, c, [&](index_t a, index_t b) {
          if (b - a < short_piece) return short_piece_sum(A.at(a, c), a, b + 1, t1[q], t2[q], acc);
          t2[q] += axpy_dot(b - a + 1, t1[q], A.at(a, c), xd + a, acc + a);
        });
        finish(c, t1[q], t2[q], acc);
      }
    }
    for (; j < j1; ++j) {
      const T t1 = alpha * xd[j];
      const index_t lo = A.off_first(j), hi = A.off_last(j);
      T t2{};
      if (lo <= hi) t2 = axpy_dot(hi - lo + 1, t1, A.at(lo, j), xd + lo, acc + lo);
      finish(j, t1, t2, acc);
    }
  };
  accumulate_column_chunks(h, n, n * (A.k + 1), yv.data(), rows, columns);
  yv.store();
}

void check_sym(Uplo uplo, index_t n) {
  check_uplo(uplo);
  check_dim(n, "n");
}

}  // namespace

template <class T>
void symv(const Handle& h, Uplo uplo, index_t n, T alpha, const T* A, index_t lda, const T* x, index_t incx,
          T beta, T* y, index_t incy) {
  check_sym(uplo, n);
  check_ld(lda, n, "lda");
  check_inc(incx, "incx");
  check_inc(incy, "incy");
  symmetric_mv<T, false>(h, TriStorage<const T>::full(A, n, uplo == Uplo::upper, lda), alpha, x, incx, beta, y, incy);
}

template <class T>
void sbmv(const Handle& h, Uplo uplo, index_t n, index_t k, T alpha, const T* A, index_t lda, const T* x,
          index_t incx, T beta, T* y, index_t incy) {
  check_sym(uplo, n);
  check_dim(k, "k");
  check_arg(lda >= k + 1, "lda", [&] { return "must be >= k + 1"; });
  check_inc(incx, "incx");
  check_inc(incy, "incy");
  symmetric_mv<T, false>(h, TriStorage<const T>::band(A, n, uplo == Uplo::upper, k, lda), alpha, x, incx, beta, y,
                         incy);
}

template <class T>
void spmv(const Handle& h, Uplo uplo, index_t n, T alpha, const T* AP, const T* x, index_t incx, T beta, T* y,
          index_t incy) {
  check_sym(uplo, n);
  check_inc(incx, "incx");
  check_inc(incy, "incy");
  symmetric_mv<T, false>(h, TriStorage<const T>::packed(AP, n, uplo == Uplo::upper), alpha, x, incx, beta, y, incy);
}

template <class T>
void hemv(const Handle& h, Uplo uplo, index_t n, T alpha, const T* A, index_t lda, const T* x, index_t incx,
          T beta, T* y, index_t incy) {
  check_sym(uplo, n);
  check_ld(lda, n, "lda");
  check_inc(incx, "incx");
  check_inc(incy, "incy");
  symmetric_mv<T, true>(h, TriStorage<const T>::full(A, n, uplo == Uplo::upper, lda), alpha, x, incx, beta, y, incy);
}

template <class T>
void hbmv(const Handle& h, Uplo uplo, index_t n, index_t k, T alpha, const T* A, index_t lda, const T* x,
          index_t incx, T beta, T* y, index_t incy) {
  check_sym(uplo, n);
  check_dim(k, "k");
  check_arg(lda >= k + 1, "lda", [&] { return "must be >= k + 1"; });
  check_inc(incx, "incx");
  check_inc(incy, "incy");
  symmetric_mv<T, true>(h, TriStorage<const T>::band(A, n, uplo == Uplo::upper, k, lda), alpha, x, incx, beta, y,
                        incy);
}

template <class T>
void hpmv(const Handle& h, Uplo uplo, index_t n, T alpha, const T* AP, const T* x, index_t incx, T beta, T* y,
          index_t incy) {
  check_sym(uplo, n);
  check_inc(incx, "incx");
  check_inc(incy, "incy");
  symmetric_mv<T, true>(h, TriStorage<const T>::packed(AP, n, uplo == Uplo::upper), alpha, x, incx, beta, y, incy);
}

#define STRATA_SYM(T)                                                                                          \
  template void symv<T>(const Handle&, Uplo, index_t, T, const T*, index_t, const T*, index_t, T, T*, index_t); \
  template void sbmv<T>(const Handle&, Uplo, index_t, index_t, T, const T*, index_t, const T*, index_t, T, T*,  \
                        index_t);                                                                              \
  template void spmv<T>(const Handle&, Uplo, index_t, T, const T*, const T*, index_t, T, T*, index_t);
#define STRATA_HERM(T)                                                                                         \
  template void hemv<T>(const Handle&, Uplo, index_t, T, const T*, index_t, const T*, index_t, T, T*, index_t); \
  template void hbmv<T>(const Handle&, Uplo, index_t, index_t, T, const T*, index_t, const T*, index_t, T, T*,  \
                        index_t);                                                                              \
  template void hpmv<T>(const Handle&, Uplo, index_t, T, const T*, const T*, index_t, T, T*, index_t);
STRATA_SYM(float)
STRATA_SYM(double)
STRATA_SYM(c64)
STRATA_SYM(c128)
STRATA_HERM(c64)
STRATA_HERM(c128)
#undef STRATA_SYM
#undef STRATA_HERM

}  // namespace strata::blas
