// A tile's k loop that fetches its C columns for writing during its last steps, so that the
// store (and, with beta, the read) at the end finds them in L1.
//
// Fetched at the tile's start, as the f32 kernel does, C's lines can be gone again by the end
// of a long k loop: the A slice and the B panel stream through L1 meanwhile (the bf16 tile's
// 240 steps). Two steps per column of C, from 2 * NR steps before the end: in-process
// 1.00-1.02x for bf16; for the f32 and int8 tiles it measured no gain (docs/PERFORMANCE.md).
#pragma once
#include <cstdint>

#include "strata/tile/isa_namespace.hpp"

STRATA_TILE_NS_BEGIN

// Whether a loop of `steps` steps is long enough to fetch C in its last ones (shorter loops
// should fetch it at their start, as MicroKernel::start does).
template <int NR>
constexpr bool fetches_c_late(int64_t steps) {
  return steps >= 2 * NR;
}

// step() `steps` times; c: the tile's first column of C (NR columns ldc apart, `rows` values
// each), fetched during the last 2 NR steps when fetches_c_late(steps), else not at all.
template <int NR, class T, class Step>
[[gnu::always_inline]] inline void steps_fetching_c(int64_t steps, T* c, int64_t ldc, int rows, Step&& step) {
  if (!fetches_c_late<NR>(steps)) {
#pragma GCC unroll 2
    for (int64_t q = 0; q < steps; ++q) step();
    return;
  }
#pragma GCC unroll 2
  for (int64_t q = 0; q < steps - 2 * NR; ++q) step();
#pragma GCC unroll 1
  for (int j = 0; j < NR; ++j, c += ldc) {
    step();
    __builtin_prefetch(c, 1);
    step();
    __builtin_prefetch(c + rows - 1, 1);
  }
}

STRATA_TILE_NS_END
