// Compiled with -mavx512f -mavx512bw -mavx512vl -mavx512dq.
#include <immintrin.h>

#include "fma_loop.hpp"

namespace strata::detail {

double fma_loop_avx512(int64_t iters) {
  return fma_loop(iters, _mm512_set1_ps(0.999f),
                  [](__m512 a, __m512 b, __m512 c) { return _mm512_fmadd_ps(a, b, c); },
                  [](__m512 a) { return double(_mm512_cvtss_f32(a)); });
}

}  // namespace strata::detail
