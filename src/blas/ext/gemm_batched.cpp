// gemm_batched and gemm_strided_batched. Real types: the whole batch is one engine call
// (gemm_batch_dispatch), which picks the kernel and operand policy once and fetches each
// entry's operands while the one before computes; the entries are divided among the threads,
// each run whole on one (each gemm is itself deterministic, so the results do not depend on
// how the batch is split), unless a few large ones divide unevenly: then each gemm uses the
// threads. Complex types run one gemm per entry.
// Every argument is checked, every entry's pointers included, before any C is written.
#include <tuple>

#include "../common/blocking.hpp"
#include "../common/checks.hpp"
#include "../common/parallel.hpp"
#include "../gemm/gemm_dispatch.hpp"
#include "strata/blas/level3.hpp"

namespace strata::blas {

namespace {

using namespace detail;

// The checks gemm makes, once for the shared arguments and for each entry's pointers.
template <class T>
bool checked_batch(Order order, Op transa, Op transb, index_t m, index_t n, index_t k, T alpha, index_t lda,
                   index_t ldb, T beta, index_t ldc, const GemmBatch<T>& b) {
  check_arg(b.count >= 0, "batch_count", "must be >= 0");
  check_gemm_shape(order, transa, transb, m, n, k, lda, ldb, ldc);
  if (b.count == 0 || m == 0 || n == 0) return false;
  const bool reads_ab = k > 0;
  if (b.c_array) {
    for (index_t i = 0; i < b.count; ++i) {
      check_arg(b.c_array[i] != nullptr, "C", "must not be null (a batch entry)");
      if (reads_ab) check_arg(b.a_array[i] != nullptr, "A", "must not be null (a batch entry)");
      if (reads_ab) check_arg(b.b_array[i] != nullptr, "B", "must not be null (a batch entry)");
    }
  } else {
    check_arg(b.c != nullptr, "C", "must not be null");
    if (reads_ab) check_arg(b.a != nullptr, "A", "must not be null");
    if (reads_ab) check_arg(b.b != nullptr, "B", "must not be null");
  }
  return !((alpha == T(0) || k == 0) && beta == T(1));
}

template <class T>
void run_batch(const Handle& h, Order order, Op transa, Op transb, index_t m, index_t n, index_t k, T alpha,
               index_t lda, index_t ldb, T beta, index_t ldc, GemmBatch<T> b) {
  if (!checked_batch(order, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc, b)) return;
  const bool small = m * n * k < level3_small_problem;
  if constexpr (!is_complex_v<T>) {
    b.split = split_batch_among_threads(h, b.count, m, n, k, level3_small_problem);
    if (order == Order::row_major) {
      // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands.
      std::swap(b.a, b.b), std::swap(b.stride_a, b.stride_b), std::swap(b.a_array, b.b_array);
      gemm_batch_dispatch<T>(h, transb, transa, n, m, k, alpha, ldb, lda, beta, ldc, b);
    } else {
      gemm_batch_dispatch<T>(h, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc, b);
    }
  } else {
    auto one = [&](index_t i) {
      const T* A = b.a_array ? b.a_array[i] : b.a + i * b.stride_a;
      const T* B = b.b_array ? b.b_array[i] : b.b + i * b.stride_b;
      T* C = b.c_array ? b.c_array[i] : b.c + i * b.stride_c;
      gemm<T>(h, order, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    };
    if (small && b.count > 1) {
      parallel_chunks(b.count, threads_for(h, b.count * m * n), [&](int64_t lo, int64_t hi, int) {
        for (index_t i = lo; i < hi; ++i) one(i);
      });
    } else {
      for (index_t i = 0; i < b.count; ++i) one(i);
    }
  }
}

}  // namespace

template <class T>
void gemm_batched(const Handle& h, Order order, Op transa, Op transb, index_t m, index_t n, index_t k, T alpha,
                  const T* const A[], index_t lda, const T* const B[], index_t ldb, T beta, T* const C[], index_t ldc,
                  index_t batch_count) {
  check_batch_arrays(batch_count, A, B, C);
  GemmBatch<T> b;
  b.count = batch_count, b.a_array = A, b.b_array = B, b.c_array = C;
  run_batch<T>(h, order, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc, b);
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
  GemmBatch<T> b;
  b.count = batch_count, b.a = A, b.b = B, b.c = C;
  b.stride_a = stride_a, b.stride_b = stride_b, b.stride_c = stride_c;
  run_batch<T>(h, order, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc, b);
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
