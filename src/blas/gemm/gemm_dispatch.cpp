// TEMPORARY straightforward engine, replaced by the tile engine (issue 4). Correct semantics:
// beta == 0 does not read C, alpha == 0 does not compute the product.
#include "gemm_dispatch.hpp"

#include <complex>

namespace strata::blas::detail {

namespace {
template <class T> T conj_if(T v, bool c) {
  if constexpr (std::is_same_v<T, c64> || std::is_same_v<T, c128>) return c ? std::conj(v) : v;
  else return v;
}
}  // namespace

template <class T>
void gemm_dispatch(const Handle&, Op transa, Op transb, index_t m, index_t n, index_t k, T alpha,
                   const T* A, index_t lda, const T* B, index_t ldb, T beta, T* C, index_t ldc) {
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < m; ++i) {
      T acc{};
      if (alpha != T(0))
        for (index_t p = 0; p < k; ++p) {
          T a = transa == Op::N ? A[i + p * lda] : conj_if(A[p + i * lda], transa == Op::C);
          T b = transb == Op::N ? B[p + j * ldb] : conj_if(B[j + p * ldb], transb == Op::C);
          acc += a * b;
        }
      T& c = C[i + j * ldc];
      c = beta == T(0) ? alpha * acc : alpha * acc + beta * c;
    }
}

template void gemm_dispatch<float>(const Handle&, Op, Op, index_t, index_t, index_t, float, const float*, index_t, const float*, index_t, float, float*, index_t);
template void gemm_dispatch<double>(const Handle&, Op, Op, index_t, index_t, index_t, double, const double*, index_t, const double*, index_t, double, double*, index_t);
template void gemm_dispatch<c64>(const Handle&, Op, Op, index_t, index_t, index_t, c64, const c64*, index_t, const c64*, index_t, c64, c64*, index_t);
template void gemm_dispatch<c128>(const Handle&, Op, Op, index_t, index_t, index_t, c128, const c128*, index_t, const c128*, index_t, c128, c128*, index_t);

}  // namespace strata::blas::detail
