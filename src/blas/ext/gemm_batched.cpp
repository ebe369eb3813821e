// gemm_batched and gemm_strided_batched: one gemm per batch entry. Small problems run one
// entry per thread (each gemm is itself deterministic, so the results do not depend on how
// the batch is split); large ones let each gemm use the threads.
#include <tuple>

#include "../common/blocking.hpp"
#include "../common/checks.hpp"
#include "../common/parallel.hpp"
#include "strata/blas/level3.hpp"

namespace strata::blas {

namespace {

using namespace detail;

template <class T, class Operands>
void run_batch(const Handle& h, Order order, Op transa, Op transb, index_t m, index_t n, index_t k, T alpha,
               index_t lda, index_t ldb, T beta, index_t ldc, index_t batch_count, Operands&& operands) {
  check_arg(batch_count >= 0, "batch_count", "must be >= 0");
  if (batch_count == 0) return;
  auto one = [&](index_t i) {
    auto [A, B, C] = operands(i);
    gemm<T>(h, order, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  };
  one(0);  // validates the shared arguments before any other entry is written
  const bool small = m * n * k < level3_small_problem;
  if (small && batch_count > 1) {
    parallel_for(batch_count - 1, threads_for(h, batch_count * m * n), [&](int64_t lo, int64_t hi, int) {
      for (index_t i = lo; i < hi; ++i) one(i + 1);
    });
  } else {
    for (index_t i = 1; i < batch_count; ++i) one(i);
  }
}

}  // namespace

template <class T>
void gemm_batched(const Handle& h, Order order, Op transa, Op transb, index_t m, index_t n, index_t k, T alpha,
                  const T* const A[], index_t lda, const T* const B[], index_t ldb, T beta, T* const C[], index_t ldc,
                  index_t batch_count) {
  if (batch_count > 0) {
    check_arg(A != nullptr, "A", "pointer array must not be null");
    check_arg(B != nullptr, "B", "pointer array must not be null");
    check_arg(C != nullptr, "C", "pointer array must not be null");
  }
  run_batch<T>(h, order, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc, batch_count,
               [&](index_t i) { return std::tuple{A[i], B[i], C[i]}; });
}

template <class T>
void gemm_batched(const Handle& h, Op transa, Op transb, index_t m, index_t n, index_t k, T alpha, const T* const A[],
                  index_t lda, const T* const B[], index_t ldb, T beta, T* const C[], index_t ldc,
                  index_t batch_count) {
  gemm_batched<T>(h, Order::col_major, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, batch_count);
}

template <class T>
void gemm_strided_batched(const Handle& h, Order order, Op transa, Op transb, index_t m, index_t n, index_t k, T alpha,
                          const T* A, index_t lda, index_t stride_a, const T* B, index_t ldb, index_t stride_b, T beta,
                          T* C, index_t ldc, index_t stride_c, index_t batch_count) {
  run_batch<T>(h, order, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc, batch_count, [&](index_t i) {
    return std::tuple{A + i * stride_a, B + i * stride_b, C + i * stride_c};
  });
}

template <class T>
void gemm_strided_batched(const Handle& h, Op transa, Op transb, index_t m, index_t n, index_t k, T alpha, const T* A,
                          index_t lda, index_t stride_a, const T* B, index_t ldb, index_t stride_b, T beta, T* C,
                          index_t ldc, index_t stride_c, index_t batch_count) {
  gemm_strided_batched<T>(h, Order::col_major, transa, transb, m, n, k, alpha, A, lda, stride_a, B, ldb, stride_b,
                          beta, C, ldc, stride_c, batch_count);
}

#define STRATA_INSTANTIATE(T)                                                                                       \
  template void gemm_batched<T>(const Handle&, Op, Op, index_t, index_t, index_t, T, const T* const[], index_t,     \
                                const T* const[], index_t, T, T* const[], index_t, index_t);                        \
  template void gemm_batched<T>(const Handle&, Order, Op, Op, index_t, index_t, index_t, T, const T* const[],       \
                                index_t, const T* const[], index_t, T, T* const[], index_t, index_t);               \
  template void gemm_strided_batched<T>(const Handle&, Op, Op, index_t, index_t, index_t, T, const T*, index_t,     \
                                        index_t, const T*, index_t, index_t, T, T*, index_t, index_t, index_t);     \
  template void gemm_strided_batched<T>(const Handle&, Order, Op, Op, index_t, index_t, index_t, T, const T*,       \
                                        index_t, index_t, const T*, index_t, index_t, T, T*, index_t, index_t,      \
                                        index_t);
STRATA_INSTANTIATE(float)
STRATA_INSTANTIATE(double)
STRATA_INSTANTIATE(c64)
STRATA_INSTANTIATE(c128)
#undef STRATA_INSTANTIATE

}  // namespace strata::blas
