// blas::gemm: argument checks, quick returns and BLAS semantics; the arithmetic is the GEMM
// engine's (strata::tile) job.
#include "strata/blas/level3.hpp"
#include "strata/core/status.hpp"
#include "gemm_dispatch.hpp"

namespace strata::blas {

namespace {

template <class T>
bool is_zero(T v) { return v == T(0); }

template <class T>
void check_gemm_pointers(index_t m, index_t n, index_t k, const T* A, const T* B, const T* C) {
  if (m > 0 && n > 0) check_arg(C != nullptr, "C", "must not be null");
  if (m > 0 && n > 0 && k > 0) {
    check_arg(A != nullptr, "A", "must not be null");
    check_arg(B != nullptr, "B", "must not be null");
  }
}

}  // namespace

namespace detail {

void check_gemm_shape(Order order, Op transa, Op transb, index_t m, index_t n, index_t k, index_t lda, index_t ldb,
                      index_t ldc) {
  auto valid_op = [](Op o) { return o == Op::N || o == Op::T || o == Op::C; };
  check_arg(order == Order::col_major || order == Order::row_major, "order", "must be col_major or row_major");
  check_arg(valid_op(transa), "transa", "must be Op::N, Op::T or Op::C");
  check_arg(valid_op(transb), "transb", "must be Op::N, Op::T or Op::C");
  check_arg(m >= 0, "m", "must be >= 0");
  check_arg(n >= 0, "n", "must be >= 0");
  check_arg(k >= 0, "k", "must be >= 0");
  const bool col = order == Order::col_major;
  // Rows of the stored matrix (col-major) or columns (row-major) that the leading dimension must cover.
  const index_t a_rows = (transa == Op::N) == col ? m : k;
  const index_t b_rows = (transb == Op::N) == col ? k : n;
  const index_t c_rows = col ? m : n;
  check_arg(lda >= std::max<index_t>(1, a_rows), "lda", "is smaller than the stored rows of A");
  check_arg(ldb >= std::max<index_t>(1, b_rows), "ldb", "is smaller than the stored rows of B");
  check_arg(ldc >= std::max<index_t>(1, c_rows), "ldc", "is smaller than the stored rows of C");
}

}  // namespace detail

template <class T>
void gemm(const Handle& h, Order order, Op transa, Op transb, index_t m, index_t n, index_t k, T alpha,
          const T* A, index_t lda, const T* B, index_t ldb, T beta, T* C, index_t ldc) {
  detail::check_gemm_shape(order, transa, transb, m, n, k, lda, ldb, ldc);
  check_gemm_pointers(m, n, k, A, B, C);
  if (m == 0 || n == 0 || ((is_zero(alpha) || k == 0) && beta == T(1))) return;
  if (order == Order::row_major) {
    // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands.
    detail::gemm_dispatch<T>(h, transb, transa, n, m, k, alpha, B, ldb, A, lda, beta, C, ldc);
  } else {
    detail::gemm_dispatch<T>(h, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  }
}

template <class T>
void gemm(const Handle& h, Op transa, Op transb, index_t m, index_t n, index_t k, T alpha, const T* A,
          index_t lda, const T* B, index_t ldb, T beta, T* C, index_t ldc) {
  gemm<T>(h, Order::col_major, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

#define STRATA_INSTANTIATE_GEMM(T)                                                                     \
  template void gemm<T>(const Handle&, Op, Op, index_t, index_t, index_t, T, const T*, index_t, const T*, \
                        index_t, T, T*, index_t);                                                       \
  template void gemm<T>(const Handle&, Order, Op, Op, index_t, index_t, index_t, T, const T*, index_t,   \
                        const T*, index_t, T, T*, index_t);
STRATA_INSTANTIATE_GEMM(float)
STRATA_INSTANTIATE_GEMM(double)
STRATA_INSTANTIATE_GEMM(c64)
STRATA_INSTANTIATE_GEMM(c128)
#undef STRATA_INSTANTIATE_GEMM

}  // namespace strata::blas
