// Compiled with the AVX512_BF16 flags: the bf16 dot-product instruction's throughput. 24
// independent chains (the f32 loop's 12, twice), so that a longer latency than the FMA's does
// not pass for a lower rate; the GEMM kernel keeps 24 accumulators too. Named variables, not an
// array: an array of accumulators went through the stack.
#include <immintrin.h>

#include "fma_loop.hpp"

namespace strata::detail {

double bf16_dot_loop_avx512(int64_t iters) {
  const __m512bh a = reinterpret_cast<__m512bh>(_mm512_set1_ps(0.999f));
  const __m512bh b = reinterpret_cast<__m512bh>(_mm512_set1_ps(0.5f));
  __m512 c0 = _mm512_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0, c8 = c0,
         c9 = c0, c10 = c0, c11 = c0, d0 = c0, d1 = c0, d2 = c0, d3 = c0, d4 = c0, d5 = c0, d6 = c0, d7 = c0,
         d8 = c0, d9 = c0, d10 = c0, d11 = c0;
  auto dp = [&](__m512 x) { return _mm512_dpbf16_ps(x, a, b); };
  for (int64_t i = 0; i < iters; ++i) {
    c0 = dp(c0), c1 = dp(c1), c2 = dp(c2), c3 = dp(c3), c4 = dp(c4), c5 = dp(c5);
    c6 = dp(c6), c7 = dp(c7), c8 = dp(c8), c9 = dp(c9), c10 = dp(c10), c11 = dp(c11);
    d0 = dp(d0), d1 = dp(d1), d2 = dp(d2), d3 = dp(d3), d4 = dp(d4), d5 = dp(d5);
    d6 = dp(d6), d7 = dp(d7), d8 = dp(d8), d9 = dp(d9), d10 = dp(d10), d11 = dp(d11);
    // Opaque to the optimiser: every chain is real work and none can be merged with another.
    __asm__ volatile("" : "+v"(c0), "+v"(c1), "+v"(c2), "+v"(c3), "+v"(c4), "+v"(c5));
    __asm__ volatile("" : "+v"(c6), "+v"(c7), "+v"(c8), "+v"(c9), "+v"(c10), "+v"(c11));
    __asm__ volatile("" : "+v"(d0), "+v"(d1), "+v"(d2), "+v"(d3), "+v"(d4), "+v"(d5));
    __asm__ volatile("" : "+v"(d6), "+v"(d7), "+v"(d8), "+v"(d9), "+v"(d10), "+v"(d11));
  }
  const __m512 s = _mm512_add_ps(
      _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(c0, c1), _mm512_add_ps(c2, c3)),
                    _mm512_add_ps(_mm512_add_ps(c4, c5), _mm512_add_ps(c6, c7))),
      _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(c8, c9), _mm512_add_ps(c10, c11)),
                    _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(d0, d1), _mm512_add_ps(d2, d3)),
                                  _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(d4, d5), _mm512_add_ps(d6, d7)),
                                                _mm512_add_ps(_mm512_add_ps(d8, d9), _mm512_add_ps(d10, d11))))));
  return double(_mm512_cvtss_f32(s));
}

}  // namespace strata::detail
