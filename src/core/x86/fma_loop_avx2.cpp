// Compiled with -mavx2 -mfma.
#include <immintrin.h>

#include "fma_loop.hpp"

namespace strata::detail {

double fma_loop_avx2(int64_t iters) {
  return fma_loop(iters, _mm256_set1_ps(0.999f),
                  [](__m256 a, __m256 b, __m256 c) { return _mm256_fmadd_ps(a, b, c); },
                  [](__m256 a) { return double(_mm256_cvtss_f32(a)); });
}

}  // namespace strata::detail
