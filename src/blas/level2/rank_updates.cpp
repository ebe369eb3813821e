// Rank-1 and rank-2 updates: ger/geru/gerc (general), syr/spr/syr2/spr2 (symmetric) and
// her/hpr/her2/hpr2 (Hermitian). Each column of A receives axpy updates on its stored
// segment. Columns are independent, so threads split them (ger: contiguous ranges; the
// triangular updates: the balanced column chunks of common/parallel.hpp).
#include <algorithm>

#include "../common/checks.hpp"
#include "../common/dense_vector.hpp"
#include "../common/parallel.hpp"
#include "../common/tri_storage.hpp"
#include "../kernels/vec_kernels.hpp"
#include "strata/blas/level2.hpp"

namespace strata::blas {

namespace {

using namespace detail;

template <class T, bool ConjY>
void general_rank1(const Handle& h, index_t m, index_t n, T alpha, const T* x, index_t incx, const T* y,
                   index_t incy, T* A, index_t lda) {
  check_dim(m, "m");
  check_dim(n, "n");
  check_inc(incx, "incx");
  check_inc(incy, "incy");
  check_ld(lda, m, "lda");
  if (m == 0 || n == 0 || alpha == T(0)) return;
  DenseInput<T> xv(x, m, incx);
  DenseInput<T> yv(y, n, incy);
  const T* xd = xv.data();
  const T* yd = yv.data();
  const auto& k = vec_kernels<T>(h.isa());
  // Four columns per pass over x where all four y_j are nonzero (a zero y_j leaves its column
  // untouched, as the reference BLAS does: no 0 * Inf); threads split whole groups of four, so
  // a column's arithmetic does not depend on the thread count.
  parallel_ranges(h, (n + 3) / 4, m * n, [&](index_t g0, index_t g1) {
    for (index_t j = 4 * g0; j < std::min(n, 4 * g1); j += 4) {
      if (j + 4 <= n && yd[j] != T(0) && yd[j + 1] != T(0) && yd[j + 2] != T(0) && yd[j + 3] != T(0)) {
        T t[4];
        T* cols[4];
        for (int c = 0; c < 4; ++c) t[c] = alpha * conj_if(ConjY, yd[j + c]), cols[c] = A + (j + c) * lda;
        k.axpy_columns4(m, t, xd, cols);
        continue;
      }
      for (index_t c = j; c < std::min(n, j + 4); ++c)
        if (yd[c] != T(0)) k.axpy(m, alpha * conj_if(ConjY, yd[c]), xd, A + c * lda);
    }
  });
}

// A += alpha*x*conj?(y)^T + conj?(alpha)*y*conj?(x)^T on the stored triangle (rank 2), or
// A += alpha*x*conj?(x)^T (rank 1, y == nullptr). Herm: the diagonal stays real.
template <class T, bool Herm>
void symmetric_update(const Handle& h, const TriStorage<T>& A, T alpha, const T* x, index_t incx, const T* y,
                      index_t incy) {
  const index_t n = A.n;
  if (n == 0 || alpha == T(0)) return;
  DenseInput<T> xv(x, n, incx);
  DenseInput<T> yv(y ? y : x, n, y ? incy : incx);
  const T* xd = xv.data();
  const T* yd = yv.data();
  const bool rank2 = y != nullptr;
  auto axpy = vec_kernels<T>(h.isa()).axpy;
  auto column = [&](index_t j) {
    const T t1 = alpha * conj_if(Herm, yd[j]);                  // multiplies column x
    const T t2 = rank2 ? conj_if(Herm, alpha * xd[j]) : T(0);   // multiplies column y
    T* dj = A.at(j, j);
    if (xd[j] == T(0) && (!rank2 || yd[j] == T(0))) {
      if constexpr (Herm) *dj = T(real_part(*dj));
      return;
    }
    // The off-diagonal segment, then the diagonal element on its own.
    const index_t lo = A.off_first(j), hi = A.off_last(j);
    if (lo <= hi) {
      axpy(hi - lo + 1, t1, xd + lo, A.at(lo, j));
      if (rank2) axpy(hi - lo + 1, t2, yd + lo, A.at(lo, j));
    }
    const T d = xd[j] * t1 + (rank2 ? yd[j] * t2 : T(0));
    if constexpr (Herm) *dj = T(real_part(*dj) + real_part(d));
    else *dj += d;
  };
  for_column_chunks(h, n, n * (A.k + 1), [&](index_t j0, index_t j1) {
    for (index_t j = j0; j < j1; ++j) column(j);
  });
}

void check_update(Uplo uplo, index_t n, index_t incx) {
  check_uplo(uplo);
  check_dim(n, "n");
  check_inc(incx, "incx");
}

}  // namespace

template <class T>
void ger(const Handle& h, index_t m, index_t n, T alpha, const T* x, index_t incx, const T* y, index_t incy, T* A,
         index_t lda) {
  general_rank1<T, false>(h, m, n, alpha, x, incx, y, incy, A, lda);
}
template <class T>
void geru(const Handle& h, index_t m, index_t n, T alpha, const T* x, index_t incx, const T* y, index_t incy, T* A,
          index_t lda) {
  general_rank1<T, false>(h, m, n, alpha, x, incx, y, incy, A, lda);
}
template <class T>
void gerc(const Handle& h, index_t m, index_t n, T alpha, const T* x, index_t incx, const T* y, index_t incy, T* A,
          index_t lda) {
  general_rank1<T, true>(h, m, n, alpha, x, incx, y, incy, A, lda);
}

template <class T>
void syr(const Handle& h, Uplo uplo, index_t n, T alpha, const T* x, index_t incx, T* A, index_t lda) {
  check_update(uplo, n, incx);
  check_ld(lda, n, "lda");
  symmetric_update<T, false>(h, TriStorage<T>::full(A, n, uplo == Uplo::upper, lda), alpha, x, incx, nullptr, 0);
}
template <class T>
void spr(const Handle& h, Uplo uplo, index_t n, T alpha, const T* x, index_t incx, T* AP) {
  check_update(uplo, n, incx);
  symmetric_update<T, false>(h, TriStorage<T>::packed(AP, n, uplo == Uplo::upper), alpha, x, incx, nullptr, 0);
}
template <class T>
void syr2(const Handle& h, Uplo uplo, index_t n, T alpha, const T* x, index_t incx, const T* y, index_t incy, T* A,
          index_t lda) {
  check_update(uplo, n, incx);
  check_inc(incy, "incy");
  check_ld(lda, n, "lda");
  symmetric_update<T, false>(h, TriStorage<T>::full(A, n, uplo == Uplo::upper, lda), alpha, x, incx, y, incy);
}
template <class T>
void spr2(const Handle& h, Uplo uplo, index_t n, T alpha, const T* x, index_t incx, const T* y, index_t incy,
          T* AP) {
  check_update(uplo, n, incx);
  check_inc(incy, "incy");
  symmetric_update<T, false>(h, TriStorage<T>::packed(AP, n, uplo == Uplo::upper), alpha, x, incx, y, incy);
}

template <class T>
void her(const Handle& h, Uplo uplo, index_t n, real_t<T> alpha, const T* x, index_t incx, T* A, index_t lda) {
  check_update(uplo, n, incx);
  check_ld(lda, n, "lda");
  symmetric_update<T, true>(h, TriStorage<T>::full(A, n, uplo == Uplo::upper, lda), T(alpha), x, incx, nullptr, 0);
}
template <class T>
void hpr(const Handle& h, Uplo uplo, index_t n, real_t<T> alpha, const T* x, index_t incx, T* AP) {
  check_update(uplo, n, incx);
  symmetric_update<T, true>(h, TriStorage<T>::packed(AP, n, uplo == Uplo::upper), T(alpha), x, incx, nullptr, 0);
}
template <class T>
void her2(const Handle& h, Uplo uplo, index_t n, T alpha, const T* x, index_t incx, const T* y, index_t incy, T* A,
          index_t lda) {
  check_update(uplo, n, incx);
  check_inc(incy, "incy");
  check_ld(lda, n, "lda");
  symmetric_update<T, true>(h, TriStorage<T>::full(A, n, uplo == Uplo::upper, lda), alpha, x, incx, y, incy);
}
template <class T>
void hpr2(const Handle& h, Uplo uplo, index_t n, T alpha, const T* x, index_t incx, const T* y, index_t incy,
          T* AP) {
  check_update(uplo, n, incx);
  check_inc(incy, "incy");
  symmetric_update<T, true>(h, TriStorage<T>::packed(AP, n, uplo == Uplo::upper), alpha, x, incx, y, incy);
}

#define STRATA_GER(T, name) \
  template void name<T>(const Handle&, index_t, index_t, T, const T*, index_t, const T*, index_t, T*, index_t);
#define STRATA_SYM(T)                                                                                        \
  template void syr<T>(const Handle&, Uplo, index_t, T, const T*, index_t, T*, index_t);                    \
  template void spr<T>(const Handle&, Uplo, index_t, T, const T*, index_t, T*);                             \
  template void syr2<T>(const Handle&, Uplo, index_t, T, const T*, index_t, const T*, index_t, T*, index_t); \
  template void spr2<T>(const Handle&, Uplo, index_t, T, const T*, index_t, const T*, index_t, T*);
#define STRATA_HERM(T)                                                                                       \
  template void her<T>(const Handle&, Uplo, index_t, real_t<T>, const T*, index_t, T*, index_t);            \
  template void hpr<T>(const Handle&, Uplo, index_t, real_t<T>, const T*, index_t, T*);                     \
  template void her2<T>(const Handle&, Uplo, index_t, T, const T*, index_t, const T*, index_t, T*, index_t); \
  template void hpr2<T>(const Handle&, Uplo, index_t, T, const T*, index_t, const T*, index_t, T*);
STRATA_GER(float, ger)
STRATA_GER(double, ger)
STRATA_GER(c64, geru)
STRATA_GER(c128, geru)
STRATA_GER(float, gerc)
STRATA_GER(double, gerc)
STRATA_GER(c64, gerc)
STRATA_GER(c128, gerc)
STRATA_SYM(float)
STRATA_SYM(double)
STRATA_SYM(c64)
STRATA_SYM(c128)
STRATA_HERM(c64)
STRATA_HERM(c128)
#undef STRATA_GER
#undef STRATA_SYM
#undef STRATA_HERM

}  // namespace strata::blas
