// The FMA throughput loop, written once over a vector type; instantiated per ISA in
// fma_loop_<isa>.cpp with that file's compile flags.
#pragma once
#include <cstdint>

namespace strata::detail {

// Runs `iters` x 12 independent vector FMAs; returns a value derived from the accumulators so
// the compiler cannot drop the work.
using FmaLoopFn = double (*)(int64_t iters);

double fma_loop_avx2(int64_t iters);
double fma_loop_avx512(int64_t iters);
// `iters` x 24 independent bf16 dot-product instructions (AVX512_BF16 CPUs only).
double bf16_dot_loop_avx512(int64_t iters);
// `iters` x 4 independent AMX tile products, bf16 (16 384 flops each) or u8 x s8 (32 768 ops
// each): only where amx_ready().
double amx_bf16_loop(int64_t iters);
double amx_int8_loop(int64_t iters);

template <class V, class Fma, class Sum>
double fma_loop(int64_t iters, V seed, Fma fma, Sum sum) {
  V a0 = seed, a1 = seed, a2 = seed, a3 = seed, a4 = seed, a5 = seed;
  V a6 = seed, a7 = seed, a8 = seed, a9 = seed, a10 = seed, a11 = seed;
  const V m = seed, c = seed;
  for (int64_t i = 0; i < iters; ++i) {
    a0 = fma(a0, m, c); a1 = fma(a1, m, c); a2 = fma(a2, m, c); a3 = fma(a3, m, c);
    a4 = fma(a4, m, c); a5 = fma(a5, m, c); a6 = fma(a6, m, c); a7 = fma(a7, m, c);
    a8 = fma(a8, m, c); a9 = fma(a9, m, c); a10 = fma(a10, m, c); a11 = fma(a11, m, c);
    // Opaque to the optimiser: every chain is real work and none can be merged with another.
    __asm__ volatile("" : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4), "+x"(a5));
    __asm__ volatile("" : "+x"(a6), "+x"(a7), "+x"(a8), "+x"(a9), "+x"(a10), "+x"(a11));
  }
  return sum(a0) + sum(a1) + sum(a2) + sum(a3) + sum(a4) + sum(a5) + sum(a6) + sum(a7) +
         sum(a8) + sum(a9) + sum(a10) + sum(a11);
}

}  // namespace strata::detail
