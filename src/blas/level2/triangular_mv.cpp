// x := op(A)*x and x := op(A)^-1*x for triangular A in full, band and packed storage
// (trmv tbmv tpmv trsv tbsv tpsv). One sweep per (uplo, op) over column segments: op = N
// uses axpy on the column (skipped when x_j == 0, as the reference, so an Inf/NaN in A
// meets a zero x_j the same way), op = T/C uses a dot product with the column. The products
// (trmv tbmv tpmv) are threaded over column chunks; the solves are sequential by nature.
#include "../common/checks.hpp"
#include "../common/dense_vector.hpp"
#include "../common/parallel.hpp"
#include "../common/tri_storage.hpp"
#include "../kernels/vec_kernels.hpp"
#include "strata/blas/level2.hpp"

namespace strata::blas {

namespace {

using namespace detail;

template <class T>
struct TriCall {
  const TriStorage<const T>& A;
  Op trans;
  bool unit;
  const VecKernels<T>& k;
  T diag(index_t j) const { return conj_if(trans == Op::C, *A.at(j, j)); }
  index_t lo(index_t j) const { return A.off_first(j); }
  index_t hi(index_t j) const { return A.off_last(j); }
  T dot(index_t j, const T* x) const {
    const index_t l = lo(j), len = hi(j) - l + 1;
    if (len <= 0) return T(0);
    return (trans == Op::C ? k.dotc : k.dotu)(len, A.at(l, j), x + l);
  }
  void axpy(index_t j, T a, T* x) const {
    const index_t l = lo(j), len = hi(j) - l + 1;
    if (len > 0) k.axpy(len, a, A.at(l, j), x + l);
  }
};

// x := op(A)*x0 reading only the input x0, so column chunks can run on several threads: op = N
// sums x0_j*A(:,j) over columns (a zero x0_j skips column j, diagonal included, as the
// reference), op = T/C makes each x_j the diagonal term plus one dot product with x0.
template <class T>
void triangular_mv(const Handle& h, const TriCall<T>& c, T* x) {
  const index_t n = c.A.n;
  const index_t work = n * (c.A.k + 1);
  const std::vector<T> x0(x, x + n);
  if (c.trans == Op::N) {
    std::fill(x, x + n, T(0));
    auto rows = [&](index_t j0, index_t j1) { return std::pair{c.A.first(j0), c.A.last(j1 - 1) + 1}; };
    auto column = [&](index_t j, T* acc) {
      if (x0[size_t(j)] == T(0)) return;
      c.axpy(j, x0[size_t(j)], acc);
      acc[j] += c.unit ? x0[size_t(j)] : x0[size_t(j)] * c.diag(j);
    };
    accumulate_column_chunks(h, n, work, x, rows, [&](index_t j0, index_t j1, T* acc) {
      index_t j = j0;
      // Four columns per pass over the rows they all store (axpy4), the rest one by one; a
      // group with a zero x_j goes column by column so that column is skipped as above.
      for (; j + 4 <= j1; j += 4) {
        const T* xs = x0.data() + j;
        if (xs[0] == T(0) || xs[1] == T(0) || xs[2] == T(0) || xs[3] == T(0)) {
          for (int q = 0; q < 4; ++q) column(j + q, acc);
          continue;
        }
        const FourColumns four(c.A, j);
        if (four.shared()) {
          const index_t lo = four.lo;
          const T* cols[4] = {c.A.at(lo, j), c.A.at(lo, j + 1), c.A.at(lo, j + 2), c.A.at(lo, j + 3)};
          c.k.axpy4(four.hi - lo + 1, xs, cols, acc + lo);
        }
        for (int q = 0; q < 4; ++q) {
          const index_t col = j + q;
          four.rest(c.A, col, [&](index_t a, index_t b) { c.k.axpy(b - a + 1, xs[q], c.A.at(a, col), acc + a); });
          acc[col] += c.unit ? xs[q] : xs[q] * c.diag(col);
        }
      }
      for (; j < j1; ++j) column(j, acc);
    });
  } else {
    for_column_chunks(h, n, work, [&](index_t j0, index_t j1) {
      for (index_t j = j0; j < j1; ++j)
        x[j] = (c.unit ? x0[size_t(j)] : x0[size_t(j)] * c.diag(j)) + c.dot(j, x0.data());
    });
  }
}

template <class T>
void triangular_sv(const TriCall<T>& c, T* x) {
  const index_t n = c.A.n;
  if (c.trans == Op::N) {
    auto column = [&](index_t j) {
      if (x[j] == T(0)) return;
      if (!c.unit) x[j] /= c.diag(j);
      c.axpy(j, -x[j], x);
    };
    // Four columns at a time (lower: j..j+3 upwards, upper: j+3..j downwards): each is solved
    // and applied to the rows only it (or not all four) stores — the block's own rows among
    // them — then the rows all four store take the four updates in one pass (axpy4: the same
    // operations in the same order as four axpy calls, up to where the compiler fuses
    // multiply-adds). A zero x_j skips its column as above. The solve is sequential, so the
    // result does not depend on threads. (Column by column, strsv N ran at 0.55x OpenBLAS.)
    auto four = [&](index_t j) {
      const bool up = c.A.upper;
      const index_t order[4] = {up ? j + 3 : j, up ? j + 2 : j + 1, up ? j + 1 : j + 2, up ? j : j + 3};
      const FourColumns shared(c.A, j);
      if (shared.hi - shared.lo + 1 < 32) {  // narrow bands: the extra short calls cost more
        for (index_t col : order) column(col);
        return;
      }
      bool all_nonzero = true;
      for (index_t col : order) {
        if (x[col] == T(0)) {
          all_nonzero = false;
          continue;
        }
        if (!c.unit) x[col] /= c.diag(col);
        shared.rest(c.A, col, [&](index_t a, index_t b) { c.k.axpy(b - a + 1, -x[col], c.A.at(a, col), x + a); });
      }
      const index_t lo = shared.lo, len = shared.hi - lo + 1;
      if (all_nonzero) {
        const T alpha[4] = {-x[order[0]], -x[order[1]], -x[order[2]], -x[order[3]]};
        const T* cols[4] = {c.A.at(lo, order[0]), c.A.at(lo, order[1]), c.A.at(lo, order[2]), c.A.at(lo, order[3])};
        c.k.axpy4(len, alpha, cols, x + lo);
      } else {
        for (index_t col : order)
          if (x[col] != T(0)) c.k.axpy(len, -x[col], c.A.at(lo, col), x + lo);
      }
    };
    // Bands narrower than that go column by column throughout (stbsv, k = 16, lost a third
    // with the per-block bookkeeping).
    if (c.A.k < 36) {
      if (c.A.upper) for (index_t j = n - 1; j >= 0; --j) column(j);
      else for (index_t j = 0; j < n; ++j) column(j);
      return;
    }
    index_t j = 0;
    if (c.A.upper) {
      for (j = n; j >= 4; j -= 4) four(j - 4);
      for (--j; j >= 0; --j) column(j);
    } else {
      for (; j + 4 <= n; j += 4) four(j);
      for (; j < n; ++j) column(j);
    }
  } else {
    auto row = [&](index_t j) {
      T t = x[j] - c.dot(j, x);
      if (!c.unit) t /= c.diag(j);
      x[j] = t;
    };
    // Four rows at a time (upper: j..j+3 upwards, lower: j+3..j downwards): the entries
    // solved before the block that all four columns store take one pass over x with four
    // dot products (dotu4/dotc4); each column then adds its own few entries — the block's
    // rows solved just before it, and a band's extra rows — and is solved in order. (Row by
    // row, each dot product waited for the previous row: strsv U T ran at 0.68-0.81x OpenBLAS.)
    auto dot_range = [&](index_t col, index_t a, index_t b) {
      return b < a ? T(0) : (c.trans == Op::C ? c.k.dotc : c.k.dotu)(b - a + 1, c.A.at(a, col), x + a);
    };
    auto four = [&](index_t j) {
      const bool up = c.A.upper;
      const index_t order[4] = {up ? j : j + 3, up ? j + 1 : j + 2, up ? j + 2 : j + 1, up ? j + 3 : j};
      // Solved rows every column of the block stores: [s0, s1].
      const index_t s0 = up ? c.lo(j + 3) : j + 4, s1 = up ? j - 1 : c.hi(j);
      T shared[4] = {};
      if (s1 >= s0) {
        const T* cols[4] = {c.A.at(s0, order[0]), c.A.at(s0, order[1]), c.A.at(s0, order[2]), c.A.at(s0, order[3])};
        (c.trans == Op::C ? c.k.dotc4 : c.k.dotu4)(s1 - s0 + 1, cols, x + s0, shared);
      }
      for (int q = 0; q < 4; ++q) {
        const index_t col = order[q];
        const index_t lo = c.lo(col), hi = c.hi(col);
        // The column's other stored rows: below s0 and above s1 (one side is the block's own rows).
        const T rest = s1 >= s0 ? dot_range(col, lo, s0 - 1) + dot_range(col, s1 + 1, hi) : dot_range(col, lo, hi);
        T t = x[col] - (shared[q] + rest);
        if (!c.unit) t /= c.diag(col);
        x[col] = t;
      }
    };
    if (c.A.k < 36) {  // narrow bands: row by row (as the op = N solve)
      if (c.A.upper) for (index_t j = 0; j < n; ++j) row(j);
      else for (index_t j = n - 1; j >= 0; --j) row(j);
      return;
    }
    if (c.A.upper) {
      index_t j = 0;
      for (; j + 4 <= n; j += 4) four(j);
      for (; j < n; ++j) row(j);
    } else {
      index_t j = n;
      for (; j >= 4; j -= 4) four(j - 4);
      for (--j; j >= 0; --j) row(j);
    }
  }
}

void check_tri(Uplo uplo, Op trans, Diag diag, index_t n) {
  check_uplo(uplo);
  check_op(trans, "trans");
  check_diag(diag);
  check_dim(n, "n");
}

template <class T>
void run(const Handle& h, bool solve, const TriStorage<const T>& A, Op trans, Diag diag, T* x, index_t incx) {
  if (A.n == 0) return;
  DenseVector<T> xv(x, A.n, incx);
  TriCall<T> c{A, trans, diag == Diag::unit, vec_kernels<T>(h.isa())};
  if (solve) triangular_sv(c, xv.data());
  else triangular_mv(h, c, xv.data());
  xv.store();
}

}  // namespace

template <class T>
void trmv(const Handle& h, Uplo uplo, Op trans, Diag diag, index_t n, const T* A, index_t lda, T* x, index_t incx) {
  check_tri(uplo, trans, diag, n);
  check_ld(lda, n, "lda");
  check_inc(incx, "incx");
  run(h, false, TriStorage<const T>::full(A, n, uplo == Uplo::upper, lda), trans, diag, x, incx);
}

template <class T>
void tbmv(const Handle& h, Uplo uplo, Op trans, Diag diag, index_t n, index_t k, const T* A, index_t lda, T* x,
          index_t incx) {
  check_tri(uplo, trans, diag, n);
  check_dim(k, "k");
  check_arg(lda >= k + 1, "lda", [&] { return "must be >= k + 1"; });
  check_inc(incx, "incx");
  run(h, false, TriStorage<const T>::band(A, n, uplo == Uplo::upper, k, lda), trans, diag, x, incx);
}

template <class T>
void tpmv(const Handle& h, Uplo uplo, Op trans, Diag diag, index_t n, const T* AP, T* x, index_t incx) {
  check_tri(uplo, trans, diag, n);
  check_inc(incx, "incx");
  run(h, false, TriStorage<const T>::packed(AP, n, uplo == Uplo::upper), trans, diag, x, incx);
}

template <class T>
void trsv(const Handle& h, Uplo uplo, Op trans, Diag diag, index_t n, const T* A, index_t lda, T* x, index_t incx) {
  check_tri(uplo, trans, diag, n);
  check_ld(lda, n, "lda");
  check_inc(incx, "incx");
  run(h, true, TriStorage<const T>::full(A, n, uplo == Uplo::upper, lda), trans, diag, x, incx);
}

template <class T>
void tbsv(const Handle& h, Uplo uplo, Op trans, Diag diag, index_t n, index_t k, const T* A, index_t lda, T* x,
          index_t incx) {
  check_tri(uplo, trans, diag, n);
  check_dim(k, "k");
  check_arg(lda >= k + 1, "lda", [&] { return "must be >= k + 1"; });
  check_inc(incx, "incx");
  run(h, true, TriStorage<const T>::band(A, n, uplo == Uplo::upper, k, lda), trans, diag, x, incx);
}

template <class T>
void tpsv(const Handle& h, Uplo uplo, Op trans, Diag diag, index_t n, const T* AP, T* x, index_t incx) {
  check_tri(uplo, trans, diag, n);
  check_inc(incx, "incx");
  run(h, true, TriStorage<const T>::packed(AP, n, uplo == Uplo::upper), trans, diag, x, incx);
}

#define STRATA_INSTANTIATE(T)                                                                                  \
  template void trmv<T>(const Handle&, Uplo, Op, Diag, index_t, const T*, index_t, T*, index_t);              \
  template void tbmv<T>(const Handle&, Uplo, Op, Diag, index_t, index_t, const T*, index_t, T*, index_t);     \
  template void tpmv<T>(const Handle&, Uplo, Op, Diag, index_t, const T*, T*, index_t);                       \
  template void trsv<T>(const Handle&, Uplo, Op, Diag, index_t, const T*, index_t, T*, index_t);              \
  template void tbsv<T>(const Handle&, Uplo, Op, Diag, index_t, index_t, const T*, index_t, T*, index_t);     \
  template void tpsv<T>(const Handle&, Uplo, Op, Diag, index_t, const T*, T*, index_t);
STRATA_INSTANTIATE(float)
STRATA_INSTANTIATE(double)
STRATA_INSTANTIATE(c64)
STRATA_INSTANTIATE(c128)
#undef STRATA_INSTANTIATE

}  // namespace strata::blas
