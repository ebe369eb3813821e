// omatcopy / imatcopy: B := alpha*op(A), out of place or in place (through a scratch copy).
// Row-major is the column-major problem on the transposed shape.
#include <vector>

#include "../common/checks.hpp"
#include "../common/scalar.hpp"
#include "strata/blas/level3.hpp"

namespace strata::blas {

namespace {

using namespace detail;

void check_matcopy(Order order, Op trans, index_t rows, index_t cols, index_t lda, index_t ldb) {
  check_arg(order == Order::col_major || order == Order::row_major, "order", "must be col_major or row_major");
  check_op(trans, "trans");
  check_dim(rows, "rows");
  check_dim(cols, "cols");
  const bool col = order == Order::col_major;
  check_ld(lda, col ? rows : cols, "lda");
  // op(A) has rows x cols (N) or cols x rows (T/C) elements.
  const index_t b_rows = (trans == Op::N) == col ? rows : cols;
  check_ld(ldb, b_rows, "ldb");
}

// Column-major B := alpha*op(A), A is m x n.
template <class T>
void copy_scaled(Op trans, index_t m, index_t n, T alpha, const T* A, index_t lda, T* B, index_t ldb) {
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < m; ++i) {
      const T v = alpha * conj_if(trans == Op::C, A[i + j * lda]);
      if (trans == Op::N) B[i + j * ldb] = v;
      else B[j + i * ldb] = v;
    }
}

}  // namespace

template <class T>
void omatcopy(const Handle&, Order order, Op trans, index_t rows, index_t cols, T alpha, const T* A, index_t lda, T* B,
              index_t ldb) {
  check_matcopy(order, trans, rows, cols, lda, ldb);
  if (order == Order::col_major) copy_scaled(trans, rows, cols, alpha, A, lda, B, ldb);
  else copy_scaled(trans, cols, rows, alpha, A, lda, B, ldb);
}

template <class T>
void imatcopy(const Handle& h, Order order, Op trans, index_t rows, index_t cols, T alpha, T* AB, index_t lda,
              index_t ldb) {
  check_matcopy(order, trans, rows, cols, lda, ldb);
  const index_t m = order == Order::col_major ? rows : cols, n = order == Order::col_major ? cols : rows;
  std::vector<T> scratch(size_t(m * n));
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < m; ++i) scratch[size_t(i + j * m)] = AB[i + j * lda];
  omatcopy(h, Order::col_major, trans, m, n, alpha, scratch.data(), std::max<index_t>(1, m), AB, ldb);
}

#define STRATA_INSTANTIATE(T)                                                                                 \
  template void omatcopy<T>(const Handle&, Order, Op, index_t, index_t, T, const T*, index_t, T*, index_t); \
  template void imatcopy<T>(const Handle&, Order, Op, index_t, index_t, T, T*, index_t, index_t);
STRATA_INSTANTIATE(float)
STRATA_INSTANTIATE(double)
STRATA_INSTANTIATE(c64)
STRATA_INSTANTIATE(c128)
#undef STRATA_INSTANTIATE

}  // namespace strata::blas
