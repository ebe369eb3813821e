// AMX's tile registers as the AMX kernels use them: eight tiles of 16 rows x 64 bytes (the
// largest palette-1 shape), configured once per thread for a whole mainloop run (the
// configuration load zeroes every tile and costs far more than one tile product) and released
// after it, so that a thread that stops using AMX does not keep its 8 KB of tile state alive.
//
// The 2 x 2 kernels' roles (amx_bf16_gemm.hpp, amx_int8_gemm.hpp):
//   tiles 0-3  accumulators: C'(jb, ib) = tile 2 jb + ib, 16 columns of C x 16 of its rows
//   tiles 4-5  the first operand:  16 columns of op(B) each, one 64-byte depth row per column
//   tiles 6-7  the second operand: 16 rows of op(A) each, one 64-byte row per depth group
// (AMX's own names: C[M][N] += A[M][K] B[K][N] with M = C's columns, N = C's rows, so that a
// tile row is 16 consecutive elements of a column-major C column.)
//
// Requires a process that was granted the tile state (amx_ready() in core/cpu.hpp).
#pragma once
#include <cstdint>

#include "strata/tile/isa_namespace.hpp"

#if defined(__AMX_TILE__)
#include <immintrin.h>
#endif

STRATA_TILE_NS_BEGIN

#if defined(__AMX_TILE__)

// The 64-byte LDTILECFG operand (palette 1).
struct alignas(64) AmxConfig {
  uint8_t palette = 1, start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t bytes_per_row[16] = {};
  uint8_t rows[16] = {};
};
static_assert(sizeof(AmxConfig) == 64, "LDTILECFG reads exactly 64 bytes");

// Holds the eight 16 x 64-byte tiles configured for its lifetime (one thread's).
class AmxTiles {
 public:
  AmxTiles() {
    AmxConfig cfg;
    for (int t = 0; t < 8; ++t) cfg.bytes_per_row[t] = 64, cfg.rows[t] = 16;
    _tile_loadconfig(&cfg);
  }
  ~AmxTiles() { _tile_release(); }
  AmxTiles(const AmxTiles&) = delete;
  AmxTiles& operator=(const AmxTiles&) = delete;
};

// Whether the accumulators can start from C and end in it as they are: alpha 1 and beta 0 or 1
// (every k block after the first has beta 1). Otherwise they start at zero and are combined with
// C through a buffer.
template <class T>
inline bool amx_c_direct(T alpha, T beta) {
  return alpha == T(1) && (beta == T(0) || beta == T(1));
}

// The four accumulators at the start of a 32 x 32 tile of C (f32 or s32, ldc in elements).
template <class T>
[[gnu::always_inline]] inline void amx_start_c(T* c, int64_t ldc, T alpha, T beta) {
  if (amx_c_direct(alpha, beta) && beta == T(1)) {
    const int64_t stride = ldc * int64_t(sizeof(T));
    _tile_loadd(0, c, stride);
    _tile_loadd(1, c + 16, stride);
    _tile_loadd(2, c + 16 * ldc, stride);
    _tile_loadd(3, c + 16 + 16 * ldc, stride);
  } else {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
  }
}

// C = alpha * accumulators + beta * C for the 32 x 32 tile (beta 0 never reads C). combine(acc,
// c) gives one element's result for the buffered case (the integer one wraps around).
template <class T, class Combine>
[[gnu::always_inline]] inline void amx_finish_c(T* c, int64_t ldc, T alpha, T beta, Combine&& combine) {
  if (amx_c_direct(alpha, beta)) {
    const int64_t stride = ldc * int64_t(sizeof(T));
    _tile_stored(0, c, stride);
    _tile_stored(1, c + 16, stride);
    _tile_stored(2, c + 16 * ldc, stride);
    _tile_stored(3, c + 16 + 16 * ldc, stride);
    return;
  }
  alignas(64) T acc[32 * 32];  // column-major, leading dimension 32
  _tile_stored(0, acc, 128);
  _tile_stored(1, acc + 16, 128);
  _tile_stored(2, acc + 16 * 32, 128);
  _tile_stored(3, acc + 16 + 16 * 32, 128);
  for (int j = 0; j < 32; ++j)
#pragma GCC ivdep
    for (int i = 0; i < 32; ++i) {
      T& out = c[i + j * ldc];
      out = beta == T(0) ? combine(acc[i + 32 * j], T(0)) : combine(acc[i + 32 * j], out);
    }
}

#endif

STRATA_TILE_NS_END
